"""Is a user's schema itself a valid schema? jsonschema-rs's ``meta.is_valid`` / ``meta.validate``,
with every problem located.

The schema is validated, as a document, against the meta-schema its ``$schema`` names (2020-12
without one, as ``Validator`` reads it) on the active backend. Each problem is a ``PF102``
finding whose ``pointer`` locates it in the schema and whose ``schema_pointer`` is the
meta-schema's keyword; ``Validator(schema)`` reports only the first, as a ``SchemaCompileError``.
The five drafts' meta-schemas are built in; a meta-schema of your own comes through
``resources`` (nothing is fetched: any other ``$schema`` is ``SchemaCompileError`` PF103).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from . import _backend
from .codes import INVALID_SCHEMA
from .errors import ValidationError
from .report import Finding
from .validator import Validator

__all__ = ["is_valid", "iter_errors", "validate"]

DEFAULT_METASCHEMA = "https://json-schema.org/draft/2020-12/schema"

_DRAFTS = frozenset(
    {
        "http://json-schema.org/draft-04/schema#",
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-07/schema#",
        "https://json-schema.org/draft/2019-09/schema",
        DEFAULT_METASCHEMA,
    }
)

_VALIDATORS: dict[tuple[str, str], Validator] = {}


def _metaschema_validator(schema: Any, resources: Mapping[str, Any] | None) -> Validator:
    named = schema.get("$schema") if isinstance(schema, dict) else None
    uri = named if isinstance(named, str) else DEFAULT_METASCHEMA
    # A draft's meta-schema is referred to in its own dialect, so its draft's rules read it; a
    # meta-schema of the caller's names its dialect itself (the reference must not be checked
    # against it).
    reference = {"$schema": uri, "$ref": uri} if uri in _DRAFTS else {"$ref": uri}
    if resources is not None:
        return Validator(reference, validate_formats=False, resources=resources)
    key = (_backend.active_name(), uri)
    cached = _VALIDATORS.get(key)
    if cached is None:
        cached = _VALIDATORS[key] = Validator(reference, validate_formats=False)
    return cached


def iter_errors(schema: Any, *, resources: Mapping[str, Any] | None = None) -> Iterator[Finding]:
    """Every way ``schema`` breaks its meta-schema, as ``PF102`` findings located in it."""
    for finding in _metaschema_validator(schema, resources).iter_errors(schema):
        yield Finding.of(
            INVALID_SCHEMA,
            finding.message,
            pointer=finding.pointer,
            schema_pointer=finding.schema_pointer,
        )


def is_valid(schema: Any, *, resources: Mapping[str, Any] | None = None) -> bool:
    """Whether ``schema`` is valid under its meta-schema."""
    return _metaschema_validator(schema, resources).is_valid(schema)


def validate(schema: Any, *, resources: Mapping[str, Any] | None = None) -> None:
    """Raise ``ValidationError`` (a ``ValueError``) listing every problem, if ``schema`` is not a
    valid schema."""
    findings = list(iter_errors(schema, resources=resources))
    if findings:
        raise ValidationError(findings)
