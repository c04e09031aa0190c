"""Exceptions raised by pairling_fast, shared by both backends.

Every exception carries the stable finding ``code`` (see ``docs/findings.md``) and a JSON Pointer,
so callers can react to the kind of problem without parsing messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .report import Finding

__all__ = [
    "CanonicalizationError",
    "InternalError",
    "MapInvalidError",
    "PairlingError",
    "SchemaCompileError",
    "ValidationError",
]


class PairlingError(Exception):
    """Base class of every error pairling_fast raises on purpose."""


class CanonicalizationError(PairlingError, ValueError):
    """A value (or JSON text) that has no RFC 8785 canonical form, or is not strict JSON."""

    def __init__(
        self,
        code: str,
        message: str,
        pointer: str = "",
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(code, message, pointer, line, column)
        self.code = code
        self.message = message
        self.pointer = pointer
        self.line = line
        self.column = column

    def __str__(self) -> str:
        where = f" at {self.pointer!r}" if self.pointer else ""
        if self.line is not None:
            where += f" (line {self.line}, column {self.column})"
        return f"{self.code}: {self.message}{where}"


class SchemaCompileError(PairlingError, ValueError):
    """A schema that cannot be compiled: invalid against its meta-schema, or a `$ref` that
    cannot be resolved."""

    def __init__(self, code: str, message: str, schema_pointer: str = "") -> None:
        super().__init__(code, message, schema_pointer)
        self.code = code
        self.message = message
        self.schema_pointer = schema_pointer

    def __str__(self) -> str:
        where = f" at {self.schema_pointer!r}" if self.schema_pointer else ""
        return f"{self.code}: {self.message}{where}"


class ValidationError(PairlingError, ValueError):
    """Raised by ``Validator.validate`` for an invalid instance; ``findings`` lists every reason."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__(findings)
        self.findings = findings

    def __str__(self) -> str:
        first = self.findings[0]
        more = f" (and {len(self.findings) - 1} more)" if len(self.findings) > 1 else ""
        return f"{first.code} at {first.pointer!r}: {first.message}{more}"


class MapInvalidError(ValidationError):
    """A capability map ``seal_map`` refuses: it has errors other than digest mismatches.

    ``findings`` lists every finding of the check (warnings too); ``path`` is the file, if any.
    """

    def __init__(self, findings: list[Finding], path: str | None = None) -> None:
        super().__init__(findings)
        self.path = path

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        errors = [f for f in self.findings if f.severity == "error"]
        first = errors[0] if errors else self.findings[0]
        more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
        return f"{where}not sealed: {first.code} at {first.pointer!r}: {first.message}{more}"


class InternalError(PairlingError, RuntimeError):
    """A bug in pairling_fast (a Rust panic caught at the boundary). Please report it."""
