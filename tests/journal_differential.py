"""The two journal differentials (docs/journals.md, "Differentials"), for CI and for long runs.

(a) ``paths``: every way to check a journal (tests/journal_paths.py) gives the same whole report,
    under random options.
(b) ``car``: our ``--profile car-compatible`` verdict is CAR's: ``EventLog::load_read_only`` and
    ``verify_chain`` of car-eventlog 0.58.0 and 0.60.0 (interop/car-oracle, tests/car_oracle.py)
    on the same bytes: the line it refuses and why (a line it cannot parse, a chain break, a torn
    tail), the event index of the first chain break, the events and the verified count.

Cases are mutated windows of real CAR journals (tests/journal_mutations.py), the regression seeds
first. A disagreement is minimised (ddmin over lines, then bytes) and printed as a reproducer.

A long run is one command (from the repository's root)::

    python tests/journal_differential.py paths --cases 100000 --seed 1
    python tests/journal_differential.py car --cases 100000 --seed 1
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import car_oracle
import journal_mutations
import journal_paths

import pairling_fast as pf

# A chain break in our report (PF310 edited, PF311 relinked, PF312 gap, PF313 prev_hash, PF331 and
# PF332 digest uncomputable): CAR's `verify_chain` failing there.
CHAIN_CODES = frozenset({"PF310", "PF311", "PF312", "PF313", "PF331", "PF332"})
TORN_CODES = frozenset({"PF342", "PF302"})
RELEASES = ("0.58.0", "0.60.0")


def random_options(rng: random.Random) -> dict[str, Any]:
    """Options of a case of (a): every switch the report depends on."""
    return {
        "chain": rng.choice(["auto", "auto", "require", "off"]),
        "profile": rng.choice(["strict", "car-compatible"]),
        "car_version": rng.choice([None, "0.58", "0.60.0", "seed"]),
        "lifecycle": rng.random() < 0.7,
        "payloads": rng.choice(["warn", "error", "off"]),
        "max_findings": rng.choice([None, None, 3]),
        "max_line_length": rng.choice([1 << 26, 1 << 26, 4096]),
    }


def cases(rng: random.Random) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """The regression seeds, then mutated windows of real journals, without end."""
    yield from journal_mutations.REGRESSION_SEEDS
    while True:
        yield journal_mutations.mutated_case(rng), random_options(rng)


def _reproducer(kind: str, data: bytes, options: dict[str, Any], detail: str) -> str:
    return (
        f"{kind} differential disagrees on this minimised journal:\n"
        f"  bytes:   {data!r}\n  options: {options}\n  {detail}"
    )


# ------------------------------------------------------------------------------------------------
# (a) every path


def paths_differential(
    count: int | None, seconds: float | None, seed: int, scratch: Path
) -> tuple[int, list[str]]:
    """Runs (a) for ``count`` cases or ``seconds``; (cases run, reproducers of disagreements)."""
    rng = random.Random(seed)
    path = scratch / "case.jsonl"
    resume = scratch / "resume"
    resume.mkdir(exist_ok=True)
    failures: list[str] = []

    def disagreeing(data: bytes, options: dict[str, Any], case_seed: int) -> list[str]:
        path.write_bytes(data)
        split = (("rust", "python")[case_seed % 2],)  # each case splits on one backend
        reports = journal_paths.every_report(
            path, {"max_findings": None, **options}, random.Random(case_seed), resume, split
        )
        return journal_paths.disagreements(reports)

    run = _Run(count, seconds)
    for number, (data, options) in zip(run, cases(rng), strict=False):
        if number and number % 5000 == 0:
            print(f"paths: {number} cases, {len(failures)} disagreements", file=sys.stderr)
        case_seed = seed * 1_000_003 + number
        found = disagreeing(data, options, case_seed)
        if found:
            small = journal_mutations.minimised(
                data, lambda d, o=options, s=case_seed: bool(disagreeing(d, o, s))
            )
            detail = "\n  ".join(disagreeing(small, options, case_seed) or found)
            failures.append(_reproducer("paths", small, options, detail))
            print(failures[-1], file=sys.stderr)
            if len(failures) >= 5:
                break
    return run.done, failures


# ------------------------------------------------------------------------------------------------
# (b) CAR's own loader


def car_verdict(verdict: dict[str, Any], data: bytes) -> dict[str, Any]:
    """CAR's ``load_read_only`` outcome as comparable facts."""
    if verdict["ok"]:
        return {"refused": None, "events": verdict["events"], "chain": verdict["chain"]}
    line = verdict["line"]
    if verdict["error_kind"] == "UnexpectedEof":
        why = "torn tail"
    elif "hash chain integrity" in verdict["error"]:
        why = "chain break"
    else:
        why = "cannot parse"
    facts: dict[str, Any] = {"refused": (line, why)}
    if why == "chain break":
        # Every line before it parsed (CAR stops at the first it cannot): its events are the
        # lines before it (split at `\n` only, as `read_until`) that are not ASCII whitespace
        # (Rust's `is_ascii_whitespace`: no vertical tab), so the break's index is their count.
        before = data.split(b"\n")[: line - 1]
        facts["tampered_at"] = sum(bool(b.strip(b" \t\r\x0c")) for b in before)
    return facts


