"""Writing hash-chained CAR journals: ``chain_event`` links one event to its predecessor,
``chain_journal`` chains a whole journal atomically, ``JournalWriter`` appends to a live one.

Every writer chains through ``chain_event`` (CAR's ``event_digest``, ``car-eventlog-0.58.0.
event_digest`` in ``docs/digests.md``) and never destroys: ``chain_journal`` writes through
``_atomic.atomic_write``, ``JournalWriter`` only appends. ``pairling_fast.journal`` exports every
name here, as it did before they had a module of their own.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import stat
from pathlib import Path
from types import TracebackType
from typing import IO, Any, cast

from .. import _backend
from .. import journal as _journal
from .._atomic import atomic_write
from .._tables import DEFAULT_MAX_LINE_LENGTH
from ..codes import (
    CHAINED_WITHOUT_TIMESTAMP,
    DIGEST_UNCOMPUTABLE,
    HASH_MISMATCH,
    LINK_MISMATCH,
    TRUNCATED_FINAL_LINE,
)
from ..errors import CanonicalizationError, ValidationError
from ..report import Finding, Report
from ..validator import schema_validator
from .options import Profile

__all__ = ["JournalWriter", "chain_event", "chain_journal", "event_line"]

SCHEMA_ID = "car.journal.event"


def event_line(event: dict[str, Any]) -> bytes:
    """One journal line: compact JSON, UTF-8, newline-terminated."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def _unlinked(event: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``event`` without its chain link (``prev_hash``, ``hash``)."""
    return {key: value for key, value in event.items() if key not in ("hash", "prev_hash")}


def chain_event(event: dict[str, Any], previous_hash: str | None) -> dict[str, Any]:
    """A copy of ``event`` with ``prev_hash`` (``""`` at a chain's start, as CAR's ``EventLog``
    writes it) and its ``hash``: CAR's ``event_digest`` of the line as CAR reads it back.

    The one place the Python side links an event to its predecessor: ``JournalWriter``,
    ``chain_journal`` and the generator all chain through it. Links are verified by the engines'
    ordered stage, and the already chained events ``chain_journal`` keeps by
    ``_existing_link_problem``.

    ``ValidationError`` (PF331 / PF332) if CAR could not compute the digest of the event.
    """
    chained = _unlinked(event)
    chained["prev_hash"] = previous_hash or ""
    chained["hash"] = _chain_digest(event_line(chained))
    return chained


def _chain_digest(line: bytes, path: str | None = None, number: int | None = None) -> str:
    try:
        return _backend.active().journal_chain_digest(line)
    except ValueError as error:
        code = (
            CHAINED_WITHOUT_TIMESTAMP
            if str(error).startswith('no "timestamp"')
            else DIGEST_UNCOMPUTABLE
        )
        message = f"CAR cannot compute the chain digest of this event: {error}"
        raise ValidationError([Finding.of(code, message, path, number, "")]) from None


def chain_journal(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    profile: Profile = "strict",
    fsync: bool = True,
    notes: list[str] | None = None,
) -> Report:
    """Write ``src`` to ``dst`` with ``prev_hash``/``hash`` on every event, atomically.

    Events that already carry a hash are kept byte for byte and verified; unchained events after
    them continue their chain. ``src`` is read once: the bytes the check (lines and schema) sees
    are the bytes chained into a temporary file beside ``dst``, so a line appended while it runs
    is either checked and written or neither. If the input has errors, or its chain is broken,
    nothing is written and ``ValidationError`` lists the findings; otherwise the temporary is
    fsynced and renamed over ``dst`` (``src`` and ``dst`` may be the same file; see
    ``_atomic.atomic_write`` for links, devices and ``notes``). ``src`` may be a FIFO; a device,
    socket or directory is refused. The report's stats count the events newly chained and kept.
    """
    source = os.fsdecode(os.fspath(src))
    destination = Path(os.fsdecode(os.fspath(dst)))
    with open(source, "rb") as stream:
        _refuse_unstreamable(stream, source)
        with atomic_write(destination, fsync=fsync, notes=notes) as output:
            reader = _ChainingReader(stream, output, source, DEFAULT_MAX_LINE_LENGTH)
            # A binary ``read(n)`` source is all check_journal uses of a file object.
            readable = cast("IO[bytes]", reader)
            check = _journal.check_journal(readable, chain="off", lifecycle=False, profile=profile)
            if check.stats["errors"]:
                raise ValidationError(check.errors or check.findings)  # errors beyond the cap
            if reader.problem is not None:
                raise ValidationError([reader.problem])
    return Report(findings=check.findings, stats=reader.stats())


