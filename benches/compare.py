"""pairling_fast against every peer, on the same generated data, in one run.

    python benches/compare.py [--quick] [--json OUT] [--rss-scaling] [--journal-only]
                              [--journal-events N]

Workloads (deterministic: fixed seeds, generated in the run):
1. journal check of a chained CAR journal (~1M events, ~300 MB): the Rust core on 1 and 2 threads
   (whole processes, ``RAYON_NUM_THREADS``), the fallback, the per-line pipelines a user would
   write instead (parse + schema + CAR's ``event_digest`` with ``hashlib`` for the chain),
   ``check-jsonschema`` (whole process) and the floor: hashing every byte of the file with
   ``openssl dgst -sha256`` (SHA-NI where the CPU has it) and Python's ``hashlib``, plus coreutils
   ``sha256sum`` (portable C, no SHA-NI) for reference;
2. sha256 of the RFC 8785 form of 100k varied objects;
3. check of a 10k-binding capability map;
4. schema validation of journal event lines, from bytes and from parsed objects.

Slow contenders run on a slice of the workload (stated in the table); throughput is per byte
and per item, so a slice measures the same rate. Timings are the best of ``--repeat`` runs and
every ratio is taken within this run (the machine is shared: compare ratios, not times). The
load average is printed (and written to ``--json``) before and after the run.

A contender whose package is missing is listed as "not installed", never dropped. ``--quick``
is the CI smoke: tiny workloads, one repeat, and it fails unless every installed contender ran
and the results agree (equal digests among the JCS-exact contenders, equal validity verdicts,
equal journal verdicts).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import hashlib
import importlib
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable

import pairling_fast as pf
from pairling_fast import _backend, schemas
from pairling_fast._fallback.car_event import display as serde_display

EVENT_SCHEMA_ID = "car.journal.event"
RUST = "pairling_fast rust"
FALLBACK = "pairling_fast fallback"
OPENSSL_FLOOR = "openssl dgst -sha256 FILE (floor)"
HASHLIB_FLOOR = "hashlib.sha256 of FILE (floor)"


@dataclasses.dataclass(frozen=True)
class Sizes:
    digest_objects: int
    event_lines: int
    journal_events: int
    map_bindings: int
    # Slices for the contenders that would take minutes on the whole workload.
    slow_digest_objects: int
    slow_event_lines: int
    slow_journal_events: int
    whole_process_events: int
    # Tiny event lines for the fallback (issue #19: 10 M of them must take minutes, not hours).
    tiny_lines: int
    repeat: int


FULL = Sizes(
    digest_objects=100_000,
    event_lines=20_000,
    journal_events=1_000_000,
    map_bindings=10_000,
    slow_digest_objects=20_000,
    slow_event_lines=5_000,
    slow_journal_events=10_000,
    whole_process_events=10_000,
    tiny_lines=1_000_000,
    repeat=3,
)
QUICK = Sizes(
    digest_objects=2_000,
    event_lines=500,
    journal_events=2_000,
    map_bindings=200,
    slow_digest_objects=500,
    slow_event_lines=200,
    slow_journal_events=300,
    whole_process_events=200,
    tiny_lines=2_000,
    repeat=1,
)


@dataclasses.dataclass
class Outcome:
    workload: str
    contender: str
    status: str = "ok"  # "ok", "not installed (<package>)", "failed: …", "skipped: …"
    seconds: float | None = None
    megabytes: float = 0.0
    items: int = 0
    peak_rss_mb: float | None = None
    note: str = ""
    # What the contender computed, for the agreement checks (not printed).
    answer: Any = dataclasses.field(default=None, repr=False)
    jcs_exact: bool = True

    @property
    def ran(self) -> bool:
        return self.status == "ok"

    @property
    def megabytes_per_second(self) -> float | None:
        return self.megabytes / self.seconds if self.ran and self.seconds else None

    @property
    def items_per_second(self) -> float | None:
        return self.items / self.seconds if self.ran and self.seconds else None


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
    print(f"{name}: {len(objects)} objects, {megabytes:.1f} MB canonical", file=sys.stderr)
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


def journal_generator() -> Any:
    """``pairling_fast.generate.journal`` (journal branch), or NotInstalled before it is merged."""
    try:
        return importlib.import_module("pairling_fast.generate.journal")
    except ImportError as missing:
        raise NotInstalled("pairling_fast.generate.journal: journal branch not merged") from missing


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
    try:
        generated, _ = journal_generator().generate_journal(sizes.event_lines, seed=4)
    except NotInstalled as missing:
        bench.record(Outcome(name, "all contenders", status=f"skipped: {missing}"))
        return
    lines = []
    for number, line in enumerate(generated):
        if number % 10 == 9:
            line = json.dumps(invalid_variant(json.loads(line), number)).encode() + b"\n"
        lines.append(line)
    slow = lines[: sizes.slow_event_lines]
    megabytes = sum(map(len, lines)) / 1e6
    slow_megabytes = sum(map(len, slow)) / 1e6
    print(f"{name}: {len(lines)} lines, {megabytes:.1f} MB", file=sys.stderr)
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


def write_chained_journal(path: Path, events: int, seed: int) -> int:
    """Writes a chained, defect-free journal; returns its number of lines."""
    generator = journal_generator()
    with path.open("wb") as out:
        generator.write_journal(out, events, seed=seed, chain=True)
    with path.open("rb") as written:
        return sum(1 for _ in written)


def head_of(path: Path, lines: int, into: Path) -> Path:
    with path.open("rb") as source, into.open("wb") as out:
        for number, line in enumerate(source):
            if number >= lines:
                break
            out.write(line)
    return into


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


def run_process(argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, stdout) of one whole child process.

    The RSS comes from ``/usr/bin/time``: a child forked from this (large) Python process starts
    with its parent's high-water mark, which ``wait4``'s ``ru_maxrss`` would report instead."""
    timer = Path("/usr/bin/time")
    measured = [str(timer), "-f", "%M", *argv] if timer.exists() else list(argv)
    started = time.perf_counter()
    child = subprocess.run(measured, capture_output=True, env=env, check=False)
    seconds = time.perf_counter() - started
    if child.returncode not in (0, 1):
        raise RuntimeError(f"{argv[0]} exited {child.returncode}: {child.stderr.decode()[-200:]}")
    stderr_lines = child.stderr.decode().strip().splitlines()
    if timer.exists() and stderr_lines and stderr_lines[-1].isdigit():
        peak_rss_mb = int(stderr_lines[-1]) / 1024
    else:
        peak_rss_mb = float("nan")
    return seconds, peak_rss_mb, child.stdout.decode()


