"""Incremental journal checks: a state file that records where each journal's verified prefix
ends, so the next check reads only what was appended since (``check --state``, docs/journals.md).

Per journal (keyed by its resolved path) the state holds: the file's device and inode, the byte
offset and line count where the verified prefix ends (at the end of its last complete line), the
BLAKE3 of each ``BLOCK_SIZE`` block of the prefix (the last one partial) with the lines it spans,
the fingerprint of the options it was checked under, and the engine's ordered-stage state there
(chain link, open runs / proposals / actions, counters, the findings so far). A run that finds
the same file, at least that long, checked under the same options and whose blocks re-hash to
the recorded digests (in parallel) checks only the bytes after the offset, starting from that
state, and its report equals a full check's. Anything else is a full check, with a PF345 error
naming the first changed block when the prefix changed and a PF346 note when the options did.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import IO, TYPE_CHECKING, Any

from .. import _backend, _prefix_hash
from .._atomic import atomic_write
from ..codes import STATE_OPTIONS_CHANGED, VERIFIED_PREFIX_CHANGED
from ..errors import PairlingError
from ..report import Finding, Report

if TYPE_CHECKING:
    from .options import JournalOptions

__all__ = [
    "BLOCK_SIZE",
    "STATE_FORMAT",
    "STATE_VERSION",
    "Blocks",
    "HashingReader",
    "JournalStateError",
    "JournalStates",
    "why_not_resumable",
]

STATE_FORMAT = "pairling-fast.journal-state"
# 6: the checker state's findings are objects, by the names of the engine's finding record (a
# composite's `best_match` among them); the entries of version 5, which wrote them as six-item
# lists, are read and their journals checked in full once, with the PF346 note.
# 5: a JSON head line (format, version, sha256, the journals' entries) followed by each entry's
# checker state as raw bytes (`_SECTION`), so the megabytes of the engine's state are neither
# escaped into a JSON string nor parsed by Python: they are sliced out and handed to the engine.
# The entries of versions 2 to 4 are read, and their journals checked in full once, with a PF346
# note that says why. 4: the prefix's BLAKE3 per block (`_prefix_hash`), the checker's state a
# JSON string inside the JSON. 3: the prefix's sha256 per block. 2: one sha256 of the whole
# prefix; the windows of closed ids written once, as keys in order (version 1 wrote order and
# entries).
STATE_VERSION = 6
_READABLE_VERSIONS = (2, 3, 4, 5, 6)
# The versions written as a head line and sections (`save`).
_SECTIONED_VERSIONS = (5, 6)
# An entry whose checker state is in a section after the head: its length in bytes.
_SECTION = "checker_bytes"
# The version an entry read from an earlier file was recorded in (never in one this version
# records): its journal is checked in full once.
_RECORDED_IN = "recorded_in_version"
# The revision of the journal rules, recorded with each state: a state recorded under other rules
# is checked in full, as one recorded under other options, since resuming it would keep findings
# a fresh check no longer gives (or miss ones it now gives). Raised with every change to what a
# check reports. 2: PF320 and PF322 retired (CAR's own reconciliation writes both). 3: payload
# contracts for 32 more event kinds. 4: schema findings name a failing composite's closest
# branch (`best_match`).
RULES_REVISION = 4
# The verified prefix is recorded in blocks of 8 MiB. Each is one task of the parallel
# re-hash: at ~3 GB/s per core a block is ~3 ms of reading and hashing, far above a task's
# overhead, and
# a 300 MB prefix is still ~36 tasks to share out. It is how closely PF345 locates a change
# (tens of thousands of lines). And each costs ~110 bytes of state: ~130 KB for 10 GB, small
# beside the engine's ~4 MB; 1 MiB blocks would be ~1 MB. Memory does not grow with it (see
# `_prefix_hash`). An entry keeps the block size it was recorded with.
BLOCK_SIZE = 8 << 20


class JournalStateError(PairlingError, ValueError):
    """A state file that cannot be used: unreadable, not JSON, not a state, another version."""


class JournalStates:
    """The entries of a journal state file, one per journal (by resolved path).

    ``load`` reads a file (a missing one is an empty state), ``save`` writes it atomically;
    ``check_journal(path, state=...)`` reads and updates the entry of its journal (thread-safe:
    the journals of one ``check_paths`` run are checked in parallel).
    """

    def __init__(self, entries: dict[str, dict[str, Any]] | None = None) -> None:
        self._entries = dict(entries or {})
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> JournalStates:
        shown = os.fsdecode(os.fspath(path))
        try:
            with open(shown, "rb") as stream:
                data = stream.read()
        except FileNotFoundError:
            return cls()
        except OSError as error:
            message = f"{shown}: cannot read the state file: {error.strerror}"
            raise JournalStateError(message) from None
        try:
            document, sections = _head_and_sections(data)
        except ValueError:
            raise JournalStateError(f"{shown}: the state file is not JSON (damaged?)") from None
        if not isinstance(document, dict) or document.get("format") != STATE_FORMAT:
            raise JournalStateError(f"{shown}: not a pairling-fast journal state file")
        version = document.get("version")
        if version not in _READABLE_VERSIONS:
            raise JournalStateError(
                f"{shown}: journal state version {version!r}, this pairling-fast "
                f"reads versions {', '.join(map(str, _READABLE_VERSIONS[:-1]))} and "
                f"{_READABLE_VERSIONS[-1]}; delete it to "
                "start anew"
            )
        journals = document.get("journals")
        if not isinstance(journals, dict) or not _intact(
            data, version, document.get("sha256"), journals
        ):
            raise JournalStateError(f"{shown}: the state file is damaged (its sha256 differs)")
        try:
            if version in _SECTIONED_VERSIONS:
                _take_sections(journals, sections)
            if version != STATE_VERSION:
                _mark_earlier(journals, version)
        except (TypeError, ValueError, AttributeError):
            raise JournalStateError(f"{shown}: the state file is damaged (its layout)") from None
        return cls(journals)

    def save(
        self, path: str | os.PathLike[str], *, fsync: bool = True, notes: list[str] | None = None
    ) -> None:
        """Write the state to ``path`` atomically (``_atomic.atomic_write``)."""
        with self._lock:
            journals = dict(sorted(self._entries.items()))
        # Each engine state (megabytes of text) is written as it is, after the head, in the
        # head's order of journals; the head says how long each is. The sha256 is taken of all
        # the bytes after it, so `load` checks them as they are.
        heads: dict[str, Any] = {}
        sections = []
        for journal, entry in journals.items():
            checker = entry.get("checker")
            if isinstance(checker, str):
                section = checker.encode("utf-8")
                entry = {k: v for k, v in entry.items() if k != "checker"}
                entry[_SECTION] = len(section)
                sections.append(section)
            heads[journal] = entry
        body = b"".join((_canonical(heads).encode("utf-8"), b"}\n", *sections))
        digest = hashlib.sha256(body).hexdigest().encode("ascii")
        with atomic_write(path, fsync=fsync, notes=notes) as stream:
            stream.write(b"".join((_HEAD, digest, _JOURNALS, body)))

    def journals(self) -> list[str]:
        """The resolved paths of the journals with an entry, sorted."""
        with self._lock:
            return sorted(self._entries)

    def entry(self, journal: str) -> dict[str, Any] | None:
        with self._lock:
            return self._entries.get(journal)

    def put(self, journal: str, entry: dict[str, Any]) -> None:
        """Records ``entry`` for ``journal`` (a ``JournalStream.state()``, under any key)."""
        self._put(journal, entry)

    def _put(self, journal: str, entry: dict[str, Any]) -> None:
        with self._lock:
            self._entries[journal] = entry


def _canonical(journals: Any) -> str:
    """The text the state's sha256 is taken of: the journals, keys sorted, no spaces."""
    return json.dumps(journals, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _head(version: int) -> bytes:
    """How a state of ``version`` (one of ``_SECTIONED_VERSIONS``) begins: then the sha256 (64
    hex digits), `_JOURNALS`, the journals' `_canonical` text, `}` and a newline."""
    head = {"format": STATE_FORMAT, "version": version, "sha256": ""}
    return json.dumps(head, separators=(",", ":")).encode("ascii")[:-2]


_HEADS = {version: _head(version) for version in _SECTIONED_VERSIONS}
_HEAD = _HEADS[STATE_VERSION]
_JOURNALS = b'","journals":'


def _head_and_sections(data: bytes) -> tuple[Any, memoryview]:
    """(the parsed head, the bytes after it) of a state as ``save`` writes it (the head is its
    first line: JSON text holds no raw newline); a file of a version before 5 is one JSON
    document, with nothing after it. ``ValueError`` if the head is not JSON."""
    if any(data.startswith(head) for head in _HEADS.values()):
        end = data.find(b"\n") + 1 or len(data)
        return json.loads(data[:end]), memoryview(data)[end:]
    return json.loads(data), memoryview(b"")


def _intact(data: bytes, version: Any, recorded: Any, journals: Any) -> bool:
    """Whether the state file (``data``; its ``version``, ``recorded`` sha256 and ``journals``
    as parsed) is as written: a check against accidental damage, not an attacker (who rewrites
    the digest too). A file of this version is checked over the bytes after its sha256; one of
    an earlier version (one JSON document) over its journals serialized as that version wrote
    them."""
    if not isinstance(recorded, str):
        return False
    if version in _SECTIONED_VERSIONS:
        head = _HEADS[version]
        start = len(head) + 64 + len(_JOURNALS)
        return (
            data[len(head) + 64 : start] == _JOURNALS
            and hashlib.sha256(memoryview(data)[start:]).hexdigest() == recorded
        )
    return hashlib.sha256(_canonical(journals).encode("utf-8")).hexdigest() == recorded


def _take_sections(journals: dict[str, Any], sections: memoryview) -> None:
    """Puts each entry's engine state (its section, in the order of the sorted journals) back as
    its ``checker`` text; ``ValueError`` unless the sections are exactly the bytes after the
    head."""
    start = 0
    for journal in sorted(journals):
        entry = journals[journal]
        if _SECTION in entry:
            length = entry.pop(_SECTION)
            if not isinstance(length, int) or not 0 <= length <= len(sections) - start:
                raise ValueError
            entry["checker"] = str(sections[start : start + length], "utf-8")
            start += length
    if start != len(sections):
        raise ValueError


def _mark_earlier(journals: dict[str, Any], version: int) -> None:
    """Marks the local entries of an earlier version's file (those with an engine state) with
    that version: their journals are checked in full once (`_why_not_resumable`)."""
    for entry in journals.values():
        if isinstance(entry, dict) and "checker" in entry:
            entry.setdefault(_RECORDED_IN, version)


def fingerprint(options: JournalOptions) -> dict[str, Any]:
    """What a state was checked under: resuming under other options would mix two checks."""
    from .. import __version__
    from ..schemas import bundle_of

    bundle = bundle_of(options.release)
    return {
        "chain": options.chain,
        "lifecycle": options.lifecycle,
        "profile": options.profile,
        "car_version": bundle.car_version,
        "bundle_sha256": bundle.digest,
        "max_line_length": options.max_line_length,
        "max_findings": options.max_findings,
        "payloads": options.payloads,
        "pairling_fast": __version__,
        "rules": RULES_REVISION,
    }


class _Cut:
    """Where a ``Blocks`` stood at one point: its complete blocks (how many of ``done``), the
    hasher of the partial block after them, that block's first line, the newlines and bytes fed
    so far."""

    __slots__ = ("complete", "first_line", "hasher", "newlines", "position")

    def __init__(
        self, complete: int, hasher: Any, first_line: int, newlines: int, position: int
    ) -> None:
        self.complete = complete
        self.hasher = hasher
        self.first_line = first_line
        self.newlines = newlines
        self.position = position


class Blocks:
    """The BLAKE3 of each ``size``-byte block of the bytes fed to it in order, and the lines each
    block spans (the line its first byte is in, the line its last byte is in): a state entry's
    ``blocks``. ``done`` holds the complete ones; the last block fed may be partial."""

    def __init__(self, size: int, done: list[dict[str, Any]], cut: _Cut) -> None:
        self.size = size
        self.done = done
        self._running = cut.hasher
        self._first_line = cut.first_line
        self.newlines = cut.newlines
        self.position = cut.position

    @classmethod
    def new(cls, size: int) -> Blocks:
        return cls(size, [], _Cut(0, _prefix_hash.new(), 1, 0, 0))

    def update(self, data: bytes, start: int, end: int) -> None:
        """Feed ``data[start:end]``."""
        while start < end:
            stop = min(end, start + self.size - self.position % self.size)
            _prefix_hash.update(self._running, data, start, stop)
            self.newlines += data.count(b"\n", start, stop)
            self.position += stop - start
            start = stop
            if self.position % self.size == 0:
                # The line of the block's last byte: that byte's own newline ends it.
                last_line = self.newlines + 1 - (data[stop - 1] == 0x0A)
                self.done.append(_block(self._running, self._first_line, last_line))
                self._running = _prefix_hash.new()
                self._first_line = self.newlines + 1

    def cut(self) -> _Cut:
        return _Cut(
            len(self.done), self._running.copy(), self._first_line, self.newlines, self.position
        )

    def recorded(self, cut: _Cut) -> list[dict[str, Any]]:
        """The blocks up to ``cut``, taken at the end of a line, as an entry records them."""
        blocks = self.done[: cut.complete]
        if cut.position % self.size:
            blocks.append(_block(cut.hasher, cut.first_line, cut.newlines))
        return blocks


def _block(hasher: Any, first_line: int, last_line: int) -> dict[str, Any]:
    return {_prefix_hash.NAME: hasher.hexdigest(), "first_line": first_line, "last_line": last_line}


class HashingReader:
    """The journal as the engine reads it (``read(n)``), hashed in blocks as it goes by:
    ``committed`` is where ``blocks`` stood after the last newline read, so a last line without
    a newline is left out (it is read again next time)."""

    def __init__(self, stream: IO[bytes], blocks: Blocks) -> None:
        self.name = getattr(stream, "name", None)
        self._stream = stream
        self.blocks = blocks
        self.committed = blocks.cut()

    def read(self, size: int = -1) -> bytes:
        chunk = self._stream.read(size)
        last = chunk.rfind(b"\n")
        if last >= 0:
            self.blocks.update(chunk, 0, last + 1)
            self.committed = self.blocks.cut()
            self.blocks.update(chunk, last + 1, len(chunk))
        else:
            self.blocks.update(chunk, 0, len(chunk))
        return chunk

    @property
    def read_bytes(self) -> int:
        return self.blocks.position


def _workers() -> int:
    return os.cpu_count() or 1


def _first_changed_block(
    stream: IO[bytes], size: int, blocks: list[dict[str, Any]], offset: int
) -> tuple[int | None, Any]:
    """(the index of the first block of the prefix whose bytes no longer have their recorded
    BLAKE3, or None and the hasher of the last block, to go on with). The blocks are hashed by
    a pool of threads, one block per worker in flight; the reads and the hashing release the
    GIL, so they run in parallel on either backend."""
    if not blocks:
        return None, None
    pool = ThreadPoolExecutor(max_workers=min(_workers(), len(blocks)))
    try:
        hashed = [
            pool.submit(_prefix_hash.hash_range, stream, start, min(size, offset - start))
            for start in range(0, offset, size)
        ]
        # In order, so the first mismatch is the first changed block; the blocks still queued
        # behind it are cancelled.
        for index, (future, block) in enumerate(zip(hashed, blocks, strict=False)):
            hasher = future.result()
            if hasher.hexdigest() != block[_prefix_hash.NAME]:
                return index, None
        return None, hasher
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _resumed_blocks(
    stream: IO[bytes], entry: dict[str, Any], offset: int, lines: int
) -> tuple[Blocks | None, str]:
    """(the prefix's blocks to go on from, or None and what changed in it)."""
    size, recorded = entry["block_size"], entry["blocks"]
    changed, hasher = _first_changed_block(stream, size, recorded, offset)
    if changed is not None:
        start = changed * size
        block = recorded[changed]
        where = (
            f"the first change is in the bytes at offsets {start} to "
            f"{min(start + size, offset) - 1} (lines {block['first_line']} to "
            f"{block['last_line']}): they no longer have the BLAKE3 recorded"
        )
        return None, where
    if offset % size:  # the last block is partial: hashing goes on from where it ends
        cut = _Cut(len(recorded) - 1, hasher, recorded[-1]["first_line"], lines, offset)
    else:
        cut = _Cut(len(recorded), _prefix_hash.new(), lines + 1, lines, offset)
    return Blocks(size, recorded[: cut.complete], cut), ""


def _parsed(entry: Any, path: str) -> tuple[tuple[Any, Any], int, int, dict[str, Any]]:
    """((device, inode), offset, lines, options) of a well-formed entry (its blocks checked
    unless it is of an earlier version's layout, which is not resumed from)."""
    try:
        identity = (entry["device"], entry["inode"])
        offset, lines = int(entry["offset"]), int(entry["lines"])
        options = entry["options"]
        if not isinstance(entry["checker"], str) or not isinstance(options, dict):
            raise TypeError
        if not _proved_with_sha256(entry):
            size, blocks = entry["block_size"], entry["blocks"]
            if not isinstance(size, int) or size <= 0 or len(blocks) != -(-offset // size):
                raise ValueError
            for block in blocks:
                if not isinstance(block[_prefix_hash.NAME], str) or not all(
                    isinstance(block[end], int) for end in ("first_line", "last_line")
                ):
                    raise TypeError
    except (KeyError, TypeError, ValueError):
        raise JournalStateError(f"{path}: its entry in the state file is malformed") from None
    return identity, offset, lines, options


def _proved_with_sha256(entry: dict[str, Any]) -> bool:
    """Whether ``entry`` is of version 2 (one ``sha256`` of the whole prefix) or 3 (a ``sha256``
    a block): its prefix cannot be proved with BLAKE3, so its journal is checked in full."""
    blocks = entry.get("blocks")
    return "sha256" in entry or (
        isinstance(blocks, list) and bool(blocks) and "sha256" in blocks[0]
    )


def why_not_resumable(
    stream: IO[bytes], info: os.stat_result, entry: Any, options: dict[str, Any], path: str
) -> tuple[Finding | None, Blocks | None]:
    """(the finding that says why the entry cannot be resumed from, or None and the prefix's
    blocks, to go on from)."""
    identity, offset, lines, entry_options = _parsed(entry, path)
    prefix = f"the first {offset} bytes ({lines} lines)"
    if entry_options != options:
        changed = sorted(k for k in options if entry_options.get(k) != options[k])
        message = (
            f"the journal was verified under other options last time ({', '.join(changed)}): "
            "checked in full"
        )
        return Finding.of(STATE_OPTIONS_CHANGED, message, path, None, ""), None
    if _proved_with_sha256(entry):
        message = (
            "the state was recorded by an earlier pairling-fast, which proved the prefix with "
            "sha256 (this one uses BLAKE3): checked in full, and recorded anew"
        )
        return Finding.of(STATE_OPTIONS_CHANGED, message, path, None, ""), None
    if _RECORDED_IN in entry:
        message = (
            f"the state was recorded by an earlier pairling-fast (state format "
            f"{entry[_RECORDED_IN]}, this one writes {STATE_VERSION}): checked in full, and "
            "recorded anew"
        )
        return Finding.of(STATE_OPTIONS_CHANGED, message, path, None, ""), None
    if identity != (info.st_dev, info.st_ino):
        why = "the path is another file than the one verified (device and inode differ)"
    elif info.st_size < offset:
        why = f"the file is {info.st_size} bytes, shorter than the prefix verified"
    else:
        blocks, why = _resumed_blocks(stream, entry, offset, lines)
        if blocks is not None:
            return None, blocks
    message = (
        f"the verified prefix changed since the last run: {prefix}, verified then; {why}. A "
        "journal is only appended to: it was edited, truncated or replaced. Checked in full"
    )
    return Finding.of(VERIFIED_PREFIX_CHANGED, message, path, None, ""), None


def check_with_state(
    engine: _backend.Engine,
    path: str,
    options: JournalOptions,
    states: JournalStates,
    progress: Callable[[int], object] | None,
) -> Report:
    """``check_journal`` on ``engine`` of the journal at ``path``, resumed from its entry in
    ``states`` when the verified prefix is unchanged, and the entry updated to where this run's
    verified prefix ends (not after Ctrl-C: ``JournalInterrupted`` as ``check_journal`` raises
    it)."""
    from .options import JournalInterrupted

    key = os.path.realpath(path)
    with open(path, "rb") as stream:
        info = os.fstat(stream.fileno())
        regular = stat.S_ISREG(info.st_mode)
        expected = fingerprint(options)
        entry = states.entry(key) if regular else None
        note, prefix = None, None
        if entry is not None:
            note, prefix = why_not_resumable(stream, info, entry, expected, path)
        resumed = prefix is not None and entry is not None
        offset = prefix.position if prefix is not None else 0
        engine_state = entry["checker"] if resumed and entry is not None else None
        stream.seek(offset)
        reader = HashingReader(stream, prefix or Blocks.new(BLOCK_SIZE))
        shown_progress = None if progress is None else (lambda n: progress(offset + n))
        try:
            raw, stats, saved = engine.check_journal_resumable(
                reader, engine_state, options, shown_progress
            )
        except ValueError as error:
            if engine_state is None:
                raise
            # The entry passed its sha256, so a tool wrote it: a state no engine writes.
            message = f"{path}: its entry in the state file is malformed ({error})"
            raise JournalStateError(message) from None
    findings = [Finding.from_raw(r, path) for r in raw]
    if note is not None:
        findings.insert(0, note)
        stats["errors"] += note.severity == "error"
    shown_stats: dict[str, Any] = dict(stats)
    if resumed and entry is not None:
        shown_stats["resumed"] = {
            "from_line": int(entry["lines"]),
            "from_offset": offset,
            "bytes_checked": reader.read_bytes - offset,
            "bytes_rehashed": offset,
        }
    report = Report(findings=findings, stats=shown_stats)
    if stats["interrupted"]:
        raise JournalInterrupted(report)
    if regular and saved is not None:
        committed = reader.committed
        # The engine counts a last line without a newline too, but leaves it out of its state.
        torn = reader.read_bytes > committed.position
        # The engine's lines and the reader's newlines are counted apart: they agree unless the
        # file changed under the check, and then nothing is recorded.
        if stats["lines"] - torn == committed.newlines:
            states._put(
                key,
                {
                    "device": info.st_dev,
                    "inode": info.st_ino,
                    "offset": committed.position,
                    "lines": committed.newlines,
                    "block_size": reader.blocks.size,
                    "blocks": reader.blocks.recorded(committed),
                    "options": expected,
                    # The engine's JSON text as it is: only an engine reads it, and parsing
                    # it here would cost more than the appended bytes' check.
                    "checker": saved,
                },
            )
    return report