def _refuse_unstreamable(stream: IO[bytes], path: str) -> None:
    """A journal is a regular file or a pipe; ``/dev/zero`` and the like never end."""
    mode = os.fstat(stream.fileno()).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        raise OSError(errno.EINVAL, "not a regular file or a pipe: refusing to read it", path)


class _ChainingReader:
    """The journal as the check reads it (``read(n)``), chaining the same bytes into ``output``
    as whole lines go by: one pass, nothing read twice.

    A line that cannot be chained (not JSON, not an object, too long) is left to the check, which
    reports it, and ends the writing; a hash that does not verify is kept as ``problem``.
    """

    def __init__(self, stream: IO[bytes], output: IO[bytes], path: str, limit: int) -> None:
        self.name = path
        self.problem: Finding | None = None
        self._stream = stream
        self._output = output
        self._limit = limit
        self._pending = bytearray()
        self._overlong = False
        self._ended = False
        self._writing = True
        self._number = 0
        self._previous_hash: str | None = None
        self._newly_chained = self._kept = self._events = 0

    def read(self, size: int = -1) -> bytes:
        chunk = self._stream.read(size)
        if chunk:
            self._feed(chunk)
        elif not self._ended:
            self._ended = True
            if self._pending or self._overlong:
                self._line()
        return chunk

    def stats(self) -> dict[str, Any]:
        return {
            "events": self._events,
            "newly_chained": self._newly_chained,
            "kept": self._kept,
            "last_hash": self._previous_hash,
        }

    def _feed(self, chunk: bytes) -> None:
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            piece = chunk[start:] if newline < 0 else chunk[start:newline]
            if not self._overlong:
                if len(self._pending) + len(piece) > self._limit:
                    self._overlong = True
                    self._pending.clear()
                else:
                    self._pending += piece
            if newline < 0:
                return
            self._line()
            start = newline + 1

    def _line(self) -> None:
        self._number += 1
        text = bytes(self._pending).rstrip(b"\r")
        unusable = self._overlong
        self._pending.clear()
        self._overlong = False
        if not self._writing:
            return
        if unusable:
            self._writing = False
        elif not text.strip(b" \t\r"):
            self._output.write(text + b"\n")
        else:
            self._writing = self._chain(text)

    def _chain(self, text: bytes) -> bool:
        """Write one event; False when writing must stop."""
        try:
            event = _backend.active().parse_json(text)
        except CanonicalizationError as error:
            # Reported by the check too, unless its profile tolerates it (car-compatible): a
            # chained journal is strict JSON either way.
            message = f"cannot be chained: {error.message}"
            self.problem = Finding.of(error.code, message, self.name, self._number, "")
            return False
        if not isinstance(event, dict):
            return False
        self._events += 1
        existing = event.get("hash")
        if not isinstance(existing, str):
            chained = chain_event(event, self._previous_hash)
            self._output.write(event_line(chained))
            self._previous_hash = chained["hash"]
            self._newly_chained += 1
            return True
        problem = _existing_link_problem(text, event, existing, self._previous_hash)
        if problem is not None:
            code, pointer, message = problem
            self.problem = Finding.of(code, message, self.name, self._number, pointer)
            return False
        self._output.write(text + b"\n")
        self._previous_hash = existing
        self._kept += 1
        return True


