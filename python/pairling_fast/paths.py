"""Walk files and directories, tell each file's kind by its content, check them all in parallel.

``check_paths(paths)`` is what ``pairling-fast check`` runs. Every file it meets ends up either
checked (``PathsReport.files``) or skipped with the reason (``PathsReport.skipped``): nothing is
ignored silently. ``PathsReport.to_dict()`` is the versioned JSON report (``report_version`` 1).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

from . import _backend, schemas
from .canonical import parse_json
from .errors import CanonicalizationError, PairlingError
from .journal import Profile, check_journal
from .locate import with_lines
from .maps import check_map
from .report import REPORT_VERSION, SEVERITIES, Finding, Report, Severity
from .validator import json_error_finding
from .wire import check_rpc_result, check_transcript, check_wire_schema

__all__ = [
    "DEFAULT_EXCLUDES",
    "KINDS",
    "CheckProgress",
    "Classification",
    "FileResult",
    "PathArgumentError",
    "PathsReport",
    "SeverityOverride",
    "Skipped",
    "check_paths",
    "classify",
]

SeverityOverride = Literal["info", "warning", "error", "off"]
"""What a project may set a finding code's severity to; ``off`` drops its findings."""

KINDS = ("map", "journal", "transcript", "rpc-result", "wire-schema")
"""The document kinds ``check`` knows; ``--type`` takes one of them."""

DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    ".benchmarks",
    "target",
    "dist",
    "build",
    "*.egg-info",
)
"""Directories of tools, VCS and build outputs that hold no documents to check (a built clone has
thousands of files under ``target/``): listed as skipped when met while walking. A path named
explicitly is checked even when one of these matches it."""

UNREADABLE = "PF501"
INTERNAL_ERROR = "PF901"

# Enough to see the top-level markers of a document and the first line of a JSONL file.
SNIFF_BYTES = 1 << 20
_MAP_SCHEMA_FILE = "coding-agent-remote-control-capability-map.schema.json"
_WIRE_FORMAT = "car.wire-schema.v1"
_MAP_SCHEMA_MARK = re.compile(
    rb'"\$schema"\s*:\s*"[^"]*coding-agent-remote-control-capability-map\.schema\.json"'
)
_MAP_VERSION_MARK = re.compile(rb'"schema_version"\s*:\s*"2\.0\.0"')
_MAP_PROVIDERS_MARK = re.compile(rb'"providers"\s*:')
_WIRE_SCHEMA_MARK = re.compile(rb'"format"\s*:\s*"car\.wire-schema\.v1"')
_KIND_REASONS = {
    "map": "capability map ($schema / schema_version)",
    "wire-schema": f'format "{_WIRE_FORMAT}"',
}
_RESULT_SUFFIX = ".result.json"
_RPC_ID_PREFIX = "car.rpc."
_RPC_ID_SUFFIX = ".result"
_JSON_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


class PathArgumentError(PairlingError, OSError):
    """A path named on the command line (or given to ``check_paths``) does not exist or cannot
    be opened at all."""


# ---------------------------------------------------------------------------------------------
# Classification


@dataclass(frozen=True)
class Classification:
    """What a file is: ``kind`` (one of ``KINDS``) or None with the ``reason`` it is skipped."""

    kind: str | None
    reason: str
    method: str | None = None


def rpc_methods() -> frozenset[str]:
    """The JSON-RPC methods whose result schema is bundled (``car.rpc.<method>.result``)."""
    return frozenset(
        schema_id[len(_RPC_ID_PREFIX) : -len(_RPC_ID_SUFFIX)]
        for schema_id in schemas.ids()
        if schema_id.startswith(_RPC_ID_PREFIX) and schema_id.endswith(_RPC_ID_SUFFIX)
    )