def rust_process(
    bench: Bench, name: str, path: Path, threads: int, megabytes: float, items: int
) -> Outcome:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), PAIRLING_FAST_BACKEND="rust")
    outcome = Outcome(name, f"{RUST} check_journal, {threads} thread{'s' if threads > 1 else ''}")
    outcome.megabytes, outcome.items = megabytes, items
    outcome.note = "whole process; time inside it"
    best = float("inf")
    try:
        for _ in range(bench.sizes.repeat):
            _, rss, stdout = run_process([sys.executable, "-c", CHILD_CHECK, str(path)], env)
            result = json.loads(stdout)
            if result["seconds"] < best:
                best, outcome.peak_rss_mb = result["seconds"], rss
        outcome.seconds = best
        outcome.answer = result
    except Exception as error:
        outcome.status = f"failed: {error}"[:160]
    return bench.record(outcome)


def program(name: str) -> str | None:
    """A program of this Python's environment (a venv need not be activated), else on PATH."""
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
) -> Outcome:
    outcome = Outcome(name, contender, megabytes=megabytes, items=items, note=note)
    executable = program(argv[0])
    if executable is None:
        outcome.status = f"not installed ({argv[0]})"
        return bench.record(outcome)
    best = float("inf")
    try:
        for _ in range(bench.sizes.repeat):
            seconds, rss, _ = run_process([executable, *argv[1:]])
            if seconds < best:
                best, outcome.peak_rss_mb = seconds, rss
        outcome.seconds = best
    except Exception as error:
        outcome.status = f"failed: {error}"[:160]
    return bench.record(outcome)


