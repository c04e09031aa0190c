"""Dispatch: check every file ``check_paths`` is given, in parallel (or on a Dask cluster), each
by its kind, with the project's severity overrides and the findings cap.

``check_paths(paths)`` is what ``pairling-fast check`` runs. Every file it meets ends up either
checked (``PathsReport.files``) or skipped with the reason (``PathsReport.skipped``): nothing is
ignored silently. The other jobs live in rooms of their own: ``classify`` (a file's kind from its
content), ``walk`` (the files under the paths) and ``results`` (``FileResult``, ``Skipped``,
``PathsReport`` and its JSON report); their public names stay importable from here.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed, wait
from contextlib import AbstractContextManager, ExitStack
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from . import _backend, _interrupt, remote
from ._files import DocumentTooLarge, read_document
from .classify import KINDS, SNIFF_BYTES, Classification, classify, params_methods, rpc_methods
from .classify import SNIFF_LINES as SNIFF_LINES
from .classify import result_method as result_method
from .codes import INTERNAL_ERROR, TOO_LARGE, UNREADABLE
from .errors import CanonicalizationError
from .journal import DEFAULT_MAX_LINE_LENGTH, JournalStates, check_journal_on
from .journal.options import JournalInterrupted
from .options import CheckKeywords, CheckOptions, SeverityOverride
from .report import Finding, Report, Severity
from .results import FileResult, PathsReport, Skipped, not_listed, with_severities
from .walk import DEFAULT_EXCLUDES, STDIN, Candidate, PathArgumentError, Walker, os_reason

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "DEFAULT_EXCLUDES",
    "KINDS",
    "CheckInterrupted",
    "CheckOptions",
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


class CheckInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped ``check_paths``; ``report`` holds the files checked until then (journals
    checked part way with ``stats["interrupted"]``), the others skipped as interrupted.

    A ``KeyboardInterrupt``, so an unprepared caller stops as Ctrl-C always does."""

    def __init__(self, report: PathsReport) -> None:
        super().__init__(f"interrupted after {len(report.files)} files")
        self.report = report


class CheckProgress(Protocol):
    """Told how much work there is, then about each file as it is done (in completion order).

    An object that also has ``checking(path, done)`` is told, from the worker threads, how many
    bytes of a file being checked have been read so far (journals report while they are checked,
    so a bar moves on one big file); ``advance`` then gives the file's whole size.
    """

    def start(self, files: int, total_bytes: int) -> None: ...
    def advance(self, result: FileResult | Skipped, size: int) -> None: ...


# ---------------------------------------------------------------------------------------------
# Checking one file


def _run_check(
    kind: str,
    source: Path | _Replay | str,
    method: str | None,
    options: CheckOptions,
    engine: _backend.Engine,
    progress: Callable[[int], object] | None = None,
    state: JournalStates | None = None,
    opened: IO[bytes] | remote.RemoteFile | None = None,
) -> Report:
    """One file's check on ``engine``: from its path or URL (``str``), or streaming from a
    ``_Replay`` (stdin, a FIFO). ``progress(bytes_read)`` is called while a journal is checked;
    a journal read from a path resumes from and updates its entry in ``state``. ``opened``: the
    file, already open (its kind was told from its head), which a journal is read from rather
    than opened again."""
    if kind == "journal":
        return _journal_report(engine, source, options, progress, state, opened)
    return _document_report(kind, source, method, options, engine)


def _document_report(
    kind: str,
    source: Path | _Replay | str,
    method: str | None,
    options: CheckOptions,
    engine: _backend.Engine,
) -> Report:
    """The report of a file of any kind but a journal. Their modules are imported here, by the
    first such file: a run that checks journals only (``check --state`` of a grown journal,
    where start-up is much of the time) does not load the map, wire and validator modules."""
    from .maps import check_map_on
    from .validator import json_error_finding
    from .wire import (
        check_rpc_params_on,
        check_rpc_result_on,
        check_transcript_on,
        check_wire_schema_on,
    )

    if kind == "transcript":
        if isinstance(source, str):
            with remote.opened(source) as handle:
                return check_transcript_on(engine, handle, car_version=options.wire_release)
        lines = source if isinstance(source, Path) else source.lines()
        return check_transcript_on(engine, lines, car_version=options.wire_release)
    if kind == "wire-schema":
        if not isinstance(source, Path):
            raise OSError(errno.EINVAL, "a wire-schema bundle is read from a local file only")
        return check_wire_schema_on(engine, source)
    assert options.max_document_bytes is not None, "CheckOptions resolves the limit"
    data = _document(source, options.max_document_bytes)
    if kind == "map":
        return check_map_on(engine, data, options.manifest)
    assert method is not None, "an rpc-result or rpc-params is classified with its method"
    try:
        value = engine.parse_json(data)
    except CanonicalizationError as error:
        return Report(findings=[json_error_finding(error)])
    if kind == "rpc-params":
        return check_rpc_params_on(engine, method, value, car_version=options.wire_release)
    return check_rpc_result_on(engine, method, value, car_version=options.wire_release)


