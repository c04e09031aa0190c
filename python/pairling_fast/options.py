"""The options of a ``check``, as one value: ``CheckOptions``.

The command line parses its flags and merges them with the configuration file once, into one
``CheckOptions`` (cli.py); an API caller builds one (or passes ``check_paths`` its fields as
keywords, which build it). Each value is resolved when the object is built, once: the defaults
come from ``journal_defaults.toml`` (through ``journal.options``), ``car_version`` becomes a
bundled CAR release in ``schemas.release`` (kept in ``journal.release``), ``max_document_bytes``
takes ``$PAIRLING_FAST_MAX_DOCUMENT_BYTES``. The object then travels whole: to every file's check,
to a Dask worker, and, as its ``journal`` (a ``JournalOptions``), to the engine.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict, get_args

from ._files import max_document_bytes as _max_document_bytes
from ._tables import DEFAULT_MAX_FINDINGS
from .classify import KINDS
from .journal.options import (
    DEFAULT_PAYLOADS,
    DEFAULT_PROFILE,
    JournalOptions,
    Payloads,
    Profile,
)
from .report import SEVERITIES, Severity

__all__ = ["CheckKeywords", "CheckOptions", "FailOn", "SeverityOverride"]

SeverityOverride = Literal["info", "warning", "error", "off"]
"""What a project may set a finding code's severity to; ``off`` drops its findings."""
FailOn = Literal["error", "warning"]
"""What ``check --fail-on`` and the configuration's ``fail-on`` take."""


@dataclasses.dataclass(frozen=True)
class CheckOptions:
    """How ``check_paths`` (and ``pairling-fast check``) checks: one frozen value, built once.

    ``kind`` forces one of ``KINDS`` instead of telling kinds from content; ``exclude`` adds glob
    patterns (matched against a file's name and its path) to ``DEFAULT_EXCLUDES`` (unless
    ``default_excludes`` is false); ``follow_symlinks`` follows links met in directories;
    ``jobs`` is how many files are checked at once (default: the cores); ``fail_on`` is the
    severity that makes the report not ``ok``; ``severities`` maps finding codes to
    ``"error"``/``"warning"``/``"info"`` or ``"off"`` (dropped); ``timings`` adds per-file time
    and throughput to the stats; ``backend`` picks the engine (``"rust"``, ``"python"``;
    default: the active one). ``profile``, ``car_version`` and ``payloads`` are the journals'
    (``check_journal``): ``car_version`` also picks the bundled wire schema transcripts, RPC
    results and params are checked against (docs/wire.md). ``manifest`` (Pairling's reviewed
    operation manifest, parsed JSON) adds the release-join rules to every capability map. A
    whole JSON document over ``max_document_bytes`` (default ``$PAIRLING_FAST_MAX_DOCUMENT_BYTES``,
    else 256 MiB) is a PF502 finding, not read. ``max_findings`` caps the findings listed per
    file (``None``: all; the rest are counted). ``redact`` replaces every instance value quoted
    in a finding's message by that mask (``check --redact``).

    A value that cannot be used is a ``ValueError`` here, before any file is read: an unknown
    kind, severity or payloads mode, a CAR version not bundled. ``journal`` and ``wire_release``
    are derived, not given: the ``JournalOptions`` every journal of the run is checked with, with
    the release ``car_version`` resolved to (``schemas.release``), and that release for the wire
    documents (``None`` when no ``car_version`` is given: a transcript may then pick its own).
    """

    kind: str | None = None
    exclude: Sequence[str] = ()
    default_excludes: bool = True
    follow_symlinks: bool = False
    jobs: int | None = None
    fail_on: Severity = "error"
    severities: Mapping[str, SeverityOverride] = dataclasses.field(default_factory=dict)
    timings: bool = False
    backend: str | None = None
    profile: Profile = DEFAULT_PROFILE
    car_version: str | None = None
    manifest: Any = None
    max_document_bytes: int | None = None
    max_findings: int | None = DEFAULT_MAX_FINDINGS
    payloads: Payloads = DEFAULT_PAYLOADS
    redact: str | None = None
    journal: JournalOptions = dataclasses.field(init=False, repr=False, compare=False)
    wire_release: str | None = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind is not None and self.kind not in KINDS:
            raise ValueError(f"unknown kind {self.kind!r}: choose one of {', '.join(KINDS)}")
        if self.fail_on not in SEVERITIES:
            raise ValueError(
                f"fail_on must be one of {', '.join(SEVERITIES)}, not {self.fail_on!r}"
            )
        for name, given, kind in (
            ("profile", self.profile, Profile),
            ("payloads", self.payloads, Payloads),
        ):
            if given not in get_args(kind):
                choices = ", ".join(get_args(kind))
                raise ValueError(f"{name} must be one of {choices}, not {given!r}")
        severities = dict(self.severities or {})
        for code, severity in severities.items():
            if severity not in (*SEVERITIES, "off"):
                raise ValueError(f"severity of {code} must be one of {SEVERITIES} or 'off'")
        journal = JournalOptions(
            max_findings=self.max_findings,
            profile=self.profile,
            car_version=self.car_version,
            payloads=self.payloads,
        )
        resolved = {
            "exclude": tuple(self.exclude),
            "severities": severities,
            "max_document_bytes": _max_document_bytes(self.max_document_bytes),
            "journal": journal,
            # Transcripts, RPC results and params: the release chosen, or None, which lets a
            # transcript switch to the bundle its handshake names (docs/wire.md).
            "wire_release": None if self.car_version is None else journal.release,
        }
        for name, value in resolved.items():
            object.__setattr__(self, name, value)


class CheckKeywords(TypedDict, total=False):
    """``CheckOptions``'s fields as the keyword arguments ``check_paths`` still takes (each call
    builds the one object from them); tests/test_api.py holds the two lists of names equal."""

    kind: str | None
    exclude: Sequence[str]
    default_excludes: bool
    follow_symlinks: bool
    jobs: int | None
    fail_on: Severity
    severities: Mapping[str, SeverityOverride]
    timings: bool
    backend: str | None
    profile: Profile
    car_version: str | None
    manifest: Any
    max_document_bytes: int | None
    max_findings: int | None
    payloads: Payloads
    redact: str | None
