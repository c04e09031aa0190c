"""Check journals on a Dask cluster, with the reports one machine gives (``docs/cluster.md``).

Reports, not facts, cross the network. Each journal is one task on a worker: a journal of at
most ``chunk_bytes`` is checked there whole, by the very ``check_journal`` of one machine; a
bigger one is split into byte-range chunks (split at line boundaries), whose per-line stage runs
as chunk tasks, and the journal's task becomes its *reducer*: it feeds the chunks' results, in
file order, to the very checker ``check_journal`` uses (the ordered stage: chain links,
lifecycle state, timestamps, counts). Chunk results move worker to worker; the driver receives
each journal's findings and stats only. So the report is the single-machine one by
construction, finding for finding, whatever the chunk size or the number of workers, and many
journals reduce in parallel on different workers.

Needs the ``[dask]`` extra (``dask[distributed]``); workers need the same pairling_fast (the same
wheel) and read the journals themselves: at the same paths as the driver (shared storage), or
by URL (``s3://...``, ``https://...``: ``remote``), each worker fetching its own byte ranges.

From the command line: ``pairling-fast check PATH... --dask tcp://scheduler:8786`` (or
``--dask local[:N]`` for a ``LocalCluster`` of N worker processes).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import warnings
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from .. import _backend, remote
from ..errors import PairlingError
from ..report import Finding, RawFinding, Report
from .options import JournalInterrupted, JournalKeywords, JournalOptions
from .stats import JournalStats

if TYPE_CHECKING:
    from distributed import Client, Future
    from typing_extensions import Unpack

__all__ = [
    "CONNECT_TIMEOUT",
    "DEFAULT_CHUNK_BYTES",
    "JOURNAL_SUFFIXES",
    "ClusterError",
    "check_journal",
    "check_journal_on_cluster",
    "check_journal_paths_on_cluster",
    "check_paths",
    "check_workers",
    "chunk_ranges",
    "connect",
    "journal_files",
    "journal_reports",
]

DEFAULT_CHUNK_BYTES = 32 << 20
"""Big enough that a task's overhead (a few ms) is small against its work, small enough that a
few chunks in flight per worker keep the driver's memory low."""
JOURNAL_SUFFIXES = (".jsonl", ".ndjson")
"""What a directory argument contributes: its journals, recursively."""

PathLike = Union[str, "os.PathLike[str]"]
RawReport = tuple[Sequence[RawFinding], JournalStats]
"""What a journal's task sends back: its findings in raw form and its stats, nothing per line."""


class ClusterError(PairlingError, RuntimeError):
    """The cluster cannot give single-machine reports: a worker lacks the package or the backend,
    or runs another version of it."""


def chunk_ranges(size: int, chunk_bytes: int) -> list[tuple[int, int]]:
    """The byte ranges ``[start, end)`` a file of ``size`` bytes is checked in: at least one, so
    an empty file still gets its (empty) report from the same code path."""
    if chunk_bytes < 1:
        raise ValueError(f"chunk_bytes must be at least 1, not {chunk_bytes}")
    return [(start, min(start + chunk_bytes, size)) for start in range(0, size, chunk_bytes)] or [
        (0, 0)
    ]


def _check_chunk(
    backend: str, source: remote.Redacted, start: int, end: int, options: JournalOptions
) -> bytes:
    """A chunk task: the per-line stage over one byte range of a journal (a local path or a URL,
    read by byte range on this worker), on the driver's backend."""

    def check() -> bytes:
        with _readable(source.text) as readable:
            return _backend.engine(backend).check_journal_chunk(readable, start, end, options)

    return remote.bare_errors(check)


@contextmanager
def _readable(source: str) -> Iterator[Any]:
    """What an engine reads: a local path as itself (the core opens it), a URL as a file that
    fetches byte ranges (``remote.opened``)."""
    if remote.is_url(source):
        with remote.opened(source) as handle:
            yield handle
    else:
        yield source


