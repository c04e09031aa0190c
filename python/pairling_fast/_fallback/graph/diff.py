"""What changed between two capability maps (``rust/graph/diff.rs``, step for step).

Entries are matched by their ids (``COLLECTIONS``); an entry equal to a removed one but for its
id, its digest and references to ids renamed before it is ``renamed``, and references to a
renamed id are no change. Arrays the schema makes sets (``SET_ARRAYS``) are compared as
multisets, ``requires`` matched by ``kind``. Two values are the same when they are the same JSON
value: same type, an integer never the same as a non-integer, members in any order. The verdicts
are not judged here: the one table of rules is ``map_diff_rules.py``, fed these changes in the
order they are found.
"""

from __future__ import annotations

import json
from collections import Counter, deque
from typing import TYPE_CHECKING, Any, Literal

from ..._pointers import escape_pointer_token
from .index import DIGEST_FIELD

if TYPE_CHECKING:  # the engine's result types, declared once for both backends
    from ..._backend import RawDifferingBinding as RawBinding
    from ..._backend import RawMapChange as RawChange

__all__ = ["COLLECTIONS", "MAP", "SET_ARRAYS", "diff_maps"]

MAP = "map"  # the entry of the map's own members ($schema, observed_at, evidence_policy, ...)
_BINDINGS = "operation_bindings"

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
_COLLECTION_NAMES = frozenset(name for name, _ in COLLECTIONS)

# Arrays that are sets in the schema (uniqueItems, id arrays) or in Pairling's validator (each
# requirement kind once, no forbidden action or exact_exposure entry twice; effects and
# invalidations are read as sets), by collection and generic member path. "kind" arrays hold
# objects matched by their kind, so a changed requirement shows which of its members changed.
# Tests hold this equal to the core's table and check it against every uniqueItems array of the
# schema.
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


def _pointer(*tokens: str | int) -> str:
    return "".join("/" + escape_pointer_token(str(token)) for token in tokens)


def _child(at: str, key: str) -> str:
    return f"{at}/{escape_pointer_token(key)}"


def _key(value: Any) -> str:
    """A text equal for two values exactly when they are the same JSON value."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _same(old: Any, new: Any) -> bool:
    """The same JSON value: Python's ``==`` holds ``1 == 1.0 == True``; JSON does not."""
    if type(old) is not type(new):
        return False
    if isinstance(old, dict):
        return old.keys() == new.keys() and all(_same(v, new[k]) for k, v in old.items())
    if isinstance(old, list):
        return len(old) == len(new) and all(map(_same, old, new))
    return bool(old == new)


def _equal(old: Any, new: Any) -> bool:
    # ``==`` at C speed rejects nearly every pair that differs; the walk settles the rest.
    return bool(old == new) and _same(old, new)


def _normalised_key(name: str, member: str, value: Any) -> str:
    """``_key`` with the items of every set of ``name`` in one order."""
    if isinstance(value, dict):
        inner = (
            f"{json.dumps(key, ensure_ascii=False)}:"
            + _normalised_key(name, f"{member}/{key}" if member else key, item)
            for key, item in sorted(value.items())
        )
        return "{" + ",".join(inner) + "}"
    if isinstance(value, list):
        keys = [_normalised_key(name, member, item) for item in value]
        return "[" + ",".join(sorted(keys) if (name, member) in SET_ARRAYS else keys) + "]"
    return _key(value)


def _present(members: dict[str, Any], name: str) -> list[Any]:
    """``[value]`` of a member, ``[]`` when absent."""
    return [members[name]] if name in members else []


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


def _keyed(entries: Any, id_member: str) -> dict[str, int]:
    """Entry key → index, in order: its id (a repeated id gets `` (#n)``; an entry without a
    string id is keyed by position)."""
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


def _signature(name: str, entry: Any, id_member: str) -> str | None:
    """What an entry with a string id is apart from its id and digest, its sets in one order."""
    if not isinstance(entry, dict) or not isinstance(entry.get(id_member), str):
        return None
    rest = {k: v for k, v in entry.items() if k != id_member and k != DIGEST_FIELD}
    return _normalised_key(name, "", rest)


_Place = tuple[str, str, str]
"""A collection, an entry's key in it, and a generic member path in the entry."""
_Indexed = list[tuple[int, Any]]


