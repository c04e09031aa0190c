"""Incremental journal checks: a state file that records where each journal's verified prefix
ends, so the next check reads only what was appended since (``check --state``, docs/journals.md).

Per journal (keyed by its resolved path) the state holds: the file's device and inode, the byte
offset and line count where the verified prefix ends (at the end of its last complete line), the
sha256 of the prefix's bytes, the fingerprint of the options it was checked under, and the engine's
ordered-stage state there (chain link, open runs / proposals / actions, counters, the findings so
far). A run that finds the same file, at least that long, checked under the same options and
whose prefix re-hashes to the recorded sha256 checks only the bytes after the offset, starting
from that state, and its report equals a full check's. Anything else is a full check, with a
PF345 error when the prefix changed and a PF346 note when the options did.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from . import _backend
from ._atomic import atomic_write
from .codes import STATE_OPTIONS_CHANGED, VERIFIED_PREFIX_CHANGED
from .errors import PairlingError
from .report import Finding, Report

if TYPE_CHECKING:
    from .journal import JournalOptions

__all__ = ["STATE_FORMAT", "STATE_VERSION", "JournalStateError", "JournalStates"]

STATE_FORMAT = "pairling-fast.journal-state"
# 2: the windows of closed ids written once, as keys in order (version 1 wrote order and entries).
STATE_VERSION = 2
_REHASH_BLOCK = 1 << 20


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
            document = json.loads(data)
        except ValueError:
            raise JournalStateError(f"{shown}: the state file is not JSON (damaged?)") from None
        if not isinstance(document, dict) or document.get("format") != STATE_FORMAT:
            raise JournalStateError(f"{shown}: not a pairling-fast journal state file")
        if document.get("version") != STATE_VERSION:
            raise JournalStateError(
                f"{shown}: journal state version {document.get('version')!r}, this pairling-fast "
                f"reads version {STATE_VERSION}; delete it to start anew"
            )
        journals = document.get("journals")
        if not isinstance(journals, dict) or not _intact(data, document.get("sha256"), journals):
            raise JournalStateError(f"{shown}: the state file is damaged (its sha256 differs)")
        return cls(journals)

    def save(
        self, path: str | os.PathLike[str], *, fsync: bool = True, notes: list[str] | None = None
    ) -> None:
        """Write the state to ``path`` atomically (``_atomic.atomic_write``)."""
        with self._lock:
            journals = dict(sorted(self._entries.items()))
        # The document is written around the very text its sha256 is taken of, so that the
        # engine's state (megabytes of text) is serialized once, and `load` can check the bytes
        # as they are instead of serializing them again.
        text = _canonical(journals).encode("utf-8")
        digest = hashlib.sha256(text).hexdigest().encode("ascii")
        with atomic_write(path, fsync=fsync, notes=notes) as stream:
            stream.write(b"".join((_HEAD, digest, _JOURNALS, text, b"}\n")))

    def journals(self) -> list[str]:
        """The resolved paths of the journals with an entry, sorted."""
        with self._lock:
            return sorted(self._entries)

    def entry(self, journal: str) -> dict[str, Any] | None:
        with self._lock:
            return self._entries.get(journal)

    def _put(self, journal: str, entry: dict[str, Any]) -> None:
        with self._lock:
            self._entries[journal] = entry


def _canonical(journals: Any) -> str:
    """The text the state's sha256 is taken of: the journals, keys sorted, no spaces."""
    return json.dumps(journals, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# How `save` writes a state: these bytes, the sha256 (64 hex digits), `_JOURNALS`, the journals'
# `_canonical` text, `}` and a newline.
_HEAD = json.dumps(
    {"format": STATE_FORMAT, "version": STATE_VERSION, "sha256": ""}, separators=(",", ":")
).encode("ascii")[:-2]
_JOURNALS = b'","journals":'


def _intact(data: bytes, recorded: Any, journals: Any) -> bool:
    """Whether the state file (``data``, parsed: ``recorded`` sha256 and ``journals``) is as
    written: a check against accidental damage, not an attacker (who rewrites the digest too).
    A file as ``save`` writes it is checked over its bytes; any other layout of the same JSON (a
    file rewritten by another tool) by serializing its journals again."""
    if not isinstance(recorded, str):
        return False
    start = len(_HEAD) + 64 + len(_JOURNALS)
    if (
        data.startswith(_HEAD)
        and data[len(_HEAD) + 64 : start] == _JOURNALS
        and data.endswith(b"}\n")
        and hashlib.sha256(memoryview(data)[start:-2]).hexdigest() == recorded
    ):
        return True
    return hashlib.sha256(_canonical(journals).encode("utf-8")).hexdigest() == recorded


def fingerprint(options: JournalOptions) -> dict[str, Any]:
    """What a state was checked under: resuming under other options would mix two checks."""
    from . import __version__
    from .schemas import bundle_path, bundles

    known = bundles()
    bundle = known[-1]
    if options.car_version is not None:
        name = os.path.basename(bundle_path(options.car_version))
        bundle = next(b for b in known if b.file == name)
    return {
        "chain": options.chain,
        "lifecycle": options.lifecycle,
        "profile": options.profile,
        "car_version": bundle.car_version,
        "bundle_sha256": bundle.digest,
        "max_line_length": options.max_line_length,
        "max_findings": options.max_findings,
        "pairling_fast": __version__,
    }


class _HashingReader:
    """The journal as the engine reads it (``read(n)``), hashed as it goes by: ``committed`` is
    the sha256 up to the last newline read, at ``committed_offset`` after ``newlines`` lines, so
    a last line without a newline is left out (it is read again next time)."""

    def __init__(self, stream: IO[bytes], hasher: Any, offset: int) -> None:
        self.name = getattr(stream, "name", None)
        self._stream = stream
        self._running = hasher
        self.committed = hasher.copy()
        self.committed_offset = self._offset = offset
        self.newlines = 0

    def read(self, size: int = -1) -> bytes:
        chunk = self._stream.read(size)
        last = chunk.rfind(b"\n")
        if last >= 0:
            view = memoryview(chunk)
            self._running.update(view[: last + 1])
            self.committed = self._running.copy()
            self.committed_offset = self._offset + last + 1
            self.newlines += chunk.count(b"\n")
            self._running.update(view[last + 1 :])
        else:
            self._running.update(chunk)
        self._offset += len(chunk)
        return chunk

    @property
    def read_bytes(self) -> int:
        return self._offset


def _rehash(stream: IO[bytes], length: int) -> Any:
    """sha256 of the first ``length`` bytes of ``stream`` (the hasher, to go on with)."""
    hasher = hashlib.sha256()
    buffer = bytearray(_REHASH_BLOCK)
    view = memoryview(buffer)
    stream.seek(0)
    left = length
    while left:
        read = stream.readinto(view[: min(left, _REHASH_BLOCK)])  # type: ignore[attr-defined]
        if not read:
            raise OSError("the journal ended while its verified prefix was re-hashed")
        hasher.update(view[:read])
        left -= read
    return hasher


def _why_not_resumable(
    stream: IO[bytes], info: os.stat_result, entry: Any, options: dict[str, Any], path: str
) -> tuple[Finding | None, Any]:
    """(the finding that says why the entry cannot be resumed from, or None and the hasher at
    the end of the verified prefix)."""
    try:
        offset, lines = int(entry["offset"]), int(entry["lines"])
        device, inode, recorded = entry["device"], entry["inode"], entry["sha256"]
        entry_options = entry["options"]
        if not isinstance(entry["checker"], str):
            raise TypeError
    except (KeyError, TypeError, ValueError):
        raise JournalStateError(f"{path}: its entry in the state file is malformed") from None
    prefix = f"the first {offset} bytes ({lines} lines)"
    if entry_options != options:
        changed = sorted(k for k in options if entry_options.get(k) != options[k])
        message = (
            f"the journal was verified under other options last time ({', '.join(changed)}): "
            "checked in full"
        )
        return Finding.of(STATE_OPTIONS_CHANGED, message, path, None, ""), None
    why = None
    if (device, inode) != (info.st_dev, info.st_ino):
        why = "the path is another file than the one verified (device and inode differ)"
    elif info.st_size < offset:
        why = f"the file is {info.st_size} bytes, shorter than the prefix verified"
    else:
        hasher = _rehash(stream, offset)
        if hasher.hexdigest() == recorded:
            return None, hasher
        why = "its bytes no longer have the sha256 recorded"
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
    from .journal import JournalInterrupted

    key = os.path.realpath(path)
    with open(path, "rb") as stream:
        info = os.fstat(stream.fileno())
        regular = stat.S_ISREG(info.st_mode)
        expected = fingerprint(options)
        entry = states.entry(key) if regular else None
        note, hasher = None, None
        if entry is not None:
            note, hasher = _why_not_resumable(stream, info, entry, expected, path)
        resumed = hasher is not None and entry is not None
        offset = int(entry["offset"]) if resumed and entry is not None else 0
        engine_state = entry["checker"] if resumed and entry is not None else None
        stream.seek(offset)
        reader = _HashingReader(stream, hasher if resumed else hashlib.sha256(), offset)
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
    if resumed and entry is not None:
        stats["resumed"] = {
            "from_line": int(entry["lines"]),
            "from_offset": offset,
            "bytes_checked": reader.read_bytes - offset,
            "bytes_rehashed": offset,
        }
    report = Report(findings=findings, stats=stats)
    if stats.get("interrupted"):
        raise JournalInterrupted(report)
    if regular and saved is not None:
        lines = (int(entry["lines"]) if resumed and entry is not None else 0) + reader.newlines
        # The engine counts a last line without a newline too, but leaves it out of its state.
        torn = reader.read_bytes > reader.committed_offset
        # The engine's lines and the reader's newlines are counted apart: they agree unless the
        # file changed under the check, and then nothing is recorded.
        if stats["lines"] - torn == lines:
            states._put(
                key,
                {
                    "device": info.st_dev,
                    "inode": info.st_ino,
                    "offset": reader.committed_offset,
                    "lines": lines,
                    "sha256": reader.committed.hexdigest(),
                    "options": expected,
                    # The engine's JSON text as it is: only an engine reads it, and parsing
                    # it here would cost more than the appended bytes' check.
                    "checker": saved,
                },
            )
    return report
