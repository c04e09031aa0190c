"""An event whose ``kind`` its release does not know: the schema's words for it ("not valid under
any of the schemas listed in the 'oneOf' keyword") replaced by what a reader needs, the release and
the kinds closest to the name (a misspelling is the usual cause). Mirrors ``rust/journal/kinds.rs``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..findings import RawFinding
from ..messages import render
from ..validate import bounded_message

# Where the event schema's kind enum fails: the `kind` member, at `EventKind`'s `oneOf`.
_KIND_POINTER = "/kind"
_KIND_SCHEMA_POINTER = "/definitions/EventKind/oneOf"

# How many of the closest kinds a finding names, and how far (in edits) a kind may be.
_CLOSEST_NAMED = 3
_CLOSEST_EDITS = 3


def name_unknown_kind(
    finding: RawFinding, event: Any, kinds: frozenset[str], release: str
) -> RawFinding:
    """The finding of an event whose string ``kind`` is not one of ``kinds`` reworded; every other
    finding as it is. ``release`` is the bundle's version (``seed``: the specification's copy)."""
    if finding.pointer != _KIND_POINTER or finding.schema_pointer != _KIND_SCHEMA_POINTER:
        return finding
    kind = event.get("kind")
    if not isinstance(kind, str) or kind in kinds:
        return finding
    return finding._replace(message=unknown_kind_message(kind, kinds, release))


def unknown_kind_message(kind: str, kinds: Iterable[str], release: str) -> str:
    """``"action_rejectd" is an unknown event kind for CAR 0.60.0; the closest: …``: the name
    first, as jsonschema-rs's message has it, so redaction masks it alike."""
    if release == "seed":
        whose = "the seed wire schema (car-wire-schema.v1.json)"
    else:
        whose = f"CAR {release}"
    closest = [render(name) for name in closest_kinds(kind, kinds)]
    if closest:
        tail = f"; the closest: {', '.join(closest)}"
    else:
        tail = f"; none of its kinds is within {_CLOSEST_EDITS} edits"
    return bounded_message(f"{render(kind)} is an unknown event kind for {whose}{tail}")


def closest_kinds(name: str, kinds: Iterable[str]) -> list[str]:
    """Up to three of ``kinds`` within three edits of ``name``, nearest first (ties in name
    order)."""
    near = []
    for kind in kinds:
        # The length difference alone is a lower bound: a long value costs nothing.
        if abs(len(kind) - len(name)) > _CLOSEST_EDITS:
            continue
        edits = edit_distance(name, kind)
        if edits <= _CLOSEST_EDITS:
            near.append((edits, kind))
    near.sort()
    return [kind for _edits, kind in near[:_CLOSEST_NAMED]]


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance over characters (insertions, deletions, substitutions)."""
    previous = list(range(len(b) + 1))
    for i, left in enumerate(a):
        current = [i + 1]
        for j, right in enumerate(b):
            current.append(min(previous[j] + (left != right), previous[j + 1] + 1, current[j] + 1))
        previous = current
    return previous[len(b)]
