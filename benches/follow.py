"""``check --follow`` measured from outside, as a user runs it (issue #27's targets;
benches/RESULTS.md, "check --follow").

    python benches/follow.py latency [--rate 10000] [--seconds 10] [--tail]
    python benches/follow.py idle [--seconds 20] [--tail]
    python benches/follow.py soak [--events 5000000]

``latency``: a writer appends generated events at ``--rate`` lines a second (a few lines every
millisecond, each write flushed), one line in 100 a defect (``[n]``, PF301); the time from a
defect line's write returning to its finding arriving on the follower's stdout (``--format
jsonl``), as a distribution. ``idle``: the CPU the follower's process uses over ``--seconds``
while its journal does not change (utime + stime from /proc). ``soak``: ``--events`` events
appended as fast as the writer can; the follower's RSS (VmRSS) sampled against how far it has
read (its journal descriptor's offset), peak after the first 100k events vs the RSS there.
``--tail`` runs the anchor instead: ``tail -F`` on the same journal (latency: until the defect
line itself is on its stdout). The soak's anchor is the peak RSS of ``check FILE`` at rest on
the journal it wrote. Each prints one JSON line. Start-up is not measured: each waits for the
follower's "following" note first.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from pairling_fast.generate.journal import generate_journal


class Follower:
    """``check --follow`` on ``journal``, or the anchor: ``tail -F`` (GNU coreutils, inotify)
    printing the journal's lines as they come."""

    def __init__(self, journal: Path, backend: str, tail: bool = False) -> None:
        env = dict(os.environ, PAIRLING_FAST_BACKEND=backend)
        command: list[str | Path] = ["tail", "-F", "-n", "+1", journal]
        if not tail:
            command = [sys.executable, "-m", "pairling_fast", "check", "--follow"]
            command += ["--format", "jsonl", journal]
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        assert self.process.stderr is not None and self.process.stdout is not None
        while not tail and (line := self.process.stderr.readline()):
            if b"Ctrl-C ends" in line:
                break
        self.arrivals: queue.Queue[tuple[float, bytes]] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.arrivals.put((time.monotonic(), line))

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def offset(self, journal: Path) -> int:
        """How far the follower has read its journal (its descriptor's offset)."""
        for fd in os.listdir(f"/proc/{self.process.pid}/fd"):
            try:
                if os.readlink(f"/proc/{self.process.pid}/fd/{fd}") == str(journal):
                    info = Path(f"/proc/{self.process.pid}/fdinfo/{fd}").read_text()
                    return int(info.split("pos:")[1].split()[0])
            except (OSError, IndexError):
                continue
        return 0

    def stop(self) -> None:
        # SIGTERM ends it as Ctrl-C does; SIGINT is ignored by a process started in the
        # background by a shell without job control (a bench run with `&`), and so by its child.
        self.process.terminate()
        self.process.wait(timeout=600)


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(fraction: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000, 2)

    return {"p50_ms": at(0.5), "p90_ms": at(0.9), "p99_ms": at(0.99), "max_ms": at(1.0)}