def _document(source: Path | _Replay | str, limit: int) -> bytes:
    """A whole document, read up to ``limit`` (``DocumentTooLarge`` beyond)."""
    if isinstance(source, Path):
        return read_document(source, limit)
    if isinstance(source, str):
        with remote.opened(source) as handle:
            data = handle.read(limit + 1)
        name = remote.redact(source)
    else:
        data, name = source.read(limit + 1), source.name
    if len(data) > limit:
        raise DocumentTooLarge(name, len(data), limit)
    return data


def _journal_report(
    engine: _backend.Engine,
    source: Any,
    options: CheckOptions,
    progress: Callable[[int], object] | None,
    state: JournalStates | None,
    opened: IO[bytes] | remote.RemoteFile | None = None,
) -> Report:
    """A journal's report; after Ctrl-C the partial one (``stats["interrupted"]``). Read from
    ``opened`` (from its start) where it is given and no ``--state`` entry is kept: the state
    file's room opens the journal itself, as it needs its identity and its blocks' hashes."""
    # A stream (stdin, a FIFO) cannot be re-read: it is checked without a state entry.
    if not isinstance(source, (Path, str)):
        state = None
    if opened is not None and state is None:
        opened.seek(0)
        source = opened
    try:
        return check_journal_on(engine, source, options.journal, progress, state=state)
    except JournalInterrupted as stopped:
        return stopped.report


def _run_on_cluster(
    engine: _backend.Engine,
    kind: str,
    path: Path | str,
    method: str | None,
    options: CheckOptions,
    client: Any,
) -> Report:
    """On a Dask cluster (``client``): journals split into chunks whose reports equal the local
    check's (docs/cluster.md); any other file is one task on a worker, on the driver's backend."""
    if kind == "journal":
        from .journal.cluster import journal_report_on

        return journal_report_on(engine, path, client, options.journal)
    backend = _backend.name_of(engine)
    source = remote.Redacted(path) if isinstance(path, str) else path
    task = client.submit(_run_on_backend, backend, kind, source, method, options, pure=False)
    report: Report = task.result()
    return report


def _run_on_backend(
    backend: str,
    kind: str,
    path: Path | remote.Redacted,
    method: str | None,
    options: CheckOptions,
) -> Report:
    """A worker's task: an engine does not travel to another process, its name does (and a URL
    travels ``Redacted``: Dask logs a failed task's arguments)."""
    source = path.text if isinstance(path, remote.Redacted) else path
    engine = _backend.engine(backend)
    return remote.bare_errors(lambda: _run_check(kind, source, method, options, engine))


def _located(findings: Iterable[Finding], display: str) -> list[Finding]:
    """The findings under the name the report gives their file (a check names it by the path
    it opened, or not at all)."""
    return [f if f.path == display else replace(f, path=display) for f in findings]


# Kinds that are one JSON document: read whole (so bounded by ``max_document_bytes``), and their
# pointers can be turned into lines (``check_map`` locates its own findings).
_DOCUMENT_KINDS = ("map", "rpc-result", "wire-schema", "rpc-params")


def _with_lines(
    kind: str, source: Path | str, findings: list[Finding], limit: int
) -> list[Finding]:
    """Findings of one-document kinds that have a pointer but no line get the pointer's line."""
    if kind not in _DOCUMENT_KINDS or all(
        f.line is not None or f.pointer is None for f in findings
    ):
        return findings
    from .locate import with_lines

    return with_lines(_document(source, limit), findings)


