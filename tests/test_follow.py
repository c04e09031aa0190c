"""``check --follow``: the real command in a subprocess, following journals while this test (or
CAR's own writer) appends, rotates, truncates and deletes them; Ctrl-C (SIGINT) ends it."""

from __future__ import annotations

import json
import os
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import car_oracle
import pytest
from cli_helpers import PACKAGE_PARENT, started
from waiting import DEADLINE

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast.generate.journal import generate_journal

# CAR-shaped `data` (car-server-core's append_run_started_event): no payload finding on its own.
RUN_DATA = {"agent_id": "a1", "intent": "check", "started_at": "2026-01-01T00:00:00Z"}
EVENT = {
    "kind": "run_started",
    "data": RUN_DATA,
    "timestamp": "2026-01-01T00:00:00Z",
    "run_id": "r1",
}
GOOD = (json.dumps(EVENT) + "\n").encode()
WAIT = DEADLINE  # seconds for an expected finding: generous, the machine is shared
SYNC = "sync.jsonl"  # the journal Follower.sync() replaces


class Follower:
    """``check --follow SYNC ARGS --format jsonl`` running; its findings read as they come.

    ``SYNC`` is an empty journal followed first, which only ``sync()`` touches: it is how a test
    knows that the follower has read what was written before, without sleeping (see ``sync``)."""

    def __init__(self, backend: str, cwd: Path, *args: str) -> None:
        env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT, NO_COLOR="1")
        env["PAIRLING_FAST_BACKEND"] = backend
        self._sync = cwd / SYNC
        self._sync.write_bytes(b"")
        self._synced = 0
        command = [
            sys.executable,
            "-m",
            "pairling_fast",
            "check",
            "--follow",
            "--format",
            "jsonl",
            SYNC,
            *args,
        ]
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.findings: list[dict[str, Any]] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._notes: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[str] = []
        self._pumps = [
            threading.Thread(target=self._pump, args=(stream, lines), daemon=True)
            for stream, lines in (
                (self.process.stdout, self._lines),
                (self.process.stderr, self._notes),
            )
        ]
        for pump in self._pumps:
            pump.start()
        started(command, self._said)
        self._ready()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for pump in self._pumps:
            pump.join(timeout=WAIT)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    @staticmethod
    def _pump(stream: Any, lines: queue.Queue[str | None]) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    def _ready(self) -> None:
        """Returns once the journals are checked as they are and followed."""
        deadline = time.monotonic() + WAIT
        while True:
            line = self._next(self._notes, deadline, "--follow did not start", "before it started")
            self.stderr.append(line)
            if "Ctrl-C ends" in line:
                return

    def expect(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first finding from now on for which ``wanted`` holds (fails after ``WAIT``)."""
        deadline = time.monotonic() + WAIT
        while True:
            finding = json.loads(self._next(self._lines, deadline, "no such finding", ""))
            if finding["path"] == SYNC:
                if wanted(finding):
                    return finding
                continue
            self.findings.append(finding)
            if wanted(finding):
                return finding

    def sync(self) -> list[dict[str, Any]]:
        """Returns once everything written to the journals before the call has been read and
        checked: the findings that came meanwhile (so ``[]`` shows that nothing came of it).

        The follower looks at its journals in turn, in the order given, one pass after another.
        The sync journal is replaced twice, each time by a new file once the one before has been
        announced (PF350, at its opening; a pass sees one replacement at most, as it looks at the
        path once). The second one's pass is therefore a later pass than the first one's, which
        began after the call: that pass has looked at every other journal since, and handed on
        their findings before the second PF350."""
        seen = len(self.findings)
        for _ in range(2):
            self._synced += 1
            fresh = self._sync.with_name(f"{SYNC}.{self._synced}")
            fresh.write_bytes(b"")
            fresh.rename(self._sync)
            self.expect(_at(SYNC, "PF350"))
        return self.findings[seen:]

    def expect_note(self, wanted: str) -> None:
        """Returns once the follower has said ``wanted`` on stderr (fails after ``WAIT``)."""
        deadline = time.monotonic() + WAIT
        while wanted not in self.stderr[-1]:
            self.stderr.append(self._next(self._notes, deadline, f"no {wanted!r}", ""))

    def _next(self, lines: queue.Queue[str | None], deadline: float, late: str, when: str) -> str:
        """The next line of ``lines`` before ``deadline``; fails if none comes (``late``) or
        the follower's output ended (``when``)."""
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            self._fail(f"{late} within {WAIT} s")
        if line is None:
            self._fail(f"--follow ended {when}".rstrip())
        return line

    def _said(self) -> str:
        """All the follower said on stderr so far."""
        while True:
            try:
                note = self._notes.get_nowait()
            except queue.Empty:
                break
            if note is None:
                self._notes.put(None)  # still the end for the next reader
                break
            self.stderr.append(note)
        return "".join(self.stderr)

    def _fail(self, what: str) -> NoReturn:
        """Fails the test with all the follower said so far, its exit status and the load: what
        a timeout on a loaded machine needs to be told from a hang or a missed finding."""
        said = self._said()
        pytest.fail(
            f"{what} (exit status {self.process.poll()}, load {os.getloadavg()})\n"
            f"stderr:\n{said}\nfindings: {self.findings}"
        )

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C: (exit code, stderr); the rest of its findings are read into ``findings``."""
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self._fail(f"--follow did not end within {WAIT} s of Ctrl-C")
        while (line := self._lines.get(timeout=WAIT)) is not None:
            finding = json.loads(line)
            if finding["path"] != SYNC:
                self.findings.append(finding)
        while (note := self._notes.get(timeout=WAIT)) is not None:
            self.stderr.append(note)
        stderr = "".join(self.stderr)
        assert "Traceback" not in stderr, stderr
        return self.process.returncode, stderr


def _at(path: str, code: str, line: int | None = None) -> Callable[[dict[str, Any]], bool]:
    return lambda f: f["path"] == path and f["code"] == code and (line is None or f["line"] == line)


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as stream:
        stream.write(data)


@pytest.fixture
def follow(backend: _backend.Engine, tmp_path: Path) -> Iterator[Callable[..., Follower]]:
    started: list[Follower] = []

    def start(*args: str) -> Follower:
        follower = Follower(_backend.name_of(backend), tmp_path, *args)
        started.append(follower)
        return follower

    yield start
    for follower in started:
        follower.close()


def test_appended_lines_are_checked_as_they_complete(
    follow: Callable[..., Follower], tmp_path: Path
) -> None:
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(GOOD + b"[1]\n")
    follower = follow("events.jsonl")
    follower.expect(_at("events.jsonl", "PF301", 2))
    # A torn line waits for the rest of its bytes: no PF302 while following.
    _append(journal, b'{"kind": "run_comp')
    assert follower.sync() == []
    _append(journal, b'leted", "data": {}, "timestamp": "x", "run_id": "r1"}\nnot json\n')
    assert follower.expect(_at("events.jsonl", "PF101", 3))["pointer"] == "/timestamp"
    follower.expect(_at("events.jsonl", "PF001", 4))
    _append(journal, b'{"kind": "run_started"')  # pending when Ctrl-C comes
    assert follower.sync() == []
    code, stderr = follower.interrupt()
    assert code == 1  # errors were reported
    assert "followed events.jsonl: 1 file(s), 4 lines" in stderr
    assert "partial last line of 22 bytes pending" in stderr
    assert not any(f["code"] == "PF302" for f in follower.findings)


def test_a_clean_journal_exits_0_and_its_state_resumes_a_check(
    follow: Callable[..., Follower], tmp_path: Path
) -> None:
    journal = tmp_path / "events.jsonl"
    lines, _ = generate_journal(40, 3, chain=True)
    journal.write_bytes(b"".join(lines[:20]))
    follower = follow("events.jsonl", "other.jsonl", "--state", "state.json")
    _append(journal, b"".join(lines[20:]))
    (tmp_path / "other.jsonl").write_bytes(b"[2]\n")  # appears later
    follower.sync()
    assert [(f["path"], f["code"]) for f in follower.findings] == [("other.jsonl", "PF301")]
    code, stderr = follower.interrupt()
    assert code == 1, stderr
    assert f"followed events.jsonl: 1 file(s), {len(lines)} lines" in stderr
    # The state recorded is the one `check --state` records: a check resumes from its end.
    report = pf.check_journal(journal, state=tmp_path / "state.json")
    assert report.stats["resumed"]["bytes_checked"] == 0
    assert report.stats["chain"] == {"verified": len(lines)}
    assert report.findings == pf.check_journal(journal).findings
    # And --follow resumes from it too: only what is appended since is new.
    again = follow("events.jsonl", "--state", "state.json")
    _append(journal, b"[3]\n")
    assert again.expect(_at("events.jsonl", "PF301"))["line"] == len(lines) + 1
    code, _ = again.interrupt()
    assert code == 1
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(GOOD)
    quiet = follow("clean.jsonl")
    _append(clean, GOOD)
    assert quiet.sync() == []
    assert quiet.interrupt()[0] == 0
    assert quiet.findings == []


def test_a_rotated_journal_is_followed_from_its_start(
    follow: Callable[..., Follower], tmp_path: Path
) -> None:
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(b"[1]\n")
    follower = follow("events.jsonl")
    follower.expect(_at("events.jsonl", "PF301", 1))
    _append(journal, b"[2]\n")
    # Rotation as logrotate does it: rename, then a new file at the name (CAR's compaction
    # renames a new file over it: the same thing seen from here).
    journal.rename(tmp_path / "events.jsonl.1")
    replacement = tmp_path / "new.tmp"
    replacement.write_bytes(GOOD + b"[3]\n")
    replacement.rename(journal)
    replaced = follower.expect(_at("events.jsonl", "PF350"))
    assert replaced["severity"] == "info"
    assert follower.expect(_at("events.jsonl", "PF301"))["line"] == 2  # the new file's line 2
    codes = [(f["code"], f["line"]) for f in follower.findings]
    assert ("PF301", 2) in codes[: codes.index(("PF350", None))]  # the old file's, read first
    _, stderr = follower.interrupt()
    assert "followed events.jsonl: 2 file(s)" in stderr
    assert [f["code"] for f in follower.findings].count("PF350") == 1


def test_a_truncated_journal_is_reported_and_read_again(
    follow: Callable[..., Follower], tmp_path: Path
) -> None:
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(GOOD + GOOD + b"[1]\n")
    follower = follow("events.jsonl")
    follower.expect(_at("events.jsonl", "PF301", 3))
    with open(journal, "r+b") as stream:  # logrotate's copytruncate
        stream.truncate(0)
    _append(journal, b"[2]\n")
    truncated = follower.expect(_at("events.jsonl", "PF351"))
    assert truncated["severity"] == "warning"
    follower.expect(_at("events.jsonl", "PF301", 1))
    code, stderr = follower.interrupt()
    assert code == 1 and "followed events.jsonl: 2 file(s)" in stderr


def test_a_deleted_journal_is_waited_for(follow: Callable[..., Follower], tmp_path: Path) -> None:
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(b"[1]\n")
    follower = follow("events.jsonl")
    follower.expect(_at("events.jsonl", "PF301", 1))
    journal.unlink()
    follower.expect_note("events.jsonl: no such file; waiting for it to appear")
    journal.write_bytes(GOOD + b"[2]\n")
    follower.expect(_at("events.jsonl", "PF301", 2))
    code, _ = follower.interrupt()
    assert code == 1
    # The deletion itself is no finding; the new file is one (PF350), then its own are checked.
    assert [(f["code"], f["line"]) for f in follower.findings] == [
        ("PF301", 1),
        ("PF350", None),
        ("PF301", 2),
    ]


def test_cars_writer_appends_while_followed(
    follow: Callable[..., Follower], tmp_path: Path
) -> None:
    """CAR's EventLog writes its journals (chained, run-bound, compacted, ...) into a directory
    that is being followed: every line is checked as CAR appends it, and the state at the end
    equals a full check of what CAR wrote (the chain verified across every append)."""
    (tmp_path / "probe").mkdir()
    names = [p.name for p in car_oracle.write(tmp_path / "probe")]
    live = tmp_path / "live"
    live.mkdir()
    paths = [f"live/{name}" for name in names]
    follower = follow(*paths, "--state", "state.json")
    car_oracle.write(live)
    follower.sync()  # CAR's journals read as CAR left them
    follower.interrupt()
    states = pf.JournalStates.load(tmp_path / "state.json")
    for path in paths:
        whole = pf.check_journal(tmp_path / path)
        decided_early = [
            (f.code, f.line) for f in whole.findings if f.code not in {"PF329", "PF330", "PF343"}
        ]
        # CAR compacts some journals after writing them (a new file renamed over the journal):
        # each new file is followed from its start, after a PF350.
        seen = [(f["code"], f["line"]) for f in follower.findings if f["path"] == path]
        last_file = len(seen) - seen[::-1].index(("PF350", None)) if ("PF350", None) in seen else 0
        assert seen[last_file:] == decided_early, (path, seen, follower.stderr)
        resumed = pf.check_journal(tmp_path / path, state=states)
        assert resumed.stats["resumed"]["bytes_checked"] == 0
        assert resumed.stats["chain"] == whole.stats["chain"]
        assert [f.to_dict() for f in resumed.findings] == [f.to_dict() for f in whole.findings]


def test_follow_refuses_what_it_cannot_do(backend: _backend.Engine, tmp_path: Path) -> None:
    from cli_helpers import run_cli

    name = _backend.name_of(backend)
    for args, message in [
        (["--format", "json"], "--format text or jsonl"),
        (["--output", "x"], "--output cannot be used with --follow"),
        ([str(tmp_path)], "is a directory"),
    ]:
        result = run_cli(name, "check", "--follow", "a.jsonl", *args, cwd=tmp_path)
        assert result.returncode == 2 and message in result.stderr, result.stderr


def test_without_inotify_a_poll_follows(
    backend: _backend.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where inotify is missing (another OS, no instance left), the files are polled."""
    from pairling_fast.journal.follow import follow as follow_journals
    from pairling_fast.journal.options import JournalOptions

    monkeypatch.setitem(sys.modules, "inotify_simple", None)  # the import fails
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(b"[1]\n")
    found: list[pf.Finding] = []
    notes: list[str] = []
    steps = iter(range(1000))

    def until() -> bool:
        step = next(steps)
        if step == 2:
            _append(journal, GOOD + b"[2]\n{")
        return len(found) >= 2 or step > 200

    summary = follow_journals(
        [str(journal)], JournalOptions(), emit=found.append, note=notes.append, until=until
    )
    assert [(f.code, f.line) for f in found] == [("PF301", 1), ("PF301", 3)]
    assert "a poll every" in notes[0]
    assert summary.journals[str(journal)]["pending"] == 1
    assert summary.errors == 2


def test_jsonl_for_a_check_at_rest(backend: _backend.Engine, tmp_path: Path) -> None:
    from cli_helpers import run_cli

    (tmp_path / "events.jsonl").write_bytes(GOOD + b"[1]\nnot json\n")
    result = run_cli(
        _backend.name_of(backend), "check", "events.jsonl", "--format", "jsonl", cwd=tmp_path
    )
    assert result.returncode == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(f["code"], f["line"], f["path"]) for f in lines] == [
        ("PF301", 2, "events.jsonl"),
        ("PF001", 3, "events.jsonl"),
        ("PF329", 1, "events.jsonl"),
    ]
    assert "2 errors" in result.stderr


