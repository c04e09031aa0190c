"""Reads the package's data tables: the TOML files beside this module that build.rs reads too, so
Python and the Rust core take each shared fact (codes, journal defaults) from one file."""

from __future__ import annotations

import sys
from importlib import resources
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 reads TOML with tomli (a dependency there)
    import tomli as tomllib

__all__ = ["DEFAULT_MAX_FINDINGS", "DEFAULT_MAX_LINE_LENGTH", "read_table"]


def read_table(name: str) -> dict[str, Any]:
    """The parsed TOML file ``name`` of this package (``codes.toml``, ``journal_defaults.toml``)."""
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return tomllib.loads(text)


_JOURNAL_DEFAULTS = read_table("journal_defaults.toml")
DEFAULT_MAX_LINE_LENGTH: int = _JOURNAL_DEFAULTS["max_line_length"]
"""A longer journal line is reported (PF303) and skipped without being held in memory."""
DEFAULT_MAX_FINDINGS: int = _JOURNAL_DEFAULTS["max_findings"]
"""Findings listed per journal (and per file in ``check``); the rest are counted, not listed."""
