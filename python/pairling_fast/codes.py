"""The catalogue of finding codes, read from its one source, ``codes.toml`` beside this file.

``codes.toml`` gives each code its constant name, default severity, title and description; this
module turns it into ``CODES`` (for ``pairling-fast explain``, SARIF and ``docs/findings.md``) and
into module constants named by the table (``codes.NOT_AN_OBJECT`` is PF301), which the Python
layer and the fallback emit; a finding takes its severity from the table (``severity(code)``,
``Finding.of``), never from the place that emits it. The Rust core reads the same file in
build.rs, so a code exists in one place. Regenerate the docs with
``python -m pairling_fast explain --all --markdown > docs/findings.md`` (a test keeps them in sync).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple, cast

from ._tables import read_table

__all__ = ["CODES", "NAMES", "SEVERITIES", "CodeInfo", "Severity", "severity"]

Severity = Literal["info", "warning", "error"]
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")


class CodeInfo(NamedTuple):
    title: str
    severity: Severity
    description: str


def _load() -> tuple[dict[str, CodeInfo], dict[str, str]]:
    table = read_table("codes.toml")
    codes: dict[str, CodeInfo] = {}
    names: dict[str, str] = {}
    for code, entry in table.items():
        severity = entry["severity"]
        # The same checks build.rs makes, so a bad entry fails both builds the same way.
        if severity not in SEVERITIES or entry["name"] in names:
            raise ValueError(f"codes.toml: bad severity or repeated name in {code}")
        codes[code] = CodeInfo(entry["title"], cast(Severity, severity), entry["description"])
        names[entry["name"]] = code
    return codes, names


CODES: dict[str, CodeInfo]
NAMES: dict[str, str]
"""Constant name → code (NOT_AN_OBJECT → PF301), as build.rs names them in Rust."""
CODES, NAMES = _load()
globals().update(NAMES)


def severity(code: str) -> Severity:
    """The severity ``codes.toml`` gives ``code``, which every finding of it carries."""
    return CODES[code].severity


if TYPE_CHECKING:
    # The constants are made from the table at import; to the type checker each one is a str,
    # and a misspelt name fails at import time (``from .codes import NO_SUCH`` raises).
    def __getattr__(name: str) -> str: ...
