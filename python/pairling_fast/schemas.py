"""The bundled schemas: the two spec files shipped in ``schemas/``, addressed by stable ids.

``pairling.capability-map.2.0.0`` is the Pairling capability map; ``car.<name>`` is each schema
of the CAR wire bundle (``car.journal.event``, ``car.type.action_result``,
``car.rpc.<method>.result``).
Nothing is ever fetched: ``$ref`` resolves only inside these documents.
"""

from __future__ import annotations

from typing import Any

from . import _backend
from ._fallback import validate as _loader

__all__ = ["MAP_SCHEMA_FILE", "MAP_SCHEMA_ID", "WIRE_SCHEMA_FILE", "ids", "schema", "source"]

MAP_SCHEMA_ID = "pairling.capability-map.2.0.0"
MAP_SCHEMA_FILE = "coding-agent-remote-control-capability-map.schema.json"
WIRE_SCHEMA_FILE = "car-wire-schema.v1.json"


def ids() -> list[str]:
    """Every bundled schema id, sorted."""
    return list(_backend.active().bundled_schema_ids())


def schema(schema_id: str) -> Any:
    """The JSON Schema (a parsed dict) behind a bundled id; ``KeyError`` for an unknown id."""
    return _loader.bundled_schema(schema_id)


def source(schema_id: str) -> str:
    """Where a bundled id comes from: the file, and for the wire bundle the member inside it."""
    if schema_id == MAP_SCHEMA_ID:
        return MAP_SCHEMA_FILE
    schema(schema_id)  # KeyError for an unknown id
    return f"{WIRE_SCHEMA_FILE}#/schemas/{schema_id.removeprefix('car.')}"
