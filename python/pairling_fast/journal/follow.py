"""``check --follow``: journals followed by name as they grow, like ``tail -F`` (docs/journals.md,
"Streams and --follow").

Each journal is checked from its start (or from its ``--state`` entry) by a ``JournalStream``, and
then, whenever the kernel says its directory changed (inotify; a modest poll where there is
none), the bytes appended since are read and fed: each finding is handed on as the line that
decides it is completed, and a torn last line waits for the rest of its bytes. The path is
re-checked each time: another file there (rotation, CAR's retention compaction) is checked from
its start (PF350), a file shorter than what was read is re-read from its start (PF351), a
missing one is waited for. Stopping (Ctrl-C) leaves a partial line pending, not an error, and
records each journal's verified prefix in the state.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from .. import _backend
from ..codes import JOURNAL_REPLACED_WHILE_FOLLOWING, JOURNAL_TRUNCATED_WHILE_FOLLOWING
from ..options import SeverityOverride
from ..report import Finding
from ..results import not_listed, with_severity
from .options import JournalOptions
from .state_file import (
    BLOCK_SIZE,
    Blocks,
    HashingReader,
    JournalStates,
    fingerprint,
    why_not_resumable,
)
from .stream import JournalStream

__all__ = ["FollowSummary", "follow"]

# Each read takes at most this much: a journal far behind is fed in pieces, its findings handed
# on as they come, with the memory of one piece.
_READ_SIZE = 1 << 20
# Where there is no inotify, the files are looked at this often: an idle follow then costs a stat
# per journal per poll.
POLL_SECONDS = 0.25
# With --state, the journals' entries are saved this often while following (and at the end), so
# a follower killed outright (SIGKILL, a power cut) loses at most this much of its work.
CHECKPOINT_SECONDS = 60.0
# With inotify, the files are still looked at this often, in case an event was missed (a
# directory renamed, a file system that does not report writes made elsewhere, as NFS).
_SAFETY_SECONDS = 2.0


@dataclass
class FollowSummary:
    """What following saw, per journal (by the path given): ``files`` checked there (more than
    one after a rotation or truncation), ``lines``, ``events``, ``errors``, ``warnings`` (all,
    listed or not), ``pending`` bytes of a partial last line when following stopped, and
    whether the journal was ``missing`` then."""

    journals: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def errors(self) -> int:
        return sum(journal["errors"] for journal in self.journals.values())


Emit = Callable[[Finding], None]
Note = Callable[[str], None]


class _Journal:
    """One journal followed by name: the file open there now, read up to ``read``, through a
    ``HashingReader`` (for the state's blocks) into a ``JournalStream``."""

    def __init__(
        self,
        path: str,
        options: JournalOptions,
        engine: _backend.Engine,
        states: JournalStates | None,
        emit: Emit,
        note: Note,
        severities: Mapping[str, SeverityOverride],
    ) -> None:
        self.path = path
        self.severities = severities
        self.key = os.path.realpath(path)
        self.options = options
        self.engine = engine
        self.states = states
        self._emit = emit
        self.note = note
        self.file: IO[bytes] | None = None
        self.reader: HashingReader | None = None
        self.stream: JournalStream | None = None
        self.identity: tuple[int, int] | None = None
        self.read = 0
        self.seen_file = False  # a file was ever followed at this path
        self.told_missing = False
        self.summary: dict[str, Any] = {
            "files": 0,
            "lines": 0,
            "events": 0,
            "errors": 0,
            "warnings": 0,
            "pending": 0,
            "missing": False,
        }
        self.last_line = 0  # the last line completed, for the status line
        self.fed = 0  # the findings of the current stream handed on

    # Opening -----------------------------------------------------------------------------------

    def _open(self, cause: Finding | None) -> bool:
        """Opens the file at the path (False if there is none) and starts its stream, from the
        state's entry for the first file when it still holds."""
        try:
            file = open(self.path, "rb")  # held open while it is followed
        except FileNotFoundError:
            return False
        info = os.fstat(file.fileno())
        if stat.S_ISDIR(info.st_mode):
            file.close()
            raise IsADirectoryError(f"{self.path}: is a directory; --follow takes journal files")
        entry = None
        blocks: Blocks | None = None
        resume_note = None
        if self.states is not None and not self.seen_file and stat.S_ISREG(info.st_mode):
            entry = self.states.entry(self.key)
            if entry is not None:
                try:
                    resume_note, blocks = why_not_resumable(
                        file, info, entry, fingerprint(self.options), self.path
                    )
                except BaseException:  # a malformed entry; Ctrl-C while the prefix re-hashes
                    file.close()
                    raise
        resumed = entry is not None and blocks is not None
        self.file, self.identity = file, (info.st_dev, info.st_ino)
        self.reader = HashingReader(file, blocks or Blocks.new(BLOCK_SIZE))
        self.read = self.reader.blocks.position
        file.seek(self.read)
        try:
            self.stream = JournalStream(
                **self.options.keywords(),
                state=entry if resumed else None,
                name=self.path,
                backend=_backend.name_of(self.engine),
            )
        except BaseException:  # a state entry the stream refuses: the file is not kept open
            file.close()
            self.file = None
            raise
        self.seen_file, self.told_missing = True, False
        self.summary["files"] += 1
        self.summary["missing"] = False
        for finding in (cause, resume_note):
            if finding is not None:
                self.emit(finding)
        # The findings of the verified prefix, as a check from the start would give them: the
        # stream's report lists them, so they count as handed on.
        restored = json.loads(entry["checker"])["findings"] if resumed and entry else []
        for fields in restored:
            self.emit(Finding.from_raw(self.engine.RawFinding(**fields), self.path))
        self.fed = len(restored)
        return True

    def emit(self, finding: Finding) -> None:
        """Hands ``finding`` on with the configuration's severity (none if "off"), counted."""
        shown = with_severity(finding, self.severities)
        if shown is None:
            return
        self.summary["errors"] += shown.severity == "error"
        self.summary["warnings"] += shown.severity == "warning"
        self._emit(shown)

    # Following ---------------------------------------------------------------------------------

    def start(self) -> None:
        if not self._open(None):
            self._missing()

    def _missing(self) -> None:
        self.summary["missing"] = True
        if not self.told_missing:
            self.told_missing = True
            self.note(f"{self.path}: no such file; waiting for it to appear")

    def drain(self) -> int:
        """Feeds what the open file holds past what was read; the bytes read."""
        if self.reader is None or self.stream is None:
            return 0
        total = 0
        while piece := self.reader.read(_READ_SIZE):
            total += len(piece)
            self.read += len(piece)
            findings = self.stream.feed(piece)
            self.fed += len(findings)
            for finding in findings:
                self.emit(finding)
        if total:
            self.last_line = self.stream.lines
        return total

    def poll(self) -> int:
        """Looks at the path again: reads what was appended, or follows a new file there."""
        if self.file is None:
            cause = None
            if self.seen_file:
                message = "a new file appeared at the path: followed from its start"
                cause = Finding.of(JOURNAL_REPLACED_WHILE_FOLLOWING, message, self.path, None, "")
            if self._open(cause):
                return self.drain()
            self._missing()
            return 0
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            read = self.drain()
            self._end()
            self._missing()
            return read
        if (info.st_dev, info.st_ino) != self.identity:
            # Rotated or compacted: what the old file got before it was replaced, then the new.
            read = self.drain()
            self._end()
            message = (
                f"the path now names another file (rotated or compacted, as CAR's retention "
                f"compaction does); the {self.summary['lines']} lines of the one before were "
                "checked; this one is followed from its start"
            )
            cause = Finding.of(JOURNAL_REPLACED_WHILE_FOLLOWING, message, self.path, None, "")
            if self._open(cause):
                return read + self.drain()
            self._missing()
            return read
        if info.st_size < self.read:
            message = (
                f"the journal shrank to {info.st_size} bytes after {self.read} bytes were read "
                "(truncated in place): re-read from its start"
            )
            self._end()
            cause = Finding.of(JOURNAL_TRUNCATED_WHILE_FOLLOWING, message, self.path, None, "")
            if self._open(cause):
                return self.drain()
            self._missing()
            return 0
        return self.drain()

    def _end(self, interrupted: bool = False) -> None:
        """Ends the current file's stream: its end-of-journal findings (a torn last line, runs
        still open), unless following was ``interrupted`` (then its partial line is pending)."""
        if self.stream is None or self.file is None:
            return
        stream, self.stream = self.stream, None
        self.summary["pending"] = stream.pending if interrupted else 0
        report = stream.close(interrupted=interrupted)
        for finding in report.findings[self.fed :]:
            self.emit(finding)
        stats = report.stats
        self.summary["lines"] += stats["lines"]
        self.summary["events"] += stats["events"]
        # The findings past the cap were counted, not listed: they count too.
        unlisted = not_listed(stats, self.severities)
        self.summary["errors"] += unlisted.get("error", 0)
        self.summary["warnings"] += unlisted.get("warning", 0)
        self.file.close()
        self.file, self.reader, self.identity = None, None, None

    def stop(self) -> None:
        """Following stops: the verified prefix goes into the state, the stream is closed as
        interrupted (a partial last line is pending, not an error)."""
        self.record()
        self._end(interrupted=True)

    def record(self) -> None:
        """Puts the verified prefix of the file followed now into the state (if any)."""
        if self.states is None or self.stream is None or self.reader is None:
            return
        if self.identity is None:
            return
        committed = self.reader.committed
        if self.stream.lines != committed.newlines:  # the file changed under the read
            return
        entry = self.stream.state()
        entry.update(
            device=self.identity[0],
            inode=self.identity[1],
            offset=committed.position,
            block_size=self.reader.blocks.size,
            blocks=self.reader.blocks.recorded(committed),
        )
        self.states.put(self.key, entry)


class _Waiter:
    """Waits for a change in the journals' directories: inotify (Linux) where it is there, a
    poll every ``POLL_SECONDS`` elsewhere."""

    def __init__(self, paths: list[str]) -> None:
        self.inotify: Any = None
        try:
            import inotify_simple  # type: ignore[import-untyped, import-not-found, unused-ignore]
        except ImportError:
            return
        flags = inotify_simple.flags
        mask = (
            flags.MODIFY
            | flags.CLOSE_WRITE
            | flags.CREATE
            | flags.MOVED_TO
            | flags.MOVED_FROM
            | flags.DELETE
            | flags.ATTRIB
        )
        try:
            inotify = inotify_simple.INotify()
        except OSError:  # no inotify here, or no instance left (fs.inotify.max_user_instances)
            return
        try:
            for directory in sorted({os.path.dirname(os.path.abspath(p)) for p in paths}):
                inotify.add_watch(directory, mask)
        except OSError:  # a directory missing, or no watch left: poll
            inotify.close()
            return
        self.inotify = inotify

    @property
    def kind(self) -> str:
        return "inotify" if self.inotify is not None else f"a poll every {POLL_SECONDS} s"

    def wait(self, seconds: float) -> None:
        """Returns when a directory changed or after ``seconds`` (``POLL_SECONDS`` without
        inotify)."""
        if self.inotify is None:
            time.sleep(min(seconds, POLL_SECONDS))
            return
        self.inotify.read(timeout=int(min(seconds, _SAFETY_SECONDS) * 1000))

    def close(self) -> None:
        if self.inotify is not None:
            self.inotify.close()


def follow(
    paths: list[str],
    options: JournalOptions,
    *,
    emit: Emit,
    note: Note | None = None,
    states: JournalStates | None = None,
    status: Callable[[int, int, str], None] | None = None,
    engine: _backend.Engine | None = None,
    until: Callable[[], bool] | None = None,
    severities: Mapping[str, SeverityOverride] | None = None,
    checkpoint: Callable[[], None] | None = None,
    checkpoint_seconds: float = CHECKPOINT_SECONDS,
) -> FollowSummary:
    """Follows the journals at ``paths`` until Ctrl-C (or ``until()`` is true), handing each
    finding to ``emit`` as it is decided and notes (a journal missing) to ``note``; the
    journals' verified prefixes go into ``states``. ``status(events, events_per_second,
    last_lines)`` (``path:line`` of each journal's last complete line) is called about twice
    a second while lines come in and after every wait.
    ``severities`` overrides findings' severities by code (``"off"`` drops them), as
    ``check_paths``' does; the summary counts them as overridden. With ``states``,
    ``checkpoint()`` (which saves them) is called every ``checkpoint_seconds`` after the
    journals' entries are brought up to date: a follower that is killed outright resumes from
    there."""
    chosen = engine or _backend.active()
    tell = note or (lambda text: print(text, file=sys.stderr))
    overrides = dict(severities or {})
    journals = [_Journal(path, options, chosen, states, emit, tell, overrides) for path in paths]
    waiter = _Waiter(paths)
    try:
        for journal in journals:
            journal.start()
        tell(f"following {len(journals)} journal(s) ({waiter.kind}); Ctrl-C ends")
        events_then, clock_then = _events(journals), time.monotonic()
        saved_then = clock_then
        while until is None or not until():
            waiter.wait(_SAFETY_SECONDS if until is None else 0.05)
            for journal in journals:
                journal.poll()
            now = time.monotonic()
            if status is not None and now - clock_then >= 0.5:
                events_now = _events(journals)
                rate = int((events_now - events_then) / (now - clock_then))
                status(events_now, rate, _last(journals))
                events_then, clock_then = events_now, now
            if checkpoint is not None and now - saved_then >= checkpoint_seconds:
                for journal in journals:
                    journal.record()
                checkpoint()
                saved_then = now
    except KeyboardInterrupt:
        pass
    finally:
        waiter.close()
        for journal in journals:
            journal.stop()
    return FollowSummary({journal.path: journal.summary for journal in journals})


def _events(journals: list[_Journal]) -> int:
    return sum(
        journal.summary["events"] + (journal.stream.events if journal.stream is not None else 0)
        for journal in journals
    )


def _last(journals: list[_Journal]) -> str:
    latest = [j for j in journals if j.stream is not None and j.last_line]
    return ", ".join(f"{j.path}:{j.last_line}" for j in latest)
