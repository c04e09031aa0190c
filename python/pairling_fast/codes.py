"""The catalogue of finding codes, read from its one source, ``codes.toml`` beside this file.

``codes.toml`` gives each code its constant name, default severity, title and description; this
module turns it into ``CODES`` (for ``pairling-fast explain``, SARIF and ``docs/findings.md``) and
into module constants named by the table (``codes.NOT_AN_OBJECT`` is PF301), which the Python
layer and the fallback emit. The Rust core reads the same file in build.rs, so a code exists in
one place. Regenerate the docs with
``python -m pairling_fast explain --all --markdown > docs/findings.md`` (a test keeps them in sync).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, cast

from ._tables import read_table
from .report import SEVERITIES, Severity

__all__ = ["CODES", "NAMES", "CodeInfo"]


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

if TYPE_CHECKING:
    # The constants are made from the table at import; to the type checker each one is a str,
    # and a misspelt name fails at import time (``from .codes import NO_SUCH`` raises).
    def __getattr__(name: str) -> str: ...
