"""CAR journals: the streaming check of JSONL event logs.

A journal is one CAR event (``car.journal.event``) per line. ``check_journal`` validates every line,
verifies the hash chain (CAR's ``event_digest``, ``car-eventlog-0.58.0.event_digest`` in
``docs/digests.md``) and the run / proposal / action lifecycles in one streaming pass whose memory
is bounded by the open ids, not the file size. Writing chained journals (``chain_event``,
``chain_journal``, ``JournalWriter``) is ``writers.py``'s job; the options every check takes are
``options.py``'s (re-exported here). The package is the journal concern of the facade: the
``--state`` file (``state_file.py``, ``object_state_file.py``), ``stream.py``, ``follow.py`` and the
cluster (``cluster.py``).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any, Union

from .. import _backend, remote, schemas
from .._tables import DEFAULT_MAX_FINDINGS, DEFAULT_MAX_LINE_LENGTH
from ..report import Finding, Report
from .options import JournalInterrupted, JournalKeywords, JournalOptions
from .state_file import JournalStateError, JournalStates, check_with_state

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "CHAIN_RULE",
    "DEFAULT_MAX_FINDINGS",
    "DEFAULT_MAX_LINE_LENGTH",
    "JournalInterrupted",
    "JournalOptions",
    "JournalSource",
    "JournalStateError",
    "JournalStates",
    "check_journal",
    "event_kinds",
]

CHAIN_RULE = "car-eventlog-0.58.0.event_digest"
JournalSource = Union[str, "os.PathLike[str]", bytes, bytearray, IO[bytes], Iterable[bytes | str]]
"""A path or an fsspec URL (``s3://bucket/key``, ``https://...``: read by byte ranges,
docs/cluster.md), the journal's text as bytes (as ``check_map`` takes a map's), a binary file
object, or an iterable of lines (bytes or str, one line each)."""


class _LinesReader:
    """An iterable of lines as a binary ``read(n)`` source. Each item is one line: a missing
    newline is added, except on the last item, which is taken as a file's last line is (so a
    truncated final line is reported the same way)."""

    def __init__(self, lines: Iterable[bytes | str]) -> None:
        self._lines: Iterator[bytes | str] = iter(lines)
        self._next = self._encoded(next(self._lines, None))
        self._buffer = bytearray()

    @staticmethod
    def _encoded(line: bytes | str | None) -> bytes | None:
        if line is None or isinstance(line, bytes):
            return line
        if isinstance(line, str):
            return line.encode("utf-8", "surrogatepass")
        if isinstance(line, (bytearray, memoryview)):
            return bytes(line)
        raise TypeError(f"journal lines must be bytes or str, not {type(line).__name__}")

    def read(self, size: int) -> bytes:
        while len(self._buffer) < size and self._next is not None:
            line = self._next
            self._next = self._encoded(next(self._lines, None))
            self._buffer += line
            if self._next is not None and not line.endswith(b"\n"):
                self._buffer += b"\n"
        chunk = bytes(self._buffer[:size])
        del self._buffer[:size]
        return chunk


def _engine_source(source: JournalSource) -> tuple[Any, str | None]:
    """(what the engine reads: a path str or a binary ``read(n)`` object, the path for findings)."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fsdecode(os.fspath(source))
        return path, path
    if isinstance(source, (bytes, bytearray, memoryview)):
        return io.BytesIO(source), None
    if isinstance(source, io.TextIOBase):
        return _LinesReader(source), getattr(source, "name", None)
    if hasattr(source, "read"):
        name = getattr(source, "name", None)
        return source, name if isinstance(name, str) else None
    return _LinesReader(source), None


