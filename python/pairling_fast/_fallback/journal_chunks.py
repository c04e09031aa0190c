"""Byte-range chunks of a journal on the pure-Python backend: the same split as
``rust/journal_chunks.rs`` (``docs/cluster.md``).

``check_journal_chunk`` runs the per-line stage over the lines that begin in a byte range;
``JournalChecker`` feeds chunks, in file order and renumbered, to the very ``_Checker`` that
``check_journal`` uses, so the report is the single-pass one whatever the chunk size. A chunk is
opaque bytes (a pickle of this backend's checked lines); only this backend's ``JournalChecker``
reads it.
"""

from __future__ import annotations

import pickle
from typing import IO, TYPE_CHECKING, Any, Union

from ..report import RawFinding
from .journal import (
    READ_SIZE,
    _check_line,
    _Checker,
    _EventFacts,
    _read_lines,
    check_options,
)

if TYPE_CHECKING:
    from ..journal import JournalOptions

__all__ = ["JournalChecker", "check_journal_chunk"]

_CheckedLine = tuple[Union[str, _EventFacts], list[RawFinding]]


def _first_line_start(stream: IO[bytes], start: int) -> int | None:
    """The offset of the first line that begins at or after ``start``; None at EOF."""
    if start == 0:
        return 0
    position = stream.seek(start - 1)
    while True:
        block = stream.read(READ_SIZE)
        if not block:
            return None
        newline = block.find(b"\n")
        if newline >= 0:
            return position + newline + 1
        position += len(block)


def check_journal_chunk(path: str, start: int, end: int, options: JournalOptions) -> bytes:
    """The per-line stage over the lines whose first byte lies in ``[start, end)``, reading past
    ``end`` to finish the last one; lines are numbered from 1 within the chunk. Of ``options``
    the per-line ones apply (lifecycle and the findings cap are the ordered stage's)."""
    check_options(options)
    chain, profile, car_version = options.chain, options.profile, options.car_version
    max_line_length = options.max_line_length
    checked: list[_CheckedLine] = []
    with open(path, "rb") as stream:
        first = _first_line_start(stream, start)
        if first is not None and first < end:
            stream.seek(first)
            position = first
            for raw in _read_lines(stream.read, max_line_length):
                checked.append(
                    _check_line(raw, chain, profile, max_line_length, car_version, options.payloads)
                )
                position += raw.length + raw.terminated
                if position >= end:
                    break
    return pickle.dumps(checked, protocol=pickle.HIGHEST_PROTOCOL)


class JournalChecker:
    """The ordered stage of ``check_journal`` fed chunk by chunk, in file order."""

    def __init__(self, options: JournalOptions) -> None:
        check_options(options)
        self._checker: _Checker | None = _Checker(
            options.chain, options.lifecycle, options.max_findings, options.car_version
        )

    def _active(self) -> _Checker:
        if self._checker is None:
            raise ValueError("this JournalChecker has finished")
        return self._checker

    def feed(self, chunk: bytes) -> None:
        """The next chunk's lines, numbered after the lines fed so far."""
        checker = self._active()
        offset = checker.lines
        lines: list[_CheckedLine] = pickle.loads(chunk)
        for local, (outcome, findings) in enumerate(lines, start=1):
            renumbered: list[RawFinding] = [
                (code, severity, message, None if line is None else line + offset, pointer, schema)
                for code, severity, message, line, pointer, schema in findings
            ]
            checker.take(offset + local, outcome, renumbered)

    def finish(self, interrupted: bool = False) -> tuple[list[RawFinding], dict[str, Any]]:
        checker = self._active()
        self._checker = None
        stats = checker.finish(interrupted)
        return checker.findings, stats
