"""A journal check's stats as both engines return them: declared fields, read by typed key.

The mirror of Rust's ``JournalStats`` (``rust/journal/ordered.rs``), in its order; the core's stub
and the fallback name this type, and the report's ``stats`` of a journal is this dict
(docs/reports.md; a check resumed from a ``--state`` entry adds ``resumed`` to the report's
copy). Imports none of the modules that use it.
"""

from __future__ import annotations

from typing import TypedDict

from ..codes import Severity

__all__ = ["ChainStats", "JournalStats", "LineCounts"]


class ChainStats(TypedDict, total=False):
    """Every link verified (``verified``), or the line of the first that is not
    (``tampered_at``): one of the two."""

    verified: int
    tampered_at: int


class LineCounts(TypedDict):
    """The counts that open both the stats and a saved checker state."""

    lines: int
    events: int
    blank_lines: int
    invalid_lines: int
    kinds: dict[str, int]


class JournalStats(LineCounts):
    chained: int
    unchained: int
    verified: int
    chain: ChainStats | None
    """``None`` when the chain is not checked (``chain="off"``)."""
    suppressed_findings: int
    suppressed_codes: dict[str, dict[Severity, int]]
    errors: int
    open_runs: list[str]
    open_proposals: list[str]
    interrupted: bool