def _size(source: str) -> int | None:
    """The journal's size in bytes; None for a URL whose server does not say."""
    return remote.stat(source).size if remote.is_url(source) else os.path.getsize(source)


def _journal_task(
    backend: str,
    redacted: remote.Redacted,
    options: JournalOptions,
    chunk_bytes: int,
    chunks_ahead: int | None,
) -> RawReport:
    """A journal's task, run on a worker; only its raw report goes back to the driver.

    A journal of at most ``chunk_bytes`` is checked whole here, by the very ``check_journal`` of
    one machine. A bigger one is split: this task becomes its *reducer*, it submits the chunk
    tasks from this worker (``worker_client``: the thread leaves the worker's pool while it
    waits, so the chunks can run here too) and feeds their results, in file order, to the
    ordered stage; the results travel worker to worker, never through the driver.
    """
    return remote.bare_errors(
        lambda: _journal_report(
            _backend.engine(backend), redacted.text, options, chunk_bytes, chunks_ahead
        )
    )


def _journal_report(
    engine: _backend.Engine,
    source: str,
    options: JournalOptions,
    chunk_bytes: int,
    chunks_ahead: int | None,
) -> RawReport:
    """What ``_journal_task`` does, with the task's arguments unwrapped."""
    size = _size(source)
    if size is None or size <= chunk_bytes:
        with _readable(source) as readable:
            return engine.check_journal(readable, options, None)
    from distributed import worker_client

    with worker_client() as client:
        ahead = chunks_ahead or _twice_the_threads(client)
        return _reduce(engine, source, size, client, options, chunk_bytes, ahead)


def _twice_the_threads(client: Client) -> int:
    """The default number of tasks ahead: twice the cluster's task threads (a scheduler call)."""
    return 2 * max(1, sum(client.nthreads().values()))


def _reduce(
    engine: _backend.Engine,
    source: str,
    size: int,
    client: Client,
    options: JournalOptions,
    chunk_bytes: int,
    chunks_ahead: int,
) -> RawReport:
    """The ordered stage of one journal over its chunks: at most ``chunks_ahead`` are submitted
    ahead and consumed in file order, so this holds a bounded number of chunk results whatever
    the journal's size. Ctrl-C cancels the chunks in flight and gives the partial report."""
    backend = _backend.name_of(engine)
    upcoming = deque(chunk_ranges(size, chunk_bytes))
    pending: deque[Future[bytes]] = deque()
    checker = engine.JournalChecker(options)
    try:
        while True:
            while len(pending) < chunks_ahead and upcoming:
                start, end = upcoming.popleft()
                pending.append(
                    client.submit(
                        _check_chunk,
                        backend,
                        remote.Redacted(source),
                        start,
                        end,
                        options,
                        pure=False,
                    )
                )
            if not pending:
                return checker.finish(False)
            future = pending.popleft()
            encoded = future.result()
            future.release()
            checker.feed(encoded)
    except KeyboardInterrupt:
        client.cancel(list(pending))
        return checker.finish(True)
    except BaseException:
        client.cancel(list(pending))
        raise


def _worker_build(backend: str) -> tuple[str, str | None]:
    """(this worker's pairling_fast version, why ``backend`` is unusable here or None)."""
    import pairling_fast

    try:
        _backend.engine(backend)
    except ImportError as error:
        return pairling_fast.__version__, str(error)
    return pairling_fast.__version__, None


# The clients whose workers passed ``check_workers``, with the backends checked: a run checks its
# cluster once, not once per journal (``pairling_fast.check_paths`` sends each journal here on
# its own).
_VERIFIED: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def _check_workers_once(client: Client, backend: str) -> None:
    verified = _VERIFIED.setdefault(client, set())
    if backend not in verified:
        check_workers(client, backend)
        verified.add(backend)


