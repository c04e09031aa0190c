"""The results model of ``check_paths`` and its JSON report: ``FileResult`` (a checked file),
``Skipped`` (a file not checked, and why) and ``PathsReport`` (all of them; ``to_dict()`` is the
versioned JSON report, ``report_version`` 1, documented in docs/reports.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from . import _json_text
from .codes import UNREADABLE
from .options import SeverityOverride
from .redact import DEFAULT_MASK
from .report import REPORT_VERSION, SEVERITIES, Finding, Severity

__all__ = [
    "FileResult",
    "PathsReport",
    "Skipped",
    "not_listed",
    "with_severities",
    "with_severity",
]


def with_severity(finding: Finding, severities: Mapping[str, SeverityOverride]) -> Finding | None:
    """``finding`` with the severity the project gives its code (``config``'s ``severity``
    table, ``--severity``); ``None`` when that is ``off``. The one place a finished finding's
    severity changes: ``check_paths`` and ``check --follow`` both apply it."""
    severity = severities.get(finding.code, finding.severity)
    if severity == "off":
        return None
    return finding if severity == finding.severity else replace(finding, severity=severity)


def with_severities(
    findings: Iterable[Finding], severities: Mapping[str, SeverityOverride]
) -> list[Finding]:
    """``with_severity`` of each finding, those turned ``off`` left out."""
    if not severities:
        return list(findings)
    kept = (with_severity(finding, severities) for finding in findings)
    return [finding for finding in kept if finding is not None]


def not_listed(
    stats: Mapping[str, Any], severities: Mapping[str, SeverityOverride]
) -> dict[Severity, int]:
    """The findings a journal check counted over its cap (``stats["suppressed_codes"]``), by
    severity after the overrides."""
    counts: dict[Severity, int] = {}
    for code, by_severity in stats.get("suppressed_codes", {}).items():
        for severity, number in by_severity.items():
            adjusted = severities.get(code, severity)
            if adjusted != "off":
                counts[adjusted] = counts.get(adjusted, 0) + number
    return counts


@dataclass(frozen=True)
class Skipped:
    """A file or directory that was not checked, and why."""

    path: str
    reason: str
    error: str | None = None
    """Why a path named to be checked could not be read (a missing or denied object): an I/O
    error of the run (``PathsReport.io_errors``) besides being listed as not checked."""

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "reason": self.reason}


@dataclass
class FileResult:
    """One checked file: its kind (None when it could not even be read), findings and stats."""

    path: str
    kind: str | None
    findings: list[Finding] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    size: int = 0
    seconds: float = 0.0
    not_listed: dict[Severity, int] = field(default_factory=dict)
    """Findings over the ``max_findings`` cap, by severity: counted, not listed."""

    def fails(self, fail_on: Severity) -> bool:
        threshold = SEVERITIES.index(fail_on)
        return any(
            SEVERITIES.index(severity) >= threshold
            for severity in SEVERITIES
            if self.count(severity)
        )

    def count(self, severity: Severity) -> int:
        """Every finding of ``severity``, listed or not."""
        listed = sum(1 for f in self.findings if f.severity == severity)
        return listed + self.not_listed.get(severity, 0)

    @property
    def unlisted(self) -> int:
        return sum(self.not_listed.values())

    @property
    def partial(self) -> bool:
        """Checked only part way (a journal when Ctrl-C came): neither ok nor, for what was not
        read, failed."""
        return bool(self.stats.get("interrupted"))

    def progress_note(self) -> str:
        """How far a partly checked file got, for every format's line about it."""
        lines = self.stats.get("lines", 0)
        return f"partly checked: interrupted after {lines:,} line{'' if lines == 1 else 's'}"

    def status(self, fail_on: Severity = "error") -> str:
        """``"ok"``, ``"failed"`` or ``"partial"`` (the report's ``status`` of the file)."""
        if self.partial:
            return "partial"
        return "failed" if self.fails(fail_on) else "ok"

    def to_dict(self, fail_on: Severity = "error", *, timings: bool = False) -> dict[str, Any]:
        stats = dict(self.stats)
        if timings:
            stats["timing"] = {
                "bytes": self.size,
                "seconds": round(self.seconds, 6),
                "bytes_per_second": _rate(self.size, self.seconds),
            }
        return {
            "path": self.path,
            "kind": self.kind,
            # A file checked part way is not ok: null, or false when it failed on what was read.
            "ok": False if self.fails(fail_on) else (None if self.partial else True),
            "status": self.status(fail_on),
            "stats": stats,
            "findings": [f.to_dict() for f in self.findings],
            "not_listed": {s: self.not_listed[s] for s in SEVERITIES if self.not_listed.get(s)},
        }


