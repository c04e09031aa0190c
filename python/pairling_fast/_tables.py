"""Reads the package's data tables: the TOML files beside this module that build.rs reads too, so
Python and the Rust core take each shared fact (codes, journal defaults) from one file."""

from __future__ import annotations

import json
import sys
from typing import Any

from ._load_core import import_core

__all__ = [
    "DEFAULT_MAX_FINDINGS",
    "DEFAULT_MAX_LINE_LENGTH",
    "JOURNAL_DEFAULTS",
    "parse_toml",
    "read_table",
]


def read_table(name: str) -> dict[str, Any]:
    """The parsed TOML file ``name`` of this package (``codes.toml``, ``journal_defaults.toml``,
    ``car_payloads.toml``).

    The Rust core carries each table as build.rs parsed it, as JSON, which is read here at C
    speed: parsing ``codes.toml`` with tomllib was a third of ``import pairling_fast``. Without
    the core the file itself is parsed (``tests/test_codes.py`` holds the two readings equal).
    """
    try:
        core = import_core()
    except ImportError:
        carried = None
    else:
        carried = core.table_json(name)
    if carried is not None:
        table: dict[str, Any] = json.loads(carried)
        return table
    return read_toml(name)


def read_toml(name: str) -> dict[str, Any]:
    """The TOML file ``name`` beside this module, parsed."""
    from importlib import resources

    return parse_toml(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))


def parse_toml(text: str) -> dict[str, Any]:
    """``text`` parsed as TOML; a ``ValueError`` (tomllib's ``TOMLDecodeError``) if it is not.
    tomllib is imported here, when a TOML text is first parsed, not with the package."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10 reads TOML with tomli (a dependency there)
        import tomli as tomllib

    return tomllib.loads(text)


JOURNAL_DEFAULTS = read_table("journal_defaults.toml")
"""A journal check's defaults, the one table (the Rust core's come from it too)."""
DEFAULT_MAX_LINE_LENGTH: int = JOURNAL_DEFAULTS["max_line_length"]
"""A longer journal line is reported (PF303) and skipped without being held in memory."""
DEFAULT_MAX_FINDINGS: int = JOURNAL_DEFAULTS["max_findings"]
"""Findings listed per journal (and per file in ``check``); the rest are counted, not listed."""
