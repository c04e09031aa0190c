"""What a change to a capability map means: ``diff_maps(old, new)`` (``pairling-fast diff``).

Both maps are checked first on the active backend (``check_map``: the same findings as ``check``);
an invalid side is reported as such and the diff still runs wherever its JSON parses. Entries are
matched by their ids, not their positions (``COLLECTIONS``); an entry whose id changed and
nothing else but its digest is ``renamed``. Arrays the schema makes sets (``SET_ARRAYS``) are
compared as sets, so a reorder alone is no change; ``requires`` is a set keyed by ``kind``, so a
changed requirement is a change of its members. Every change is classified by the one table in
``map_diff_rules.py``. Bindings whose ``semantic_digest`` changed are listed for review with what
changed in them, as are those whose meaning changed while the digest did not (``PF221`` in the
new map's check). The JSON form is versioned by ``DIFF_VERSION`` (``docs/maps.md``).
"""

from __future__ import annotations

import gc
import json
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from . import _backend
from ._pointers import escape_pointer_token
from .codes import DIGEST_MISMATCH, MAP_DIFF_LOOSENING, MAP_DIFF_NEUTRAL, MAP_DIFF_TIGHTENING
from .locate import pointer_lines
from .map_diff_rules import ABSENT, LOOSENING, NEUTRAL, TIGHTENING, Verdict, classify
from .map_sources import read_map_source
from .maps import MapSource, check_map_on
from .report import Finding, Report

__all__ = [
    "COLLECTIONS",
    "DIFF_VERSION",
    "SET_ARRAYS",
    "DigestReview",
    "MapChange",
    "MapDiff",
    "MapSide",
    "diff_maps",
]

DIFF_VERSION = 1

# Each collection of entries and the member that identifies an entry in it, in schema order.
COLLECTIONS: tuple[tuple[str, str], ...] = (
    ("evidence_sources", "source_id"),
    ("providers", "provider_id"),
    ("implementations", "implementation_id"),
    ("transports", "transport_id"),
    ("capabilities", "capability_id"),
    ("operation_bindings", "implementation_operation_id"),
    ("evidence_claims", "claim_id"),
    ("exclusions", "item"),
)
_ID_MEMBERS = dict(COLLECTIONS)
DIGEST = "semantic_digest"
MAP = "map"  # the map's own members ($schema, schema_version, observed_at, evidence_policy)

# Arrays that are sets in the schema (uniqueItems, id arrays) or in Pairling's validator (each
# requirement kind once, no forbidden action or exact_exposure entry twice; effects and
# invalidations are read as sets), by collection and generic member path. "kind" arrays hold
# objects matched by their kind, so a changed requirement shows which of its members changed.
# tests/test_map_diff.py checks this against every uniqueItems array of the schema.
SET_ARRAYS: dict[tuple[str, str], Literal["set", "kind"]] = {
    (MAP, "evidence_policy/machine_readable_values"): "set",
    ("providers", "source_refs"): "set",
    ("implementations", "observed_versions"): "set",
    ("implementations", "observed_channels"): "set",
    ("implementations", "transport_ids"): "set",
    ("capabilities", "implementation_ids"): "set",
    ("capabilities", "exact_exposure"): "set",
    ("capabilities", "source_refs"): "set",
    ("operation_bindings", "capability_ids"): "set",
    ("operation_bindings", "requires"): "kind",
    ("operation_bindings", "requires/dimensions"): "set",
    ("operation_bindings", "effects"): "set",
    ("operation_bindings", "invalidates"): "set",
    ("operation_bindings", "forbids"): "set",
    ("operation_bindings", "runtime_proofs_required"): "set",
    ("operation_bindings", "evidence_claim_ids"): "set",
    ("operation_bindings", "source_refs"): "set",
    ("evidence_claims", "source_refs"): "set",
    ("exclusions", "source_refs"): "set",
}

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
    """One map as read and checked: ``label`` names it (a path, URL, ``REV:PATH`` or ``-``),
    ``document`` is its parsed JSON (None when it is not JSON, so no diff was possible)."""

    label: str | None
    report: Report
    document: Any = None
    text: bytes | None = field(default=None, repr=False)

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
# Reading and checking both sides


def _pointer(*tokens: str | int) -> str:
    return "".join("/" + escape_pointer_token(str(token)) for token in tokens)


