"""The bundled schemas: the spec files shipped in ``schemas/``, addressed by stable ids.

``pairling.capability-map.2.0.0`` is the Pairling capability map; ``car.<name>`` is each schema
of the default (newest) CAR wire bundle (``car.journal.event``, ``car.type.action_result``,
``car.rpc.<method>.result``, ``car.rpc.<method>.params``). ``bundles()`` lists every bundled
wire-schema file: the specification's copy (``seed``) and CAR's own ``wire-schema.json`` per
release (schemas/SOURCE-car-server-core.md).
Nothing is ever fetched: ``$ref`` resolves only inside these documents.
"""

from __future__ import annotations

import argparse
from typing import Any, NamedTuple

from . import _backend, _bundled
from ._bundled import release

__all__ = [
    "MAP_SCHEMA_FILE",
    "MAP_SCHEMA_ID",
    "WIRE_SCHEMA_FILE",
    "WireSchemaBundle",
    "bundle_of",
    "bundle_path",
    "bundles",
    "ids",
    "release",
    "schema",
    "source",
]

MAP_SCHEMA_ID = "pairling.capability-map.2.0.0"
MAP_SCHEMA_FILE = "coding-agent-remote-control-capability-map.schema.json"
WIRE_SCHEMA_FILE = "car-wire-schema.v1.json"
"""The specification's copy of the wire schema (the ``seed`` bundle)."""


class WireSchemaBundle(NamedTuple):
    """One bundled wire-schema file: the CAR release it is (``seed`` for the specification's
    copy), its file name in ``schemas/`` and the sha256 of its exact bytes."""

    car_version: str
    file: str
    digest: str


def bundles() -> list[WireSchemaBundle]:
    """Every bundled wire-schema file, oldest first; the last is the default."""
    return [WireSchemaBundle(*bundle) for bundle in _backend.active().wire_bundles()]


def bundle_of(version: str) -> WireSchemaBundle:
    """The bundled wire-schema file of the release ``version``, as ``release()`` resolved it."""
    return next(bundle for bundle in bundles() if bundle.car_version == version)


def bundle_path(car_version: str) -> str:
    """The path of the bundled wire-schema file of ``car_version`` (written as ``car_version=``
    takes it: ``0.58.0``, ``0.58`` or ``seed``); ``ValueError`` for one not bundled.
    ``release(car_version)`` is the release it names: the one place a ``car_version`` becomes a
    release (the options objects, the command line and the configuration file ask there, and the
    engines are handed the release)."""
    return str(_bundled.schema_files() / bundle_of(release(car_version)).file)


def car_version_argument(text: str) -> str:
    """``--car-version``'s argparse type: ``text`` if a bundle has it, else a usage error."""
    try:
        release(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def ids() -> list[str]:
    """Every bundled schema id, sorted."""
    return list(_backend.active().bundled_schema_ids())


def schema(schema_id: str) -> Any:
    """The JSON Schema (a parsed dict) behind a bundled id; ``KeyError`` for an unknown id."""
    return _bundled.bundled_schema(schema_id)


def source(schema_id: str) -> str:
    """Where a bundled id comes from: the file, and for the wire bundle the member inside it."""
    if schema_id == MAP_SCHEMA_ID:
        return MAP_SCHEMA_FILE
    schema(schema_id)  # KeyError for an unknown id
    return f"{bundles()[-1].file}#/schemas/{schema_id.removeprefix('car.')}"
