"""The bundled schema files as data: where they are, which CAR release each wire bundle is, their
exact-bytes digests and parsed documents (``rust/wire/bundle.rs`` and ``rust/validate.rs`` embed
the same files and make the same adjustment, ``_as_car_emits``).

Shared by the facade (``schemas.py``, the generators) and the pure-Python fallback, which compiles
validators from these documents (``_fallback/validate.py``). It imports no validator: the facade
on the Rust core must not load python-jsonschema to learn a file name (tests/test_startup.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = [
    "CAPABILITY_MAP_FILE",
    "CAPABILITY_MAP_ID",
    "WIRE_ID_PREFIX",
    "WireBundle",
    "bundled_schema",
    "bundled_schema_ids",
    "default_wire_bundle",
    "release",
    "release_named",
    "schema_files",
    "wire_bundle",
    "wire_bundle_named",
    "wire_bundle_of_release",
    "wire_bundle_with_digest",
    "wire_bundles",
]

CAPABILITY_MAP_ID = "pairling.capability-map.2.0.0"
CAPABILITY_MAP_FILE = "coding-agent-remote-control-capability-map.schema.json"
WIRE_ID_PREFIX = "car."
# The bundled CAR wire-schema files, oldest first: the specification's copy (which names no CAR
# release) and `wire-schema.json` of `car-server-core` per release. The last one is the default.
_WIRE_FILES = (
    ("seed", "car-wire-schema.v1.json"),
    ("0.58.0", "car-wire-schema.0.58.0.json"),
    ("0.60.0", "car-wire-schema.0.60.0.json"),
)


def schema_files() -> Traversable:
    """The bundled spec files: ``pairling_fast/_schemas`` (packaged, or a link to the top-level
    ``schemas/`` in a checkout), else that top-level folder itself."""
    # Imported here, not with the module: it and what it loads were a sixth of `import
    # pairling_fast`, and most runs never read a schema file (the core embeds them).
    from importlib import resources as importlib_resources

    packaged = importlib_resources.files("pairling_fast") / "_schemas"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "schemas"


def _read_schema_file(name: str) -> Any:
    return json.loads((schema_files() / name).read_text(encoding="utf-8"))


# Fields CAR's schema generator lists as `required` (it requires every declared field) although CAR
# never emits them when they are empty: car-inference 0.58.0 and 0.60.0 `src/schema.rs` declare
# `BenchmarkScore.runs` and `.spread` `#[serde(default, skip_serializing_if = "Option::is_none")]`,
# so the catalog rows CAR publishes omit them. The file's bytes stay as shipped; only the compiled
# definition drops them from `required` (docs/wire.md).
_EMITTED_ONLY_WHEN_SET = (("BenchmarkScore", ("runs", "spread")),)


def _as_car_emits(document: Any) -> Any:
    """``document`` with the fields of ``_EMITTED_ONLY_WHEN_SET`` no longer required."""
    for schema in document["schemas"].values():
        definitions = schema.get("definitions", {})
        for definition, fields in _EMITTED_ONLY_WHEN_SET:
            required = definitions.get(definition, {}).get("required")
            if isinstance(required, list):
                required[:] = [name for name in required if name not in fields]
    return document


class WireBundle:
    """One bundled wire-schema file: its CAR release, file name, exact-bytes digest and
    document (the fallback compiles its schemas on first use: ``validate.bundle_validator``)."""

    def __init__(self, version: str, file: str) -> None:
        data = (schema_files() / file).read_bytes()
        self.version = version
        self.file = file
        self.digest = hashlib.sha256(data).hexdigest()
        self.document: Any = _as_car_emits(json.loads(data))

    def label(self) -> str:
        """How findings name the bundle."""
        if self.version == "seed":
            return "the seed wire schema (car-wire-schema.v1.json)"
        return f"CAR {self.version}'s wire schema"

    def has_schema(self, name: str) -> bool:
        return name in self.document["schemas"]

    def schema(self, name: str) -> Any:
        """The schema ``name`` of this bundle (``KeyError`` if it has none)."""
        return self.document["schemas"][name]


@cache
def wire_bundles() -> tuple[WireBundle, ...]:
    """Every bundled wire-schema file, oldest first."""
    return tuple(WireBundle(version, file) for version, file in _WIRE_FILES)


def default_wire_bundle() -> WireBundle:
    """The newest bundled wire schema: the one used unless a run chooses another."""
    return wire_bundles()[-1]


def release_named(version: str) -> str | None:
    """The bundled CAR release ``version`` names, in full (``0.58.0``) or as ``major.minor``, or
    ``seed``; ``None`` for one not bundled. Reads no schema file."""
    for release, _ in _WIRE_FILES:
        if release == version or (version.count(".") == 1 and release.startswith(version + ".")):
            return release
    return None


def release(car_version: str | None) -> str:
    """The bundled CAR release ``car_version`` names (``0.58.0``, ``0.58`` or ``seed``; ``None``:
    the default, the newest); ``ValueError`` for one not bundled. The one place a ``car_version``
    becomes a release: the options objects (``JournalOptions``, ``CheckOptions``), the command
    line and the configuration file all ask here (as ``schemas.release``), and the engines are
    handed the release."""
    if car_version is None:
        return _WIRE_FILES[-1][0]
    found = release_named(car_version)
    if found is None:
        known = ", ".join(version for version, _ in _WIRE_FILES)
        raise ValueError(
            f"no bundled wire schema for CAR version {car_version!r} (bundled: {known})"
        )
    return found


def wire_bundle_named(version: str) -> WireBundle | None:
    """The bundle of a CAR release, in full (``0.58.0``) or as ``major.minor``, or ``seed``."""
    release = release_named(version)
    return next((bundle for bundle in wire_bundles() if bundle.version == release), None)


def wire_bundle_of_release(version: str) -> WireBundle | None:
    """The bundle ``car-server-core`` ``version`` ships, written exactly as its release."""
    return next((b for b in wire_bundles() if b.version == version and version != "seed"), None)


def wire_bundle_with_digest(digest: str) -> WireBundle | None:
    """The bundle whose exact bytes have this sha256 (lowercase hex)."""
    return next((bundle for bundle in wire_bundles() if bundle.digest == digest), None)


def wire_bundle() -> Any:
    """The default bundle's whole document (its ``schemas`` member: one schema per type)."""
    return default_wire_bundle().document


@cache
def _bundled_schemas() -> Mapping[str, Any]:
    schemas = {
        f"{WIRE_ID_PREFIX}{name}": schema for name, schema in wire_bundle()["schemas"].items()
    }
    schemas[CAPABILITY_MAP_ID] = _read_schema_file(CAPABILITY_MAP_FILE)
    return schemas


def bundled_schema_ids() -> list[str]:
    return sorted(_bundled_schemas())


def bundled_schema(schema_id: str) -> Any:
    """The bundled schema document; raises ``KeyError`` for an unknown id."""
    return _bundled_schemas()[schema_id]