def check_workers(client: Client, backend: str | None = None) -> None:
    """Raise ``ClusterError`` unless every worker has this pairling_fast version and ``backend``
    (default: the active one)."""
    import pairling_fast

    backend = backend or _backend.active_name()
    problems = []
    for worker, (version, unusable) in sorted(client.run(_worker_build, backend).items()):
        if unusable is not None:
            problems.append(f"{worker}: the {backend} backend is unavailable ({unusable})")
        elif version != pairling_fast.__version__:
            problems.append(
                f"{worker}: pairling_fast {version}, the driver has {pairling_fast.__version__}"
            )
    if problems:
        raise ClusterError("workers cannot check journals: " + "; ".join(problems))


def workers_line(client: Client) -> str:
    """``N worker(s), M thread(s)``: what a cluster run has to work with, for its progress."""
    threads = client.nthreads()
    return f"{len(threads)} worker(s), {sum(threads.values())} thread(s)"


def journal_files(paths: Iterable[PathLike]) -> list[str]:
    """The files to check, each once, in the order given; directories (and URL prefixes, e.g.
    ``s3://bucket/journals/``) give their journals."""
    files: dict[str, None] = {}
    for raw in paths:
        path = os.fsdecode(os.fspath(raw))
        if remote.is_url(path):
            objects = remote.listing(path)
            whole = len(objects) == 1 and objects[0].url == path
            files.update(
                (found.url, None)
                for found in objects
                if whole or found.url.endswith(JOURNAL_SUFFIXES)
            )
        elif os.path.isdir(path):
            found = sorted(
                str(candidate)
                for candidate in Path(path).rglob("*")
                if candidate.suffix in JOURNAL_SUFFIXES and candidate.is_file()
            )
            files.update(dict.fromkeys(found))
        elif os.path.exists(path):
            files[path] = None
        else:
            raise FileNotFoundError(f"{path}: no such file or directory")
    return list(files)


def journal_reports(
    files: Sequence[str],
    client: Client,
    *,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    max_in_flight: int | None = None,
    **keywords: Unpack[JournalKeywords],
) -> Iterator[tuple[str, Report]]:
    """(path, report) of each journal file (a path or a URL), in order, as each completes. One
    task per journal runs on the workers (checked whole, or as the reducer of its chunks: module
    docstring); at most ``max_in_flight`` journals are submitted ahead (default twice the
    cluster's threads), and each reducer keeps at most as many chunks ahead, so memory is bounded
    on the driver and on the workers. On Ctrl-C the tasks in flight are cancelled."""
    options = JournalOptions(**keywords)
    return _journal_reports(_backend.active(), files, client, options, chunk_bytes, max_in_flight)


def _journal_reports(
    engine: _backend.Engine,
    files: Sequence[str],
    client: Client,
    options: JournalOptions,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    max_in_flight: int | None = None,
) -> Iterator[tuple[str, Report]]:
    """``journal_reports`` on ``engine``: the workers' tasks use it. One task per journal
    (``_journal_task``), at most ``max_in_flight`` journals at a time, each reducer with at most
    ``max_in_flight`` chunks ahead; the driver receives each journal's raw report only."""
    backend = _backend.name_of(engine)
    _check_workers_once(client, backend)
    if max_in_flight is not None and max_in_flight < 1:
        raise ValueError(f"max_in_flight must be at least 1, not {max_in_flight}")
    # One journal (each file of ``check_paths``) needs no count of the cluster's threads here:
    # its reducer, if it has one, asks on its worker; the driver saves a scheduler round trip.
    journals_ahead = max_in_flight or (1 if len(files) == 1 else _twice_the_threads(client))
    if chunk_bytes < 1:
        raise ValueError(f"chunk_bytes must be at least 1, not {chunk_bytes}")

    def submit(file: str) -> Future[RawReport]:
        return client.submit(
            _journal_task,
            backend,
            remote.Redacted(file),
            options,
            chunk_bytes,
            max_in_flight,
            pure=False,
        )

    pending: deque[tuple[str, Future[RawReport]]] = deque()
    upcoming = iter(files)
    try:
        while True:
            while len(pending) < journals_ahead:
                file = next(upcoming, None)
                if file is None:
                    break
                pending.append((file, submit(file)))
            if not pending:
                return
            file, future = pending.popleft()
            shown = remote.redact(file)
            try:
                raw, stats = future.result()
            except OSError as error:
                reason = remote.redact(error.strerror or str(error))
                if remote.is_url(file):
                    raise OSError(error.errno, reason, shown) from None
                raise OSError(
                    error.errno, f"{shown}: cannot be read on a worker: {reason}"
                ) from None
            future.release()
            report = Report(findings=[Finding.from_raw(r, shown) for r in raw], stats=dict(stats))
            if stats["interrupted"]:
                raise JournalInterrupted(report)
            yield file, report
    except KeyboardInterrupt:
        client.cancel([future for _, future in pending])
        raise
    except BaseException:
        client.cancel([future for _, future in pending])
        raise