def _text_of(source: MapSource, limit: int | None) -> tuple[bytes | None, Any, str | None]:
    """(JSON text, parsed dict, label): a str is read as ``map_sources`` reads it."""
    if isinstance(source, dict):
        return None, source, None
    if isinstance(source, (bytes, bytearray)):
        return bytes(source), None, None
    if isinstance(source, (str, os.PathLike)):
        text, label = read_map_source(os.fspath(source), limit)
        return text, None, label
    raise TypeError(f"a map is a path, URL, REV:PATH, bytes or a parsed dict, not {source!r}")


def _parsed(text: bytes) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic collector: parsing a map makes millions of containers, each of which
    counts towards a collection that finds nothing (JSON values hold no cycles); paused, parsing
    a 25 MB map took half the CPU time. Reference counting still frees what is dropped.

    On resuming, the millions of containers made meanwhile are all in the youngest generation,
    so the first allocation after ``gc.enable()`` would walk every one of them (0.3 s for two
    25 MB maps). Frozen and unfrozen first, they move to the oldest generation in one step, as
    long-lived objects do after surviving collections; skipped if the process froze objects of
    its own, which unfreezing would release."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def _sides(
    engine: _backend.Engine, old: MapSource, new: MapSource, limit: int | None
) -> tuple[MapSide, MapSide]:
    """Both maps checked (on the engine, side by side: the Rust core releases the GIL) while
    this thread parses them for the diff."""
    from concurrent.futures import (
        ThreadPoolExecutor,
    )  # only here: `import pairling_fast` stays lean

    sources = [_text_of(old, limit), _text_of(new, limit)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        checks = [
            pool.submit(check_map_on, engine, text if text is not None else document)
            for text, document, _ in sources
        ]
        documents = [document if text is None else _parsed(text) for text, document, _ in sources]
        reports = [check.result() for check in checks]
    sides = []
    for (text, _, label), document, report in zip(sources, documents, reports, strict=True):
        findings = [replace(f, path=label) for f in report.findings] if label else report.findings
        sides.append(MapSide(label, Report(findings, report.stats), document, text))
    return sides[0], sides[1]


# ---------------------------------------------------------------------------------------------
# Matching entries


def _keyed(entries: Any, id_member: str) -> dict[str, int]:
    """Entry key → index: its id (a repeated id gets `` (#n)``; an entry without a string id is
    keyed by position)."""
    keys: dict[str, int] = {}
    if not isinstance(entries, list):
        return keys
    seen: Counter[str] = Counter()
    for index, entry in enumerate(entries):
        identity = entry.get(id_member) if isinstance(entry, dict) else None
        if not isinstance(identity, str):
            keys[f"#{index}"] = index
            continue
        seen[identity] += 1
        keys[identity if seen[identity] == 1 else f"{identity} (#{seen[identity]})"] = index
    return keys


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _translated(value: Any, renamed: dict[str, str]) -> Any:
    """``value`` with every string that is a renamed id replaced by its new name."""
    if not renamed:
        return value
    if isinstance(value, str):
        return renamed.get(value, value)
    if isinstance(value, list):
        return [_translated(item, renamed) for item in value]
    if isinstance(value, dict):
        return {key: _translated(item, renamed) for key, item in value.items()}
    return value


def _normalised(name: str, member: str, value: Any) -> Any:
    """``value`` (at ``member`` of an entry of ``name``) with its sets in one order."""
    if isinstance(value, dict):
        return {
            key: _normalised(name, f"{member}/{key}" if member else key, item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        items = [_normalised(name, member, item) for item in value]
        return sorted(items, key=_canonical) if (name, member) in SET_ARRAYS else items
    return value


def _without_identity(name: str, entry: Any, id_member: str) -> str | None:
    """What an entry with a string id is apart from its id and digest, its sets in one order
    (None without an id)."""
    if not isinstance(entry, dict) or not isinstance(entry.get(id_member), str):
        return None
    rest = {k: v for k, v in entry.items() if k != id_member and k != DIGEST}
    return _canonical(_normalised(name, "", rest))


_Place = tuple[str, str, str]
"""A collection, an entry's key in it, and a generic member path in the entry."""
_Arrays = tuple[list[Any], list[Any]]
"""The old and the new array at a place."""


class _Differ:
    def __init__(self) -> None:
        self.changes: list[MapChange] = []
        # (binding key, old index, new index, old digest, new digest) of every binding matched
        # or renamed that differs in anything: its semantic_digest is the fingerprint of its
        # meaning, reviewed with it (``_reviews``), not a change in itself.
        self.bindings: list[tuple[str, int, int, Any, Any]] = []
        self.renamed: dict[str, str] = {}  # old id → new id of every renamed entry

    def record(
        self,
        collection: str,
        identity: str,
        action: Action,
        member: str,
        pointers: tuple[str | None, str | None],
        old: Any,
        new: Any,
    ) -> None:
        verdict, rule = classify(collection, member, old, new)
        self.changes.append(
            MapChange(collection, identity, action, member, *pointers, old, new, verdict, rule.name)
        )

    def renames(self, name: str, id_member: str, old: Any, new: Any) -> dict[str, str]:
        """Removed key → added key, for entries equal but for their id, their digest and ids
        renamed before them (``self.renamed``, which this extends)."""
        old_keys, new_keys = _keyed(old, id_member), _keyed(new, id_member)
        removed = [key for key in old_keys if key not in new_keys]
        added = [key for key in new_keys if key not in old_keys]
        if not removed or not added:
            return {}
        waiting: dict[str, list[str]] = {}
        for key in added:
            signature = _without_identity(name, new[new_keys[key]], id_member)
            if signature is not None:
                waiting.setdefault(signature, []).append(key)
        renamed: dict[str, str] = {}
        for key in removed:
            entry = _translated(old[old_keys[key]], self.renamed)
            signature = _without_identity(name, entry, id_member)
            if signature is not None and waiting.get(signature):
                renamed[key] = waiting[signature].pop(0)
                self.renamed[old[old_keys[key]][id_member]] = new[new_keys[renamed[key]]][id_member]
        return renamed

    def collection(
        self, name: str, id_member: str, old: Any, new: Any, renamed: dict[str, str]
    ) -> None:
        old_keys, new_keys = _keyed(old, id_member), _keyed(new, id_member)
        for key, index in old_keys.items():
            if key in new_keys:
                self.entry(name, key, (old[index], new[new_keys[key]]), index, new_keys[key])
            elif key in renamed:
                self.rename(
                    name, id_member, renamed[key], (old, index), (new, new_keys[renamed[key]])
                )
            else:
                self.record(
                    name, key, "removed", "", (_pointer(name, index), _pointer(name)),
                    old[index], ABSENT,
                )  # fmt: skip
        renamed_to = set(renamed.values())
        for key, index in new_keys.items():
            if key not in old_keys and key not in renamed_to:
                self.record(
                    name, key, "added", "", (None, _pointer(name, index)), ABSENT, new[index]
                )

    def rename(
        self,
        name: str,
        id_member: str,
        key: str,
        old: tuple[list[Any], int],
        new: tuple[list[Any], int],
    ) -> None:
        (old_entries, old_index), (new_entries, new_index) = old, new
        before, after = old_entries[old_index], new_entries[new_index]
        self.record(
            name, key, "renamed", id_member,
            (_pointer(name, old_index, id_member), _pointer(name, new_index, id_member)),
            before[id_member], after[id_member],
        )  # fmt: skip
        self.digest(name, key, before, after, old_index, new_index)
        # Its references to other renamed ids are the renames' doing, not changes of its own.
        translated = _translated(before, self.renamed)
        translated[id_member] = after[id_member]
        if DIGEST in before:
            translated[DIGEST] = after.get(DIGEST, before[DIGEST])
        self.members(
            name, key, "", translated, after,
            (_pointer(name, old_index), _pointer(name, new_index)),
        )  # fmt: skip

    def digest(
        self, name: str, key: str, old: Any, new: Any, old_index: int, new_index: int
    ) -> None:
        if name != "operation_bindings" or not isinstance(old, dict) or not isinstance(new, dict):
            return
        before, after = old.get(DIGEST, ABSENT), new.get(DIGEST, ABSENT)
        self.bindings.append((key, old_index, new_index, before, after))

    def entry(
        self, name: str, identity: str, values: tuple[Any, Any], old_index: int, new_index: int
    ) -> None:
        old, new = values
        if old == new:
            return
        self.digest(name, identity, old, new, old_index, new_index)
        if not isinstance(old, dict) or not isinstance(new, dict):
            self.record(
                name, identity, "changed", "",
                (_pointer(name, old_index), _pointer(name, new_index)), old, new,
            )  # fmt: skip
            return
        self.members(
            name, identity, "", old, new, (_pointer(name, old_index), _pointer(name, new_index))
        )

    def members(
        self,
        name: str,
        identity: str,
        member: str,
        old: dict[str, Any],
        new: dict[str, Any],
        pointers: tuple[str, str],
    ) -> None:
        """The members of two objects at generic path ``member``."""
        old_at, new_at = pointers
        for key, before in old.items():
            if key == DIGEST and not member and name == "operation_bindings":
                continue  # the fingerprint: reviewed with the binding (``_reviews``)
            path = f"{member}/{key}" if member else key
            here = (
                f"{old_at}/{escape_pointer_token(key)}",
                f"{new_at}/{escape_pointer_token(key)}",
            )
            if key not in new:
                self.record(name, identity, "changed", path, (here[0], new_at), before, ABSENT)
            elif before != new[key] or type(before) is not type(new[key]):
                self.value(name, identity, path, before, new[key], here)
        for key, after in new.items():
            if key not in old and not (
                key == DIGEST and not member and name == "operation_bindings"
            ):
                path = f"{member}/{key}" if member else key
                here_new = f"{new_at}/{escape_pointer_token(key)}"
                self.record(name, identity, "changed", path, (old_at, here_new), ABSENT, after)

    def value(
        self,
        name: str,
        identity: str,
        member: str,
        old: Any,
        new: Any,
        pointers: tuple[str, str],
    ) -> None:
        if isinstance(old, dict) and isinstance(new, dict):
            self.members(name, identity, member, old, new, pointers)
            return
        shape = SET_ARRAYS.get((name, member))
        if shape is not None and isinstance(old, list) and isinstance(new, list):
            compare = self.kinded if shape == "kind" else self.items
            compare((name, identity, member), (old, new), pointers)
            return
        if isinstance(old, str) and self.renamed.get(old) == new:
            return  # a reference to a renamed entry
        self.record(name, identity, "changed", member, pointers, old, new)

    def items(self, place: _Place, arrays: _Arrays, pointers: tuple[str, str]) -> None:
        """Two arrays compared as sets (as multisets, so a repeat added or removed shows); an id
        renamed in OLD counts as its new name."""
        (name, identity, member), (old, new) = place, arrays
        if self.renamed:
            old = [self.renamed.get(item, item) if isinstance(item, str) else item for item in old]
        for side, (this, other, pointer) in enumerate(
            ((old, new, pointers[0]), (new, old, pointers[1]))
        ):
            counts = Counter(_canonical(item) for item in other)
            for index, item in enumerate(this):
                key = _canonical(item)
                if counts[key] > 0:
                    counts[key] -= 1
                    continue
                at = f"{pointer}/{index}"
                if side == 0:
                    self.record(
                        name, identity, "changed", f"{member}[]", (at, pointers[1]), item, ABSENT
                    )
                else:
                    self.record(
                        name, identity, "changed", f"{member}[]", (pointers[0], at), ABSENT, item
                    )

    def kinded(self, place: _Place, arrays: _Arrays, pointers: tuple[str, str]) -> None:
        """Objects matched by their ``kind`` (the first of each kind; the rest as set items)."""
        (name, identity, member), (old, new) = place, arrays

        def by_kind(items: list[Any]) -> tuple[dict[str, int], list[int]]:
            kinds: dict[str, int] = {}
            rest: list[int] = []
            for index, item in enumerate(items):
                kind = item.get("kind") if isinstance(item, dict) else None
                if isinstance(kind, str) and kind not in kinds:
                    kinds[kind] = index
                else:
                    rest.append(index)
            return kinds, rest

        old_kinds, old_rest = by_kind(old)
        new_kinds, new_rest = by_kind(new)
        for kind, index in old_kinds.items():
            at = f"{pointers[0]}/{index}"
            if kind in new_kinds:
                other = new_kinds[kind]
                if old[index] != new[other]:
                    self.members(
                        name,
                        identity,
                        member,
                        old[index],
                        new[other],
                        (at, f"{pointers[1]}/{other}"),
                    )
            else:
                self.record(
                    name, identity, "changed", f"{member}[]", (at, pointers[1]), old[index], ABSENT
                )
        for kind, index in new_kinds.items():
            if kind not in old_kinds:
                at = f"{pointers[1]}/{index}"
                self.record(
                    name, identity, "changed", f"{member}[]", (pointers[0], at), ABSENT, new[index]
                )
        leftovers_old = [old[i] for i in old_rest]
        leftovers_new = [new[i] for i in new_rest]
        if leftovers_old or leftovers_new:
            self.items(place, (leftovers_old, leftovers_new), pointers)

    def top(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        collections = set(_ID_MEMBERS)
        own_old = {k: v for k, v in old.items() if k not in collections}
        own_new = {k: v for k, v in new.items() if k not in collections}
        if own_old != own_new:
            self.members(MAP, "", "", own_old, own_new, ("", ""))
        both = [
            (name, id_member, old.get(name, ABSENT), new.get(name, ABSENT))
            for name, id_member in COLLECTIONS
        ]
        lists = [entry for entry in both if entry[2] != entry[3]]
        renames = {
            name: self.renames(name, id_member, before, after)
            for name, id_member, before, after in lists
            if isinstance(before, list) and isinstance(after, list)
        }
        for name, id_member, before, after in lists:
            if name in renames:
                self.collection(name, id_member, before, after, renames[name])
            else:
                pointers = (
                    "" if before is ABSENT else _pointer(name),
                    "" if after is ABSENT else _pointer(name),
                )
                self.record(MAP, "", "changed", name, pointers, before, after)


# ---------------------------------------------------------------------------------------------
# Review of semantic digests


def _binding_at(pointer: str | None) -> str | None:
    """``/operation_bindings/<i>`` of a pointer inside a binding."""
    if pointer is None or not pointer.startswith("/operation_bindings/"):
        return None
    parts = pointer.split("/")
    return "/".join(parts[:3]) if len(parts) >= 3 else None


def _reviews(differ: _Differ, new_report: Report) -> list[DigestReview]:
    """Each binding that differs and whose digest changed, or did not change but is wrong in NEW
    (its PF221): with the members that changed in it (none: only the order of its sets)."""
    stale = {_binding_at(f.pointer): f for f in new_report.findings if f.code == DIGEST_MISMATCH}
    members: dict[str, list[str]] = {}
    for change in differ.changes:
        if change.collection == "operation_bindings" and change.action in ("changed", "renamed"):
            members.setdefault(change.id, []).append(change.member)
    reviews = []
    for key, old_index, new_index, before, after in differ.bindings:
        new_at = _pointer("operation_bindings", new_index)
        if before == after and new_at not in stale:
            continue
        reviews.append(
            DigestReview(
                key,
                _pointer("operation_bindings", old_index),
                new_at,
                None if before is ABSENT else before,
                None if after is ABSENT else after,
                tuple(dict.fromkeys(members.get(key, ()))),
                stale.get(new_at),
            )
        )
    return reviews


# ---------------------------------------------------------------------------------------------
# Lines


def _located(changes: list[MapChange], new: MapSide) -> list[MapChange]:
    """Each change with the line its pointer in NEW starts on (where reviewers and code
    scanning look; OLD is located by its pointer alone: finding lines costs a scan of the
    text)."""
    wanted = {c.new_pointer for c in changes if c.new_pointer is not None}
    if new.text is None or not wanted:
        return changes
    lines = pointer_lines(new.text, wanted)
    return [
        replace(c, new_line=lines.get(c.new_pointer)) if c.new_pointer is not None else c
        for c in changes
    ]


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
    removed and changed entries in the old map's order, then added ones in the new map's.
    """
    engine = _backend.resolve(backend)
    with _no_cyclic_gc():
        old_side, new_side = _sides(engine, old, new, max_document_bytes)
        diffed = isinstance(old_side.document, dict) and isinstance(new_side.document, dict)
        differ = _Differ()
        if diffed:
            differ.top(old_side.document, new_side.document)
        # Locating rescans NEW's text, building (and dropping) a value per skipped entry.
        changes = _located(differ.changes, new_side)
    reviews = _reviews(differ, new_side.report)
    return MapDiff(old_side, new_side, changes, reviews, diffed, _backend.name_of(engine))
