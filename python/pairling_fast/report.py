"""Findings and reports: the one data model every check of pairling_fast reports with.

The JSON shape (``Report.to_dict``) is versioned by ``REPORT_VERSION`` and documented in
``docs/reports.md``; CI jobs and later tools depend on it, so fields are only ever added.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from . import _json_text
from ._pointers import path_of, unescape_pointer_token
from .codes import SEVERITIES, Severity, severity
from .redact import DEFAULT_MASK, FALSE_SCHEMA, redact_message

__all__ = [
    "REPORT_VERSION",
    "SEVERITIES",
    "BestMatch",
    "Finding",
    "RawFinding",
    "Report",
    "Severity",
]

REPORT_VERSION = 1


class RawFinding(Protocol):
    """A finding as both engines return it, before it has a path: the core's record
    (``_core.RawFinding``, declared in its stub) or the fallback's named tuple of the same
    fields (``_fallback/findings.py``)."""

    @property
    def code(self) -> str: ...
    @property
    def severity(self) -> Severity: ...
    @property
    def message(self) -> str: ...
    @property
    def line(self) -> int | None: ...
    @property
    def pointer(self) -> str | None: ...
    @property
    def schema_pointer(self) -> str | None: ...
    @property
    def best_match(self) -> tuple[str, str, str] | None: ...


RawMapChange = tuple[
    str,
    str,
    str,
    str,
    "str | None",
    "str | None",
    "list[Any]",
    "list[Any]",
    "int | None",
    "int | None",
]
"""One change of ``diff_maps``: collection, id, action, member, old and new pointer, ``[old]``
and ``[new]`` (``[]`` where absent), old and new line (None without a text or a place)."""
RawDifferingBinding = tuple[str, int, int, "list[Any]", "list[Any]"]
"""A binding that differs: its key, old and new index, ``[digest]`` on each side (``[]``: none)."""


def _failing_keyword(message: str, schema_pointer: str) -> str:
    """A schema error's keyword: ``falseSchema`` for a ``false`` subschema, else the last token
    of its location (jsonschema-rs's ``ValidationError.kind`` name)."""
    if message.startswith(FALSE_SCHEMA):
        return "falseSchema"
    return unescape_pointer_token(schema_pointer.rsplit("/", 1)[-1])


@dataclass(frozen=True)
class BestMatch:
    """The error of a failing ``oneOf``/``anyOf``'s branch that came closest to matching
    (python-jsonschema's ``best_match``; docs/reports.md): where it is in the document and in the
    schema, and its message, worded as every schema finding's is."""

    pointer: str
    schema_pointer: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "pointer": self.pointer,
            "schema_pointer": self.schema_pointer,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BestMatch:
        return cls(data["pointer"], data["schema_pointer"], data["message"])

    @property
    def kind(self) -> str:
        """The failing keyword, as ``Finding.kind`` names it."""
        return _failing_keyword(self.message, self.schema_pointer)

    def redacted(self, mask: str = DEFAULT_MASK) -> BestMatch:
        message = redact_message(self.message, self.schema_pointer, mask)
        return self if message == self.message else replace(self, message=message)


@dataclass(frozen=True)
class Finding:
    """One problem found in a document.

    ``code`` is stable (``PF101``…, see ``docs/findings.md``); ``pointer`` is an RFC 6901 JSON
    Pointer into the checked document, ``line`` is 1-based (JSONL inputs and syntax errors),
    ``schema_pointer`` locates the failing keyword in the schema for schema findings; ``column``
    (1-based, on ``line``) is set where the position is known to the character (JSON syntax).
    ``instance`` is the failing value itself (jsonschema-rs's ``ValidationError.instance``) where a
    ``Validator`` had the document as a Python object (``iter_errors``, ``validate``,
    ``iter_errors_many``), the mask when the validator masks, else ``None``; it is not part of
    the report's data (``to_dict``) nor of equality, as it may hold what ``mask`` hides.
    """

    code: str
    severity: Severity
    message: str
    path: str | None = None
    line: int | None = None
    pointer: str | None = None
    schema_pointer: str | None = None
    column: int | None = None
    best_match: BestMatch | None = None
    """For a ``oneOf`` none of whose branches matched and a failing ``anyOf``: the branch error
    that came closest, where one stands out; ``None`` otherwise."""
    instance: Any = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "pointer": self.pointer,
            "schema_pointer": self.schema_pointer,
            "column": self.column,
            "best_match": None if self.best_match is None else self.best_match.to_dict(),
        }

    @classmethod
    def of(
        cls,
        code: str,
        message: str,
        path: str | None = None,
        line: int | None = None,
        pointer: str | None = None,
        schema_pointer: str | None = None,
        column: int | None = None,
        best_match: BestMatch | None = None,
        instance: Any = None,
    ) -> Finding:
        """A finding of ``code`` with the severity ``codes.toml`` gives it."""
        return cls(
            code,
            severity(code),
            message,
            path,
            line,
            pointer,
            schema_pointer,
            column,
            best_match,
            instance,
        )

    @classmethod
    def from_raw(cls, raw: RawFinding, path: str | None = None) -> Finding:
        """From the engine's record, with the path of the file it is about (a saved
        ``--state`` finding too: the state keeps the record's fields by name, and
        ``engine.RawFinding(**fields)`` rebuilds it; docs/journals.md)."""
        message = raw.message
        best = raw.best_match
        return cls(
            raw.code,
            raw.severity,
            message,
            path,
            raw.line,
            raw.pointer,
            raw.schema_pointer,
            _column(message),
            None if best is None else BestMatch(*best),
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        return cls(
            code=data["code"],
            severity=data["severity"],
            message=data["message"],
            path=data.get("path"),
            line=data.get("line"),
            pointer=data.get("pointer"),
            schema_pointer=data.get("schema_pointer"),
            column=data.get("column"),
            best_match=_best_match_of(data.get("best_match")),
        )

    @property
    def kind(self) -> str | None:
        """The failing keyword of a schema finding (``type``, ``oneOf``, ``format``, …;
        ``falseSchema`` for a ``false`` subschema), jsonschema-rs's ``ValidationError.kind``
        name; ``None`` for other findings. The last token of ``schema_pointer``, the keyword's
        location, on every path (validators, journals, maps, wire checks) and both backends."""
        if self.schema_pointer is None:
            return None
        return _failing_keyword(self.message, self.schema_pointer)

    @property
    def instance_path(self) -> list[str | int] | None:
        """``pointer`` as jsonschema-rs's ``ValidationError.instance_path``: a list of tokens,
        those that read as an index as ``int`` (jsonschema-rs's rule, whether the token names an
        array item or a member such as ``"0"``); ``None`` for a finding with no pointer."""
        return None if self.pointer is None else path_of(self.pointer)

    @property
    def schema_path(self) -> list[str | int] | None:
        """``schema_pointer`` as jsonschema-rs's ``ValidationError.schema_path`` (the same
        list rule as ``instance_path``); ``None`` for a finding that is not a schema finding."""
        return None if self.schema_pointer is None else path_of(self.schema_pointer)

    def redacted(self, mask: str = DEFAULT_MASK) -> Finding:
        """This finding with every instance value its message quotes replaced by ``mask``
        (docs/reports.md), and its ``instance`` too; code, location and schema location stay."""
        message = redact_message(self.message, self.schema_pointer, mask)
        best_match = None if self.best_match is None else self.best_match.redacted(mask)
        if message == self.message and best_match is self.best_match and self.instance is None:
            return self
        instance = None if self.instance is None else mask
        return replace(self, message=message, best_match=best_match, instance=instance)

    def location(self) -> str:
        """``file:line`` plus the pointer, for one-line human output."""
        where = self.path or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        if self.pointer:
            where += f" {self.pointer}"
        return where


def _best_match_of(data: dict[str, Any] | None) -> BestMatch | None:
    return None if data is None else BestMatch.from_dict(data)


# A journal line's JSON defect: both engines end the parser's message with its column
# (rust/journal/mod.rs and _fallback/journal/__init__.py, ``with_column``), or with that and
# CAR's verdict (car-compatible).
# Anchored at the end, so a key or value the message quotes cannot pose as the column.
_COLUMN_AT_END = re.compile(
    r"\(column ([0-9]+)\)(?: \(PF[0-9]{3}\); CAR's event parser accepts the line)?\Z"
)


def _column(message: str) -> int | None:
    """The column a raw finding's message gives (the record has no field for it)."""
    found = _COLUMN_AT_END.search(message)
    return int(found[1]) if found else None


@dataclass
class Report:
    """The result of one check: ``ok`` is true when no finding has severity ``error``."""

    findings: list[Finding] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        # A valid document's report has no findings: answered without building a generator
        # (0.18 instead of 0.66 us, a sixth of a pipeline's `validate_json(line).ok`; #29).
        return not self.findings or not any(f.severity == "error" for f in self.findings)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    def redacted(self, mask: str = DEFAULT_MASK) -> Report:
        """This report with every finding ``Finding.redacted``, safe to publish."""
        return replace(self, findings=[f.redacted(mask) for f in self.findings])

    def to_dict(self) -> dict[str, Any]:
        return {
            "report_version": REPORT_VERSION,
            "ok": self.ok,
            "findings": [f.to_dict() for f in self.findings],
            "stats": self.stats,
        }

    def to_json(self, *, indent: int | None = None) -> str:
        return _json_text.dumps(self.to_dict(), indent)
