"""Journals against CAR's own code (car-eventlog 0.58.0 via ``interop/car-oracle``), both ways.

- every journal CAR's ``EventLog`` writes (plain, chained, partially chained, run-bound,
  retention-compacted) verifies clean, with CAR's count of verified events;
- every journal pairling_fast writes (``JournalWriter``, ``chain_journal``, the generator, the
  bundled example) loads in CAR's ``EventLog::load_read_only``;
- seeded random tamperings (edit, delete, swap, insert, truncate): our first error is on the line
  where CAR's loader stops, and where CAR loads the journal we find no error;
- a corpus of lines at the edges of what CAR reads: ``profile="car-compatible"`` accepts exactly
  the lines CAR's loader accepts;
- serde_json's rendering of values and chrono's of timestamps, as CAR hashes them, reproduced.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import car_oracle
import pytest

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast._fallback.journal import car_event
from pairling_fast.generate.journal import generate_journal
from pairling_fast.journal import event_kinds

TAMPERINGS_PER_JOURNAL = 60
ORACLE_CAR_VERSION = "0.58.0"  # interop/car-oracle/Cargo.toml: car-eventlog =0.58.0


def check(path: Path, profile: str = "strict", lifecycle: bool = False) -> pf.Report:
    return pf.check_journal(path, lifecycle=lifecycle, profile=profile, max_findings=None)


@pytest.fixture(scope="module")
def car_journals(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return car_oracle.write(tmp_path_factory.mktemp("car-written"))


def test_car_writes_every_kind_of_its_release_schema(car_journals: list[Path]) -> None:
    plain = next(p for p in car_journals if p.name == "plain.jsonl")
    kinds = {json.loads(line)["kind"] for line in plain.read_bytes().splitlines()}
    assert kinds == set(event_kinds(ORACLE_CAR_VERSION))
    # The default (newest) schema only adds kinds, so a journal of the oracle's release fits it.
    assert kinds < set(event_kinds())


def test_every_journal_car_writes_verifies_clean(
    backend: _backend.Engine, car_journals: list[Path]
) -> None:
    verdicts = car_oracle.load(car_journals)
    assert len(car_journals) >= 6
    for path, verdict in zip(car_journals, verdicts, strict=True):
        assert verdict["ok"], verdict
        report = check(path)
        assert report.findings == [], (path.name, report.findings[:3])
        assert report.stats["chain"] == verdict["chain"], path.name
        assert report.stats["events"] == verdict["events"]
        car_compatible = check(path, profile="car-compatible")
        assert car_compatible.findings == [], (path.name, car_compatible.findings[:3])


def test_every_value_is_rendered_as_car_hashes_it(car_journals: list[Path]) -> None:
    """The fallback's serde_json Display and chrono to_rfc3339, member by member (the Rust core
    calls serde_json and chrono themselves; its digests are checked through the chains)."""
    compared = 0
    for path in car_journals:
        lines = path.read_bytes().splitlines(keepends=True)
        for line, parsed in zip(lines, car_oracle.parse(path), strict=False):
            event = car_event.parse(line)
            assert event.timestamp is not None
            assert car_event.timestamp_text(event.timestamp) == parsed["timestamp"]
            ours = [[key, car_event.display(event.data[key])] for key in sorted(event.data)]
            assert ours == parsed["data"]
            compared += 1
    assert compared > 800


def awkward_events() -> list[dict[str, Any]]:
    values: list[Any] = [
        1e20,
        1e21,
        1e15,
        1e16,
        0.1,
        1e-5,
        1e-7,
        -0.0,
        1.0,
        5e-324,
        1.7976931348623157e308,
        2**64 - 1,
        -(2**63),
        123456789.125,
        'quote " backslash \\ / \n \t \x07 \x7f é ☃ 😀 \u2028',
        {"z": 1, "a": {"y": [3, 2], "b": 0.5}, "\U0001f600": 1, "\uff61": 2, "A": 3},
        [{"b": 1, "a": 2}, [], {}, ""],
    ]
    events = []
    for i, value in enumerate(values):
        events.append(
            {
                "kind": "state_changed",
                "action_id": f"a{i}",
                "data": {"value": value, "é": i, "Z": [value]},
                "timestamp": f"2026-01-01T00:00:{i:02d}.{i * 37:03d}Z",
            }
        )
    return events


def our_journals(directory: Path) -> list[Path]:
    """Journals written by every pairling_fast writer."""
    paths = []
    for seed in (1, 2, 3):
        lines, _ = generate_journal(300, seed, chain=True, car_version=ORACLE_CAR_VERSION)
        path = directory / f"generated-{seed}.jsonl"
        path.write_bytes(b"".join(lines))
        paths.append(path)
    plain_lines, _ = generate_journal(200, 4, chain=False, car_version=ORACLE_CAR_VERSION)
    plain = directory / "plain.jsonl"
    plain.write_bytes(b"".join(plain_lines))
    chained = directory / "chain-journal.jsonl"
    pf.chain_journal(plain, chained)
    paths.append(chained)
    written = directory / "journal-writer.jsonl"
    with pf.JournalWriter(written) as journal:
        for event in awkward_events():
            journal.append(event)
    with pf.JournalWriter(written) as journal:  # resumes the chain from the file
        journal.append(awkward_events()[0])
    paths.append(written)
    return paths


def test_every_journal_we_write_loads_in_car(backend: _backend.Engine, tmp_path: Path) -> None:
    paths = [*our_journals(tmp_path), car_oracle.ROOT / "examples" / "journals" / "chained.jsonl"]
    for path, verdict in zip(paths, car_oracle.load(paths), strict=True):
        assert verdict["ok"], verdict
        assert verdict["chain"] == check(path).stats["chain"], path.name
        assert verdict["chain"]["verified"] == verdict["events"], path.name


def test_under_cars_release_we_refuse_the_kinds_it_refuses(
    backend: _backend.Engine, tmp_path: Path
) -> None:
    """A journal with the newest bundle's kinds: CAR 0.58.0's loader stops at the first kind it
    does not know; ``car_version="0.58.0"`` reports exactly those lines, the default bundle none."""
    lines, _ = generate_journal(300, 11)
    path = tmp_path / "newest-kinds.jsonl"
    path.write_bytes(b"".join(lines))
    newer = set(event_kinds()) - set(event_kinds(ORACLE_CAR_VERSION))
    unknown = [n for n, line in enumerate(lines, start=1) if json.loads(line)["kind"] in newer]
    assert unknown
    (verdict,) = car_oracle.load([path])
    assert not verdict["ok"] and verdict["line"] == unknown[0], verdict
    report = pf.check_journal(path, car_version=ORACLE_CAR_VERSION, max_findings=None)
    assert [(f.line, f.code, f.pointer) for f in report.errors] == [
        (n, "PF101", "/kind") for n in unknown
    ]
    assert pf.check_journal(path).errors == []


def tamper(lines: list[bytes], rng: random.Random) -> tuple[str, list[bytes]]:
    """One random tampering of a chained journal's lines."""
    lines = list(lines)
    i = rng.randrange(len(lines))
    how = rng.choice(
        ["edit", "edit", "edit-hash", "delete", "swap", "insert", "insert-chained", "truncate"]
    )
    if how == "edit":
        event = json.loads(lines[i])
        field = rng.choice(["kind", "data", "timestamp", "action_id", "run_id", "prev_hash"])
        if field == "kind":
            event["kind"] = rng.choice(event_kinds())
        elif field == "data":
            event.setdefault("data", {})[rng.choice(["n", "index", "é"])] = rng.random()
        elif field == "timestamp":
            event["timestamp"] = rng.choice(
                ["2026-01-01T00:00:00Z", "2026-01-01 00:00:00+00:00", "not a time"]
            )
        elif field == "prev_hash":
            event["prev_hash"] = "0" * 64
        else:
            event[field] = rng.choice(["x", None])
        lines[i] = (json.dumps(event, ensure_ascii=False) + "\n").encode()
    elif how == "edit-hash":
        event = json.loads(lines[i])
        event["hash"] = "f" * 64
        lines[i] = (json.dumps(event) + "\n").encode()
    elif how == "delete":
        del lines[i]
    elif how == "swap":
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif how == "insert":
        event = {"kind": "state_changed", "data": {}, "timestamp": "2026-01-01T00:00:00Z"}
        lines.insert(i, (json.dumps(event) + "\n").encode())
    elif how == "insert-chained":
        lines.insert(i, lines[rng.randrange(len(lines))])
    else:
        keep = rng.randrange(1, len(b"".join(lines)))
        lines = [b"".join(lines)[:keep]]
    return how, lines