def _rate(size: int, seconds: float) -> float | None:
    return round(size / seconds, 1) if seconds > 0 else None


@dataclass
class PathsReport:
    """Every file ``check_paths`` met: checked (``files``, sorted by path) or ``skipped``.

    ``ok`` is false when any file has a finding at or above ``fail_on``.
    """

    files: list[FileResult] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    backend: str = "rust"
    fail_on: Severity = "error"
    timings: bool = False
    seconds: float = 0.0
    interrupted: bool = False  # Ctrl-C: a partial report (see CheckInterrupted)
    max_findings: int | None = None

    @property
    def ok(self) -> bool:
        return not any(f.fails(self.fail_on) for f in self.files)

    @property
    def findings(self) -> list[Finding]:
        return [finding for file in self.files for finding in file.findings]

    def redacted(self, mask: str = DEFAULT_MASK) -> PathsReport:
        """This report with every finding ``Finding.redacted``: safe for a CI log or code
        scanning (``check --redact``)."""
        files = [
            replace(file, findings=[f.redacted(mask) for f in file.findings]) for file in self.files
        ]
        return replace(self, files=files)

    @property
    def io_errors(self) -> list[Finding]:
        """The findings that mean a file could not be read (``check`` exits with 2 on them),
        and the paths named that could not be read at all (listed as skipped)."""
        unread = [Finding.of(UNREADABLE, s.error, s.path) for s in self.skipped if s.error]
        read = [f for f in self.findings if f.code == UNREADABLE]
        return sorted(read + unread, key=lambda finding: finding.path or "")

    def count(self, severity: Severity) -> int:
        """Every finding of ``severity``, listed or over the cap."""
        return sum(file.count(severity) for file in self.files)

    @property
    def unlisted(self) -> int:
        """Findings counted but not listed (over ``max_findings`` in their file)."""
        return sum(file.unlisted for file in self.files)

    @property
    def documents(self) -> int:
        """Files whose kind was known and that were checked (unreadable ones are not)."""
        return sum(1 for file in self.files if file.kind is not None)

    @property
    def summary(self) -> dict[str, int]:
        return {
            "files": len(self.files),
            "errors": self.count("error"),
            "warnings": self.count("warning"),
            "infos": self.count("info"),
            "not_listed": self.unlisted,
        }

    def to_dict(self) -> dict[str, Any]:
        from . import __version__

        report: dict[str, Any] = {
            "report_version": REPORT_VERSION,
            "tool": "pairling_fast",
            "version": __version__,
            "backend": self.backend,
            # Interrupted, a run that has not failed yet has not passed either.
            "ok": None if self.ok and self.interrupted else self.ok,
            "files": [f.to_dict(self.fail_on, timings=self.timings) for f in self.files],
            "skipped": [s.to_dict() for s in self.skipped],
            "summary": self.summary,
            "max_findings": self.max_findings,
        }
        if self.interrupted:
            report["interrupted"] = True
        if self.timings:
            total = sum(f.size for f in self.files)
            report["summary"]["timing"] = {
                "bytes": total,
                "seconds": round(self.seconds, 6),
                "bytes_per_second": _rate(total, self.seconds),
            }
        return report

    def to_json(self, *, indent: int | None = 2) -> str:
        return _json_text.dumps(self.to_dict(), indent)