def our_verdict(report: dict[str, Any]) -> dict[str, Any]:
    """Our car-compatible report as the same facts, in the order CAR's ``load_from_journal``
    decides: a line it cannot parse (the first) refuses the journal before any chain is
    verified, then ``verify_chain`` (the first break), then a torn tail."""
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    stats = report["stats"]
    if not errors:
        return {"refused": None, "events": stats["events"], "chain": stats["chain"]}
    last = stats["lines"]
    # A torn last line is CAR's torn tail whatever else is wrong with it.
    torn = any(f["code"] in TORN_CODES and f["line"] == last for f in errors)
    unparsed = [
        f["line"]
        for f in errors
        if f["code"] not in CHAIN_CODES and not (torn and f["line"] == last)
    ]
    chain = [f["line"] for f in errors if f["code"] in CHAIN_CODES]
    if unparsed:
        return {"refused": (min(unparsed), "cannot parse")}
    if chain:
        return {
            "refused": (min(chain), "chain break"),
            "tampered_at": stats["chain"].get("tampered_at"),
        }
    return {"refused": (last, "torn tail")}


def car_differential(
    count: int | None, seconds: float | None, seed: int, scratch: Path
) -> tuple[int, list[str]]:
    """Runs (b) for ``count`` cases or ``seconds`` in batches (one oracle process per batch and
    release); (cases run, reproducers of disagreements)."""
    rng = random.Random(seed)
    failures: list[str] = []
    batch = 400
    source = cases(rng)
    written = car_oracle.write(scratch / "car-written")
    journal_mutations.add_sources(written)
    verdicts_seen: Counter[str] = Counter()
    run = _Run(count, seconds)
    for number in run.batches(batch):
        release = RELEASES[number // batch % 2]
        options = {"profile": "car-compatible", "car_version": release, "lifecycle": False}
        items = []
        for index in range(run.size(number, batch)):
            data, _ = next(source)
            path = scratch / f"case-{index}.jsonl"
            path.write_bytes(data)
            items.append((data, path))
        if number and number % 10000 < batch:
            seen = ", ".join(f"{why} {n}" for why, n in sorted(verdicts_seen.items()))
            print(f"car: {number} cases ({seen}), {len(failures)} disagreements", file=sys.stderr)
        verdicts = car_oracle.load([p for _, p in items], release=release)
        for (data, path), verdict in zip(items, verdicts, strict=True):
            ours = our_verdict(journal_paths.whole(path, "rust", {"max_findings": None, **options}))
            theirs = car_verdict(verdict, data)
            verdicts_seen[theirs["refused"][1] if theirs["refused"] else "loads"] += 1
            if ours != theirs:
                check = _car_disagreement(scratch, release, options)
                small = journal_mutations.minimised(data, lambda d, c=check: c(d) is not None)
                detail = check(small) or f"ours {ours}, CAR's {theirs}"
                failures.append(_reproducer(f"car {release}", small, options, detail))
                print(failures[-1], file=sys.stderr)
        if len(failures) >= 5:
            break
    return run.done, failures


def _car_disagreement(
    scratch: Path, release: str, options: dict[str, Any]
) -> Callable[[bytes], str | None]:
    """A check of one journal against CAR's loader: how the verdicts differ, or None."""
    path = scratch / "minimising.jsonl"

    def check(data: bytes) -> str | None:
        path.write_bytes(data)
        (verdict,) = car_oracle.load([path], release=release)
        backends = [
            journal_paths.whole(path, b, {"max_findings": None, **options})
            for b in ("rust", "python")
        ]
        theirs = car_verdict(verdict, data)
        for report in backends:
            ours = our_verdict(report)
            if ours != theirs:
                return f"ours {ours}, CAR's {theirs} ({verdict.get('error', 'ok')})"
        return None

    return check


# ------------------------------------------------------------------------------------------------


class _Run:
    """The cases of a run: ``count`` of them, or as many as ``seconds`` allow."""

    def __init__(self, count: int | None, seconds: float | None) -> None:
        self.count, self.deadline, self.done = count, None, 0
        if seconds is not None:
            self.deadline = time.monotonic() + seconds

    def _more(self) -> bool:
        if self.count is not None and self.done >= self.count:
            return False
        return self.deadline is None or time.monotonic() < self.deadline

    def __iter__(self) -> Iterator[int]:
        while self._more():
            yield self.done
            self.done += 1

    def batches(self, size: int) -> Iterator[int]:
        while self._more():
            start = self.done
            self.done = start + self.size(start, size)
            yield start

    def size(self, start: int, size: int) -> int:
        return size if self.count is None else min(size, self.count - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("which", choices=["paths", "car"])
    parser.add_argument("--cases", type=int, default=None, help="how many cases (default: 1000)")
    parser.add_argument("--seconds", type=float, default=None, help="or run for this long")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    count = args.cases if args.cases is not None or args.seconds is not None else 1000
    differential = paths_differential if args.which == "paths" else car_differential
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        done, failures = differential(count, args.seconds, args.seed, Path(scratch))
    elapsed = time.monotonic() - start
    print(
        f"{args.which}: {done} cases, seed {args.seed}, {elapsed:.0f} s, "
        f"{len(failures)} disagreements; pairling_fast {pf.__version__}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
