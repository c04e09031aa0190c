"""Walk files and directories, tell each file's kind by its content, check them all in parallel.

``check_paths(paths)`` is what ``pairling-fast check`` runs. Every file it meets ends up either
checked (``PathsReport.files``) or skipped with the reason (``PathsReport.skipped``): nothing is
ignored silently. ``PathsReport.to_dict()`` is the versioned JSON report (``report_version`` 1).
"""

from __future__ import annotations

import errno
import fnmatch
import json
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed, wait
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple, Protocol

from . import _backend, _interrupt, schemas
from ._atomic import is_temporary_name
from ._files import DocumentTooLarge, read_document, special_file_kind
from ._files import max_document_bytes as _max_document_bytes
from .canonical import parse_json
from .codes import INTERNAL_ERROR, TOO_LARGE, UNREADABLE
from .errors import CanonicalizationError, PairlingError
from .journal import (
    DEFAULT_MAX_FINDINGS,
    DEFAULT_MAX_LINE_LENGTH,
    JournalInterrupted,
    Profile,
    check_journal,
)
from .locate import with_lines
from .maps import check_map
from .report import REPORT_VERSION, SEVERITIES, Finding, Report, Severity
from .validator import json_error_finding
from .wire import check_rpc_params, check_rpc_result, check_transcript, check_wire_schema

