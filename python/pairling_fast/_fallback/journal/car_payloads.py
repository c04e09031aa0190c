"""CAR's event payload contracts (the mirror of ``rust/journal/car_payloads.rs``): the members of
``data`` CAR's code writes for each event kind, with their JSON types, from
``pairling_fast/car_payloads.toml`` (each contract cites its emit sites and readers). A missing
required member is PF360, a member of another type PF361 (PF363 / PF364 under
``payloads="error"``), at ``/data/<member>``. ``data`` stays open.

A bundle that covers a kind's payload itself (``coverage.journal_event_payloads.covered``, with
the schema ``journal.event_payload.<kind>`` in its ``schemas``) replaces the contract for that
kind: ``data`` is validated against CAR's schema (PF362 / PF365).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from ..._tables import read_table
from ...codes import (
    PAYLOAD_MEMBER_MISSING,
    PAYLOAD_MEMBER_MISSING_ERROR,
    PAYLOAD_MEMBER_TYPE,
    PAYLOAD_MEMBER_TYPE_ERROR,
    PAYLOAD_SCHEMA_VIOLATION,
    PAYLOAD_SCHEMA_VIOLATION_ERROR,
    severity,
)
from ...errors import SchemaCompileError
from ..findings import RawFinding
from ..parse import escape_pointer_token
from ..validate import CompiledSchema, compile_schema

MODES = ("off", "warn", "error")
TYPES = ("any", "string", "boolean", "null", "object", "array", "number", "integer", "unsigned")

# What a value is, as far as the types tell values apart (``car_payloads::Class``).
_ADMITS: dict[str, frozenset[str]] = {
    "any": frozenset(
        ("string", "boolean", "null", "object", "array", "unsigned", "negative", "fraction")
    ),
    "string": frozenset(("string",)),
    "boolean": frozenset(("boolean",)),
    "null": frozenset(("null",)),
    "object": frozenset(("object",)),
    "array": frozenset(("array",)),
    "number": frozenset(("unsigned", "negative", "fraction")),
    "integer": frozenset(("unsigned", "negative")),
    "unsigned": frozenset(("unsigned",)),
}
_CLASS_DESCRIBED = {
    "string": "a string",
    "boolean": "a boolean",
    "null": "null",
    "object": "an object",
    "array": "an array",
    "unsigned": "an unsigned integer",
    "negative": "a negative integer",
    "fraction": "a number with a fraction or exponent",
}
_TYPE_DESCRIBED = {
    "any": "any value",
    "string": "a string",
    "boolean": "a boolean",
    "null": "null",
    "object": "an object",
    "array": "an array",
    "number": "a number",
    "integer": "an integer",
    "unsigned": "an unsigned integer",
}


def value_class(value: Any) -> str:
    """The class of a parsed JSON value (ints are integers, floats fractions, as both parsers
    read them: ``-0`` is the integer 0)."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, int):
        return "unsigned" if value >= 0 else "negative"
    return "fraction"


@dataclass(frozen=True)
class Member:
    name: str
    types: tuple[str, ...]
    required: bool


@dataclass(frozen=True)
class Contract:
    kind: str
    releases: tuple[str, ...]
    sources: tuple[str, ...]
    members: tuple[Member, ...]


@cache
def contracts() -> tuple[Contract, ...]:
    """The table, checked as build.rs checks it (a malformed entry is a ``ValueError``)."""
    table = read_table("car_payloads.toml")
    found = []
    for entry in table.get("contract", []):
        kind = entry.get("kind")
        if not isinstance(kind, str):
            raise ValueError("car_payloads.toml: a contract needs a string `kind`")
        members = []
        for name, member in sorted(entry.get("members", {}).items()):
            declared = member.get("type")
            types = (declared,) if isinstance(declared, str) else tuple(declared or ())
            if not types or any(t not in TYPES for t in types):
                raise ValueError(f"car_payloads.toml: {kind}.{name}: unknown or missing type")
            members.append(Member(name, types, not member.get("optional", False)))
        found.append(
            Contract(
                kind,
                tuple(entry.get("releases", ())),
                tuple(entry.get("sources", ())),
                tuple(members),
            )
        )
    return tuple(found)


def _pointer(member: Member) -> str:
    return "/data/" + escape_pointer_token(member.name)


def _wanted(member: Member) -> str:
    return " or ".join(_TYPE_DESCRIBED[t] for t in member.types)


def _raw(
    code: str,
    message: str,
    line: int,
    pointer: str,
    schema_pointer: str | None = None,
    best_match: tuple[str, str, str] | None = None,
) -> RawFinding:
    return RawFinding(code, severity(code), message, line, pointer, schema_pointer, best_match)


def covered_schema_name(kind: str) -> str:
    return f"journal.event_payload.{kind}"


class Payloads:
    """The payload rules of one bundle, by event kind (``car_payloads::Payloads``)."""

    def __init__(self, release: str, document: dict[str, Any], kinds: list[str]) -> None:
        applies = [c for c in contracts() if release in c.releases]
        every = [m for c in applies if c.kind == "*" for m in c.members]
        coverage = document.get("coverage", {}).get("journal_event_payloads", {})
        covered = [k for k in coverage.get("covered", []) if isinstance(k, str)]
        schemas = document.get("schemas", {})
        self._members: dict[str, list[Member]] = {}
        self._schemas: dict[str, CompiledSchema] = {}
        for kind in kinds:
            schema = schemas.get(covered_schema_name(kind)) if kind in covered else None
            compiled = None
            if schema is not None:
                try:
                    compiled = compile_schema(schema, True, None)
                except SchemaCompileError:  # one that does not compile: the contract stays
                    compiled = None
            if compiled is not None:
                self._schemas[kind] = compiled
                continue
            own = [m for c in applies if c.kind == kind for m in c.members]
            self._members[kind] = sorted([*own, *every], key=lambda m: m.name)

    def findings(self, kind: str, data: dict[str, Any], mode: str, line: int) -> list[RawFinding]:
        """The findings for an event of ``kind`` whose ``data`` is ``data``."""
        if mode == "off":
            return []
        error = mode == "error"
        members = self._members.get(kind)
        found: list[RawFinding] = []
        if members is not None:
            # The pointer and the wanted types are spelled out only for a finding: most events
            # have none, and building them for every member of the kind was about a fifteenth of
            # the fallback's check of a small line (cProfile).
            for member in members:
                if member.name not in data:
                    if member.required:
                        message = (
                            f'{kind} data has no "{member.name}", which CAR writes on every '
                            f"{kind} ({_wanted(member)})"
                        )
                        code = PAYLOAD_MEMBER_MISSING_ERROR if error else PAYLOAD_MEMBER_MISSING
                        found.append(_raw(code, message, line, _pointer(member)))
                    continue
                present = value_class(data[member.name])
                if not any(present in _ADMITS[t] for t in member.types):
                    message = (
                        f'"{member.name}" is {_CLASS_DESCRIBED[present]}; CAR writes '
                        f"{_wanted(member)} here ({kind})"
                    )
                    code = PAYLOAD_MEMBER_TYPE_ERROR if error else PAYLOAD_MEMBER_TYPE
                    found.append(_raw(code, message, line, _pointer(member)))
            return found
        schema = self._schemas.get(kind)
        if schema is None:
            return []
        code = PAYLOAD_SCHEMA_VIOLATION_ERROR if error else PAYLOAD_SCHEMA_VIOLATION
        for pointer, schema_pointer, _keyword, message, best in schema.errors(data):
            text = f"{message} (CAR's payload schema of {kind})"
            found.append(_raw(code, text, line, pointer, schema_pointer, best).within("/data"))
        return found