def latency(args: argparse.Namespace, directory: Path) -> dict[str, Any]:
    events, _ = generate_journal(int(args.rate * args.seconds * 1.05), 7)
    journal = directory / "live.jsonl"
    journal.write_bytes(b"")
    follower = Follower(journal, args.backend, args.tail)
    if args.tail:
        time.sleep(1.0)  # tail says nothing when it is ready
    written: dict[int, float] = {}
    per_tick = max(1, args.rate // 1000)  # lines a millisecond
    start = time.monotonic()
    line = 0
    with open(journal, "ab", buffering=0) as out:
        for index, event in enumerate(events):
            if index % 100 == 99:
                line += 1
                out.write(b"[%d]\n" % line)
                written[line] = time.monotonic()
            line += 1
            out.write(event)
            if index % per_tick == per_tick - 1:
                # Paced: the lines of each millisecond go out at its start.
                due = start + (index + 1) / args.rate
                if (pause := due - time.monotonic()) > 0:
                    time.sleep(pause)
            if time.monotonic() - start > args.seconds:
                break
    elapsed = time.monotonic() - start
    delays: list[float] = []
    deadline = time.monotonic() + 30
    while len(delays) < len(written) and time.monotonic() < deadline:
        try:
            arrived, text = follower.arrivals.get(timeout=1)
        except queue.Empty:
            continue
        if args.tail:  # the defect line itself, as tail prints it
            number = int(text[1:-2]) if text.startswith(b"[") else None
        else:
            finding = json.loads(text)
            number = finding["line"] if finding["code"] == "PF301" else None
        if number in written:
            delays.append(arrived - written[number])
    follower.stop()
    return {
        "bench": "latency",
        "command": "tail -F" if args.tail else "check --follow",
        "backend": args.backend,
        "lines": line,
        "rate_achieved": round(line / elapsed),
        "samples": len(delays),
        "missing": len(written) - len(delays),
        **_percentiles(delays),
    }


def idle(args: argparse.Namespace, directory: Path) -> dict[str, Any]:
    journal = directory / "idle.jsonl"
    lines, _ = generate_journal(10_000, 3, chain=True)
    journal.write_bytes(b"".join(lines))
    follower = Follower(journal, args.backend, args.tail)
    time.sleep(1.0)  # settled
    before, clock = follower.cpu_seconds(), time.monotonic()
    time.sleep(args.seconds)
    used, spent = follower.cpu_seconds() - before, time.monotonic() - clock
    follower.stop()
    return {
        "bench": "idle",
        "command": "tail -F" if args.tail else "check --follow",
        "backend": args.backend,
        "seconds": round(spent, 1),
        "cpu_seconds": round(used, 3),
        "percent_of_a_core": round(100 * used / spent, 3),
        "clock_tick_s": 1 / os.sysconf("SC_CLK_TCK"),
    }


def _copies(count: int) -> Any:
    """Unchained generated events, 100k a copy, each copy's run and proposal ids its own."""
    base, _ = generate_journal(100_000, 11)
    block = b"".join(base)
    for copy in range(count):
        yield (
            (
                block.replace(b'"run_id":"run-', b'"run_id":"r%d-' % copy).replace(
                    b'"proposal_id":"', b'"proposal_id":"%d-' % copy
                )
            ),
            len(base),
        )


def soak(args: argparse.Namespace, directory: Path) -> dict[str, Any]:
    journal = directory / "soak.jsonl"
    journal.write_bytes(b"")
    follower = Follower(journal, args.backend)
    boundaries: list[tuple[int, int]] = []  # (bytes written, events written)
    written_bytes = written_events = 0

    def write() -> None:
        nonlocal written_bytes, written_events
        with open(journal, "ab") as out:
            for block, events in _copies(-(-args.events // 100_000)):
                out.write(block)
                out.flush()
                written_bytes += len(block)
                written_events += events
                boundaries.append((written_bytes, written_events))

    writer = threading.Thread(target=write)
    start = time.monotonic()
    writer.start()
    samples: list[tuple[int, int]] = []  # (offset read, rss KiB)
    while True:
        offset = follower.offset(journal)
        samples.append((offset, follower.rss_kib()))
        if not writer.is_alive() and offset >= written_bytes:
            break
        time.sleep(0.25)
    elapsed = time.monotonic() - start
    follower.stop()
    # The anchor: the peak RSS of a check at rest of the same journal (`check FILE`).
    anchor = subprocess.Popen(
        [sys.executable, "-m", "pairling_fast", "check", journal, "--format", "json"],
        stdout=subprocess.DEVNULL,
        env=dict(os.environ, PAIRLING_FAST_BACKEND=args.backend),
    )
    _, _, usage = os.wait4(anchor.pid, 0)
    anchor.returncode = 0
    first_copy = boundaries[0][0]  # the first 100k events
    after_first = [rss for offset, rss in samples if offset >= first_copy]
    at_100k = after_first[0]
    # The RSS once the follower had read past each million events: where it levels off.
    by_million = {}
    for written, events in boundaries:
        if events % 1_000_000 < 100_000 and events >= 1_000_000:
            later = [rss for offset, rss in samples if offset >= written]
            if later:
                by_million[f"{events // 1_000_000}M"] = round(later[0] / 1024, 1)
    return {
        "bench": "soak",
        "backend": args.backend,
        "events": written_events,
        "bytes": written_bytes,
        "seconds": round(elapsed, 1),
        "rss_at_100k_mib": round(at_100k / 1024, 1),
        "rss_peak_after_mib": round(max(after_first) / 1024, 1),
        "rss_last_mib": round(after_first[-1] / 1024, 1),
        "peak_vs_100k": round(max(after_first) / at_100k, 3),
        "rss_mib_by_million": by_million,
        "check_at_rest_peak_mib": round(usage.ru_maxrss / 1024, 1),
        "samples": len(samples),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bench", choices=("latency", "idle", "soak"))
    parser.add_argument("--backend", default="rust", choices=("rust", "python"))
    parser.add_argument("--rate", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--tail", action="store_true", help="time tail -F instead (the anchor)")
    args = parser.parse_args()
    if args.seconds is None:
        args.seconds = 10.0 if args.bench == "latency" else 20.0
    benches = {"latency": latency, "idle": idle, "soak": soak}
    with tempfile.TemporaryDirectory(prefix="follow-bench-") as directory:
        result = benches[args.bench](args, Path(directory))
    result["load_average"] = os.getloadavg()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
