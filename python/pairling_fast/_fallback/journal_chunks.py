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
from typing import IO, Any, Union

from ..report import RawFinding
from .journal import (
    CHAIN_MODES,
    DEFAULT_MAX_FINDINGS,
    DEFAULT_MAX_LINE_LENGTH,
    PROFILES,
    READ_SIZE,
    _check_line,
    _Checker,
    _event_bundle,
    _EventFacts,
    _read_lines,
)

__all__ = ["JournalChecker", "check_journal_chunk"]

_CheckedLine = tuple[Union[str, _EventFacts], list[RawFinding]]


def _check_options(chain: str, profile: str, car_version: str | None) -> None:
    if chain not in CHAIN_MODES:
        raise ValueError(f"chain must be one of {', '.join(CHAIN_MODES)}, not {chain!r}")
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, not {profile!r}")
    _event_bundle(car_version)  # ValueError for a release not bundled


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


def check_journal_chunk(
    path: str,
    start: int,
    end: int,
    chain: str = "auto",
    profile: str = "strict",
    max_line_length: int = DEFAULT_MAX_LINE_LENGTH,
    car_version: str | None = None,
) -> bytes:
    """The per-line stage over the lines whose first byte lies in ``[start, end)``, reading past
    ``end`` to finish the last one; lines are numbered from 1 within the chunk."""
    _check_options(chain, profile, car_version)
    checked: list[_CheckedLine] = []
    with open(path, "rb") as stream:
        first = _first_line_start(stream, start)
        if first is not None and first < end:
            stream.seek(first)
            position = first
            for raw in _read_lines(stream.read, max_line_length):
                checked.append(_check_line(raw, chain, profile, max_line_length, car_version))
                position += raw.length + raw.terminated
                if position >= end:
                    break
    return pickle.dumps(checked, protocol=pickle.HIGHEST_PROTOCOL)


class JournalChecker:
    """The ordered stage of ``check_journal`` fed chunk by chunk, in file order."""

    def __init__(
        self,
        chain: str = "auto",
        lifecycle: bool = True,
        max_findings: int | None = DEFAULT_MAX_FINDINGS,
        profile: str = "strict",
        max_line_length: int = DEFAULT_MAX_LINE_LENGTH,
        car_version: str | None = None,
    ) -> None:
        _check_options(chain, profile, car_version)
        self._checker: _Checker | None = _Checker(chain, lifecycle, max_findings, car_version)

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
