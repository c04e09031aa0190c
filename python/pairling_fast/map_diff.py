"""What a change to a capability map means: ``diff_maps(old, new)`` (``pairling-fast diff``).

The engine of the active backend parses each map once, checks it (the same findings as
``check``) and diffs the two trees (``rust/graph/diff.rs``; ``_fallback/graph/diff.py``): an
invalid side is reported as such and the diff still runs wherever its JSON parses. Entries are
matched by their ids, not their positions; an entry whose id changed and nothing else but its
digest is ``renamed``. Arrays the schema makes sets are compared as sets, so a reorder alone is no
change; ``requires`` is a set keyed by ``kind``, so a changed requirement is a change of its
members. Each change comes back located by line in OLD and in NEW and is classified here by the
one table in ``map_diff_rules.py``. Bindings whose ``semantic_digest`` changed are listed for
review with what changed in them, as are those whose meaning changed while the digest did not
(``PF221`` in the new map's check). The JSON form is versioned by ``DIFF_VERSION``
(``docs/maps.md``)."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from . import _backend
from ._pointers import escape_pointer_token
from .codes import DIGEST_MISMATCH, MAP_DIFF_LOOSENING, MAP_DIFF_NEUTRAL, MAP_DIFF_TIGHTENING
from .locate import with_lines
from .map_diff_rules import ABSENT, LOOSENING, NEUTRAL, TIGHTENING, Verdict, classify
from .map_sources import read_map_source
from .maps import MapSource
from .report import Finding, Report

__all__ = [
    "DIFF_VERSION",
    "DigestReview",
    "MapChange",
    "MapDiff",
    "MapSide",
    "diff_maps",
]

DIFF_VERSION = 1

MAP = "map"  # the entry of the map's own members ($schema, schema_version, observed_at, ...)

Action = Literal["added", "removed", "changed", "renamed"]
CODE_OF: dict[Verdict, str] = {
    LOOSENING: MAP_DIFF_LOOSENING,
    TIGHTENING: MAP_DIFF_TIGHTENING,
    NEUTRAL: MAP_DIFF_NEUTRAL,
}


@dataclass(frozen=True)
class MapChange:
    """One change: an entry added, removed or renamed, or one member of an entry changed.

    ``member`` is the generic path inside the entry (``retry/replay``, ``requires/mode``,
    ``forbids[]`` for an item of a set; ``""`` for the whole entry); the pointers name the value
    in each document (for something absent from one side, the place that holds it there: the
    set, the entry, the collection). ``old``/``new`` are ``ABSENT`` on the side that lacks it.
    """

    collection: str
    id: str
    action: Action
    member: str
    old_pointer: str | None
    new_pointer: str | None
    old: Any
    new: Any
    classification: Verdict
    rule: str
    old_line: int | None = None
    new_line: int | None = None

    @property
    def code(self) -> str:
        return CODE_OF[self.classification]

    @property
    def where(self) -> str:
        """The entry and member, as people read it: ``operation_bindings[x.y] retry/replay``."""
        entry = self.collection if self.collection == MAP else f"{self.collection}[{self.id}]"
        return f"{entry} {self.member}" if self.member else entry

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "code": self.code,
            "classification": self.classification,
            "rule": self.rule,
            "collection": self.collection,
            "id": self.id,
            "action": self.action,
            "member": self.member,
            "old_pointer": self.old_pointer,
            "new_pointer": self.new_pointer,
            "old_line": self.old_line,
            "new_line": self.new_line,
        }
        if self.old is not ABSENT:
            data["old"] = self.old
        if self.new is not ABSENT:
            data["new"] = self.new
        return data


@dataclass(frozen=True)
class DigestReview:
    """A binding whose meaning changed: its digest changed (``digest_changed``), or it did not
    though the binding did (then ``stale`` holds the new map's ``PF221``)."""

    id: str
    old_pointer: str | None
    new_pointer: str | None
    old_digest: Any
    new_digest: Any
    members: tuple[str, ...]
    stale: Finding | None = None

    @property
    def digest_changed(self) -> bool:
        return bool(self.old_digest != self.new_digest)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "old_pointer": self.old_pointer,
            "new_pointer": self.new_pointer,
            "old_digest": self.old_digest,
            "new_digest": self.new_digest,
            "digest_changed": self.digest_changed,
            "members": list(self.members),
            "stale_digest": None if self.stale is None else self.stale.to_dict(),
        }


@dataclass(frozen=True)
class MapSide:
    """One map as read and checked: ``label`` names it (a path, URL, ``REV:PATH`` or ``-``)."""

    label: str | None
    report: Report

    @property
    def ok(self) -> bool:
        return self.report.ok

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "ok": self.ok, "report": self.report.to_dict()}


