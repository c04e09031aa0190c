"""The CAR release's ``journal.event`` schema as the journal checks read it: its kinds and members
(↔ ``event_schema`` in ``rust/journal/mod.rs``)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from ..validate import (
    WireBundle,
    default_wire_bundle,
    wire_bundle_named,
    wire_bundle_of_release,
)

if TYPE_CHECKING:
    pass


@cache
def _event_schema(release: str | None = None) -> tuple[frozenset[str], frozenset[str]]:
    """The kind enum and the declared top-level members of ``journal.event`` in the bundle of CAR
    ``release`` (default: the default bundle)."""
    schema = _event_bundle(release).schema(EVENT_SCHEMA)
    kinds = frozenset(
        kind for branch in schema["definitions"]["EventKind"]["oneOf"] for kind in branch["enum"]
    )
    return kinds, frozenset(schema["properties"])


# The name of the event schema inside a wire bundle (``car.journal.event`` among bundled ids).
EVENT_SCHEMA = "journal.event"


def _event_bundle(release: str | None) -> WireBundle:
    """The wire bundle of CAR ``release`` (``ValueError`` for one not bundled)."""
    if release is None:
        return default_wire_bundle()
    bundle = wire_bundle_named(release)
    if bundle is None:
        raise ValueError(f"no bundled wire schema for CAR version {release!r}")
    return bundle


def journal_event_kinds(release: str) -> list[str]:
    """The event kinds of the bundle of CAR ``release`` (as ``schemas.release`` resolved it),
    sorted; ``ValueError`` for a release not bundled."""
    return sorted(_event_schema(release)[0])


def is_event_kind(name: str, release: str | None = None) -> bool:
    """Whether ``name`` is an ``EventKind`` of CAR ``release``'s event parser: the kind enum of
    that release's wire schema (the interop tests compare it with CAR's own enum); the default
    release's for None or the specification's copy (↔ ``is_event_kind`` in
    ``rust/journal/mod.rs``)."""
    bundle = _event_bundle(release)
    known = bundle.version if wire_bundle_of_release(bundle.version) is not None else None
    return name in _event_schema(known)[0]