def _capped(
    findings: list[Finding], not_listed: dict[Severity, int], max_findings: int | None
) -> list[Finding]:
    """The first ``max_findings`` findings; the rest are added to ``not_listed``."""
    if max_findings is None or len(findings) <= max_findings:
        return findings
    for finding in findings[max_findings:]:
        not_listed[finding.severity] = not_listed.get(finding.severity, 0) + 1
    return findings[:max_findings]


def _opened(source: Path | str) -> AbstractContextManager[IO[bytes] | remote.RemoteFile]:
    """A local file or an object by URL, open for reading."""
    return remote.opened(source) if isinstance(source, str) else source.open("rb")


def _read_head(handle: IO[bytes] | remote.RemoteFile) -> bytes:
    """The first ``SNIFF_BYTES`` of a file (or an object by URL); if the first line is longer,
    its start, a newline and the ``SNIFF_BYTES`` after its end (a first line of junk must not
    hide the records after it)."""
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


def not_a_journal(path: Path) -> str | None:
    """Why ``check --follow`` refuses the file at ``path``, told as ``check`` tells kinds: another
    kind (``"a map"``...), or text that is not JSON at all (``"not JSON"``). ``None`` for a
    journal, for JSON lines that are not events (a journal's defects, reported line by line), and
    for a file missing, not regular or still empty (waited for)."""
    try:
        size = path.stat().st_size
        if not path.is_file():
            return None
        with _opened(path) as handle:
            head = _read_head(handle)
    except OSError:
        return None
    if not head.strip():
        return None
    found = classify(path.name, head, rpc_methods(), params_methods(), complete=size <= len(head))
    if found.kind is not None:
        return None if found.kind == "journal" else f"a {found.kind}"
    json_text = head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"{", b"["))
    return None if json_text else found.reason


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


def _open_stream(candidate: Candidate) -> IO[bytes]:
    if candidate.display == STDIN:
        # Not closed after the check: it is the process's stdin.
        return os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    return candidate.path.open("rb")


def _check_one(
    engine: _backend.Engine,
    candidate: Candidate,
    methods: frozenset[str],
    params: frozenset[str],
    options: CheckOptions,
    state: JournalStates | None = None,
    client: Any = None,
    checking: Callable[[str, int], object] | None = None,
) -> FileResult | Skipped:
    """One file's result; ``checking(display, bytes_read)`` is told how far a journal's check is."""
    started = time.perf_counter()
    kind, severities = options.kind, options.severities
    result = FileResult(candidate.display, kind, size=candidate.size)
    progress = None if checking is None else partial(checking, candidate.display)
    try:
        with ExitStack() as closing:
            if candidate.stream:
                stream = closing.enter_context(_open_stream(candidate))
                head = stream.read(SNIFF_BYTES)
                complete = len(head) < SNIFF_BYTES
            else:
                # Open once: the kind is told from the head, and a journal read from here.
                opened = closing.enter_context(_opened(candidate.url or candidate.path))
                head = _read_head(opened)
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
                report = _run_check(
                    result.kind, replay, classification.method, options, engine, progress, state
                )
                findings = report.findings
            else:
                limit = options.max_document_bytes
                assert limit is not None, "CheckOptions resolves the limit"
                if result.kind in _DOCUMENT_KINDS and candidate.size > limit:
                    raise DocumentTooLarge(candidate.display, candidate.size, limit)
                source = candidate.url or candidate.path
                if client is None:
                    report = _run_check(
                        result.kind,
                        source,
                        classification.method,
                        options,
                        engine,
                        progress,
                        state,
                        opened,
                    )
                else:
                    report = _run_on_cluster(
                        engine, result.kind, source, classification.method, options, client
                    )
                findings = _with_lines(result.kind, source, report.findings, limit)
            result.stats = dict(report.stats)
    except DocumentTooLarge as error:
        findings = [Finding.of(TOO_LARGE, os_reason(error))]
    except OSError as error:
        findings = [Finding.of(UNREADABLE, os_reason(error))]
    except Exception as error:  # one file's failure never stops the others
        message = f"the {result.kind} check failed: {type(error).__name__}: {error}"
        findings = [Finding.of(INTERNAL_ERROR, message)]
    result.not_listed = not_listed(result.stats, severities)
    result.findings = _capped(
        _located(with_severities(findings, severities), candidate.display),
        result.not_listed,
        options.max_findings,
    )
    result.seconds = time.perf_counter() - started
    return result