def test_a_terminal_gets_a_status_line(backend: _backend.Engine, tmp_path: Path) -> None:
    import pty

    journal = tmp_path / "events.jsonl"
    journal.write_bytes(GOOD)
    primary, secondary = pty.openpty()
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT, NO_COLOR="1")
    env["PAIRLING_FAST_BACKEND"] = _backend.name_of(backend)
    process = subprocess.Popen(
        [sys.executable, "-m", "pairling_fast", "check", "--follow", "events.jsonl"],
        cwd=tmp_path,
        env=env,
        stdout=secondary,
        stderr=subprocess.DEVNULL,
    )
    os.close(secondary)
    seen = b""
    deadline = time.monotonic() + WAIT
    try:
        while b"events/s" not in seen and time.monotonic() < deadline:
            _append(journal, GOOD)  # lines coming in: the status line is shown twice a second
            while select.select([primary], [], [], 0.2)[0]:
                seen += os.read(primary, 4096)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=WAIT)
        os.close(primary)
    assert b" events/s; last verified: events.jsonl:" in seen
    assert process.returncode == 0


def test_follow_fails_in_one_line(backend: _backend.Engine, tmp_path: Path) -> None:
    """A state entry that cannot be used, a journal that cannot be read: one line, exit 2."""
    from cli_helpers import run_cli

    journal = tmp_path / "events.jsonl"
    journal.write_bytes(GOOD)
    pf.JournalStates({os.path.realpath(journal): {"device": 1}}).save(tmp_path / "state.json")
    name = _backend.name_of(backend)
    result = run_cli(
        name, "check", "--follow", "events.jsonl", "--state", "state.json", cwd=tmp_path
    )
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1].endswith("its entry in the state file is malformed")
    if os.geteuid() != 0:  # root reads anything
        journal.chmod(0)
        result = run_cli(name, "check", "--follow", "events.jsonl", cwd=tmp_path)
        assert result.returncode == 2 and "events.jsonl: Permission denied" in result.stderr