def test_our_tampering_verdicts_agree_with_car(
    backend: _backend.Engine, tmp_path: Path, car_journals: list[Path]
) -> None:
    sources = [
        *(p for p in car_journals if p.name in ("chained.jsonl", "run-bound.jsonl")),
        *our_journals(tmp_path)[:2],
    ]
    rng = random.Random(20261203)
    cases: list[tuple[str, Path]] = []
    for source in sources:
        lines = source.read_bytes().splitlines(keepends=True)
        for n in range(TAMPERINGS_PER_JOURNAL):
            how, tampered = tamper(lines, rng)
            path = tmp_path / f"{source.stem}-{n}-{how}.jsonl"
            path.write_bytes(b"".join(tampered))
            cases.append((how, path))
    detected = 0
    for (how, path), verdict in zip(cases, car_oracle.load([p for _, p in cases]), strict=True):
        report = check(path, profile="car-compatible")
        error_lines = sorted({f.line for f in report.findings if f.severity == "error"})
        if verdict["ok"]:
            assert error_lines == [], (how, path.name, report.findings[:3])
            assert report.stats["chain"] == verdict["chain"], (how, path.name)
        else:
            detected += 1
            assert error_lines[:1] == [verdict["line"]], (how, path.name, verdict, report.findings)
    assert len(cases) == TAMPERINGS_PER_JOURNAL * len(sources)
    assert detected > len(cases) // 2


