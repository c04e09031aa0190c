"""A journal checked as its bytes arrive: ``JournalStream`` (docs/journals.md, "Streams and
--follow").

It reads like ``zlib.decompressobj`` or ``codecs.IncrementalDecoder``: ``feed`` any piece of the
journal (cut anywhere, inside a line or a UTF-8 character) and get the findings the lines it
completed decide; the partial line after the last newline is kept inside until the next piece;
``close`` ends the stream and returns the report ``check_journal`` gives for all the bytes fed.
``state`` is the stream's entry in the ``--state`` format, to resume a stream that stopped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import _backend
from ..report import Finding, Report
from .options import JournalKeywords, JournalOptions
from .state_file import JournalStateError, fingerprint

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["JournalStream"]


class JournalStream:
    """The incremental ``check_journal``: ``feed(data) -> list[Finding]``, ``close() -> Report``.

    Takes ``check_journal``'s options. ``feed`` returns, in order, the findings of the report
    that the lines completed so far decide (a finding whose cause repeats later gets the count
    of repeats appended to its message in the report, ``(and N later events with the same
    cause)``); the end-of-journal findings (open runs and proposals, a journal beginning
    mid-run) and a last line without a newline come with ``close``. Memory: the checker's
    bounded state and one partial line, whose bytes are dropped (and only counted) once it is
    longer than ``max_line_length``.

    ``state``: an entry ``state()`` returned (or ``check --state`` recorded for a file), to go on
    from: feed the bytes from ``offset`` on. ``JournalStateError`` if it was recorded under other
    options or is malformed. ``name`` is the ``path`` the findings carry. ``backend``: ``"rust"``
    or ``"python"`` (default: the active one, as ``check_paths``'s).
    """

    def __init__(
        self,
        *,
        state: Mapping[str, Any] | None = None,
        name: str | None = None,
        backend: str | None = None,
        **keywords: Unpack[JournalKeywords],
    ) -> None:
        self.options = JournalOptions(**keywords)
        self.name = name
        self._fingerprint = fingerprint(self.options)
        self._engine = _backend.resolve(backend)
        checker, self._fed = None, 0
        if state is not None:
            checker, self._fed = self._resumed(state)
        try:
            # Once finished, the engine's stream raises "this JournalStream is closed" itself.
            self._stream: _backend.JournalStreamEngine = self._engine.JournalStream(
                self.options, checker
            )
        except ValueError as error:
            if checker is None:
                raise
            raise JournalStateError(f"the stream's state is malformed ({error})") from None
        self._closed = False

    def _resumed(self, state: Mapping[str, Any]) -> tuple[str, int]:
        try:
            recorded, checker, offset = state["options"], state["checker"], int(state["offset"])
        except (KeyError, TypeError, ValueError):
            raise JournalStateError("the stream's state is malformed") from None
        if recorded != self._fingerprint or not isinstance(checker, str):
            changed = sorted(
                key
                for key in self._fingerprint
                if not isinstance(recorded, Mapping) or recorded.get(key) != self._fingerprint[key]
            )
            raise JournalStateError(
                f"the stream's state was recorded under other options ({', '.join(changed)})"
            )
        return checker, offset

    def feed(self, data: bytes | bytearray | memoryview) -> list[Finding]:
        """Takes the next piece of the journal; returns the findings its completed lines decide."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            # bytes(str) would say "string argument without an encoding": say what is wanted.
            hint = " (a str: text.encode('utf-8'))" if isinstance(data, str) else ""
            raise TypeError(
                "JournalStream.feed takes bytes (the journal as written, UTF-8), not "
                f"{type(data).__name__}{hint}"
            )
        piece = data if isinstance(data, bytes) else bytes(data)
        raw = self._stream.feed(piece)
        self._fed += len(piece)
        return [Finding.from_raw(finding, self.name) for finding in raw]

    def close(self, *, interrupted: bool = False) -> Report:
        """Ends the stream: the report of every byte fed, as ``check_journal`` gives it (a
        partial line is a last line without a newline). ``interrupted``: the stream stopped
        rather than ended (as after Ctrl-C): the partial line is dropped, no end-of-journal
        findings, ``stats["interrupted"]`` is true."""
        self._closed = True
        raw, stats = self._stream.finish(interrupted)
        return Report(findings=[Finding.from_raw(f, self.name) for f in raw], stats=dict(stats))

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def lines(self) -> int:
        """The complete lines fed (counted from the journal's start when resumed)."""
        return self._stream.lines

    @property
    def events(self) -> int:
        """The events among the complete lines (counted from the journal's start when resumed)."""
        return self._stream.events

    @property
    def pending(self) -> int:
        """The bytes of the partial line after the last newline."""
        return self._stream.pending

    @property
    def offset(self) -> int:
        """Where the complete lines end, in bytes from the journal's start."""
        return self._fed - self.pending

    def state(self) -> dict[str, Any]:
        """The stream's entry in the ``--state`` format (``JournalStates.put`` stores it in a
        state file), where its last complete line ends: ``offset``, ``lines``, the options'
        fingerprint and the checker's state. A file's entry also has its device, inode and the
        BLAKE3 of its bytes in blocks (``check --state`` and ``check --follow`` record them); a
        stream has no file, so they are ``None`` and absent."""
        stream = self._stream
        return {
            "device": None,
            "inode": None,
            "offset": self.offset,
            "lines": stream.lines,
            "options": self._fingerprint,
            "checker": stream.snapshot(),
        }

    def __enter__(self) -> JournalStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if not self._closed:
            self.close(interrupted=exc_info[0] is not None)