def result_method(name: str, methods: Iterable[str]) -> str | None:
    """The method a ``*.<method>.result.json`` file name names (the longest known one)."""
    if not name.endswith(_RESULT_SUFFIX):
        return None
    parts = name[: -len(_RESULT_SUFFIX)].split(".")
    known = set(methods)
    for start in range(len(parts)):
        candidate = ".".join(parts[start:])
        if candidate in known:
            return candidate
    return None


class _FirstLine(NamedTuple):
    value: Any
    complete: bool  # the line is one whole JSON value (a JSON Lines record, or a one-line file)


def _first_line(head: bytes) -> _FirstLine:
    for line in head.splitlines():
        if line.strip(_JSON_WHITESPACE):
            try:
                return _FirstLine(json.loads(line), True)
            except ValueError:
                return _FirstLine(None, False)
    return _FirstLine(None, False)


def _document_kind(value: Any) -> str | None:
    """The kind a whole parsed document has by its top-level members, if any."""
    if not isinstance(value, dict):
        return None
    schema = value.get("$schema")
    if (isinstance(schema, str) and schema.endswith(_MAP_SCHEMA_FILE)) or (
        value.get("schema_version") == "2.0.0" and "providers" in value
    ):
        return "map"
    if value.get("format") == _WIRE_FORMAT:
        return "wire-schema"
    return None


def _is_rpc_message(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_is_rpc_message(item) for item in value)
    if not isinstance(value, dict):
        return False
    if value.get("jsonrpc") == "2.0":
        return True
    # Transcripts may wrap each message with its direction or time: {"dir": …, "message": {…}}.
    return any(isinstance(v, dict) and v.get("jsonrpc") == "2.0" for v in value.values())


def _is_event(value: Any) -> bool:
    return isinstance(value, dict) and "kind" in value and "timestamp" in value


def classify(name: str, head: bytes, methods: Iterable[str]) -> Classification:
    """Tell a file's kind from its first bytes (``head``) and, for RPC results, its name.

    JSON Lines whose first record is a CAR journal event or a JSON-RPC 2.0 message are a journal
    or a transcript; a document is a capability map (``$schema`` naming the map schema, or
    ``schema_version`` 2.0.0 with ``providers``) or a CAR wire-schema bundle (``format``
    ``car.wire-schema.v1``) by its top-level members; else the name ``*.<method>.result.json``
    makes an RPC result.
    """
    text = head[len(_BOM) :] if head.startswith(_BOM) else head
    stripped = text.lstrip(_JSON_WHITESPACE)
    first = _first_line(stripped)
    if first.complete:
        if _is_event(first.value):
            return Classification("journal", "first line is a CAR journal event")
        if _is_rpc_message(first.value):
            return Classification("transcript", "first line is a JSON-RPC 2.0 message")
        kind = _document_kind(first.value)
    elif stripped.startswith(b"{"):
        # A document over several lines: its top-level markers, found in the text.
        kind = _marked_kind(text)
    else:
        kind = None
    if kind is not None:
        return Classification(kind, _KIND_REASONS[kind])
    if name.endswith(_RESULT_SUFFIX):
        method = result_method(name, methods)
        if method is not None:
            return Classification("rpc-result", f"named after RPC method {method}", method)
        return Classification(
            None, "named *.result.json, but no known RPC method in the name (see `schemas`)"
        )
    if not stripped:
        return Classification(None, "empty file")
    if b"\x00" in text[:8192]:
        return Classification(None, "binary file")
    if not stripped.startswith((b"{", b"[")):
        return Classification(None, "not JSON")
    return Classification(None, "JSON, but not a document kind pairling_fast checks")


def _marked_kind(text: bytes) -> str | None:
    if _MAP_SCHEMA_MARK.search(text) or (
        _MAP_VERSION_MARK.search(text) and _MAP_PROVIDERS_MARK.search(text)
    ):
        return "map"
    if _WIRE_SCHEMA_MARK.search(text):
        return "wire-schema"
    return None