class _Differ:
    def __init__(self) -> None:
        self.changes: list[RawChange] = []
        self.bindings: list[RawBinding] = []
        self.renamed: dict[str, str] = {}  # old id → new id of every renamed entry

    def record(
        self,
        place: _Place,
        action: str,
        member: str,
        pointers: tuple[str | None, str | None],
        old: list[Any],
        new: list[Any],
    ) -> None:
        name, identity, _ = place
        self.changes.append((name, identity, action, member, *pointers, old, new, None, None))

    def renames(
        self, name: str, id_member: str, arrays: tuple[list[Any], list[Any]], keys: Any
    ) -> dict[str, str]:
        """Removed key → added key, for entries equal but for their id, their digest and ids
        renamed before them (``self.renamed``, which this extends)."""
        (old, new), (old_keys, new_keys) = arrays, keys
        removed = [key for key in old_keys if key not in new_keys]
        added = [key for key in new_keys if key not in old_keys]
        if not removed or not added:
            return {}
        waiting: dict[str, deque[str]] = {}
        for key in added:
            signature = _signature(name, new[new_keys[key]], id_member)
            if signature is not None:
                waiting.setdefault(signature, deque()).append(key)
        renamed: dict[str, str] = {}
        for key in removed:
            entry = _translated(old[old_keys[key]], self.renamed)
            signature = _signature(name, entry, id_member)
            if signature is not None and waiting.get(signature):
                renamed[key] = waiting[signature].popleft()
                into = new[new_keys[renamed[key]]][id_member]
                self.renamed[old[old_keys[key]][id_member]] = into
        return renamed

    def collection(
        self,
        name: str,
        id_member: str,
        arrays: tuple[list[Any], list[Any]],
        keys: tuple[dict[str, int], dict[str, int]],
        renamed: dict[str, str],
    ) -> None:
        (old, new), (old_keys, new_keys) = arrays, keys
        for key, index in old_keys.items():
            place = (name, key, "")
            if key in new_keys:
                self.entry(place, (old[index], new[new_keys[key]]), (index, new_keys[key]))
            elif key in renamed:
                to = new_keys[renamed[key]]
                self.rename(place, id_member, (old[index], new[to]), (index, to))
            else:
                pointers = (_pointer(name, index), _pointer(name))
                self.record(place, "removed", "", pointers, [old[index]], [])
        renamed_to = set(renamed.values())
        for key, index in new_keys.items():
            if key not in old_keys and key not in renamed_to:
                place = (name, key, "")
                self.record(place, "added", "", (None, _pointer(name, index)), [], [new[index]])

    def rename(
        self, place: _Place, id_member: str, entries: tuple[Any, Any], indexes: tuple[int, int]
    ) -> None:
        name = place[0]
        (before, after), (old_index, new_index) = entries, indexes
        pointers = (_pointer(name, old_index, id_member), _pointer(name, new_index, id_member))
        self.record(place, "renamed", id_member, pointers, [before[id_member]], [after[id_member]])
        self.digest(place, entries, indexes)
        # Its references to other renamed ids are the renames' doing, not changes of its own.
        translated = _translated(before, self.renamed)
        translated = dict(translated) if translated is before else translated
        translated[id_member] = after[id_member]
        if DIGEST_FIELD in before:
            translated[DIGEST_FIELD] = after.get(DIGEST_FIELD, before[DIGEST_FIELD])
        self.members(
            place, (translated, after), (_pointer(name, old_index), _pointer(name, new_index))
        )

    def digest(self, place: _Place, entries: tuple[Any, Any], indexes: tuple[int, int]) -> None:
        old, new = entries
        if place[0] != _BINDINGS or not isinstance(old, dict) or not isinstance(new, dict):
            return
        old_digest, new_digest = (_present(d, DIGEST_FIELD) for d in (old, new))
        self.bindings.append((place[1], indexes[0], indexes[1], old_digest, new_digest))

    def entry(self, place: _Place, entries: tuple[Any, Any], indexes: tuple[int, int]) -> None:
        old, new = entries
        if _equal(old, new):
            return
        self.digest(place, entries, indexes)
        pointers = (_pointer(place[0], indexes[0]), _pointer(place[0], indexes[1]))
        if isinstance(old, dict) and isinstance(new, dict):
            self.members(place, (old, new), pointers)
        else:
            self.record(place, "changed", "", pointers, [old], [new])

    def members(
        self,
        place: _Place,
        objects: tuple[dict[str, Any], dict[str, Any]],
        pointers: tuple[str, str],
    ) -> None:
        """The members of two objects at ``place``'s member path."""
        name, identity, member = place
        (old, new), (old_at, new_at) = objects, pointers

        def fingerprint(key: str) -> bool:  # reviewed with the binding, not a change in itself
            return key == DIGEST_FIELD and not member and name == _BINDINGS

        for key, before in old.items():
            if fingerprint(key):
                continue
            path = f"{member}/{key}" if member else key
            if key not in new:
                self.record(place, "changed", path, (_child(old_at, key), new_at), [before], [])
            elif not _equal(before, new[key]):
                here = (_child(old_at, key), _child(new_at, key))
                self.value((name, identity, path), (before, new[key]), here)
        for key, after in new.items():
            if key not in old and not fingerprint(key):
                path = f"{member}/{key}" if member else key
                self.record(place, "changed", path, (old_at, _child(new_at, key)), [], [after])

    def value(self, place: _Place, values: tuple[Any, Any], pointers: tuple[str, str]) -> None:
        name, _, member = place
        old, new = values
        if isinstance(old, dict) and isinstance(new, dict):
            self.members(place, (old, new), pointers)
            return
        shape = SET_ARRAYS.get((name, member))
        if shape is not None and isinstance(old, list) and isinstance(new, list):
            if shape == "kind":
                self.kinded(place, (old, new), pointers)
            else:
                self.items(place, (list(enumerate(old)), list(enumerate(new))), pointers)
            return
        if isinstance(old, str) and isinstance(new, str) and self.renamed.get(old) == new:
            return  # a reference to a renamed entry
        self.record(place, "changed", member, pointers, [old], [new])

    def items(
        self, place: _Place, arrays: tuple[_Indexed, _Indexed], pointers: tuple[str, str]
    ) -> None:
        """Two arrays (items with their indexes) compared as multisets, so a repeat added or
        removed shows; an id renamed in OLD counts as its new name."""
        old, new = arrays
        member = f"{place[2]}[]"
        if self.renamed:
            old = [
                (index, self.renamed.get(item, item) if isinstance(item, str) else item)
                for index, item in old
            ]
        for removed, this, other in ((True, old, new), (False, new, old)):
            counts = Counter(_key(item) for _, item in other)
            for index, item in this:
                key = _key(item)
                if counts[key] > 0:
                    counts[key] -= 1
                elif removed:
                    at = (f"{pointers[0]}/{index}", pointers[1])
                    self.record(place, "changed", member, at, [item], [])
                else:
                    at = (pointers[0], f"{pointers[1]}/{index}")
                    self.record(place, "changed", member, at, [], [item])

    def kinded(
        self, place: _Place, arrays: tuple[list[Any], list[Any]], pointers: tuple[str, str]
    ) -> None:
        """Objects matched by their ``kind`` (the first of each kind; the rest as set items)."""
        old, new = arrays
        member = f"{place[2]}[]"

        def by_kind(items: list[Any]) -> tuple[dict[str, int], _Indexed]:
            kinds: dict[str, int] = {}
            rest: _Indexed = []
            for index, item in enumerate(items):
                kind = item.get("kind") if isinstance(item, dict) else None
                if isinstance(kind, str) and kind not in kinds:
                    kinds[kind] = index
                else:
                    rest.append((index, item))
            return kinds, rest

        (old_kinds, old_rest), (new_kinds, new_rest) = by_kind(old), by_kind(new)
        for kind, index in old_kinds.items():
            at = f"{pointers[0]}/{index}"
            if kind in new_kinds:
                other = new_kinds[kind]
                if not _equal(old[index], new[other]):
                    self.members(place, (old[index], new[other]), (at, f"{pointers[1]}/{other}"))
            else:
                self.record(place, "changed", member, (at, pointers[1]), [old[index]], [])
        for kind, index in new_kinds.items():
            if kind not in old_kinds:
                here = (pointers[0], f"{pointers[1]}/{index}")
                self.record(place, "changed", member, here, [], [new[index]])
        if old_rest or new_rest:
            self.items(place, (old_rest, new_rest), pointers)

    def top(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        root = (MAP, "", "")
        own_old = {k: v for k, v in old.items() if k not in _COLLECTION_NAMES}
        own_new = {k: v for k, v in new.items() if k not in _COLLECTION_NAMES}
        if not _equal(own_old, own_new):
            self.members(root, (own_old, own_new), ("", ""))
        differing = [
            (
                name,
                id_member,
                [old[name]] if name in old else [],
                [new[name]] if name in new else [],
            )
            for name, id_member in COLLECTIONS
        ]
        differing = [entry for entry in differing if not _equal(entry[2], entry[3])]
        plans: list[Any] = []
        for name, id_member, before, after in differing:
            if before and after and isinstance(before[0], list) and isinstance(after[0], list):
                keys = (_keyed(before[0], id_member), _keyed(after[0], id_member))
                plans.append((keys, self.renames(name, id_member, (before[0], after[0]), keys)))
            else:
                plans.append(None)
        for (name, id_member, before, after), plan in zip(differing, plans, strict=True):
            if plan is not None:
                self.collection(name, id_member, (before[0], after[0]), *plan)
            else:
                pointers = (
                    "" if not before else _pointer(name),
                    "" if not after else _pointer(name),
                )
                self.record(root, "changed", name, pointers, before, after)


def diff_maps(old: Any, new: Any) -> tuple[list[RawChange], list[RawBinding]] | None:
    """The diff of two maps that are both JSON objects (None otherwise: nothing to match)."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return None
    differ = _Differ()
    differ.top(old, new)
    return differ.changes, differ.bindings
