"""The engine API's arguments to the wire checks, read as ``rust/python/wire_checks.rs`` reads them
for the core: a ``car_version`` as its bundle (a ValueError for one not bundled), a Python value
checked as JSON, and the listing of the bundled wire schemas.
"""

from __future__ import annotations

import json
from typing import Any

from ...errors import CanonicalizationError
from ..parse import check_value
from ..validate import WireBundle, default_wire_bundle, wire_bundle_named, wire_bundles

__all__ = ["wire_bundles_listing"]


def _prefixed_value_error(what: str, value: Any) -> None:
    try:
        check_value(value)
    except CanonicalizationError as error:
        raise CanonicalizationError(error.code, f"{what}: {error.message}", error.pointer) from None


def _chosen_bundle(car_version: str | None) -> WireBundle | None:
    """The bundle a run chose (None: not chosen); an unknown version is a ValueError."""
    if car_version is None:
        return None
    bundle = wire_bundle_named(car_version)
    if bundle is None:
        known = ", ".join(bundle.version for bundle in wire_bundles())
        raise ValueError(
            f"no bundled wire schema for CAR version {json.dumps(car_version)} (bundled: {known})"
        )
    return bundle


def _bundle_or_default(car_version: str | None) -> WireBundle:
    return _chosen_bundle(car_version) or default_wire_bundle()


def wire_bundles_listing() -> list[tuple[str, str, str]]:
    """Every bundled wire schema, oldest first: ``(car_version, file, sha256)``."""
    return [(bundle.version, bundle.file, bundle.digest) for bundle in wire_bundles()]