# ---------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Skipped:
    """A file or directory that was not checked, and why."""

    path: str
    reason: str

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
            "ok": not self.fails(fail_on),
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
    max_findings: int | None = None

    @property
    def ok(self) -> bool:
        return not any(f.fails(self.fail_on) for f in self.files)

    @property
    def findings(self) -> list[Finding]:
        return [finding for file in self.files for finding in file.findings]

    @property
    def io_errors(self) -> list[Finding]:
        """The findings that mean a file could not be read (``check`` exits with 2 on them)."""
        return [f for f in self.findings if f.code == UNREADABLE]

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
            "ok": self.ok,
            "files": [f.to_dict(self.fail_on, timings=self.timings) for f in self.files],
            "skipped": [s.to_dict() for s in self.skipped],
            "summary": self.summary,
            "max_findings": self.max_findings,
        }
        if self.timings:
            total = sum(f.size for f in self.files)
            report["summary"]["timing"] = {
                "bytes": total,
                "seconds": round(self.seconds, 6),
                "bytes_per_second": _rate(total, self.seconds),
            }
        return report

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


class CheckProgress(Protocol):
    """Told how much work there is, then about each file as it is done (in completion order).

    An object that also has ``checking(path, done)`` is told, from the worker threads, how many
    bytes of a file being checked have been read so far (journals report while they are checked,
    so a bar moves on one big file); ``advance`` then gives the file's whole size.
    """

    def start(self, files: int, total_bytes: int) -> None: ...
    def advance(self, result: FileResult | Skipped, size: int) -> None: ...


# ---------------------------------------------------------------------------------------------
# Walking


@dataclass(frozen=True)
class _Candidate:
    path: Path
    display: str
    size: int


def _special_file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _os_reason(error: OSError) -> str:
    return error.strerror or str(error)


class _Walker:
    """Collects the regular files under the given paths; everything else becomes ``Skipped``."""

    def __init__(
        self, excludes: Sequence[str], follow_symlinks: bool, named_excludes: Sequence[str]
    ) -> None:
        self.excludes = tuple(excludes)
        # What applies to the paths named on the command line: the user's own patterns only.
        self.named_excludes = tuple(named_excludes)
        self.follow_symlinks = follow_symlinks
        self.files: list[_Candidate] = []
        self.skipped: list[Skipped] = []
        self.unreadable: list[FileResult] = []
        self._files_seen: dict[tuple[int, int], str] = {}
        self._directories_seen: dict[tuple[int, int], str] = {}

    def _excluded_by(
        self, display: str, name: str, patterns: Sequence[str] | None = None
    ) -> str | None:
        posix = display.replace(os.sep, "/")
        for pattern in self.excludes if patterns is None else patterns:
            if fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(posix, pattern):
                return pattern
        return None

    def add_argument(self, raw: str) -> None:
        path = Path(raw)
        display = os.path.normpath(raw)
        # A path the user names is followed even when it is a symlink: they asked for it.
        try:
            info = path.stat()
        except FileNotFoundError:
            if path.is_symlink():
                raise PathArgumentError(f"{raw}: broken symbolic link") from None
            raise PathArgumentError(f"{raw}: no such file or directory") from None
        except OSError as error:
            raise PathArgumentError(f"{raw}: {_os_reason(error)}") from None
        pattern = self._excluded_by(display, path.name, self.named_excludes)
        if pattern is not None:
            self.skipped.append(Skipped(display, f"excluded by {pattern!r}"))
        elif stat.S_ISDIR(info.st_mode):
            self._walk(path, display, (), info)
        else:
            self._add_file(path, display, info)

    def _walk(
        self,
        directory: Path,
        display: str,
        ancestors: tuple[tuple[int, int], ...],
        info: os.stat_result,
    ) -> None:
        key = (info.st_dev, info.st_ino)
        if key in ancestors:
            self.skipped.append(Skipped(display, "symbolic link loop (leads back to a parent)"))
            return
        if key in self._directories_seen:
            first = self._directories_seen[key]
            self.skipped.append(Skipped(display, f"same directory as {first}, walked once"))
            return
        self._directories_seen[key] = display
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError as error:
            self._unreadable(display, f"cannot list directory: {_os_reason(error)}")
            return
        for entry in entries:
            child = os.path.join(display, entry.name) if display != "." else entry.name
            pattern = self._excluded_by(child, entry.name)
            if pattern is not None:
                self.skipped.append(Skipped(child, f"excluded by {pattern!r}"))
                continue
            is_link = entry.is_symlink()
            if is_link and not self.follow_symlinks:
                self.skipped.append(
                    Skipped(child, "symbolic link, not followed (use --follow-symlinks)")
                )
                continue
            try:
                child_info = os.stat(entry.path)
            except FileNotFoundError:
                reason = "broken symbolic link" if is_link else "vanished while walking"
                self.skipped.append(Skipped(child, reason))
                continue
            except OSError as error:
                self._unreadable(child, _os_reason(error))
                continue
            if stat.S_ISDIR(child_info.st_mode):
                self._walk(Path(entry.path), child, (*ancestors, key), child_info)
            else:
                self._add_file(Path(entry.path), child, child_info)

    def _add_file(self, path: Path, display: str, info: os.stat_result) -> None:
        if not stat.S_ISREG(info.st_mode):
            self.skipped.append(Skipped(display, f"{_special_file_kind(info.st_mode)}, not read"))
            return
        key = (info.st_dev, info.st_ino)
        if key in self._files_seen:
            self.skipped.append(Skipped(display, f"same file as {self._files_seen[key]}"))
            return
        self._files_seen[key] = display
        self.files.append(_Candidate(path, display, info.st_size))

    def _unreadable(self, display: str, reason: str) -> None:
        finding = Finding(UNREADABLE, "error", reason, path=display)
        self.unreadable.append(FileResult(display, None, [finding]))