def check_journal_on_cluster(
    path: PathLike,
    client: Client,
    *,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    max_in_flight: int | None = None,
    **keywords: Unpack[JournalKeywords],
) -> Report:
    """``pairling_fast.check_journal(path, ...)`` with the per-line work on ``client``'s workers;
    the report is the same. ``max_in_flight`` caps the chunks submitted ahead (default: twice the
    cluster's threads)."""
    options = JournalOptions(**keywords)
    return journal_report_on(_backend.active(), path, client, options, chunk_bytes, max_in_flight)


def journal_report_on(
    engine: _backend.Engine,
    path: PathLike,
    client: Client,
    options: JournalOptions,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    max_in_flight: int | None = None,
) -> Report:
    """One journal's report on the cluster, on ``engine`` (``check_paths`` hands down the one it
    resolved)."""
    file = os.fsdecode(os.fspath(path))
    if not remote.is_url(file) and not os.path.isfile(file):
        raise FileNotFoundError(f"{file}: not a file")
    ((_, report),) = _journal_reports(engine, [file], client, options, chunk_bytes, max_in_flight)
    return report


def check_journal_paths_on_cluster(
    paths: Iterable[PathLike],
    client: Client,
    *,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    max_in_flight: int | None = None,
    **keywords: Unpack[JournalKeywords],
) -> Report:
    """Check journals (files, or directories of ``*.jsonl`` / ``*.ndjson``) on ``client``'s
    workers, one pipeline of chunks across all files. The report lists every file's findings
    (each with its ``path``) in the order the files were given, and ``stats["files"]`` maps each
    path to its stats; per file, both are exactly what ``pairling_fast.check_journal`` gives."""
    reports = journal_reports(
        journal_files(paths),
        client,
        chunk_bytes=chunk_bytes,
        max_in_flight=max_in_flight,
        **keywords,
    )
    merged = Report(stats={"files": {}})
    for path, report in reports:
        merged.findings.extend(report.findings)
        merged.stats["files"][path] = report.stats
    return merged


def _renamed(old: str, new: str) -> None:
    warnings.warn(
        f"pairling_fast.distributed.{old} is deprecated: call {new}, or "
        "pairling_fast.check_paths(..., client=client) for every kind of file",
        DeprecationWarning,
        stacklevel=3,
    )


def check_journal(*args: Any, **kwargs: Any) -> Report:
    """Deprecated name of ``check_journal_on_cluster`` (it shared the name of
    ``pairling_fast.check_journal`` but takes a client and a path only)."""
    _renamed("check_journal", "check_journal_on_cluster")
    return check_journal_on_cluster(*args, **kwargs)


