"""The options every journal check takes, as one value (the mirror of Rust's ``journal::Options``),
and the interruption a check raises. Imports none of the modules that use it, so the check, its
state, the stream, the writers and both engines can all name these types without a circle."""

from __future__ import annotations

import dataclasses
from typing import Literal, TypedDict

from .._tables import DEFAULT_MAX_FINDINGS, DEFAULT_MAX_LINE_LENGTH
from ..report import Report

__all__ = [
    "ChainMode",
    "JournalInterrupted",
    "JournalKeywords",
    "JournalOptions",
    "Payloads",
    "Profile",
]

ChainMode = Literal["auto", "require", "off"]
Profile = Literal["strict", "car-compatible"]
# CAR's payload contracts (docs/journals.md): off, warnings (PF360-PF362), errors (PF363-PF365).
Payloads = Literal["off", "warn", "error"]


@dataclasses.dataclass(frozen=True)
class JournalOptions:
    """How a journal is checked: the mirror of Rust's ``journal::Options``, with the defaults every
    journal signature shares (the numbers come from ``journal_defaults.toml``, which the Rust core
    reads too). Built once where a check starts and handed to the engine whole: the engines read
    these attributes (Rust: ``journal_options`` in ``rust/python/journal_checks.rs``)."""

    chain: ChainMode = "auto"
    lifecycle: bool = True
    max_findings: int | None = DEFAULT_MAX_FINDINGS
    profile: Profile = "strict"
    max_line_length: int = DEFAULT_MAX_LINE_LENGTH
    # The CAR release whose bundled ``journal.event`` events are validated against (``None``: the
    # default bundle).
    car_version: str | None = None
    payloads: Payloads = "warn"


class JournalKeywords(TypedDict, total=False):
    """``JournalOptions``'s fields as the keyword arguments every journal check takes
    (``check_journal``, ``JournalStream``, the cluster's journal calls), so their signatures do
    not each repeat the list: a check declares ``**keywords: Unpack[JournalKeywords]`` and builds
    ``JournalOptions(**keywords)``; a keyword left out gets the dataclass's default, an unknown
    one is a ``TypeError``. tests/test_api.py holds the two lists of names equal."""

    chain: ChainMode
    lifecycle: bool
    max_findings: int | None
    profile: Profile
    max_line_length: int
    car_version: str | None
    payloads: Payloads


class JournalInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped ``check_journal``; ``report`` covers the lines read until then.

    A ``KeyboardInterrupt``, so an unprepared caller stops as Ctrl-C always does; a caller that
    wants the partial result catches it (``stats["interrupted"]`` is true).
    """

    def __init__(self, report: Report) -> None:
        super().__init__(f"interrupted after {report.stats.get('lines', 0)} lines")
        self.report = report
