"""pairling_fast against every peer, on the same generated data, in one run: every target of
issue #19, each printed as met or missed with its figure.

    python benches/compare.py [--quick] [--json OUT] [--no-rss-scaling] [--journal-only]
                              [--journal-events N] [--repeat N]

Workloads (deterministic: fixed seeds, generated in the run):
1. journal check of a chained CAR journal (~1M events, ~300 MB): the Rust core on 1 and 2 threads
   (whole processes, ``RAYON_NUM_THREADS``), the fallback, the per-line pipelines a user would
   write instead (parse + schema + CAR's ``event_digest`` with ``hashlib`` for the chain),
   ``check-jsonschema`` (whole process) and the floor: hashing every byte of the file with
   ``openssl dgst -sha256`` (SHA-NI where the CPU has it) and Python's ``hashlib``, plus coreutils
   ``sha256sum`` (portable C, no SHA-NI) for reference;
   1b. peak RSS of the 2-thread check at 100 MB and at 1 GB (``--no-rss-scaling`` skips it);
   1c. ``check --state`` after a 1 % append against a full check, at workload 1's size and at 1 GB;
   1d. the fallback on tiny lines, extrapolated to 10 M lines;
   1e. ``pairling-fast check FILE`` as a whole process against ``openssl dgst -sha256``, on a
   CAR-shaped chained journal (CAR's fixture journal repeated, workload 1's count of events) and
   on workload 1's generated one (issue #29);
2. sha256 of the RFC 8785 form of 100k varied objects;
3. check of a 10k-binding capability map in process; 3b. ``pairling-fast check MAP`` and
   ``check-jsonschema`` as whole processes (wall, CPU, peak RSS) on that map and a ~150 MB one;
4. schema validation of journal event lines, from bytes and from parsed objects;
5. a 2-worker Dask LocalCluster against one process on heads of workload 1's journal
   (benches/cluster.py's measurement): the crossover, bytes shipped per event, the driver's
   ordered-stage rate.

Every journal workload checks a head of ONE generated journal, cut after a completed run (so it
is a complete, valid journal): the run generates its bytes once, ~1 GB with 1b (minutes).

Slow contenders run on a slice of the workload (stated in the table); throughput is per byte
and per item, so a slice measures the same rate. Timings are the best of ``--repeat`` runs and
every ratio is taken within this run (the machine is shared: compare ratios, not times). The
load average is printed (and written to ``--json``) before and after the run and at the start
of every workload. MB is 10^6 bytes throughout, peak RSS included.

A contender whose package is missing is listed as "not installed", never dropped. ``--quick``
is the CI smoke: tiny workloads, one repeat, and it fails unless every installed contender ran
and the results agree (equal digests among the JCS-exact contenders, equal validity verdicts,
equal journal verdicts).
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import dataclasses
import datetime
import functools
import hashlib
import importlib
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import cluster
import pipeline as pipeline_rows_bench
from compare_model import (
    BASELINE_FLOOR,
    BASELINE_STRAIGHTFORWARD,
    CLUSTER_LOCAL,
    CLUSTER_ORDERED,
    CLUSTER_PER_LINE,
    CLUSTER_SINGLE,
    EVENT_SCHEMA_ID,
    FALLBACK,
    FULL,
    HASHLIB_FLOOR,
    INCREMENTAL,
    OPENSSL_FLOOR,
    QUICK,
    RUST,
    TINY_TARGET_LINES,
    WHOLE_JOURNAL,
    Outcome,
    Sizes,
    baseline,
    incremental_contenders,
    rss_contender,
    size_label,
    whole_check,
    whole_floor,
)
from compare_report import disagreements, format_table, targets

import pairling_fast as pf
from pairling_fast import _backend, maps, schemas
from pairling_fast._bundled import schema_files
from pairling_fast._fallback.journal.car_event import display as serde_display
from pairling_fast.generate.journal import generate_journal, write_journal
from pairling_fast.generate.map import generate_map


class NotInstalled(Exception):
    """A peer package (or program) is missing in this environment."""


def optional_module(name: str, package: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as missing:
        raise NotInstalled(package) from missing


def best_of(repeat: int, work: Callable[[], Any]) -> tuple[float, Any]:
    """(the shortest wall time of ``repeat`` runs, the answer of the last run)."""
    best = float("inf")
    answer = None
    for _ in range(repeat):
        started = time.perf_counter()
        answer = work()
        best = min(best, time.perf_counter() - started)
    return best, answer


class Bench:
    """Runs contenders, turning a missing package into "not installed" and a crash into
    "failed" so one broken peer never hides the others."""

    def __init__(self, sizes: Sizes) -> None:
        self.sizes = sizes
        self.outcomes: list[Outcome] = []
        # The load average at each workload's start: the full run takes long on a shared machine.
        self.load_at_start: dict[str, tuple[float, float, float]] = {}

    def begin(self, workload: str, description: str) -> None:
        self.load_at_start[workload] = os.getloadavg()
        load = ", ".join(f"{value:.2f}" for value in self.load_at_start[workload])
        print(f"{workload}: {description} (load {load})", file=sys.stderr, flush=True)

    def measure(
        self,
        workload: str,
        contender: str,
        work: Callable[[], Any],
        *,
        megabytes: float,
        items: int,
        note: str = "",
        jcs_exact: bool = True,
        repeat: int | None = None,
    ) -> Outcome:
        outcome = Outcome(workload, contender, megabytes=megabytes, items=items, note=note)
        outcome.jcs_exact = jcs_exact
        try:
            outcome.seconds, outcome.answer = best_of(repeat or self.sizes.repeat, work)
        except NotInstalled as missing:
            outcome.status = f"not installed ({missing})"
        except Exception as error:
            outcome.status = f"failed: {type(error).__name__}: {error}"[:160]
        self.outcomes.append(outcome)
        print(f"  {contender}: {outcome.status}", file=sys.stderr, flush=True)
        return outcome

    def record(self, outcome: Outcome) -> Outcome:
        self.outcomes.append(outcome)
        print(f"  {outcome.contender}: {outcome.status}", file=sys.stderr, flush=True)
        return outcome


# --- workload 2: canonical digests ------------------------------------------------------------

KEY_WORDS = (
    "id",
    "name",
    "kind",
    "value",
    "items",
    "a",
    "b",
    "ünïcode",
    "€",
    "\U0001f600",
    "\ue000",
)
TEXT_WORDS = ("alpha", "β", 'quote " and \\', "tab\tnew\nline", "\x00\x1f\x7f", "€uro", "😀", "")


def varied_value(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(10 if depth < 3 else 7)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return (
            rng.randint(-(2**53) + 1, 2**53 - 1) if rng.random() < 0.2 else rng.randint(-99, 9999)
        )
    if kind == 3:
        # Floats across magnitudes: ECMAScript's notation changes at 1e21 and 1e-7.
        return rng.choice((0.5, -0.0, 1e21, 1e-7, 100.0)) * rng.random() * 10 ** rng.randint(-8, 22)
    if kind in (4, 5, 6):
        return " ".join(rng.choice(TEXT_WORDS) for _ in range(rng.randint(1, 4)))
    if kind in (7, 8):
        return varied_object(rng, depth + 1)
    return [varied_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]


def varied_object(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    return {
        f"{rng.choice(KEY_WORDS)}{index}": varied_value(rng, depth)
        for index in range(rng.randint(2, 9))
    }


def digest_workload(bench: Bench) -> None:
    sizes = bench.sizes
    rng = random.Random(2)
    objects = [varied_object(rng) for _ in range(sizes.digest_objects)]
    slow = objects[: sizes.slow_digest_objects]
    with _backend.selected("rust") as engine:
        canonical_bytes = [len(engine.canonicalize(value)) for value in objects]
    megabytes = sum(canonical_bytes) / 1e6
    slow_megabytes = sum(canonical_bytes[: len(slow)]) / 1e6
    name = "2. sha256 of RFC 8785 form, varied objects"
    bench.begin(name, f"{len(objects)} objects, {megabytes:.1f} MB canonical")
    whole = {"megabytes": megabytes, "items": len(objects)}
    sliced = {
        "megabytes": slow_megabytes,
        "items": len(slow),
        "note": f"{len(slow)} objects",
        "repeat": 1,  # seconds long already; best-of would only add minutes
    }

    def engine_digests(backend: str, values: list[Any]) -> Callable[[], list[str]]:
        digest = _backend.engine(backend).digest_hex
        return lambda: [digest(value) for value in values]

    def rfc8785_digests(values: list[Any]) -> list[str]:
        rfc8785 = optional_module("rfc8785", "rfc8785")
        return [hashlib.sha256(rfc8785.dumps(value)).hexdigest() for value in values]

    def canonicaljson_digests() -> list[str]:
        canonicaljson = optional_module("canonicaljson", "canonicaljson")
        encode = canonicaljson.encode_canonical_json
        return [hashlib.sha256(encode(value)).hexdigest() for value in objects]

    def orjson_digests() -> list[str]:
        orjson = optional_module("orjson", "orjson")
        option = orjson.OPT_SORT_KEYS
        return [hashlib.sha256(orjson.dumps(value, option=option)).hexdigest() for value in objects]

    bench.measure(name, RUST, engine_digests("rust", objects), **whole)
    bench.measure(name, FALLBACK, engine_digests("python", slow), **sliced)
    bench.measure(name, "rfc8785", lambda: rfc8785_digests(slow), **sliced)
    not_jcs = "not RFC 8785: "
    bench.measure(
        name, "canonicaljson", canonicaljson_digests, **whole, jcs_exact=False, note=not_jcs
    )
    bench.measure(
        name, "orjson sort_keys + hashlib", orjson_digests, **whole, jcs_exact=False, note=not_jcs
    )


# --- journals and event lines (workloads 1 and 4) ---------------------------------------------


def event_schema() -> Any:
    return schemas.schema(EVENT_SCHEMA_ID)


def invalid_variant(event: dict[str, Any], number: int) -> dict[str, Any]:
    """An event every draft-07 validator rejects (no format checker needed to notice)."""
    broken = dict(event)
    if number % 2:
        broken["kind"] = "no_such_kind"
    else:
        broken.pop("kind", None)
    return broken


def event_lines_workload(bench: Bench) -> None:
    """Workload 4: validation of single event lines, every 10th one invalid."""
    name = "4. schema validation of event lines"
    sizes = bench.sizes
    generated, _ = generate_journal(sizes.event_lines, seed=4)
    lines = []
    for number, line in enumerate(generated):
        if number % 10 == 9:
            line = json.dumps(invalid_variant(json.loads(line), number)).encode() + b"\n"
        lines.append(line)
    slow = lines[: sizes.slow_event_lines]
    megabytes = sum(map(len, lines)) / 1e6
    slow_megabytes = sum(map(len, slow)) / 1e6
    bench.begin(name, f"{len(lines)} lines, {megabytes:.1f} MB")
    whole = {"megabytes": megabytes, "items": len(lines)}
    sliced = {
        "megabytes": slow_megabytes,
        "items": len(slow),
        "note": f"{len(slow)} lines",
        "repeat": 1,
    }
    schema = event_schema()

    def validate_json(backend: str, data: list[bytes]) -> Callable[[], list[bool]]:
        def work() -> list[bool]:
            with _backend.selected(backend):
                validator = pf.schema_validator(EVENT_SCHEMA_ID)
                return [validator.validate_json(line).ok for line in data]

        return work

    def rust_is_valid_orjson() -> list[bool]:
        loads = optional_module("orjson", "orjson").loads
        with _backend.selected("rust"):
            validator = pf.schema_validator(EVENT_SCHEMA_ID)
            return [validator.is_valid(loads(line)) for line in lines]

    def jsonschema_rs_orjson() -> list[bool]:
        loads = optional_module("orjson", "orjson").loads
        validator = optional_module("jsonschema_rs", "jsonschema-rs").validator_for(schema)
        return [validator.is_valid(loads(line)) for line in lines]

    def fastjsonschema_orjson() -> list[bool]:
        loads = optional_module("orjson", "orjson").loads
        fastjsonschema = optional_module("fastjsonschema", "fastjsonschema")
        validate = fastjsonschema.compile(schema)
        return [fastjsonschema_verdict(fastjsonschema, validate, loads(line)) for line in lines]

    def python_jsonschema_json() -> list[bool]:
        validator = python_jsonschema_validator(schema)
        return [validator.is_valid(json.loads(line)) for line in slow]

    reference = bench.measure(
        name, RUST + " validate_json(bytes)", validate_json("rust", lines), **whole
    )
    bench.measure(name, RUST + " is_valid(orjson.loads)", rust_is_valid_orjson, **whole)
    bench.measure(name, FALLBACK + " validate_json(bytes)", validate_json("python", slow), **sliced)
    bench.measure(name, "orjson + jsonschema_rs", jsonschema_rs_orjson, **whole)
    bench.measure(name, "orjson + fastjsonschema", fastjsonschema_orjson, **whole)
    bench.measure(name, "json + python-jsonschema", python_jsonschema_json, **sliced)
    if reference.ran and sum(not ok for ok in reference.answer) != len(lines) // 10:
        reference.status = "failed: the invalid lines were not all rejected"


def fastjsonschema_verdict(module: Any, validate: Callable[[Any], Any], instance: Any) -> bool:
    try:
        validate(instance)
    except module.JsonSchemaException:
        return False
    return True


def python_jsonschema_validator(schema: Any) -> Any:
    import jsonschema

    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


# --- workload 1: journal check ----------------------------------------------------------------


RUN_END = b'{"kind":"run_completed"'  # how the generator's runs end (one run at a time)


def whole_runs_head(
    source: Path, into: Path, *, max_lines: int | None = None, max_bytes: int | None = None
) -> int:
    """Copies the longest prefix of ``source`` that ends with a completed run and stays within
    the limits into ``into``; returns its number of lines. The generator writes one run at a
    time, so such a prefix is a complete, valid chained journal: no run left open, every link
    intact."""
    lines = size = kept = 0
    pending: list[bytes] = []
    with source.open("rb") as lines_in, into.open("wb") as out:
        for line in lines_in:
            lines += 1
            size += len(line)
            if (max_lines is not None and lines > max_lines) or (
                max_bytes is not None and size > max_bytes
            ):
                break
            pending.append(line)
            if line.startswith(RUN_END):
                out.writelines(pending)
                pending.clear()
                kept = lines
    if kept == 0:
        raise ValueError(f"{source}: no completed run within the limits")
    return kept


class Journals:
    """One generated chained journal; every journal workload checks a head of it (see
    ``whole_runs_head``), so a run generates journal bytes once (at ~5 MB/s in Python)."""

    def __init__(self, directory: Path, events: int) -> None:
        self.directory = directory
        self.source = directory / "generated.jsonl"
        started = time.perf_counter()
        with self.source.open("wb", buffering=1 << 20) as out:
            write_journal(out, events, seed=1, chain=True)
        seconds = time.perf_counter() - started
        megabytes = self.source.stat().st_size / 1e6
        print(f"generated a {megabytes:.0f} MB chained journal in {seconds:.0f} s", file=sys.stderr)

    def head(
        self, name: str, *, max_lines: int | None = None, max_bytes: int | None = None
    ) -> tuple[Path, int]:
        """(a new file holding a head of the journal, its number of events)."""
        path = self.directory / name
        events = whole_runs_head(self.source, path, max_lines=max_lines, max_bytes=max_bytes)
        return path, events


def chrono_rfc3339(timestamp: str) -> str:
    """chrono's ``to_rfc3339()`` of the instant, for the generated journals' timestamps (UTC,
    microseconds): fraction digits 0, 3 or 6 as chrono's ``AutoSi`` chooses."""
    time = datetime.datetime.fromisoformat(timestamp).astimezone(datetime.timezone.utc)
    micros = time.microsecond
    if micros == 0:
        fraction = ""
    elif micros % 1000 == 0:
        fraction = f".{micros // 1000:03d}"
    else:
        fraction = f".{micros:06d}"
    return f"{time:%Y-%m-%dT%H:%M:%S}{fraction}+00:00"


