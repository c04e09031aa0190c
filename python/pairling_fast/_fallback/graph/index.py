"""The collections of a map indexed by id, and the small readers every rule shares
(↔ ``rust/graph/index.rs``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ...codes import (
    severity,
)
from ..findings import RawFinding

MAP_SCHEMA_ID = "pairling.capability-map.2.0.0"


MAP_SCHEMA_VERSION = "2.0.0"


DIGEST_FIELD = "semantic_digest"


COLLECTIONS = (
    "evidence_sources",
    "providers",
    "implementations",
    "transports",
    "capabilities",
    "operation_bindings",
    "evidence_claims",
    "exclusions",
)


ID_FIELDS = {
    "evidence_sources": "source_id",
    "providers": "provider_id",
    "implementations": "implementation_id",
    "transports": "transport_id",
    "capabilities": "capability_id",
    "operation_bindings": "implementation_operation_id",
    "evidence_claims": "claim_id",
}


# Collections whose ids share the schema's graph_id space (PF202 looks across these).
GRAPH_ID_COLLECTIONS = (
    "implementations",
    "transports",
    "capabilities",
    "operation_bindings",
    "evidence_claims",
)


CITING_COLLECTIONS = (
    "providers",
    "capabilities",
    "operation_bindings",
    "evidence_claims",
    "exclusions",
)


PROVIDER_OWNED_COLLECTIONS = ("implementations", "transports", "capabilities")


if TYPE_CHECKING:
    from typing import TypeGuard


Entry = tuple[int, dict[str, Any]]


def _finding(code: str, message: str, pointer: str) -> RawFinding:
    return RawFinding(code, severity(code), message, None, pointer, None)


def _is_array(value: Any) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return isinstance(value, (list, tuple))


def _text(entry: Any, key: str) -> str | None:
    value = entry.get(key) if isinstance(entry, dict) else None
    return value if isinstance(value, str) else None


def _texts(entry: dict[str, Any], key: str) -> Iterator[tuple[int, str]]:
    """(index, string) of each string in the array ``entry[key]``; nothing if it is no array."""
    values = entry.get(key)
    if _is_array(values):
        for index, value in enumerate(values):
            if isinstance(value, str):
                yield index, value


def _objects(entry: dict[str, Any], key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, object) of each object in the array ``entry[key]``."""
    values = entry.get(key)
    if _is_array(values):
        for index, value in enumerate(values):
            if isinstance(value, dict):
                yield index, value


def _contains(entry: dict[str, Any], key: str, wanted: str) -> bool:
    return any(value == wanted for _, value in _texts(entry, key))


def _explicit(value: Any) -> bool:
    """Pairling's "explicit" text: a string with something besides whitespace (``str.strip``)."""
    return isinstance(value, str) and bool(value.strip())


def _blank(value: Any) -> bool:
    """A non-empty string of whitespace only (an empty one is the schema's minLength)."""
    return isinstance(value, str) and bool(value) and not value.strip()


def _id_chars(value: str, first: str, rest: str, low: int, high: int) -> bool:
    return (
        low <= len(value) <= high
        and value[0] in first
        and all(character in rest for character in value[1:])
    )


LOWER = "abcdefghijklmnopqrstuvwxyz"


DIGITS = "0123456789"


def _graph_id(value: str) -> bool:
    """Pairling's id pattern (its validator's; the schema's graph_id): [a-z][a-z0-9_.-]{1,255}."""
    return _id_chars(value, LOWER, LOWER + DIGITS + "_.-", 2, 256)


def _schema_provider_id(value: str) -> bool:
    """The bundled schema's provider_id: [a-z][a-z0-9_]{0,63}."""
    return _id_chars(value, LOWER, LOWER + DIGITS + "_", 1, 64)


def _schema_source_id(value: str) -> bool:
    """The bundled schema's source_id: [a-z][a-z0-9-]{1,127}."""
    return _id_chars(value, LOWER, LOWER + DIGITS + "-", 2, 128)


class _Map:
    """The collections of one document, indexed by id (the first entry of an id wins)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.entries: dict[str, list[Entry]] = {}
        self.index: dict[str, dict[str, dict[str, Any]]] = {}
        self.first: dict[str, dict[str, int]] = {}
        for collection in COLLECTIONS:
            items = document.get(collection)
            entries = (
                [(i, item) for i, item in enumerate(items) if isinstance(item, dict)]
                if _is_array(items)
                else []
            )
            self.entries[collection] = entries
            id_field = ID_FIELDS.get(collection)
            by_id: dict[str, dict[str, Any]] = {}
            first: dict[str, int] = {}
            if id_field is not None:
                for i, entry in entries:
                    entry_id = _text(entry, id_field)
                    if entry_id is not None and entry_id not in by_id:
                        by_id[entry_id] = entry
                        first[entry_id] = i
            self.index[collection] = by_id
            self.first[collection] = first

    def known_provider(self, provider_id: str | None) -> bool:
        return provider_id is not None and provider_id in self.index["providers"]

    def own_provider(self, entry: dict[str, Any]) -> str | None:
        """The provider of an entry, when it has one and that provider is itself known."""
        provider = _text(entry, "provider_id")
        return provider if self.known_provider(provider) else None

    def provider_of(self, collection: str, entry_id: str) -> str | None:
        """The known provider of the known entry ``entry_id`` of ``collection``."""
        entry = self.index[collection].get(entry_id)
        return self.own_provider(entry) if entry is not None else None