# ---------------------------------------------------------------------------------------------
# Checking one file


def _run_check(
    kind: str,
    path: Path,
    method: str | None,
    profile: Profile,
    max_findings: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> Report:
    if kind == "map":
        return check_map(path)
    if kind == "journal":
        return check_journal(path, profile=profile, max_findings=max_findings, progress=progress)
    if kind == "transcript":
        return check_transcript(path)
    if kind == "wire-schema":
        return check_wire_schema(path)
    assert method is not None, "an rpc-result is classified with its method"
    try:
        result = parse_json(path.read_bytes())
    except CanonicalizationError as error:
        return Report(findings=[json_error_finding(error)])
    return check_rpc_result(method, result)


def _run_on_cluster(
    kind: str,
    path: Path,
    method: str | None,
    profile: Profile,
    max_findings: int | None,
    client: Any,
) -> Report:
    """On a Dask cluster (``client``): journals split into chunks whose reports equal the local
    check's (docs/cluster.md); any other file is one task on a worker, on the driver's backend."""
    if kind == "journal":
        from .distributed import check_journal as check_journal_on_cluster

        return check_journal_on_cluster(path, client, profile=profile, max_findings=max_findings)
    task = client.submit(
        _run_on_backend, _backend.active_name(), kind, path, method, profile, pure=False
    )
    report: Report = task.result()
    return report


def _run_on_backend(
    backend: str, kind: str, path: Path, method: str | None, profile: Profile
) -> Report:
    with _backend.use(backend):
        return _run_check(kind, path, method, profile)


def _apply_severities(
    findings: Iterable[Finding], severities: Mapping[str, SeverityOverride], display: str
) -> list[Finding]:
    adjusted: list[Finding] = []
    for finding in findings:
        severity = severities.get(finding.code, finding.severity)
        if severity == "off":
            continue
        adjusted.append(replace(finding, severity=severity, path=display))
    return adjusted


# Kinds that are one JSON document, whose pointers can be turned into lines (``check_map``
# locates its own findings).
_DOCUMENT_KINDS = ("rpc-result", "wire-schema")


def _with_lines(kind: str, path: Path, findings: list[Finding]) -> list[Finding]:
    """Findings of one-document kinds that have a pointer but no line get the pointer's line."""
    if kind not in _DOCUMENT_KINDS or all(
        f.line is not None or f.pointer is None for f in findings
    ):
        return findings
    return with_lines(path.read_bytes(), findings)


def _not_listed(
    stats: Mapping[str, Any], severities: Mapping[str, SeverityOverride]
) -> dict[Severity, int]:
    """The findings a journal check counted over its cap, by severity after the overrides."""
    counts: dict[Severity, int] = {}
    for code, by_severity in stats.get("suppressed_codes", {}).items():
        for severity, number in by_severity.items():
            adjusted = severities.get(code, severity)
            if adjusted != "off":
                counts[adjusted] = counts.get(adjusted, 0) + number
    return counts


def _capped(
    findings: list[Finding], not_listed: dict[Severity, int], max_findings: int | None
) -> list[Finding]:
    """The first ``max_findings`` findings; the rest are added to ``not_listed``."""
    if max_findings is None or len(findings) <= max_findings:
        return findings
    for finding in findings[max_findings:]:
        not_listed[finding.severity] = not_listed.get(finding.severity, 0) + 1
    return findings[:max_findings]


def _read_head(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(SNIFF_BYTES)


class _Stopped(Exception):
    """Raised into a journal check running in a worker thread when the run is interrupted."""


@dataclass(frozen=True)
class _FileProgress:
    """A journal check's ``progress`` callback: passes bytes read on to ``checking`` and stops the
    check when the run is interrupted (Ctrl-C is delivered to the main thread only; without this
    a big journal would be checked to its end before ``check`` could exit)."""

    display: str
    checking: Callable[[str, int], object] | None
    stopping: threading.Event

    def __call__(self, done: int) -> None:
        if self.stopping.is_set():
            raise _Stopped(self.display)
        if self.checking is not None:
            self.checking(self.display, done)


def _check_one(
    candidate: _Candidate,
    kind: str | None,
    methods: frozenset[str],
    severities: Mapping[str, SeverityOverride],
    profile: Profile,
    client: Any = None,
    max_findings: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> FileResult | Skipped:
    started = time.perf_counter()
    result = FileResult(candidate.display, kind, size=candidate.size)
    try:
        head = _read_head(candidate.path)
        classification = classify(candidate.path.name, head, methods)
        if kind is None:
            if classification.kind is None:
                return Skipped(candidate.display, classification.reason)
            result.kind = classification.kind
        elif kind == "rpc-result" and classification.method is None:
            return Skipped(
                candidate.display,
                "--type rpc-result, but the name does not say the method "
                "(name it *.<method>.result.json)",
            )
        assert result.kind is not None
        if client is None:
            report = _run_check(
                result.kind, candidate.path, classification.method, profile, max_findings, progress
            )
        else:
            report = _run_on_cluster(
                result.kind, candidate.path, classification.method, profile, max_findings, client
            )
        result.stats = dict(report.stats)
        findings = _with_lines(result.kind, candidate.path, report.findings)
    except OSError as error:
        findings = [Finding(UNREADABLE, "error", _os_reason(error))]
    except Exception as error:  # one file's failure never stops the others
        message = f"the {result.kind} check failed: {type(error).__name__}: {error}"
        findings = [Finding(INTERNAL_ERROR, "error", message)]
    result.not_listed = _not_listed(result.stats, severities)
    result.findings = _capped(
        _apply_severities(findings, severities, candidate.display), result.not_listed, max_findings
    )
    result.seconds = time.perf_counter() - started
    return result


# ---------------------------------------------------------------------------------------------
# The public entry point


def check_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    kind: str | None = None,
    exclude: Sequence[str] = (),
    default_excludes: bool = True,
    follow_symlinks: bool = False,
    jobs: int | None = None,
    fail_on: Severity = "error",
    severities: Mapping[str, SeverityOverride] | None = None,
    timings: bool = False,
    backend: str | None = None,
    progress: CheckProgress | None = None,
    profile: Profile = "strict",
    client: Any = None,
    max_findings: int | None = 1000,
) -> PathsReport:
    """Check every document under ``paths`` (files or directories), in parallel.

    ``kind`` forces one of ``KINDS`` instead of telling kinds from content; ``exclude`` adds glob
    patterns (matched against a file's name and its path) to ``DEFAULT_EXCLUDES``;
    ``severities`` maps finding codes to ``"error"``/``"warning"``/``"info"`` or ``"off"``
    (dropped); ``timings`` adds per-file time and throughput to the stats; ``profile`` is the
    journals' (``check_journal``): ``"car-compatible"`` reports what CAR's own parser tolerates
    as PF304 warnings instead of errors. ``max_findings`` caps the findings listed per file
    (``None``: all); the others are still counted (``FileResult.not_listed``, the summary's
    ``not_listed``) and still decide ``ok``. A path that does not
    exist raises ``PathArgumentError``; a file that cannot be read is a PF501 finding. With a Dask
    ``client`` (``distributed.Client``) the checks run on its cluster, with the same report
    (docs/cluster.md).
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}: choose one of {', '.join(KINDS)}")
    if fail_on not in SEVERITIES:
        raise ValueError(f"fail_on must be one of {', '.join(SEVERITIES)}, not {fail_on!r}")
    overrides = dict(severities or {})
    for code, severity in overrides.items():
        if severity not in (*SEVERITIES, "off"):
            raise ValueError(f"severity of {code} must be one of {SEVERITIES} or 'off'")
    if backend is not None:
        with _backend.use(backend):
            return check_paths(
                paths,
                kind=kind,
                exclude=exclude,
                default_excludes=default_excludes,
                follow_symlinks=follow_symlinks,
                jobs=jobs,
                fail_on=fail_on,
                severities=overrides,
                timings=timings,
                progress=progress,
                profile=profile,
                client=client,
                max_findings=max_findings,
            )

    started = time.perf_counter()
    excludes = (*DEFAULT_EXCLUDES, *exclude) if default_excludes else tuple(exclude)
    walker = _Walker(excludes, follow_symlinks, exclude)
    for raw in paths:
        walker.add_argument(os.fspath(raw))
    methods = rpc_methods()
    report = PathsReport(
        files=list(walker.unreadable),
        skipped=list(walker.skipped),
        backend=_backend.active_name(),
        fail_on=fail_on,
        timings=timings,
        max_findings=max_findings,
    )
    checking = getattr(progress, "checking", None)
    stopping = threading.Event()
    if progress is not None:
        progress.start(len(walker.files), sum(c.size for c in walker.files))
    workers = max(1, jobs if jobs is not None else (os.cpu_count() or 1))
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        futures = {
            pool.submit(
                _check_one,
                candidate,
                kind,
                methods,
                overrides,
                profile,
                client,
                max_findings,
                _FileProgress(candidate.display, checking, stopping),
            ): candidate
            for candidate in walker.files
        }
        for future in as_completed(futures):
            outcome = future.result()
            if isinstance(outcome, Skipped):
                report.skipped.append(outcome)
            else:
                report.files.append(outcome)
            if progress is not None:
                progress.advance(outcome, futures[future].size)
    except BaseException:
        # Ctrl-C reaches only this thread: tell the journals being checked to stop too.
        stopping.set()
        raise
    finally:
        # On Ctrl-C, drop the files not started yet instead of checking them all first.
        pool.shutdown(wait=True, cancel_futures=True)
    report.files.sort(key=lambda f: f.path)
    report.skipped.sort(key=lambda s: s.path)
    report.seconds = time.perf_counter() - started
    return report
