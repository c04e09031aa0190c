"""Byte-range chunks of a journal on the pure-Python backend: the same split as
``rust/journal/chunks.rs`` (``docs/cluster.md``).

``check_journal_chunk`` runs the per-line stage over the lines that begin in a byte range;
``JournalChecker`` feeds chunks, in file order and renumbered, to the very ``_Checker`` that
``check_journal`` uses, so the report is the single-pass one whatever the chunk size. A chunk is
opaque bytes (a pickle of this backend's checked lines); only this backend's ``JournalChecker``
reads it. As in the core, the chunk verifies its own chain links: an event's ``hash`` does not
travel (``_ELIDED`` stands for it), nor a ``prev_hash`` that links to the chunk's previous
chained event; what does is the chunk's first ``prev_hash``, a ``prev_hash`` that does not link
with the hash it fails to link to, and the chunk's last hash.
"""

from __future__ import annotations

import pickle
from contextlib import nullcontext
from dataclasses import replace
from typing import IO, TYPE_CHECKING, Any

from ...journal.stats import JournalStats
from ..findings import RawFinding
from . import READ_SIZE, _check_line, _read_lines, check_options
from .ordered import _Checker, _EventFacts

if TYPE_CHECKING:
    from ...journal.options import JournalOptions

__all__ = ["JournalChecker", "check_journal_chunk"]

_CheckedLine = tuple[str | _EventFacts, list[RawFinding]]
# A checked line as shipped: with, for an event that does not link to the chunk's previous
# chained event, that event's hash (the finding quotes it).
_ShippedLine = tuple[str | _EventFacts, list[RawFinding], str | None]
# Within a chunk an elided hash is only compared with elided hashes (module docstring); a
# recomputed digest is hex, never this.
_ELIDED = "\0"


def _slimmed(checked: list[_CheckedLine]) -> tuple[list[_ShippedLine], str | None]:
    """The chunk's lines with their chain links verified here (``rust/journal/chunks.rs``'s
    ``ChunkChain``), and the chunk's last hash."""
    shipped: list[_ShippedLine] = []
    previous: str | None = None
    for outcome, findings in checked:
        if not isinstance(outcome, _EventFacts):
            shipped.append((outcome, findings, None))
            continue
        event_hash = outcome.hash
        links = previous is not None and outcome.prev_hash == previous
        unlinked = previous if event_hash is not None and not links else None
        recomputed = outcome.recomputed
        if recomputed is not None and recomputed == ("ok", event_hash):
            recomputed = ("ok", _ELIDED)
        slim = replace(
            outcome,
            hash=None if event_hash is None else _ELIDED,
            prev_hash=_ELIDED if links else outcome.prev_hash,
            recomputed=recomputed,
        )
        shipped.append((slim, findings, unlinked))
        if event_hash is not None:
            previous = event_hash
    return shipped, previous


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


def check_journal_chunk(source: Any, start: int, end: int, options: JournalOptions) -> bytes:
    """The per-line stage over the lines whose first byte lies in ``[start, end)`` of ``source``
    (a path, or a binary file object with ``read`` and ``seek``, e.g. an fsspec file), reading
    past ``end`` to finish the last one; lines are numbered from 1 within the chunk. Of
    ``options`` the per-line ones apply (lifecycle and the findings cap are the ordered stage's)."""
    check_options(options)
    chain, profile, release = options.chain, options.profile, options.release
    max_line_length = options.max_line_length
    checked: list[_CheckedLine] = []
    with open(source, "rb") if isinstance(source, str) else nullcontext(source) as stream:
        first = _first_line_start(stream, start)
        if first is not None and first < end:
            stream.seek(first)
            position = first
            for raw in _read_lines(stream.read, max_line_length):
                checked.append(
                    _check_line(raw, chain, profile, max_line_length, release, options.payloads)
                )
                position += raw.length + raw.terminated
                if position >= end:
                    break
    return pickle.dumps(_slimmed(checked), protocol=pickle.HIGHEST_PROTOCOL)


def _restore_last_hash(checker: _Checker, event_hash: str) -> None:
    """The real text of the last chained event's hash, where the shipped lines held ``_ELIDED``."""
    if checker.last_hash is not None:
        checker.last_hash = (event_hash, checker.last_hash[1])


class JournalChecker:
    """The ordered stage of ``check_journal`` fed chunk by chunk, in file order."""

    def __init__(self, options: JournalOptions) -> None:
        check_options(options)
        self._checker: _Checker | None = _Checker(
            options.chain, options.lifecycle, options.max_findings, options.release
        )

    def _active(self) -> _Checker:
        if self._checker is None:
            raise ValueError("this JournalChecker has finished")
        return self._checker

    def feed(self, chunk: bytes) -> None:
        """The next chunk's lines, numbered after the lines fed so far."""
        checker = self._active()
        offset = checker.lines
        lines: list[_ShippedLine]
        lines, last_hash = pickle.loads(chunk)
        for local, (outcome, findings, unlinked) in enumerate(lines, start=1):
            renumbered = [
                finding if finding.line is None else finding._replace(line=finding.line + offset)
                for finding in findings
            ]
            if unlinked is not None:
                _restore_last_hash(checker, unlinked)
            checker.take(offset + local, outcome, renumbered)
        if last_hash is not None:
            _restore_last_hash(checker, last_hash)

    def finish(self, interrupted: bool = False) -> tuple[list[RawFinding], JournalStats]:
        checker = self._active()
        self._checker = None
        stats = checker.finish(interrupted)
        return checker.findings, stats