def check_journal(
    source: JournalSource,
    *,
    progress: Callable[[int], object] | None = None,
    state: str | os.PathLike[str] | JournalStates | None = None,
    **keywords: Unpack[JournalKeywords],
) -> Report:
    """Check a CAR journal: every line, the hash chain and the lifecycles, in one streaming pass.

    ``chain``: ``"auto"`` verifies when any event carries ``hash``, ``"require"`` also makes an
    unchained journal an error, ``"off"`` skips the chain. ``max_findings`` caps the list, not the
    checking (``stats["suppressed_findings"]`` counts the rest; ``None``: no cap). ``profile``:
    ``"strict"`` is the wire schema, ``"car-compatible"`` reports what CAR's own parser tolerates
    as PF304 warnings. ``progress(bytes_read)`` is called while the check runs (between
    batches of lines) and once at the end, from the thread that called ``check_journal``. Raises
    ``JournalInterrupted`` (a ``KeyboardInterrupt`` carrying the partial report) on Ctrl-C,
    ``OSError`` if the file cannot be read. ``car_version`` validates events against that bundled
    CAR release's ``journal.event`` (its event kinds; docs/wire.md) instead of the default
    bundle's; ``ValueError`` for one not bundled. ``payloads`` checks each event's ``data``
    against CAR's payload contracts for that release (docs/journals.md): ``"warn"`` (PF360-PF362
    warnings, the default), ``"error"`` (the same as PF363-PF365 errors) or ``"off"``.

    ``state`` makes the check incremental (docs/journals.md): a state file's path (read, then
    written back atomically) or a ``JournalStates`` (updated in memory; save it yourself). If the
    journal's entry there shows the verified prefix unchanged, only the bytes appended since are
    checked, and the report equals a full check's (plus ``stats["resumed"]``); a changed prefix
    is a PF345 error and a full check. ``source`` must then be a path; ``JournalStateError`` for
    a state file that cannot be used.
    """
    options = JournalOptions(**keywords)
    return check_journal_on(_backend.active(), source, options, progress, state)


def check_journal_on(
    engine: _backend.Engine,
    source: JournalSource,
    options: JournalOptions,
    progress: Callable[[int], object] | None = None,
    state: str | os.PathLike[str] | JournalStates | None = None,
) -> Report:
    """``check_journal`` on ``engine`` with ``options`` (``check_paths`` hands down the engine it
    resolved)."""
    if state is not None:
        return _check_with_state(engine, source, options, state, progress)
    if isinstance(source, str) and remote.is_url(source):
        # Read by byte ranges through fsspec: memory stays bounded whatever the object's size.
        with remote.opened(source) as handle:
            raw, stats = engine.check_journal(handle, options, progress)
        path: str | None = remote.redact(source)
    else:
        engine_source, path = _engine_source(source)
        raw, stats = engine.check_journal(engine_source, options, progress)
    report = Report(findings=[Finding.from_raw(r, path) for r in raw], stats=dict(stats))
    if stats["interrupted"]:
        raise JournalInterrupted(report)
    return report


def _check_with_state(
    engine: _backend.Engine,
    source: JournalSource,
    options: JournalOptions,
    state: str | os.PathLike[str] | JournalStates,
    progress: Callable[[int], object] | None,
) -> Report:
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError("check_journal(state=...) needs the journal's path as its source")
    if isinstance(source, str) and remote.is_url(source):
        # Loaded only for URLs: a local check does not pay for it.
        from .object_state_file import check_object_with_state

        states = state if isinstance(state, JournalStates) else JournalStates.load(state)
        report = check_object_with_state(
            source, options, states, lambda: check_journal_on(engine, source, options, progress)
        )
        if not isinstance(state, JournalStates):
            states.save(state)
        return report
    path = os.fsdecode(os.fspath(source))
    if isinstance(state, JournalStates):
        return check_with_state(engine, path, options, state, progress)
    states = JournalStates.load(state)
    report = check_with_state(engine, path, options, states, progress)
    states.save(state)
    return report


def event_kinds(car_version: str | None = None) -> list[str]:
    """Every event kind of ``car.journal.event``, sorted: of the default wire-schema bundle (the
    one journals are checked against), or of the bundle of CAR ``car_version`` (``ValueError``
    for one not bundled): CAR's ``EventLog`` refuses a kind its release does not know."""
    return _backend.active().journal_event_kinds(schemas.release(car_version))
