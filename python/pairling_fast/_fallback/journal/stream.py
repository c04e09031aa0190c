"""A journal checked as its bytes arrive, on the pure-Python backend: ``rust/journal/stream.rs``.

``feed`` takes any piece of the journal, cut anywhere; the lines it completes go through the very
per-line stage and ``_Checker`` that ``check_journal`` uses, and the partial line after the last
newline waits for the next piece (its bytes up to the line limit, only its length past it).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ...journal.stats import JournalStats
from ..findings import RawFinding
from . import _check_line, _LineSplitter, _RawLine, new_checker
from . import state as journal_state
from .ordered import _Checker

if TYPE_CHECKING:
    from ...journal.options import JournalOptions

__all__ = ["JournalStream"]


class JournalStream:
    """``feed`` pieces in order, then ``finish``; ``state``: the JSON text of the ordered
    stage's state to go on from (``check_journal_resumable``'s or ``snapshot``'s)."""

    def __init__(self, options: JournalOptions, state: str | None = None) -> None:
        self._options = options
        checker = new_checker(options, state)
        self._checker: _Checker | None = checker
        self._lines = _LineSplitter(options.max_line_length, checker.lines)
        self._reported = len(checker.findings)

    def _active(self) -> _Checker:
        if self._checker is None:
            raise ValueError("this JournalStream is closed")
        return self._checker

    def _take(self, checker: _Checker, raw: _RawLine) -> None:
        options = self._options
        outcome, findings = _check_line(
            raw,
            options.chain,
            options.profile,
            options.max_line_length,
            options.release,
            options.payloads,
        )
        checker.take(raw.number, outcome, findings)

    def feed(self, data: bytes) -> list[RawFinding]:
        """The findings the lines completed by ``data`` decide."""
        checker = self._active()
        for raw in self._lines.feed(data):
            self._take(checker, raw)
        findings = checker.findings[self._reported :]
        self._reported = len(checker.findings)
        return findings

    @property
    def lines(self) -> int:
        return self._active().lines

    @property
    def events(self) -> int:
        return self._active().events

    @property
    def pending(self) -> int:
        self._active()
        return self._lines.pending

    def snapshot(self) -> str:
        state = journal_state.snapshot(self._active())
        return json.dumps(state, ensure_ascii=False, separators=(",", ":"))

    def finish(self, interrupted: bool = False) -> tuple[list[RawFinding], JournalStats]:
        checker = self._active()
        self._checker = None
        last = None if interrupted else self._lines.end()
        if last is not None:
            self._take(checker, last)
        stats = checker.finish(interrupted)
        return checker.findings, stats