def car_event_digest(event: dict[str, Any]) -> str:
    """CAR's ``event_digest`` (docs/digests.md) as a user would write it. serde_json's ``Display``
    is ``json.dumps`` with sorted keys except for floats (``5e-5``, not Python's ``5e-05``), so the
    data members are rendered by the fallback's pure-Python port of it, as a user would have to
    write; the agreement check proves the result on the data."""

    def text(name: str) -> str:
        return str(event.get(name) or "")

    data = event.get("data") or {}
    parts = [text("prev_hash"), "\x1e", json.dumps(event["kind"])]
    if any(event.get(name) is not None for name in ("run_id", "client_id", "policy_session_id")):
        parts += ["\x1d", text("run_id"), "\x1f", text("client_id"), "\x1f"]
        parts.append(text("policy_session_id"))
    parts += ["\x1e", text("action_id"), "\x1e", text("proposal_id"), "\x1e"]
    parts.append("\x1f".join(f"{key}={serde_display(data[key])}" for key in sorted(data)))
    parts += ["\x1e", chrono_rfc3339(event["timestamp"])]
    return hashlib.sha256("".join(parts).encode("utf-8")).hexdigest()


def per_line_pipeline(
    loads: Callable[[bytes], Any], is_valid: Callable[[Any], bool]
) -> Callable[[Path], tuple[int, int, int]]:
    """What a user writes without pairling_fast: parse, validate, re-hash each event with CAR's
    ``event_digest`` and compare links. Answer: (events, schema-valid, chain-verified)."""

    def check(path: Path) -> tuple[int, int, int]:
        events = valid = verified = 0
        previous: str | None = None
        with path.open("rb") as lines:
            for line in lines:
                event = loads(line)
                events += 1
                valid += is_valid(event)
                stored = event.get("hash")
                digest = car_event_digest(event)
                linked = previous is None or event.get("prev_hash") == previous
                verified += digest == stored and linked
                previous = stored
        return events, valid, verified

    return check