def check_paths(*args: Any, **kwargs: Any) -> Report:
    """Deprecated name of ``check_journal_paths_on_cluster`` (it shared the name of
    ``pairling_fast.check_paths`` but checks journals only, into one merged report)."""
    _renamed("check_paths", "check_journal_paths_on_cluster")
    return check_journal_paths_on_cluster(*args, **kwargs)


# ---------------------------------------------------------------------------------------------
# Connecting: what ``pairling-fast check --dask ADDRESS`` uses


CONNECT_TIMEOUT = 30.0
"""Seconds ``connect`` waits for a scheduler to answer before giving up (docs/cluster.md)."""


def connect(address: str, stack: ExitStack, *, timeout: float = CONNECT_TIMEOUT) -> Client:
    """A client of the scheduler at ``address``, or of a new ``LocalCluster`` for ``local[:N]``
    (N worker processes of one thread each; default: one per CPU). Closed with ``stack``.

    A remote scheduler must answer within ``timeout`` seconds: a refused connection fails at
    once, a peer that accepts and never speaks or that speaks something else (Dask could read a
    garbage length and run out of memory) fails with ``ClusterError`` within the timeout.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError as error:
        raise ClusterError(
            f"--dask needs the [dask] extra (pip install 'pairling_fast[dask]'): {error}"
        ) from None
    if address == "local" or address.startswith("local:"):
        count = address.partition(":")[2]
        if count and not (count.isdigit() and int(count) > 0):
            raise ValueError(f"--dask local:N needs a positive N, not {count!r}")
        cluster = stack.enter_context(
            LocalCluster(
                n_workers=int(count) if count else os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
        )
        return stack.enter_context(Client(cluster))
    deadline = time.monotonic() + timeout
    _reachable(address, timeout)
    client = _within(deadline, lambda: Client(address, timeout=f"{timeout}s"), address, timeout)
    return stack.enter_context(client)


def _reachable(address: str, timeout: float) -> None:
    """Fail at once on a refused connection (Dask would retry it until its timeout)."""
    host, port = _host_port(address)
    if port is None:
        return  # not TCP (inproc://, ucx://...): Dask alone knows how to reach it
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except TimeoutError:
        raise ClusterError(f"no answer from {host}:{port} within {timeout:g} s") from None
    except OSError as error:
        raise ClusterError(f"cannot connect to {host}:{port}: {error.strerror or error}") from None


def _host_port(address: str) -> tuple[str, int | None]:
    scheme, separator, rest = address.partition("://")
    if not separator:
        scheme, rest = "tcp", address
    if scheme not in ("tcp", "tls"):
        return "", None
    host, _, port = rest.rpartition(":")
    if not port.isdigit():
        raise ValueError(f"--dask {address!r}: expected tcp://HOST:PORT")
    return host.strip("[]"), int(port)


def _within(deadline: float, make: Callable[[], Client], address: str, timeout: float) -> Client:
    """``make()`` run on a daemon thread, waited for until ``deadline``: Dask's own timeout does
    not cover a peer that accepts the connection and then never completes the handshake."""
    outcome: list[Client | BaseException] = []
    abandoned = threading.Event()

    def attempt() -> None:
        try:
            client = make()
        except BaseException as error:  # MemoryError from a garbage peer included
            outcome.append(error)
            return
        if abandoned.is_set():
            client.close()
        else:
            outcome.append(client)

    worker = threading.Thread(target=attempt, name="pairling-fast-dask-connect", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if not outcome:
        abandoned.set()
        raise ClusterError(
            f"{address} accepted the connection but did not answer as a Dask scheduler "
            f"within {timeout:g} s"
        )
    result = outcome[0]
    if isinstance(result, MemoryError):
        raise ClusterError(f"{address} is not a Dask scheduler (its reply is not Dask's protocol)")
    if isinstance(result, BaseException):
        reason = str(result).splitlines()[0] if str(result) else type(result).__name__
        raise ClusterError(f"cannot use the scheduler at {address}: {reason}")
    return result