@dataclass(frozen=True)
class MapDiff:
    """The result of ``diff_maps``; ``to_dict`` is its stable JSON form (``diff_version`` 1)."""

    old: MapSide
    new: MapSide
    changes: list[MapChange]
    review: list[DigestReview]
    diffed: bool
    backend: str

    @property
    def loosenings(self) -> list[MapChange]:
        return [c for c in self.changes if c.classification == LOOSENING]

    @property
    def summary(self) -> dict[str, Any]:
        verdicts = Counter(c.classification for c in self.changes)
        actions = Counter(c.action for c in self.changes)
        return {
            "changes": len(self.changes),
            **{verdict: verdicts[verdict] for verdict in (LOOSENING, TIGHTENING, NEUTRAL)},
            **{action: actions[action] for action in ("added", "removed", "changed", "renamed")},
            "entries": len({(c.collection, c.id) for c in self.changes}),
            "review": len(self.review),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "diff_version": DIFF_VERSION,
            "backend": self.backend,
            "diffed": self.diffed,
            "old": self.old.to_dict(),
            "new": self.new.to_dict(),
            "summary": self.summary,
            "changes": [c.to_dict() for c in self.changes],
            "review": [r.to_dict() for r in self.review],
        }

    def to_json(self, *, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Reading both sides


def _pointer(*tokens: str | int) -> str:
    return "".join("/" + escape_pointer_token(str(token)) for token in tokens)


def _input_of(source: MapSource, limit: int | None) -> tuple[Any, str | None]:
    """(what the engine diffs: JSON text as bytes or a parsed dict, label); a str or path is
    read as ``map_sources`` reads it."""
    if isinstance(source, dict):
        return source, None
    if isinstance(source, (bytes, bytearray)):
        return bytes(source), None
    if isinstance(source, (str, os.PathLike)):
        text, label = read_map_source(os.fspath(source), limit)
        return text, label
    raise TypeError(f"a map is a path, URL, REV:PATH, bytes or a parsed dict, not {source!r}")


def _side(raw: Any, given: Any, label: str | None) -> MapSide:
    """A side's check as ``check_map`` reports it: findings named by the label, located by line
    in the text."""
    findings, stats = raw
    report = [Finding.from_raw(f, label) for f in findings]
    if isinstance(given, bytes):
        report = with_lines(given, report)
    return MapSide(label, Report(report, stats))


def _change(raw: Any) -> MapChange:
    collection, identity, action, member, old_pointer, new_pointer, old, new, *lines = raw
    before = old[0] if old else ABSENT
    after = new[0] if new else ABSENT
    verdict, rule = classify(collection, member, before, after)
    return MapChange(
        collection, identity, action, member, old_pointer, new_pointer, before, after,
        verdict, rule.name, *lines,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Review of semantic digests


def _binding_at(pointer: str | None) -> str | None:
    """``/operation_bindings/<i>`` of a pointer inside a binding."""
    if pointer is None or not pointer.startswith("/operation_bindings/"):
        return None
    parts = pointer.split("/")
    return "/".join(parts[:3]) if len(parts) >= 3 else None


def _reviews(
    changes: list[MapChange], bindings: list[Any], new_report: Report
) -> list[DigestReview]:
    """Each binding that differs and whose digest changed, or did not change but is wrong in NEW
    (its PF221): with the members that changed in it (none: only the order of its sets)."""
    stale = {_binding_at(f.pointer): f for f in new_report.findings if f.code == DIGEST_MISMATCH}
    members: dict[str, list[str]] = {}
    for change in changes:
        if change.collection == "operation_bindings" and change.action in ("changed", "renamed"):
            members.setdefault(change.id, []).append(change.member)
    reviews = []
    for key, old_index, new_index, before, after in bindings:
        new_at = _pointer("operation_bindings", new_index)
        if before == after and new_at not in stale:
            continue
        reviews.append(
            DigestReview(
                key,
                _pointer("operation_bindings", old_index),
                new_at,
                before[0] if before else None,
                after[0] if after else None,
                tuple(dict.fromkeys(members.get(key, ()))),
                stale.get(new_at),
            )
        )
    return reviews


def diff_maps(
    old: MapSource,
    new: MapSource,
    *,
    max_document_bytes: int | None = None,
    backend: str | None = None,
) -> MapDiff:
    """Check two capability maps and say what changed between them and what it means.

    ``old`` and ``new`` are each a path, an fsspec URL, ``REV:PATH`` (read with ``git show``;
    a path that exists wins), JSON text as bytes, or a parsed dict. Both are checked
    (``MapDiff.old.report``, ``.new.report``); where both parse as JSON objects the diff runs
    (``diffed``), even if a side has errors. Changes are in schema order of the collections,
    removed and changed entries in the old map's order, then added ones in the new map's; each
    carries its line in OLD and in NEW where that side is text.

    The engine parses each map once, checks it and diffs the two trees (matching, set
    comparisons and locating in the Rust core on the default backend); only the changes come
    back to Python, to be judged by the one table of rules.
    """
    engine = _backend.resolve(backend)
    (old_input, old_label), (new_input, new_label) = (
        _input_of(old, max_document_bytes),
        _input_of(new, max_document_bytes),
    )
    old_raw, new_raw, raw_diff = engine.diff_maps(old_input, new_input)
    old_side = _side(old_raw, old_input, old_label)
    new_side = _side(new_raw, new_input, new_label)
    changes = [] if raw_diff is None else [_change(c) for c in raw_diff[0]]
    reviews = [] if raw_diff is None else _reviews(changes, raw_diff[1], new_side.report)
    return MapDiff(
        old_side, new_side, changes, reviews, raw_diff is not None, _backend.name_of(engine)
    )