def hashlib_sha256(path: Path) -> str:
    """The in-process floor: read the file in 1 MiB blocks and hash every byte."""
    hasher = hashlib.sha256()
    with path.open("rb") as source:
        while block := source.read(1 << 20):
            hasher.update(block)
    return hasher.hexdigest()


def journal_verdict(report: Any) -> tuple[int, int, int]:
    stats = report.stats
    invalid_lines = len({f.line for f in report.findings if f.code == "PF101"})
    verified = stats["chain"].get("verified", 0) if stats.get("chain") else 0
    return stats["events"], stats["events"] - invalid_lines, verified


CHILD_CHECK = """
import json, sys, time
import pairling_fast as pf
started = time.perf_counter()
report = pf.check_journal(sys.argv[1])
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "events": report.stats["events"],
                  "chain": report.stats["chain"], "findings": len(report.findings)}))
"""


@dataclasses.dataclass(frozen=True)
class ProcessRun:
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    returncode: int
    stdout: str


def run_process(argv: Sequence[str], env: dict[str, str] | None = None) -> ProcessRun:
    """Wall and CPU seconds, peak RSS, exit status and stdout of one whole child process.

    The RSS comes from ``/usr/bin/time``: a child forked from this (large) Python process starts
    with its parent's high-water mark, which ``wait4``'s ``ru_maxrss`` would report instead. The
    CPU time is what the waited-for children (``time`` and the program) used meanwhile."""
    timer = Path("/usr/bin/time")
    measured = [str(timer), "-f", "%M", *argv] if timer.exists() else list(argv)
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    child = subprocess.run(measured, capture_output=True, env=env, check=False)
    seconds = time.perf_counter() - started
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_seconds = (children_after.ru_utime + children_after.ru_stime) - (
        children_before.ru_utime + children_before.ru_stime
    )
    if child.returncode not in (0, 1):
        raise RuntimeError(f"{argv[0]} exited {child.returncode}: {child.stderr.decode()[-200:]}")
    stderr_lines = child.stderr.decode().strip().splitlines()
    if timer.exists() and stderr_lines and stderr_lines[-1].isdigit():
        peak_rss_mb = int(stderr_lines[-1]) * 1024 / 1e6  # time's %M is in KiB
    else:
        peak_rss_mb = float("nan")
    return ProcessRun(seconds, cpu_seconds, peak_rss_mb, child.returncode, child.stdout.decode())