def journal_workload(bench: Bench, directory: Path) -> None:
    name = "1. journal check (schema + chain + lifecycle)"
    sizes = bench.sizes
    path = directory / "journal.jsonl"
    try:
        events = write_chained_journal(path, sizes.journal_events, seed=1)
    except NotInstalled as missing:
        bench.record(Outcome(name, "all contenders", status=f"skipped: {missing}"))
        return
    megabytes = path.stat().st_size / 1e6
    print(f"{name}: {events} events, {megabytes:.1f} MB", file=sys.stderr)
    slice_path = head_of(path, sizes.slow_journal_events, directory / "slice.jsonl")
    slice_megabytes = slice_path.stat().st_size / 1e6
    whole = {"megabytes": megabytes, "items": events}
    sliced = {"megabytes": slice_megabytes, "items": sizes.slow_journal_events, "repeat": 1}
    sliced_note = f"{sizes.slow_journal_events} events"

    def check(backend: str, source: Path) -> Callable[[], tuple[int, int, int]]:
        def work() -> tuple[int, int, int]:
            with _backend.selected(backend):
                return journal_verdict(pf.check_journal(source))

        return work

    bench.measure(name, RUST + " check_journal", check("rust", path), **whole)
    rust_process(bench, name, path, 1, megabytes, events)
    rust_process(bench, name, path, 2, megabytes, events)
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
    events_array = directory / "events.json"
    with slice_path.open("rb") as lines, events_array.open("w", encoding="utf-8") as out:
        out.write("[" + ",".join(line.decode().strip() for line in lines) + "]")
    array_schema = directory / "events.schema.json"
    array_schema.write_text(
        json.dumps({"$schema": schema["$schema"], "type": "array", "items": schema})
    )
    whole_process(
        bench,
        name,
        "check-jsonschema CLI",
        ["check-jsonschema", "--schemafile", str(array_schema), str(events_array)],
        slice_megabytes,
        sizes.slow_journal_events,
        f"{sizes.slow_journal_events} events as a JSON array; schema only; incl. startup",
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


def incremental_workload(bench: Bench, directory: Path) -> None:
    """``check --state`` after a journal grew by 1 %: re-hash the verified 99 %, check the 1 %
    (docs/journals.md), against a full check of the same file; whole processes, same run."""
    name = "1c. journal re-check after a 1% append (check --state)"
    path = directory / "grown.jsonl"
    try:
        events = write_chained_journal(path, bench.sizes.journal_events, seed=3)
    except NotInstalled as missing:
        bench.record(Outcome(name, "all contenders", status=f"skipped: {missing}"))
        return
    data = path.read_bytes()
    cut = data.index(b"\n", len(data) * 99 // 100) + 1
    megabytes = len(data) / 1e6
    state, recorded = directory / "journal.state", directory / "journal.state.recorded"
    command = [sys.executable, "-m", "pairling_fast", "check", str(path), "--format", "json"]
    env = dict(os.environ, PAIRLING_FAST_BACKEND="rust")
    path.write_bytes(data[:cut])
    run_process([*command, "--state", str(state)], env)
    shutil.copyfile(state, recorded)
    with path.open("ab") as out:
        out.write(data[cut:])
    note = f"appended {(len(data) - cut) / 1e6:.1f} MB to {cut / 1e6:.1f} MB; whole process"
    runs = {
        f"{RUST} check, full": [],
        f"{RUST} check --state, re-run": ["--state", str(state)],
    }
    reports: dict[str, Any] = {}
    for contender, extra in runs.items():
        outcome = Outcome(name, contender, megabytes=megabytes, items=events, note=note)
        best = float("inf")
        try:
            for _ in range(bench.sizes.repeat):
                shutil.copyfile(recorded, state)  # each re-run starts from the 99 % state
                seconds, rss, stdout = run_process([*command, *extra], env)
                if seconds < best:
                    best, outcome.peak_rss_mb = seconds, rss
                reports[contender] = json.loads(stdout)["files"][0]
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


def rss_scaling(bench: Bench, directory: Path) -> None:
    """Peak RSS of the Rust check on a 100 MB and a 1 GB journal: memory must not follow size."""
    name = "1b. peak RSS vs journal size (Rust, 2 threads)"
    for target_mb in (100, 1000):
        path = directory / f"journal-{target_mb}mb.jsonl"
        try:
            events = write_chained_journal(path, target_mb * 1_000_000 // 310, seed=7)
        except NotInstalled as missing:
            bench.record(Outcome(name, "all contenders", status=f"skipped: {missing}"))
            return
        megabytes = path.stat().st_size / 1e6
        outcome = rust_process(bench, name, path, 2, megabytes, events)
        outcome.contender = f"{RUST} check_journal, {megabytes:.0f} MB"
        path.unlink()


TINY_LINE = b'{"kind":"state_changed","data":{},"timestamp":"2026-01-01T00:00:00Z"}\n'
TINY_TARGET_LINES = 10_000_000
TINY_TARGET_SECONDS = 600.0


def tiny_lines_workload(bench: Bench, directory: Path) -> None:
    """The fallback on many tiny lines, timed on a sample and extrapolated to 10 M lines (the
    per-line cost does not depend on the count: the state kept is bounded)."""
    name = "1d. fallback on tiny lines"
    count = bench.sizes.tiny_lines
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


def map_workload(bench: Bench) -> None:
    name = "3. capability-map check"
    sizes = bench.sizes
    try:
        generate_map = importlib.import_module("pairling_fast.generate.map").generate_map
        maps = importlib.import_module("pairling_fast.maps")
    except ImportError:
        bench.record(Outcome(name, "all contenders", status="skipped: maps branch not merged"))
        return
    with _backend.selected("rust"):
        document = generate_map(sizes.map_bindings, seed=1)
    text = maps.dump_map(document).encode()
    megabytes = len(text) / 1e6
    print(f"{name}: {sizes.map_bindings} bindings, {megabytes:.1f} MB", file=sys.stderr)
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


# --- report -------------------------------------------------------------------------------------


def reference_of(outcomes: list[Outcome]) -> Outcome | None:
    for outcome in outcomes:
        if outcome.contender.startswith(RUST) and outcome.ran:
            return outcome
    return None


def format_table(outcomes: list[Outcome]) -> str:
    rows = ["| contender | MB/s | items/s | pairling_fast-rust is x faster | peak RSS | note |"]
    rows.append("|---|---:|---:|---:|---:|---|")
    workload = None
    for outcome in outcomes:
        if outcome.workload != workload:
            workload = outcome.workload
            rows.append(f"| **{workload}** | | | | | |")
            reference = reference_of([o for o in outcomes if o.workload == workload])
        if not outcome.ran:
            rows.append(f"| {outcome.contender} | — | — | — | — | {outcome.status} |")
            continue
        speed_up = ""
        if reference is not None and reference.items_per_second and outcome.items_per_second:
            speed_up = f"{reference.items_per_second / outcome.items_per_second:.2f}x"
        rss = f"{outcome.peak_rss_mb:.0f} MB" if outcome.peak_rss_mb is not None else "in process"
        rows.append(
            f"| {outcome.contender} | {outcome.megabytes_per_second:,.1f} |"
            f" {outcome.items_per_second:,.0f} | {speed_up} | {rss} | {outcome.note} |"
        )
    return "\n".join(rows)


def throughput(outcomes: list[Outcome], workload_prefix: str, contender: str) -> float | None:
    for outcome in outcomes:
        if outcome.workload.startswith(workload_prefix) and outcome.contender == contender:
            return outcome.megabytes_per_second
    return None


@dataclasses.dataclass
class Target:
    text: str
    measured: float | None
    goal: float

    def line(self) -> str:
        if self.measured is None:
            return f"- {self.text}: not measured"
        verdict = "met" if self.measured >= self.goal else "MISSED"
        return f"- {self.text}: {verdict} ({self.measured:.2f}x, target ≥ {self.goal}x)"


def ratio(top: float | None, bottom: float | None) -> float | None:
    return top / bottom if top and bottom else None


def targets(outcomes: list[Outcome]) -> list[Target]:
    def rate(prefix: str, contender: str) -> float | None:
        return throughput(outcomes, prefix, contender)

    one = rate("1.", f"{RUST} check_journal, 1 thread")
    two = rate("1.", f"{RUST} check_journal, 2 threads")
    pipelines = [
        rate("1.", name)
        for name in ("orjson + jsonschema_rs + hashlib", "orjson + fastjsonschema + hashlib")
    ]
    fastest_pipeline = max((p for p in pipelines if p), default=None)
    tiny = next((o for o in outcomes if o.workload.startswith("1d.") and o.seconds), None)
    # As a ratio like the others: the time allowed over the extrapolated time.
    tiny_margin = (
        TINY_TARGET_SECONDS / (tiny.seconds * TINY_TARGET_LINES / tiny.items) if tiny else None
    )
    # Issue #19's journal targets: the floor is hashing the same bytes.
    return [
        Target(
            "journal (2 threads) ≥ 0.5x openssl dgst -sha256",
            ratio(two, rate("1.", OPENSSL_FLOOR)),
            0.5,
        ),
        Target("journal 1 → 2 threads ≥ 1.8x", ratio(two, one), 1.8),
        Target(
            "journal ≥ 10x the fastest per-line Python pipeline", ratio(two, fastest_pipeline), 10
        ),
        Target(
            "fallback: 10 M tiny lines within 600 s (600 s / extrapolated time)", tiny_margin, 1
        ),
        # Work proportional to new data: a 1 % append should cost far less than a full check.
        Target(
            "journal re-check after a 1% append (--state) ≥ 10x the full check",
            ratio(rate("1c.", f"{RUST} check --state, re-run"), rate("1c.", f"{RUST} check, full")),
            10,
        ),
        Target("digest ≥ 20x rfc8785", ratio(rate("2.", RUST), rate("2.", "rfc8785")), 20),
        Target(
            "digest no slower than orjson sort_keys + hashlib",
            ratio(rate("2.", RUST), rate("2.", "orjson sort_keys + hashlib")),
            1,
        ),
    ]


def disagreements(outcomes: list[Outcome]) -> list[str]:
    """Where contenders that must agree did not; notes (not failures) for the non-JCS ones."""
    problems = []
    by_workload: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_workload.setdefault(outcome.workload, []).append(outcome)
    for workload, group in by_workload.items():
        ran = [o for o in group if o.ran and o.answer is not None]
        reference = reference_of(ran)
        if reference is None:
            continue
        for outcome in ran:
            # The floor hashes the file: nothing to agree on.
            if (
                outcome is reference
                or "thread" in outcome.contender
                or "floor" in outcome.contender
            ):
                continue
            mine, theirs = reference.answer, outcome.answer
            if isinstance(theirs, list):
                mine = mine[: len(theirs)]
                differing = sum(a != b for a, b in zip(mine, theirs))
                if not outcome.jcs_exact:
                    outcome.note += f"{differing} of {len(theirs)} digests differ"
                elif differing:
                    problems.append(f"{workload}: {outcome.contender}: {differing} answers differ")
            elif workload.startswith("1.") and isinstance(theirs, tuple):
                if theirs[1:] != (theirs[0], theirs[0]):
                    problems.append(f"{workload}: {outcome.contender}: {theirs} is not all valid")
            elif mine != theirs:
                problems.append(f"{workload}: {outcome.contender}: {theirs!r} != {mine!r}")
        for outcome in group:
            if "thread" in outcome.contender and outcome.ran:
                chain = outcome.answer.get("chain") or {}
                if chain.get("verified") != outcome.items:
                    problems.append(f"{workload}: {outcome.contender}: chain {chain}")
    return problems


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()}, Python {platform.python_version()}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny workloads: the CI smoke")
    parser.add_argument("--json", metavar="OUT", help="also write the outcomes as JSON")
    parser.add_argument("--repeat", type=int, help="runs per contender (best is kept)")
    parser.add_argument(
        "--rss-scaling", action="store_true", help="also check 100 MB and 1 GB journals for RSS"
    )
    parser.add_argument("--journal-only", action="store_true", help="workload 1 (and 1b) only")
    parser.add_argument("--journal-events", type=int, metavar="N", help="events in workload 1")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.repeat:
        sizes = dataclasses.replace(sizes, repeat=args.repeat)
    if args.journal_events:
        sizes = dataclasses.replace(sizes, journal_events=args.journal_events)
    load_before = os.getloadavg()
    build = pf.__build__
    if build.get("debug"):
        print("warning: debug build of the core; use `maturin develop --release`", file=sys.stderr)
    bench = Bench(sizes)
    with tempfile.TemporaryDirectory(prefix="pf-bench-") as scratch:
        directory = Path(scratch)
        journal_workload(bench, directory)
        incremental_workload(bench, directory)
        if args.rss_scaling:
            rss_scaling(bench, directory)
        tiny_lines_workload(bench, directory)
    if not args.journal_only:
        digest_workload(bench)
        map_workload(bench)
        event_lines_workload(bench)
    load = {"before": load_before, "after": os.getloadavg()}
    bench.outcomes.sort(key=lambda o: o.workload)
    problems = disagreements(bench.outcomes)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"\n{date}; {machine()}; pairling_fast {build.get('version')}")
    print(f"load average (1, 5, 15 min): before {load_before}, after {load['after']}\n")
    print(format_table(bench.outcomes))
    print("\nTargets:")
    for target in targets(bench.outcomes):
        print(target.line())
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
                    "targets": [dataclasses.asdict(t) for t in targets(bench.outcomes)],
                    "disagreements": problems,
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