EVENT = {"kind": "state_changed", "data": {}, "timestamp": "2026-01-01T00:00:00Z"}


def line(**members: Any) -> bytes:
    event = {**EVENT, **members}
    return json.dumps({k: v for k, v in event.items() if v is not ...}).encode()


def with_data(raw: str) -> bytes:
    """An event whose ``data`` is written as raw JSON text."""
    return f'{{"kind":"state_changed","data":{raw},"timestamp":"2026-01-01T00:00:00Z"}}'.encode()


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def with_raw(name: str, raw: str) -> bytes:
    """An event with one more member written as raw JSON text."""
    return line()[:-1] + f', "{name}": {raw}}}'.encode()


TIMESTAMPS = [
    "2026-01-01T12:30:60Z",
    "2026-01-01T12:30:00+0530",
    "2026-01-01 12:30:00Z",
    "2026-01-01t12:30:00z",
    "2026-01-01T12:30:00 UTC",
    "2026-01-01T12:30:00utc",
    " 2026-01-01T12:30:00Z ",
    "2026-1-1T1:2:3Z",
    "+12026-01-01T00:00:00Z",
    "-0001-01-01T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "2026-01-01T00:00:00.1234567891234Z",
    "2026-01-01T00:00:00.5+01:00",
    "2026-01-01T00:00:00\u221205:00",
    "2026-01-01T00:00:00+05",
    "2026-01-01T00:00:00+24:00",
    "2026-01-01T00:00:00+23:59",
    "2026-01-01T00:00:00 +05 30",
    "2026-02-29T00:00:00Z",
    "2024-02-29T00:00:00Z",
    "2026-01-01T00:00:00.Z",
    "2026-01-01T24:00:00Z",
    "2026-01-01T00:60:00Z",
    "2026-01-01T00:00:00",
    "2026-01-01T00:00:00+05:30:00",
    "2026-01-01T23:59:60.999-00:30",
    "2026-01-01T00:00:00,5Z",
    "2026-01-01T00:00:00Z\u00a0",
]


def corpus() -> dict[str, bytes]:
    """Lines at the edges of what CAR reads; the oracle says which it accepts."""
    cases: dict[str, bytes] = {
        "plain": line(),
        "duplicate key in data": with_data('{"a":1,"a":2}'),
        "duplicate key deep in data": with_data('{"x":{"a":1,"a":[2]}}'),
        "duplicate kind": b'{"kind":"state_changed",' + line()[1:],
        "duplicate unknown member": with_raw("x", '1, "x": "y"'),
        "integer beyond 64 bits in data": line(data={"n": 2**64}),
        "negative integer beyond 64 bits in data": line(data={"n": -(2**63) - 1}),
        "integer beyond 64 bits ignored": with_raw("x", str(10**40)),
        "1e400 in data": with_data('{"n":1e400}'),
        "1e400 ignored": with_raw("x", "1e400"),
        "-1e400 ignored deep": with_raw("x", '{"a":[-1e400]}'),
        "minus zero integer in data": with_data('{"n":-0}'),
        "lone surrogate in data": line(data={"s": "\\ud800"}).replace(b"\\\\ud800", b"\\ud800"),
        "lone surrogate in data key": with_data('{"\\udc00":1}'),
        "lone surrogate ignored": with_raw("x", '"\\ud800"'),
        "lone surrogate in an ignored member's name": with_raw("\\ud800", "1"),
        "surrogate pair in data": line(data={"s": "😀"}),
        "invalid UTF-8 ignored": with_raw("x", '"@"').replace(b"@", b"\xff\xfe"),
        "invalid UTF-8 in data": line(data={"s": "@"}).replace(b"@", b"\xff"),
        "raw control character ignored": with_raw("x", '"\x01"'),
        "invalid escape ignored": with_raw("x", '"\\x"'),
        "NaN ignored": with_raw("x", "NaN"),
        "nul escape in data": line(data={"s": "\x00"}),
        "nesting 127 deep": line(data={"a": json.loads(nested(125))}),
        "nesting 128 deep": line(data={"a": json.loads(nested(126))}),
        "nesting 1000 deep ignored": with_raw("x", nested(1000)),
        "nesting 200 deep ignored twice": with_raw("x", nested(200) + ', "y": ' + nested(300)),
        "array event": b'["state_changed",null,null,null,"a0",null,{},"2026-01-01T00:00:00Z"]',
        "array event, kind only": b'["state_changed"]',
        "array event, eleven items": (
            b'["state_changed",null,null,null,null,null,{},"2026-01-01T00:00:00Z",null,null,1]'
        ),
        "empty array": b"[]",
        "kind as a unit variant map": line(kind={"state_changed": None}),
        "kind as a variant map with a value": line(kind={"state_changed": 1}),
        "kind unknown": line(kind="no_such_kind"),
        "kind missing": line(kind=...),
        "null ids": line(run_id=None, action_id=None, proposal_id=None, client_id=None),
        "null hashes": line(prev_hash=None, hash=None),
        "number id": line(action_id=7),
        "data null": line(data=None),
        "data an array": line(data=[]),
        "data missing": line(data=...),
        "timestamp missing": line(timestamp=...),
        "timestamp null": line(timestamp=None),
        "timestamp a number": line(timestamp=1767225600),
        "empty object": b"{}",
        "a number": b"42",
        "a string": b'"state_changed"',
        "BOM": b"\xef\xbb\xbf" + line(),
        "trailing comma": line()[:-1] + b",}",
        "trailing garbage": line() + b" x",
        "leading and trailing whitespace": b" \t" + line() + b" \r",
        "unknown member with a big object": with_raw(
            "x", json.dumps({str(i): [i] for i in range(50)})
        ),
        "form feed only": b"\x0c",
        "spaces, form feed, tab": b" \x0c\t ",
        "vertical tab only": b"\x0b",
        "form feed after an event": line() + b"\x0c",
        "wrong hash": line(hash="0" * 64),
        "not a string hash": line(hash=5),
    }
    for i, timestamp in enumerate(TIMESTAMPS):
        cases[f"timestamp {i}: {timestamp!r}"] = line(timestamp=timestamp)
    return cases