def rust_process(
    bench: Bench,
    name: str,
    path: Path,
    threads: int,
    megabytes: float,
    items: int,
    contender: str | None = None,
) -> Outcome:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), PAIRLING_FAST_BACKEND="rust")
    default = f"{RUST} check_journal, {threads} thread{'s' if threads > 1 else ''}"
    outcome = Outcome(name, contender or default, megabytes=megabytes, items=items)
    outcome.note = "whole process; time inside it"
    best = float("inf")
    try:
        for _ in range(bench.sizes.repeat):
            run = run_process([sys.executable, "-c", CHILD_CHECK, str(path)], env)
            result = json.loads(run.stdout)
            if result["seconds"] < best:
                best, outcome.peak_rss_mb = result["seconds"], run.peak_rss_mb
        outcome.seconds = best
        outcome.answer = result
    except Exception as error:
        outcome.status = f"failed: {error}"[:160]
    return bench.record(outcome)


def program(name: str) -> str | None:
    """A program of this Python's environment (a venv need not be activated), else on PATH;
    a path is itself."""
    if os.sep in name:
        return name if Path(name).exists() else None
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.exists() else shutil.which(name)


def whole_process(
    bench: Bench,
    name: str,
    contender: str,
    argv: Sequence[str],
    megabytes: float,
    items: int,
    note: str,
    *,
    env: dict[str, str] | None = None,
    repeat: int | None = None,
    answer: Callable[[ProcessRun], Any] | None = None,
) -> Outcome:
    """The best (wall) of ``repeat`` runs of ``argv``, with that run's CPU time and peak RSS;
    ``answer`` turns the run into what the agreement checks compare."""
    outcome = Outcome(name, contender, megabytes=megabytes, items=items, note=note)
    executable = program(argv[0])
    if executable is None:
        outcome.status = f"not installed ({argv[0]})"
        return bench.record(outcome)
    best = float("inf")
    try:
        for _ in range(repeat or bench.sizes.repeat):
            run = run_process([executable, *argv[1:]], env)
            if run.seconds < best:
                best, outcome.cpu_seconds, outcome.peak_rss_mb = (
                    run.seconds,
                    run.cpu_seconds,
                    run.peak_rss_mb,
                )
                outcome.answer = answer(run) if answer else None
        outcome.seconds = best
    except Exception as error:
        outcome.status = f"failed: {error}"[:160]
    return bench.record(outcome)


BASELINES = Path(__file__).with_name("baselines")


@functools.cache
def baseline_programs() -> dict[str, str]:
    """The baselines' programs by row (benches/baselines/), built once per run in its release
    profile (fat LTO, like the wheel); raises NotInstalled without cargo."""
    cargo = shutil.which("cargo")
    if cargo is None:
        raise NotInstalled("cargo, for benches/baselines")
    target = Path(os.environ.get("CARGO_TARGET_DIR") or BASELINES / "target")
    print("building benches/baselines (release)", file=sys.stderr, flush=True)
    build = [
        cargo,
        "build",
        "--release",
        "--quiet",
        "--manifest-path",
        str(BASELINES / "Cargo.toml"),
    ]
    subprocess.run(build, check=True, env=dict(os.environ, CARGO_TARGET_DIR=str(target)))
    release = target / "release"
    return {
        BASELINE_FLOOR: str(release / "journal-floor"),
        BASELINE_STRAIGHTFORWARD: str(release / "journal-straightforward"),
    }