def test_severity_overrides_apply_while_following(
    follow: Callable[..., Follower], tmp_path: Path
) -> None:
    (tmp_path / "pairling-fast.toml").write_text(
        'severity = {PF301 = "off", PF001 = "warning"}\n', encoding="utf-8"
    )
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(b"[1]\nnot json\n")
    follower = follow("events.jsonl")
    assert follower.expect(_at("events.jsonl", "PF001", 2))["severity"] == "warning"
    _append(journal, b"[2]\n")
    assert follower.sync() == []
    code, stderr = follower.interrupt()
    assert code == 0 and "0 error(s), 1 warning(s)" in stderr
    assert [f["code"] for f in follower.findings] == ["PF001"]


def test_the_state_is_saved_while_following(backend: _backend.Engine, tmp_path: Path) -> None:
    """A follower killed outright resumes from the last checkpoint: the state is saved as it
    goes, not only at the end."""
    from pairling_fast.journal.follow import follow as follow_journals
    from pairling_fast.journal.options import JournalOptions

    journal = tmp_path / "events.jsonl"
    journal.write_bytes(GOOD + b"[1]\n")
    states = pf.JournalStates()
    offsets: list[int] = []
    steps = iter(range(1000))

    def checkpoint() -> None:
        entry = states.entry(os.path.realpath(journal))
        offsets.append(-1 if entry is None else entry["offset"])

    def until() -> bool:
        if next(steps) == 3:
            _append(journal, GOOD)
        return len(offsets) >= 6

    follow_journals(
        [str(journal)],
        JournalOptions(),
        emit=lambda finding: None,
        states=states,
        until=until,
        checkpoint=checkpoint,
        checkpoint_seconds=0.0,
    )
    assert offsets[0] == len(GOOD) + 4 and offsets[-1] == 2 * len(GOOD) + 4
    resumed = pf.check_journal(journal, state=states)
    assert resumed.stats["resumed"]["bytes_checked"] == 0
