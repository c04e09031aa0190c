"""The map's schema check: the bundled schema widened where Pairling's validator accepts more
(↔ ``rust/graph/schema.rs``)."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from ...codes import MAP_FORMAT_VIOLATION, SCHEMA_VIOLATION, severity
from ..findings import RawFinding
from ..validate import CompiledSchema, bundled_schema, compile_schema
from .index import MAP_SCHEMA_ID

# Where the bundled schema is narrower than Pairling's validator, the schema is widened to what
# the validator accepts (docs/maps.md, "Schema and validator"); PF229 then names each value the
# unwidened schema would have refused, and PF228 each value the schema allows but the validator
# refuses.
SCHEMA_WIDENINGS: tuple[tuple[str, Any], ...] = (
    ("/$defs/provider_id/pattern", "^[a-z][a-z0-9_.-]{0,255}$"),
    ("/$defs/source_id/pattern", "^[a-z][a-z0-9_.-]{1,255}$"),
    (
        "/$defs/release_membership/properties/runtime_provider_id",
        {"type": "string", "minLength": 1},
    ),
    (
        "/$defs/implementation/properties/identity_status/enum",
        ["release_pinned", "source_pinned", "observed", "unversioned"],
    ),
    (
        "/$defs/evidence_claim/properties/classification/enum",
        [
            "vendor_surface",
            "pairling_support",
            "behavioral_evidence",
            "runtime_behavior",
            "exclusion",
        ],
    ),
    ("/$defs/effect/properties/target", {"type": "string", "minLength": 1}),
    (
        "/$defs/capability/properties/shared_semantics",
        {"oneOf": [{"type": "string", "minLength": 1}, {"type": "null"}]},
    ),
)


@cache
def map_validator() -> CompiledSchema:
    """The bundled map schema with ``SCHEMA_WIDENINGS`` applied, compiled once."""
    schema = copy.deepcopy(bundled_schema(MAP_SCHEMA_ID))
    for pointer, value in SCHEMA_WIDENINGS:
        *path, last = pointer.split("/")[1:]
        node = schema
        for token in path:
            node = node[token]
        node[last] = value
    return compile_schema(schema, validate_formats=True)


def schema_findings(document: Any) -> list[RawFinding]:
    """The schema's findings; a ``format`` failure is PF104, since ``format`` is an annotation in
    2020-12 and Pairling's validator does not assert it (a warning by default)."""
    return [
        RawFinding(code, severity(code), message, None, pointer, schema_pointer, best)
        for pointer, schema_pointer, keyword, message, best in map_validator().errors(document)
        for code in (MAP_FORMAT_VIOLATION if keyword == "format" else SCHEMA_VIOLATION,)
    ]