def _existing_link_problem(
    line: bytes,
    event: dict[str, Any],
    existing: str,
    previous_hash: str | None,
) -> tuple[str, str, str] | None:
    """Why an already chained input event cannot be kept: (code, pointer, message), or None."""
    try:
        recomputed = _backend.active().journal_chain_digest(line)
    except ValueError as error:
        return (
            DIGEST_UNCOMPUTABLE,
            "/hash",
            f"CAR cannot compute the chain digest of this event: {error}",
        )
    if recomputed != existing:
        return (
            HASH_MISMATCH,
            "/hash",
            f'"hash" does not match the event\'s content (recomputed {recomputed})',
        )
    # No predecessor: the journal's first event (chaining sets the previous hash, so none was
    # newly chained before it either).
    if previous_hash is not None and event.get("prev_hash") != previous_hash:
        return (
            LINK_MISMATCH,
            "/prev_hash",
            f'"prev_hash" does not link to the previous hash "{previous_hash}"',
        )
    return None


_TAIL_BLOCK = 1 << 16


def _last_line(stream: IO[bytes], size: int, limit: int) -> bytes | None:
    """The last non-blank line of a file, read from the end in blocks, at most ``limit`` bytes."""
    position = size
    tail = b""
    while True:
        content = tail.rstrip(b" \t\r\n")
        start = content.rfind(b"\n")
        if content and (start >= 0 or position == 0):
            return content[start + 1 :]
        if position == 0:
            return None
        if len(tail) > limit:
            raise ValueError(f"the journal's last line is longer than {limit} bytes")
        step = min(_TAIL_BLOCK, position)
        position -= step
        stream.seek(position)
        tail = stream.read(step) + tail


class JournalWriter:
    """Appends hash-chained events to a journal, resuming from its last event's ``hash``.

    ``append(event)`` validates the event (``car.journal.event``, strict), sets ``prev_hash`` and
    ``hash`` and writes it as one line, flushed (and fsynced with ``fsync=True``); it returns the
    event as written. A last line cut off mid-write is refused (PF302); a valid last line without
    a newline gets one. Use as a context manager.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        fsync: bool = False,
        max_line_length: int = DEFAULT_MAX_LINE_LENGTH,
    ) -> None:
        self.path = os.fsdecode(os.fspath(path))
        self.fsync = fsync
        self._file: IO[bytes] = open(self.path, "a+b")
        try:
            self.last_hash = self._resume(max_line_length)
        except BaseException:
            self._file.close()
            raise

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, fsync: bool = False) -> JournalWriter:
        return cls(path, fsync=fsync)

    def _resume(self, max_line_length: int) -> str | None:
        size = self._file.seek(0, os.SEEK_END)
        last = _last_line(self._file, size, max_line_length)
        terminated = True
        if size:
            self._file.seek(size - 1)
            terminated = self._file.read(1) == b"\n"
        self._file.seek(0, os.SEEK_END)
        if last is None:
            return None
        try:
            event = _backend.active().parse_json(last)
        except CanonicalizationError as error:
            message = (
                f"the journal's last line is not valid JSON ({error.code}: {error.message}); "
                "repair it before appending"
            )
            raise ValidationError(
                [Finding.of(TRUNCATED_FINAL_LINE, message, self.path, None, "")]
            ) from None
        if not terminated:
            self._file.write(b"\n")
        previous = event.get("hash") if isinstance(event, dict) else None
        return previous if isinstance(previous, str) else None

    def append(self, event: dict[str, Any]) -> dict[str, Any]:
        findings = [
            f
            for f in schema_validator(SCHEMA_ID).iter_errors(_unlinked(event))
            if f.severity == "error"
        ]
        if findings:
            raise ValidationError([dataclasses.replace(f, path=self.path) for f in findings])
        try:
            chained = chain_event(event, self.last_hash)
        except ValidationError as error:
            findings = [dataclasses.replace(f, path=self.path) for f in error.findings]
            raise ValidationError(findings) from None
        self._file.write(event_line(chained))
        self._file.flush()
        if self.fsync:
            os.fsync(self._file.fileno())
        self.last_hash = chained["hash"]
        return chained

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