# ---------------------------------------------------------------------------------------------
# The public entry point


def check_paths(
    paths: Iterable[str | os.PathLike[str]],
    options: CheckOptions | None = None,
    *,
    progress: CheckProgress | None = None,
    client: Any = None,
    state: JournalStates | None = None,
    **keywords: Unpack[CheckKeywords],
) -> PathsReport:
    """Check every document under ``paths`` (files or directories), in parallel, as ``options``
    (a ``CheckOptions``) says.

    ``CheckOptions``'s fields may instead be given as keywords (``check_paths(paths,
    kind="journal")``): they build the options, or change those given. Every file met ends up
    checked or skipped with the reason. A path that does not exist raises
    ``PathArgumentError``; a file that cannot be read is a PF501 finding. Besides files and
    directories, ``"-"`` (stdin) and FIFOs named in ``paths`` are read as streams (journals and
    transcripts streaming; devices are skipped). ``progress`` (a ``CheckProgress``) is told about
    each file as it is done. With a Dask ``client`` (``distributed.Client``) the checks run on its
    cluster, with the same report (docs/cluster.md). ``state`` makes journal checks incremental
    (``check_journal(state=...)``; docs/journals.md): every journal read from a path resumes from
    and updates its entry (save it afterwards); ``ValueError`` with a ``client``, whose chunked
    check does not resume. Ctrl-C raises ``CheckInterrupted`` with the partial report.
    """
    if options is None:
        options = CheckOptions(**keywords)
    elif keywords:
        options = replace(options, **keywords)
    if state is not None and client is not None:
        raise ValueError("a journal state cannot be used on a Dask cluster: check without it")
    # Resolved once and handed to every file's check: the pool's threads and the cluster's
    # tasks run on it whatever other threads select.
    engine = _backend.resolve(options.backend)
    started = time.perf_counter()
    exclude = options.exclude
    excludes = (*DEFAULT_EXCLUDES, *exclude) if options.default_excludes else tuple(exclude)
    walker = Walker(excludes, options.follow_symlinks, exclude)
    for raw in paths:
        walker.add_argument(os.fspath(raw))
    methods = rpc_methods()
    params = params_methods()
    report = PathsReport(
        files=list(walker.unreadable),
        skipped=list(walker.skipped),
        backend=_backend.name_of(engine),
        fail_on=options.fail_on,
        timings=options.timings,
        max_findings=options.max_findings,
    )
    checking = getattr(progress, "checking", None)
    if progress is not None:
        progress.start(len(walker.files), sum(c.size for c in walker.files))
    jobs = options.jobs
    workers = max(1, jobs if jobs is not None else (os.cpu_count() or 1))
    if client is not None and jobs is None:
        # Each file's thread only waits for its task's report: enough of them to keep every
        # worker thread of the cluster busy, not the driver's cores.
        workers = max(workers, 2 * sum(client.nthreads().values()))
    pool = ThreadPoolExecutor(max_workers=workers)
    watch = _interrupt.Watch()
    futures = {
        pool.submit(
            _watched_check,
            watch,
            engine,
            candidate,
            methods,
            params,
            options,
            state,
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
        raise CheckInterrupted(_finish(report, started, options)) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return _finish(report, started, options)


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


def _collect_interrupted(report: PathsReport, futures: Mapping[Any, Candidate]) -> None:
    """The partial report: what finished or stopped in time, every other file "interrupted"."""
    report.interrupted = True
    wait(futures, timeout=STOP_GRACE_SECONDS)
    for future, candidate in futures.items():
        outcome = None
        if future.done() and not future.cancelled() and future.exception() is None:
            outcome = future.result()
        _add_outcome(report, outcome or Skipped(candidate.display, "not checked: interrupted"))


def _finish(report: PathsReport, started: float, options: CheckOptions) -> PathsReport:
    report.files.sort(key=lambda f: f.path)
    report.skipped.sort(key=lambda s: s.path)
    report.seconds = time.perf_counter() - started
    return report if options.redact is None else report.redacted(options.redact)