__all__ = [
    "DEFAULT_EXCLUDES",
    "KINDS",
    "CheckInterrupted",
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

KINDS = ("map", "journal", "transcript", "rpc-result", "wire-schema", "rpc-params")
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


# Enough to see the top-level markers of a document and the first line of a JSONL file.
SNIFF_BYTES = 1 << 20
_MAP_SCHEMA_FILE = "coding-agent-remote-control-capability-map.schema.json"
_WIRE_FORMAT = "car.wire-schema.v1"
_MAP_SCHEMA_MARK = re.compile(
    rb'"\$schema"\s*:\s*"[^"]*coding-agent-remote-control-capability-map\.schema\.json"'
)
_MAP_VERSION_MARK = re.compile(rb'"schema_version"\s*:\s*"2\.0\.0"')
_MAP_PROVIDERS_MARK = re.compile(rb'"providers"\s*:')
_MAP_ANY_VERSION_MARK = re.compile(rb'"schema_version"\s*:\s*"')
_MAP_POLICY_MARK = re.compile(rb'"evidence_policy"\s*:')
_WIRE_SCHEMA_MARK = re.compile(rb'"format"\s*:\s*"car\.wire-schema\.v1"')
_KIND_REASONS = {
    "map": "capability map ($schema / schema_version)",
    "wire-schema": f'format "{_WIRE_FORMAT}"',
}
_RESULT_SUFFIX = ".result.json"
_RPC_ID_PREFIX = "car.rpc."
_RPC_ID_SUFFIX = ".result"
_PARAMS_SUFFIX = ".params.json"
_PARAMS_ID_PREFIXES = ("car.rpc.", "car.notification.")
_PARAMS_ID_SUFFIX = ".params"
_JSON_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


class CheckInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped ``check_paths``; ``report`` holds the files checked until then (journals
    checked part way with ``stats["interrupted"]``), the others skipped as interrupted.

    A ``KeyboardInterrupt``, so an unprepared caller stops as Ctrl-C always does."""

    def __init__(self, report: PathsReport) -> None:
        super().__init__(f"interrupted after {len(report.files)} files")
        self.report = report


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


def params_methods() -> frozenset[str]:
    """The methods whose params schema the default wire bundle has (``car.rpc.<method>.params``,
    or ``car.notification.<method>.params`` for a notification the daemon sends)."""
    return frozenset(
        schema_id[len(prefix) : -len(_PARAMS_ID_SUFFIX)]
        for schema_id in schemas.ids()
        for prefix in _PARAMS_ID_PREFIXES
        if schema_id.startswith(prefix) and schema_id.endswith(_PARAMS_ID_SUFFIX)
    )


def result_method(name: str, methods: Iterable[str], suffix: str = _RESULT_SUFFIX) -> str | None:
    """The method a ``*.<method>.result.json`` file name (or another ``suffix``, such as
    ``.params.json``) names (the longest known one)."""
    if not name.endswith(suffix):
        return None
    parts = name[: -len(suffix)].split(".")
    known = set(methods)
    for start in range(len(parts)):
        candidate = ".".join(parts[start:])
        if candidate in known:
            return candidate
    return None


class _FirstLine(NamedTuple):
    value: Any
    complete: bool  # the line is one whole JSON value (a JSON Lines record, or a one-line file)


# How many lines of the head are looked at for a journal or transcript record: a junk, broken or
# over-long first line must not hide the records after it (and so their findings).
SNIFF_LINES = 64
_JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")
_EVENT_MARKS = (re.compile(rb'"kind"\s*:'), re.compile(rb'"timestamp"\s*:'))


def _head_lines(head: bytes, complete_head: bool) -> list[_FirstLine]:
    """The first non-blank lines of ``head``, each parsed if it is whole. The last line is whole
    only if the head is the whole file or the line ends with a newline."""
    lines: list[_FirstLine] = []
    pieces = head.split(b"\n")
    for index, line in enumerate(pieces):
        if len(lines) == SNIFF_LINES:
            break
        if not line.strip(_JSON_WHITESPACE):
            continue
        if index == len(pieces) - 1 and not complete_head:
            lines.append(_FirstLine(line, False))  # cut by the head's end: the raw bytes
            break
        try:
            lines.append(_FirstLine(json.loads(line), True))
        except (ValueError, RecursionError):  # too deep for json: not a record
            lines.append(_FirstLine(line, False))
    return lines


def _first_line(head: bytes) -> _FirstLine:
    for line in head.splitlines():
        if line.strip(_JSON_WHITESPACE):
            try:
                return _FirstLine(json.loads(line), True)
            except (ValueError, RecursionError):
                return _FirstLine(None, False)
    return _FirstLine(None, False)


def _one_document(text: bytes) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _json_lines_kind(name: str, text: bytes, complete_head: bool) -> Classification | None:
    """A journal or transcript whose first line does not say so: a later line of the head is a
    record, the first line is cut off but marked as an event, or the name says JSON Lines."""
    if not text or (complete_head and _one_document(text)):
        return None  # empty, or one (pretty-printed) document: not JSON Lines
    lines = _head_lines(text, complete_head)
    for line in lines[1:]:
        if line.complete and _is_event(line.value):
            return Classification("journal", "a CAR journal event among the first lines")
        if line.complete and _is_rpc_message(line.value):
            return Classification("transcript", "a JSON-RPC 2.0 message among the first lines")
    first = lines[0] if lines else None
    if (
        first is not None
        and not first.complete
        and isinstance(first.value, bytes)
        and first.value.lstrip(_JSON_WHITESPACE).startswith(b"{")
        and all(mark.search(first.value) for mark in _EVENT_MARKS)
    ):
        return Classification("journal", "first line is cut off but marked as a CAR event")
    if name.endswith(_JSON_LINES_SUFFIXES):
        return Classification("journal", "named *.jsonl / *.ndjson: checked as a CAR journal")
    return None


def _document_kind(value: Any) -> str | None:
    """The kind a whole parsed document has by its top-level members, if any."""
    if not isinstance(value, dict):
        return None
    schema = value.get("$schema")
    if (isinstance(schema, str) and schema.endswith(_MAP_SCHEMA_FILE)) or (
        value.get("schema_version") == "2.0.0" and "providers" in value
    ):
        return "map"
    # Pairling's maps of another schema_version (1.0.0 has agents, no providers): checked as
    # maps so that the version is reported (PF253), not skipped.
    if isinstance(value.get("schema_version"), str) and "evidence_policy" in value:
        return "map"
    if value.get("format") == _WIRE_FORMAT:
        return "wire-schema"
    return None


def _is_rpc_message(value: Any) -> bool:
    if isinstance(value, list):
        # A batch is one level of messages (JSON-RPC 2.0 §6); nested arrays are not (and may be
        # nested hundreds deep).
        return bool(value) and all(
            isinstance(item, dict) and _is_rpc_message(item) for item in value
        )
    if not isinstance(value, dict):
        return False
    if value.get("jsonrpc") == "2.0":
        return True
    # Transcripts may wrap each message with its direction or time: {"dir": …, "message": {…}}.
    return any(isinstance(v, dict) and v.get("jsonrpc") == "2.0" for v in value.values())


def _is_event(value: Any) -> bool:
    return isinstance(value, dict) and "kind" in value and "timestamp" in value


def classify(
    name: str,
    head: bytes,
    methods: Iterable[str],
    params: Iterable[str] = (),
    *,
    complete: bool | None = None,
) -> Classification:
    """Tell a file's kind from its first bytes (``head``) and, for RPC results, its name.

    JSON Lines whose first record is a CAR journal event or a JSON-RPC 2.0 message are a journal
    or a transcript; a document is a capability map (``$schema`` naming the map schema, or
    ``schema_version`` 2.0.0 with ``providers``) or a CAR wire-schema bundle (``format``
    ``car.wire-schema.v1``) by its top-level members. A broken or junk first line does not hide
    a journal or transcript: any of the first ``SNIFF_LINES`` lines being a record, a first line
    cut off by the head but marked as an event, or a ``*.jsonl``/``*.ndjson`` name makes one (its
    broken lines are then findings). Else the name ``*.<method>.result.json`` makes an RPC result
    and ``*.<method>.params.json`` (a method of ``params``) a request's params. ``complete`` says
    whether ``head`` is the whole file (default: it is shorter than ``SNIFF_BYTES``).
    """
    if complete is None:
        complete = len(head) < SNIFF_BYTES
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
    json_lines = _json_lines_kind(name, stripped, complete)
    if json_lines is not None:
        return json_lines
    if name.endswith(_RESULT_SUFFIX):
        method = result_method(name, methods)
        if method is not None:
            return Classification("rpc-result", f"named after RPC method {method}", method)
        return Classification(
            None, "named *.result.json, but no known RPC method in the name (see `schemas`)"
        )
    if name.endswith(_PARAMS_SUFFIX):
        method = result_method(name, params, _PARAMS_SUFFIX)
        if method is not None:
            return Classification("rpc-params", f"named after RPC method {method}", method)
        return Classification(
            None, "named *.params.json, but no method with a params schema in the name"
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
    if _MAP_ANY_VERSION_MARK.search(text) and _MAP_POLICY_MARK.search(text):
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
    interrupted: bool = False  # Ctrl-C: a partial report (see CheckInterrupted)
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
    stream: bool = False  # "-" (stdin), or a FIFO named on the command line


STDIN = "-"
_TEMPORARY_REASON = "temporary file of a pairling-fast write (in progress, or left by a kill)"


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
        if raw == STDIN:
            self.files.append(_Candidate(Path(raw), raw, 0, stream=True))
            return
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
        elif stat.S_ISFIFO(info.st_mode):
            # A pipe named by the user (`check <(cat j.jsonl)`, /dev/stdin): read as a stream.
            # Met in a walk it is skipped (reading it could block), as devices always are.
            self.files.append(_Candidate(path, display, 0, stream=True))
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
            self.skipped.append(Skipped(display, f"{special_file_kind(info.st_mode)}, not read"))
            return
        if is_temporary_name(path.name):
            self.skipped.append(Skipped(display, _TEMPORARY_REASON))
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


@dataclass(frozen=True)
class _DocumentOptions:
    """What each file's check is given besides the file: the same for every file of one run, so
    one object carries it through the pool and to a cluster."""

    max_document_bytes: int
    profile: Profile = "strict"
    car_version: str | None = None
    manifest: Any = None
    max_findings: int | None = None


def _run_check(
    kind: str,
    source: Path | _Replay,
    method: str | None,
    options: _DocumentOptions,
    progress: Callable[[int], object] | None = None,
) -> Report:
    """One file's check: from its path, or streaming from a ``_Replay`` (stdin, a FIFO).
    ``progress(bytes_read)`` is called while a journal is checked."""
    if kind == "journal":
        return _journal_report(source, options, progress)
    if kind == "transcript":
        lines = source if isinstance(source, Path) else source.lines()
        return check_transcript(lines, car_version=options.car_version)
    if kind == "wire-schema":
        if not isinstance(source, Path):
            raise OSError(errno.EINVAL, "a wire-schema bundle is read from a regular file only")
        return check_wire_schema(source)
    data = _document(source, options.max_document_bytes)
    if kind == "map":
        return check_map(data, manifest=options.manifest)
    assert method is not None, "an rpc-result or rpc-params is classified with its method"
    try:
        value = parse_json(data)
    except CanonicalizationError as error:
        return Report(findings=[json_error_finding(error)])
    if kind == "rpc-params":
        return check_rpc_params(method, value, car_version=options.car_version)
    return check_rpc_result(method, value, car_version=options.car_version)


def _document(source: Path | _Replay, limit: int) -> bytes:
    """A whole document, read up to ``limit`` (``DocumentTooLarge`` beyond)."""
    if isinstance(source, Path):
        return read_document(source, limit)
    data = source.read(limit + 1)
    if len(data) > limit:
        raise DocumentTooLarge(source.name, len(data), limit)
    return data


def _journal_report(
    source: Any, options: _DocumentOptions, progress: Callable[[int], object] | None
) -> Report:
    """A journal's report; after Ctrl-C the partial one (``stats["interrupted"]``)."""
    try:
        return check_journal(
            source, profile=options.profile, max_findings=options.max_findings, progress=progress
        )
    except JournalInterrupted as stopped:
        return stopped.report


def _run_on_cluster(
    kind: str, path: Path, method: str | None, options: _DocumentOptions, client: Any
) -> Report:
    """On a Dask cluster (``client``): journals split into chunks whose reports equal the local
    check's (docs/cluster.md); any other file is one task on a worker, on the driver's backend."""
    if kind == "journal":
        from .distributed import check_journal as check_journal_on_cluster

        return check_journal_on_cluster(
            path, client, profile=options.profile, max_findings=options.max_findings
        )
    task = client.submit(
        _run_on_backend, _backend.active_name(), kind, path, method, options, pure=False
    )
    report: Report = task.result()
    return report


def _run_on_backend(
    backend: str, kind: str, path: Path, method: str | None, options: _DocumentOptions
) -> Report:
    with _backend.use(backend):
        return _run_check(kind, path, method, options)


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


# Kinds that are one JSON document: read whole (so bounded by ``max_document_bytes``), and their
# pointers can be turned into lines (``check_map`` locates its own findings).
_DOCUMENT_KINDS = ("map", "rpc-result", "wire-schema", "rpc-params")


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
    """The first ``SNIFF_BYTES``; if the first line is longer, its start, a newline and the
    ``SNIFF_BYTES`` after its end (a first line of junk must not hide the records after it)."""
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
        if b"\n" in head or len(head) < SNIFF_BYTES:
            return head
        while handle.tell() < DEFAULT_MAX_LINE_LENGTH:
            block = handle.read(SNIFF_BYTES)
            newline = block.find(b"\n")
            if newline >= 0:
                handle.seek(handle.tell() - len(block) + newline + 1)
                return head + b"\n" + handle.read(SNIFF_BYTES)
            if not block:
                break
        return head


class _Replay:
    """A stream whose first bytes were read to tell its kind: those bytes, then the rest."""

    def __init__(self, head: bytes, stream: IO[bytes], name: str) -> None:
        self.name = name
        self._head = head
        self._stream = stream

    def read(self, size: int = -1) -> bytes:
        if not self._head:
            return self._stream.read(size)
        if size < 0:
            data, self._head = self._head + self._stream.read(), b""
            return data
        data, self._head = self._head[:size], self._head[size:]
        return data

    def lines(self) -> Iterator[bytes]:
        *whole, partial = self._head.split(b"\n")
        self._head = b""
        for line in whole:
            yield line + b"\n"
        rest = partial + self._stream.readline()
        if rest:
            yield rest
        yield from self._stream


def _open_stream(candidate: _Candidate) -> IO[bytes]:
    if candidate.display == STDIN:
        # Not closed after the check: it is the process's stdin.
        return os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    return candidate.path.open("rb")


def _check_one(
    candidate: _Candidate,
    kind: str | None,
    methods: frozenset[str],
    severities: Mapping[str, SeverityOverride],
    params: frozenset[str],
    options: _DocumentOptions,
    client: Any = None,
    checking: Callable[[str, int], object] | None = None,
) -> FileResult | Skipped:
    """One file's result; ``checking(display, bytes_read)`` is told how far a journal's check is."""
    started = time.perf_counter()
    result = FileResult(candidate.display, kind, size=candidate.size)
    progress = None if checking is None else partial(checking, candidate.display)
    try:
        with ExitStack() as closing:
            if candidate.stream:
                stream = closing.enter_context(_open_stream(candidate))
                head = stream.read(SNIFF_BYTES)
                complete = len(head) < SNIFF_BYTES
            else:
                head = _read_head(candidate.path)
                complete = candidate.size <= len(head)
            classification = classify(candidate.path.name, head, methods, params, complete=complete)
            if kind is None:
                if classification.kind is None:
                    return Skipped(candidate.display, classification.reason)
                result.kind = classification.kind
            elif kind in ("rpc-result", "rpc-params") and classification.method is None:
                suffix = kind.removeprefix("rpc-")
                return Skipped(
                    candidate.display,
                    f"--type {kind}, but the name does not say the method "
                    f"(name it *.<method>.{suffix}.json)",
                )
            assert result.kind is not None
            if candidate.stream:
                replay = _Replay(head, stream, candidate.display)
                report = _run_check(result.kind, replay, classification.method, options, progress)
                findings = report.findings
            else:
                limit = options.max_document_bytes
                if result.kind in _DOCUMENT_KINDS and candidate.size > limit:
                    raise DocumentTooLarge(candidate.display, candidate.size, limit)
                if client is None:
                    report = _run_check(
                        result.kind, candidate.path, classification.method, options, progress
                    )
                else:
                    report = _run_on_cluster(
                        result.kind, candidate.path, classification.method, options, client
                    )
                findings = _with_lines(result.kind, candidate.path, report.findings)
            result.stats = dict(report.stats)
    except DocumentTooLarge as error:
        findings = [Finding(TOO_LARGE, "error", _os_reason(error))]
    except OSError as error:
        findings = [Finding(UNREADABLE, "error", _os_reason(error))]
    except Exception as error:  # one file's failure never stops the others
        message = f"the {result.kind} check failed: {type(error).__name__}: {error}"
        findings = [Finding(INTERNAL_ERROR, "error", message)]
    result.not_listed = _not_listed(result.stats, severities)
    result.findings = _capped(
        _apply_severities(findings, severities, candidate.display),
        result.not_listed,
        options.max_findings,
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
    car_version: str | None = None,
    manifest: Any = None,
    max_document_bytes: int | None = None,
    max_findings: int | None = DEFAULT_MAX_FINDINGS,
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
    (docs/cluster.md). ``car_version`` picks the bundled wire schema transcripts, RPC results
    and params are checked against (docs/wire.md); ``ValueError`` for one not bundled.
    ``manifest`` (Pairling's reviewed operation manifest, parsed JSON) adds the release-join
    rules to every capability map (``check_map``). A map, RPC result or params, or wire-schema
    bundle over ``max_document_bytes`` (default ``_files.DEFAULT_MAX_DOCUMENT_BYTES``, 256 MiB)
    is a PF502 finding, not read. Besides files and directories, ``"-"`` (stdin) and FIFOs named
    in ``paths`` are read as streams (journals and transcripts streaming; devices are skipped).
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
                car_version=car_version,
                manifest=manifest,
                max_document_bytes=max_document_bytes,
                max_findings=max_findings,
            )

    started = time.perf_counter()
    excludes = (*DEFAULT_EXCLUDES, *exclude) if default_excludes else tuple(exclude)
    walker = _Walker(excludes, follow_symlinks, exclude)
    for raw in paths:
        walker.add_argument(os.fspath(raw))
    if car_version is not None:
        schemas.bundle_path(car_version)  # ValueError for a version not bundled, before any file
    options = _DocumentOptions(
        _max_document_bytes(max_document_bytes), profile, car_version, manifest, max_findings
    )
    methods = rpc_methods()
    params = params_methods()
    report = PathsReport(
        files=list(walker.unreadable),
        skipped=list(walker.skipped),
        backend=_backend.active_name(),
        fail_on=fail_on,
        timings=timings,
        max_findings=max_findings,
    )
    checking = getattr(progress, "checking", None)
    if progress is not None:
        progress.start(len(walker.files), sum(c.size for c in walker.files))
    workers = max(1, jobs if jobs is not None else (os.cpu_count() or 1))
    pool = ThreadPoolExecutor(max_workers=workers)
    watch = _interrupt.Watch()
    futures = {
        pool.submit(
            _watched_check,
            watch,
            candidate,
            kind,
            methods,
            overrides,
            params,
            options,
            client,
            checking,
        ): candidate
        for candidate in walker.files
    }
    handled: set[Any] = set()
    try:
        for future in as_completed(futures):
            outcome = future.result()
            _add_outcome(report, outcome)
            handled.add(future)
            if progress is not None:
                progress.advance(outcome, futures[future].size)
    except KeyboardInterrupt:
        _interrupt.stop(watch)
        pool.shutdown(wait=False, cancel_futures=True)
        _collect_interrupted(report, {f: c for f, c in futures.items() if f not in handled})
        _finish(report, started)
        raise CheckInterrupted(report) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    _finish(report, started)
    return report


def _watched_check(watch: _interrupt.Watch, *args: Any) -> FileResult | Skipped:
    with _interrupt.watched(watch):
        return _check_one(*args)


def _add_outcome(report: PathsReport, outcome: FileResult | Skipped) -> None:
    if isinstance(outcome, Skipped):
        report.skipped.append(outcome)
    else:
        report.files.append(outcome)


# After Ctrl-C, how long the files being checked get to hand in their partial reports.
STOP_GRACE_SECONDS = 0.3


def _collect_interrupted(report: PathsReport, futures: Mapping[Any, _Candidate]) -> None:
    """The partial report: what finished or stopped in time, every other file "interrupted"."""
    report.interrupted = True
    wait(futures, timeout=STOP_GRACE_SECONDS)
    for future, candidate in futures.items():
        outcome = None
        if future.done() and not future.cancelled() and future.exception() is None:
            outcome = future.result()
        _add_outcome(report, outcome or Skipped(candidate.display, "not checked: interrupted"))


def _finish(report: PathsReport, started: float) -> None:
    report.files.sort(key=lambda f: f.path)
    report.skipped.sort(key=lambda s: s.path)
    report.seconds = time.perf_counter() - started