@pytest.fixture(scope="module")
def corpus_verdicts(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Path, bool]]:
    directory = tmp_path_factory.mktemp("corpus")
    cases = corpus()
    paths = []
    for n, data in enumerate(cases.values()):
        path = directory / f"case-{n}.jsonl"
        path.write_bytes(data + b"\n")
        paths.append(path)
    verdicts = car_oracle.load(paths)
    return [(name, path, v["ok"]) for name, path, v in zip(cases, paths, verdicts, strict=True)]


def test_car_compatible_accepts_exactly_what_car_loads(
    backend: _backend.Engine, corpus_verdicts: list[tuple[str, Path, bool]]
) -> None:
    disagreements = []
    for name, path, car_accepts in corpus_verdicts:
        report = check(path, profile="car-compatible")
        if report.ok != car_accepts:
            disagreements.append((name, car_accepts, report.findings[:2]))
    assert disagreements == []
    assert len(corpus_verdicts) >= 80


def test_each_thing_car_tolerates_has_its_own_code(
    backend: _backend.Engine, corpus_verdicts: list[tuple[str, Path, bool]]
) -> None:
    """Lines CAR reads that the strict profile refuses carry a warning naming what CAR tolerates."""
    for name, path, car_accepts in corpus_verdicts:
        strict = check(path)
        if car_accepts and not strict.ok:
            tolerant = check(path, profile="car-compatible")
            codes = {f.code for f in tolerant.findings}
            assert codes & {f"PF3{n}" for n in (33, 34, 35, 36, 37, 38, 39, "04")}, name


def test_fallback_reads_timestamps_as_chrono(corpus_verdicts: list[tuple[str, Path, bool]]) -> None:
    """Where CAR reads an event, the fallback renders its timestamp as chrono does."""
    for name, path, car_accepts in corpus_verdicts:
        if not car_accepts:
            continue
        (parsed,) = [p for p in car_oracle.parse(path) if not p["blank"]] or [None]
        if (
            parsed is None
            or not parsed.get("ok")
            or '"timestamp"' not in path.read_text("utf-8", "replace")
        ):
            continue
        event = car_event.parse(path.read_bytes())
        assert event.timestamp is not None, name
        assert car_event.timestamp_text(event.timestamp) == parsed["timestamp"], name


def test_a_journal_car_compacted_mid_run_is_reported_once(
    backend: _backend.Engine, car_journals: list[Path]
) -> None:
    """Proposals with the transitions car-engine's executor appends (retry after a failure, skip
    after failed attempts, dedup), cut by CAR's retention compaction: clean but for one PF343."""
    path = next(p for p in car_journals if p.name == "lifecycle-compacted.jsonl")
    report = check(path, lifecycle=True)
    assert [(f.line, f.code) for f in report.findings] == [(1, "PF343")]
    assert report.stats["errors"] == 0
