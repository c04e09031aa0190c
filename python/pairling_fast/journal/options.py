"""The options every journal check takes, as one value (the mirror of Rust's ``journal::Options``),
and the interruption a check raises. Imports none of the modules that use it, so the check, its
state, the stream, the writers and both engines can all name these types without a circle."""

from __future__ import annotations

import dataclasses
from typing import Literal, TypedDict, cast

from .._bundled import release
from .._tables import DEFAULT_MAX_FINDINGS, DEFAULT_MAX_LINE_LENGTH, JOURNAL_DEFAULTS
from ..report import Report

__all__ = [
    "DEFAULT_CHAIN",
    "DEFAULT_PAYLOADS",
    "DEFAULT_PROFILE",
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

# The defaults from journal_defaults.toml, which the Rust core's ``journal::Options::default()``
# reads too (tests/test_api.py holds each among its type's choices).
DEFAULT_CHAIN: ChainMode = JOURNAL_DEFAULTS["chain"]
DEFAULT_PROFILE: Profile = JOURNAL_DEFAULTS["profile"]
DEFAULT_PAYLOADS: Payloads = JOURNAL_DEFAULTS["payloads"]


@dataclasses.dataclass(frozen=True)
class JournalOptions:
    """How a journal is checked: the mirror of Rust's ``journal::Options``, with the defaults every
    journal signature shares (from ``journal_defaults.toml``, which the Rust core reads too).
    Built once where a check starts and handed to the engine whole: the engines read these
    attributes (Rust: ``journal_options`` in ``rust/python/journal_checks.rs``).

    ``release`` is not given but derived, once, when the options are built: the bundled CAR
    release ``car_version`` names (``schemas.release``; ``ValueError`` for one not bundled). The
    engines and the ``--state`` file read it, never ``car_version``."""

    chain: ChainMode = DEFAULT_CHAIN
    lifecycle: bool = True
    max_findings: int | None = DEFAULT_MAX_FINDINGS
    profile: Profile = DEFAULT_PROFILE
    max_line_length: int = DEFAULT_MAX_LINE_LENGTH
    # The CAR release whose bundled ``journal.event`` events are validated against, as the user
    # wrote it (``None``: the default bundle).
    car_version: str | None = None
    payloads: Payloads = DEFAULT_PAYLOADS
    release: str = dataclasses.field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "release", release(self.car_version))

    def keywords(self) -> JournalKeywords:
        """The values these options were built from, as the keywords every journal check takes
        (the derived ``release`` is none of them)."""
        given = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        return cast(JournalKeywords, given)


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