def baseline_rows(
    bench: Bench, name: str, path: Path, events: int, label: str | None = None
) -> None:
    """The two rows every journal row is measured beside (issue #47), whole processes on 2
    threads: the floor (benches/baselines/src/bin/journal-floor.rs) and the straightforward
    design (journal-straightforward.rs). A row fails unless its program saw every event and
    (the straightforward design) verified every digest and link the check verifies."""
    megabytes = path.stat().st_size / 1e6
    env = dict(os.environ, RAYON_NUM_THREADS="2")
    for contender in (BASELINE_FLOOR, BASELINE_STRAIGHTFORWARD):
        row = baseline(contender, label)
        try:
            program = baseline_programs()[contender]
        except NotInstalled as missing:
            bench.record(Outcome(name, row, status=f"not installed ({missing})"))
            continue
        except subprocess.CalledProcessError as error:
            bench.record(
                Outcome(name, row, status=f"failed: cargo build exited {error.returncode}")
            )
            continue

        def every_event(run: ProcessRun) -> tuple[int, int, int]:
            seen, verified = map(int, run.stdout.split()[:2])
            if (seen, verified) != (events, events):
                raise RuntimeError(f"{seen} events, {verified} verified, of {events}")
            return seen, seen, verified

        note = f"{megabytes:.0f} MB; whole process"
        whole_process(
            bench,
            name,
            row,
            [program, str(path)],
            megabytes,
            events,
            note,
            env=env,
            answer=every_event,
        )


def journal_workload(bench: Bench, journals: Journals) -> tuple[Path, int]:
    """Returns the journal it checked and its events (workloads 1c and 5 check it too)."""
    name = "1. journal check (schema + chain + lifecycle)"
    sizes = bench.sizes
    path, events = journals.head("journal.jsonl", max_lines=sizes.journal_events)
    megabytes = path.stat().st_size / 1e6
    bench.begin(name, f"{events} events, {megabytes:.1f} MB")
    slice_path, slice_events = journals.head("slice.jsonl", max_lines=sizes.slow_journal_events)
    slice_megabytes = slice_path.stat().st_size / 1e6
    whole = {"megabytes": megabytes, "items": events}
    sliced = {"megabytes": slice_megabytes, "items": slice_events, "repeat": 1}
    sliced_note = f"{slice_events} events"

    def check(backend: str, source: Path) -> Callable[[], tuple[int, int, int]]:
        def work() -> tuple[int, int, int]:
            with _backend.selected(backend):
                return journal_verdict(pf.check_journal(source))

        return work

    bench.measure(name, RUST + " check_journal", check("rust", path), **whole)
    rust_process(bench, name, path, 1, megabytes, events)
    rust_process(bench, name, path, 2, megabytes, events)
    baseline_rows(bench, name, path, events)
    bench.measure(name, FALLBACK, check("python", slice_path), **sliced, note=sliced_note)
    schema = event_schema()

    def json_python_jsonschema(source: Path) -> tuple[int, int, int]:
        return per_line_pipeline(json.loads, python_jsonschema_validator(schema).is_valid)(source)

    def orjson_jsonschema_rs(source: Path) -> tuple[int, int, int]:
        loads = optional_module("orjson", "orjson").loads
        validator = optional_module("jsonschema_rs", "jsonschema-rs").validator_for(schema)
        return per_line_pipeline(loads, validator.is_valid)(source)

    def orjson_fastjsonschema(source: Path) -> tuple[int, int, int]:
        loads = optional_module("orjson", "orjson").loads
        fastjsonschema = optional_module("fastjsonschema", "fastjsonschema")
        validate = fastjsonschema.compile(schema)
        return per_line_pipeline(
            loads, lambda event: fastjsonschema_verdict(fastjsonschema, validate, event)
        )(source)

    pipelines = {
        "json + python-jsonschema + hashlib": json_python_jsonschema,
        "orjson + jsonschema_rs + hashlib": orjson_jsonschema_rs,
        "orjson + fastjsonschema + hashlib": orjson_fastjsonschema,
    }
    for contender, pipeline in pipelines.items():
        bench.measure(name, contender, lambda p=pipeline: p(slice_path), **sliced, note=sliced_note)

    # check-jsonschema reads JSON/YAML/TOML documents, not JSONL: it gets the same events as one
    # JSON array and a schema whose items are the event schema (schema only, no chain).
    events_array = journals.directory / "events.json"
    with slice_path.open("rb") as lines, events_array.open("w", encoding="utf-8") as out:
        out.write("[" + ",".join(line.decode().strip() for line in lines) + "]")
    array_schema = journals.directory / "events.schema.json"
    array_schema.write_text(
        json.dumps({"$schema": schema["$schema"], "type": "array", "items": schema})
    )
    whole_process(
        bench,
        name,
        "check-jsonschema CLI",
        ["check-jsonschema", "--schemafile", str(array_schema), str(events_array)],
        slice_megabytes,
        slice_events,
        f"{slice_events} events as a JSON array; schema only; incl. startup",
    )
    floor = "reads and hashes every byte"
    openssl = ["openssl", "dgst", "-sha256", str(path)]
    whole_process(bench, name, OPENSSL_FLOOR, openssl, megabytes, events, floor)
    bench.measure(
        name,
        HASHLIB_FLOOR,
        lambda: hashlib_sha256(path),
        megabytes=megabytes,
        items=events,
        note=floor,
    )
    whole_process(
        bench,
        name,
        "sha256sum FILE (portable C, no SHA-NI)",
        ["sha256sum", str(path)],
        megabytes,
        events,
        floor,
    )
    return path, events


