"""The bundled schemas: the two spec files shipped in ``schemas/``, addressed by stable ids.

``pairling.capability-map.2.0.0`` is the Pairling capability map; ``car.<name>`` is each schema of
the CAR wire bundle (``car.journal.event``, ``car.type.action_result``, ``car.rpc.<method>.result``).
Nothing is ever fetched: ``$ref`` resolves only inside these documents.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import _backend

__all__ = ["MAP_SCHEMA_ID", "WIRE_SCHEMA_FILE", "ids", "path", "schema"]

MAP_SCHEMA_ID = "pairling.capability-map.2.0.0"
MAP_SCHEMA_FILE = "coding-agent-remote-control-capability-map.schema.json"
WIRE_SCHEMA_FILE = "car-wire-schema.v1.json"
WIRE_ID_PREFIX = "car."


def directory() -> Path:
    """Where the bundled spec files are: inside the installed package, else the source tree."""
    packaged = Path(__file__).with_name("_schemas")
    if (packaged / WIRE_SCHEMA_FILE).is_file():
        return packaged
    return Path(__file__).resolve().parents[2] / "schemas"


def path(schema_id: str) -> Path:
    """The file a bundled schema id comes from."""
    if schema_id == MAP_SCHEMA_ID:
        return directory() / MAP_SCHEMA_FILE
    if schema_id.startswith(WIRE_ID_PREFIX) and schema_id in ids():
        return directory() / WIRE_SCHEMA_FILE
    raise KeyError(f"unknown schema id {schema_id!r}; see pairling_fast.schemas.ids()")


def ids() -> list[str]:
    """Every bundled schema id, sorted."""
    return list(_backend.active().bundled_schema_ids())


@lru_cache(maxsize=None)
def _load(file_name: str) -> Any:
    return json.loads((directory() / file_name).read_text(encoding="utf-8"))


def schema(schema_id: str) -> Any:
    """The JSON Schema (a parsed dict) behind a bundled id."""
    source = path(schema_id)
    document = _load(source.name)
    if schema_id == MAP_SCHEMA_ID:
        return document
    return document["schemas"][schema_id[len(WIRE_ID_PREFIX):]]