def whole_journal_workload(bench: Bench, generated: Path, generated_events: int) -> None:
    """Issue #29's journal target: ``pairling-fast check FILE`` as a whole process, start-up and
    report included, against ``openssl dgst -sha256`` of the same file, on a CAR-shaped chained
    journal (CAR's fixture journal repeated with fresh ids, ``pipeline.write_car_journal``) of
    workload 1's size in events, and on workload 1's generated journal. Each check must find no
    error, or the row fails."""
    name = WHOLE_JOURNAL
    car_shaped = generated.with_name("car-shaped.jsonl")
    car_events = bench.sizes.journal_events
    pipeline_rows_bench.write_car_journal(car_shaped, car_events)
    bench.begin(name, f"CAR-shaped {car_events} events, generated {generated_events} events")
    env = dict(os.environ, PAIRLING_FAST_BACKEND="rust")
    for label, path, events in (
        ("CAR-shaped", car_shaped, car_events),
        ("generated", generated, generated_events),
    ):
        megabytes = path.stat().st_size / 1e6
        check = ["pairling-fast", "check", str(path), "--format", "json"]
        note = f"{megabytes:.0f} MB; whole process"
        whole_process(
            bench,
            name,
            whole_check(label),
            check,
            megabytes,
            events,
            note,
            env=env,
            answer=errorless,
        )
        openssl = ["openssl", "dgst", "-sha256", str(path)]
        whole_process(bench, name, whole_floor(label), openssl, megabytes, events, note)
        baseline_rows(bench, name, path, events, label)
    car_shaped.unlink()


def errorless(run: ProcessRun) -> None:
    """Fails the row (raises) unless the ``check --format json`` run found no error: a check
    cut short must not be timed as a whole one."""
    summary = json.loads(run.stdout)["summary"]
    if run.returncode or summary["errors"] or summary["files"] != 1:
        raise RuntimeError(f"the check did not pass: {summary}")


def incremental_workload(bench: Bench, journal: Path, events: int, size: str) -> None:
    """``check --state`` after ``journal`` grew by 1 %: re-hash the verified 99 %, check the 1 %
    (docs/journals.md), against a full check of the same file; whole processes, same run. Run
    at workload 1's size and at 1 GB: the re-run's fixed costs (the interpreter, the state)
    weigh less as the journal grows, which is the issue's scenario (a large journal, nightly)."""
    name = INCREMENTAL
    directory = journal.parent
    path = directory / "grown.jsonl"
    data = journal.read_bytes()
    cut = data.index(b"\n", len(data) * 99 // 100) + 1
    megabytes = len(data) / 1e6
    bench.begin(name, f"{megabytes:.1f} MB, the last {(len(data) - cut) / 1e6:.1f} MB appended")
    state, recorded = directory / "journal.state", directory / "journal.state.recorded"
    command = [sys.executable, "-m", "pairling_fast", "check", str(path), "--format", "json"]
    env = dict(os.environ, PAIRLING_FAST_BACKEND="rust")
    path.write_bytes(data[:cut])
    run_process([*command, "--state", str(state)], env)
    shutil.copyfile(state, recorded)
    with path.open("ab") as out:
        out.write(data[cut:])
    note = f"appended {(len(data) - cut) / 1e6:.1f} MB to {cut / 1e6:.1f} MB; whole process"
    full_check, re_run = incremental_contenders(size)
    runs = {full_check: [], re_run: ["--state", str(state)]}
    reports: dict[str, Any] = {}
    for contender, extra in runs.items():
        outcome = Outcome(name, contender, megabytes=megabytes, items=events, note=note)
        best = float("inf")
        try:
            for _ in range(bench.sizes.repeat):
                shutil.copyfile(recorded, state)  # each re-run starts from the 99 % state
                run = run_process([*command, *extra], env)
                if run.seconds < best:
                    best, outcome.cpu_seconds, outcome.peak_rss_mb = (
                        run.seconds,
                        run.cpu_seconds,
                        run.peak_rss_mb,
                    )
                reports[contender] = json.loads(run.stdout)["files"][0]
            outcome.seconds = best
        except Exception as error:
            outcome.status = f"failed: {error}"[:160]
        bench.record(outcome)
    full, resumed = (reports.get(contender) for contender in runs)
    if full is not None and resumed is not None:
        resumed["stats"].pop("resumed", None)
        for report in (full, resumed):
            report.pop("seconds", None)
        if full != resumed:
            bench.outcomes[-1].status = "failed: the re-run's report differs from the full check's"
    path.unlink()


def rss_scaling_workload(bench: Bench, journals: Journals) -> tuple[Path, int]:
    """Peak RSS of the Rust check (2 threads) on heads of ~100 MB and ~1 GB of the same journal:
    memory must not follow size (issue #19). Returns the largest head (its path, its events),
    kept for workload 1c; the caller deletes it."""
    name = "1b. peak RSS vs journal size (Rust, 2 threads)"
    bench.begin(name, ", ".join(size_label(size) for size in bench.sizes.rss_journal_bytes))
    largest: tuple[Path, int] | None = None
    for size in sorted(bench.sizes.rss_journal_bytes):
        if largest is not None:
            largest[0].unlink()
        path, events = journals.head(f"journal-{size}.jsonl", max_bytes=size)
        megabytes = path.stat().st_size / 1e6
        contender = rss_contender(size)
        outcome = rust_process(bench, name, path, 2, megabytes, events, contender)
        outcome.note = f"{megabytes:.1f} MB, {events} events; whole process"
        largest = path, events
    assert largest is not None
    return largest


TINY_LINE = b'{"kind":"state_changed","data":{},"timestamp":"2026-01-01T00:00:00Z"}\n'


def tiny_lines_workload(bench: Bench, directory: Path) -> None:
    """The fallback on many tiny lines, timed on a sample and extrapolated to 10 M lines (the
    per-line cost does not depend on the count: the state kept is bounded)."""
    name = "1d. fallback on tiny lines"
    count = bench.sizes.tiny_lines
    bench.begin(name, f"{count} lines")
    path = directory / "tiny.jsonl"
    path.write_bytes(TINY_LINE * count)

    def work() -> tuple[int, int, int]:
        with _backend.selected("python"):
            return journal_verdict(pf.check_journal(path))

    megabytes = path.stat().st_size / 1e6
    outcome = bench.measure(name, FALLBACK, work, megabytes=megabytes, items=count, repeat=1)
    if outcome.seconds:
        projected = outcome.seconds * TINY_TARGET_LINES / count
        outcome.note = f"{count} lines; 10 M lines extrapolated: {projected:.0f} s"
    path.unlink()


# --- workload 3: capability map -----------------------------------------------------------------


def map_workload(bench: Bench, directory: Path) -> None:
    """Workload 3 in process, then 3b as whole processes on that map and on a large one."""
    name = "3. capability-map check"
    sizes = bench.sizes
    text = map_text(sizes.map_bindings)
    megabytes = len(text) / 1e6
    bench.begin(name, f"{sizes.map_bindings} bindings, {megabytes:.1f} MB")
    whole = {"megabytes": megabytes, "items": sizes.map_bindings, "repeat": None}

    def check(backend: str) -> Callable[[], bool]:
        def work() -> bool:
            with _backend.selected(backend):
                return pf.check_map(text).ok

        return work

    def python_jsonschema() -> bool:
        schema = schemas.schema(schemas.MAP_SCHEMA_ID)
        return python_jsonschema_validator(schema).is_valid(json.loads(text))

    bench.measure(name, RUST + " check_map", check("rust"), **whole)
    bench.measure(name, FALLBACK + " check_map", check("python"), **{**whole, "repeat": 1})
    bench.measure(
        name, "json + python-jsonschema (schema only)", python_jsonschema, **{**whole, "repeat": 1}
    )
    medium = directory / "medium-map.json"
    medium.write_bytes(text)
    large = directory / "large-map.json"
    large.write_bytes(map_text(sizes.large_map_bindings))
    name = "3b. capability-map check, whole processes"
    bench.begin(name, f"{medium.stat().st_size / 1e6:.1f} and {large.stat().st_size / 1e6:.1f} MB")
    schema_file = Path(str(schema_files() / schemas.MAP_SCHEMA_FILE))
    env = dict(os.environ, PAIRLING_FAST_BACKEND="rust")
    for label, path, bindings, repeat in (
        ("medium map", medium, sizes.map_bindings, None),
        ("large map", large, sizes.large_map_bindings, 1),  # check-jsonschema: minutes a run
    ):
        map_megabytes = path.stat().st_size / 1e6
        note = f"{bindings} bindings, {map_megabytes:.1f} MB"
        runs = {
            f"{RUST} pairling-fast check MAP, {label}": ["pairling-fast", "check", str(path)],
            f"check-jsonschema --schemafile, {label}": [
                "check-jsonschema",
                "--schemafile",
                str(schema_file),
                str(path),
            ],
        }
        for contender, argv in runs.items():
            whole_process(
                bench,
                name,
                contender,
                argv,
                map_megabytes,
                bindings,
                note + ("" if contender.startswith(RUST) else "; schema only"),
                env=env,
                repeat=repeat,
                answer=lambda run: run.returncode == 0,  # the map is valid
            )
        path.unlink()


def map_text(bindings: int) -> bytes:
    """A generated valid map (``generate map --bindings N --seed 1``) as its file's bytes."""
    with _backend.selected("rust"):
        return maps.dump_map(generate_map(bindings, seed=1)).encode()


# --- workload 5: Dask cluster -------------------------------------------------------------------


CLUSTER_WORKERS = 2


def cluster_workload(bench: Bench, journal: Path, events: int) -> None:
    """benches/cluster.py's measurement on a third of workload 1's journal and on all of it:
    one process vs a 2-worker LocalCluster (best of ``repeat``, alternating), then the per-line
    and the ordered stage in this process over the same chunks."""
    name = f"5. Dask LocalCluster({CLUSTER_WORKERS}x1) vs one process"
    sizes = bench.sizes
    bench.begin(name, f"heads of {journal.stat().st_size / 1e6:.1f} MB")
    third = journal.with_name("cluster-third.jsonl")
    whole_runs_head(journal, third, max_lines=events // 3)
    try:
        with cluster.local_cluster(CLUSTER_WORKERS) as client:
            runs = [
                cluster.measure(str(path), client, sizes.cluster_chunk_bytes, sizes.repeat)
                for path in (third, journal)
            ]
    except ImportError as missing:
        bench.record(Outcome(name, "all contenders", status=f"not installed ({missing.name})"))
        return
    except Exception as error:
        bench.record(Outcome(name, "all contenders", status=f"failed: {error}"[:160]))
        return
    finally:
        third.unlink()
    for run in runs:
        size = cluster.megabytes_label(run.megabytes)
        common = {"megabytes": run.megabytes, "items": run.events}
        shipped = (
            f"ships {run.shipped_per_event:.0f} B/event"
            f" ({run.shipped_bytes / (run.megabytes * 1e6):.0%} of the input)"
        )
        rows = (
            (CLUSTER_SINGLE, run.single_seconds, ""),
            (CLUSTER_LOCAL, run.cluster_seconds, shipped),
            (CLUSTER_PER_LINE, run.per_line_seconds, "a worker's work"),
            (CLUSTER_ORDERED, run.ordered_seconds, "the driver's ceiling"),
        )
        for contender, seconds, note in rows:
            outcome = Outcome(name, f"{contender}, {size}", seconds=seconds, note=note, **common)
            bench.record(outcome)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()}, Python {platform.python_version()}"


def sizes_of(args: argparse.Namespace) -> Sizes:
    sizes = QUICK if args.quick else FULL
    if args.repeat:
        sizes = dataclasses.replace(sizes, repeat=args.repeat)
    if args.journal_events:
        sizes = dataclasses.replace(sizes, journal_events=args.journal_events)
    return sizes


# --- `import pairling_fast` in a pipeline (issue #29; benches/pipeline.py) ---------------------

PIPELINE_EVENTS = {True: 2_000, False: 200_000}


def pipeline_workload(sizes: Sizes) -> list[pipeline_rows_bench.Row]:
    """Issue #29's rows, each against its anchor, on CAR's fixture journal with fresh ids."""
    events = PIPELINE_EVENTS[sizes is QUICK or sizes.journal_events < FULL.journal_events]
    print(f"\n== 6. pipelines: {events} CAR-shaped events, load {os.getloadavg()}", flush=True)
    return pipeline_rows_bench.pipeline_rows(events, max(sizes.repeat, 2))


def print_pipeline_targets(rows: list[pipeline_rows_bench.Row]) -> None:
    print("\nPipeline targets (issue #29; ratio = anchor time / our time):")
    for row in rows:
        print(f"- {row.line()}")


def pipeline_json(rows: list[pipeline_rows_bench.Row]) -> list[dict[str, Any]]:
    return [
        {**dataclasses.asdict(row), "ratio": row.ratio, "verdict": "met" if row.met else "MISSED"}
        for row in rows
    ]


def pipeline_report(sizes: Sizes, json_path: str | None) -> int:
    load_before = os.getloadavg()
    rows = pipeline_workload(sizes)
    load_after = os.getloadavg()
    print_pipeline_targets(rows)
    print(f"load average (1, 5, 15 min): before {load_before}, after {load_after}")
    if json_path:
        document = {
            "machine": machine(),
            "load_average": {"before": load_before, "after": load_after},
            "pipeline": pipeline_json(rows),
        }
        Path(json_path).write_text(json.dumps(document, indent=2))
    return 0


def compile_package() -> None:
    """Writes the package's bytecode, as installing a wheel does. Under PYTHONDONTWRITEBYTECODE=1
    an editable install compiles every module it imports at every start, which an installed
    user never pays: 0.035 s more CPU for `import pairling_fast.cli` (benches/RESULTS.md)."""
    compileall.compile_dir(Path(pf.__file__).parent, quiet=1)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny workloads: the CI smoke")
    parser.add_argument("--json", metavar="OUT", help="also write the outcomes as JSON")
    parser.add_argument("--repeat", type=int, help="runs per contender (best is kept)")
    parser.add_argument(
        "--no-rss-scaling",
        dest="rss_scaling",
        action="store_false",
        help="skip workload 1b (peak RSS at 100 MB and 1 GB), whose 1 GB journal takes minutes",
    )
    parser.add_argument(
        "--journal-only", action="store_true", help="the journal workloads (1 to 1e) only"
    )
    parser.add_argument("--journal-events", type=int, metavar="N", help="events in workload 1")
    parser.add_argument(
        "--pipeline-only",
        action="store_true",
        help="issue #29's rows only: `import pairling_fast` in a pipeline (benches/pipeline.py)",
    )
    args = parser.parse_args(argv)
    compile_package()
    if args.pipeline_only:
        return pipeline_report(sizes_of(args), args.json)
    sizes = sizes_of(args)
    load_before = os.getloadavg()
    build = pf.__build__
    if build.get("debug"):
        print("warning: debug build of the core; use `maturin develop --release`", file=sys.stderr)
    bench = Bench(sizes)
    with tempfile.TemporaryDirectory(prefix="pf-bench-") as scratch:
        directory = Path(scratch)
        events_needed = max(sizes.journal_events, sizes.slow_journal_events)
        if args.rss_scaling:
            # 2 % over, so that the head cut at the larger size's bytes is full.
            largest = sizes.rss_journal_bytes[1]
            events_needed = max(events_needed, largest * 102 // 100 // cluster.EVENT_BYTES)
        journals = Journals(directory, events_needed)
        journal, events = journal_workload(bench, journals)
        whole_journal_workload(bench, journal, events)
        incremental_workload(bench, journal, events, f"{journal.stat().st_size / 1e6:.3g} MB")
        if args.rss_scaling:
            big_journal, big_events = rss_scaling_workload(bench, journals)
            big_size = size_label(max(sizes.rss_journal_bytes))
            incremental_workload(bench, big_journal, big_events, big_size)
            big_journal.unlink()
        journals.source.unlink()
        tiny_lines_workload(bench, directory)
        if not args.journal_only:
            digest_workload(bench)
            map_workload(bench, directory)
            event_lines_workload(bench)
            pipeline_rows = pipeline_workload(sizes)
            # Last: its worker processes must not share the cores with another workload.
            cluster_workload(bench, journal, events)
    load = {
        "before": load_before,
        "after": os.getloadavg(),
        "at_workload_start": bench.load_at_start,
    }
    bench.outcomes.sort(key=lambda o: o.workload)
    problems = disagreements(bench.outcomes)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"\n{date}; {machine()}; pairling_fast {build.get('version')}")
    print(f"load average (1, 5, 15 min): before {load_before}, after {load['after']}\n")
    print(format_table(bench.outcomes, bench.load_at_start))
    print("\nTargets:")
    measured_targets = targets(bench.outcomes, sizes)
    for target in measured_targets:
        print(target.line())
    if not args.journal_only:
        print_pipeline_targets(pipeline_rows)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "date": date,
                    "machine": machine(),
                    "load_average": load,
                    "quick": args.quick,
                    "outcomes": [
                        {k: v for k, v in dataclasses.asdict(o).items() if k != "answer"}
                        for o in bench.outcomes
                    ],
                    "targets": [
                        {**dataclasses.asdict(t), "verdict": t.verdict} for t in measured_targets
                    ],
                    "disagreements": problems,
                    "pipeline": [] if args.journal_only else pipeline_json(pipeline_rows),
                },
                indent=2,
            )
        )
    for problem in problems:
        print(f"DISAGREEMENT: {problem}", file=sys.stderr)
    failed = [o for o in bench.outcomes if o.status.startswith("failed")]
    for outcome in failed:
        print(f"FAILED: {outcome.workload}: {outcome.contender}: {outcome.status}", file=sys.stderr)
    if args.quick and (problems or failed):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
