"""Journal chunks (the split ``pairling_fast.distributed`` runs on a cluster), without a cluster:
a journal checked chunk by chunk, at any chunk size, reports exactly as ``check_journal`` does."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast.distributed import chunk_ranges
from pairling_fast.generate.journal import generate_journal
from pairling_fast.journal.options import JournalOptions
from pairling_fast.journal.writers import chain_event, event_line
from pairling_fast.report import Finding, Report

OPTIONS: dict[str, Any] = {
    "chain": "auto",
    "lifecycle": True,
    "max_findings": None,
    "profile": "strict",
    "max_line_length": 1 << 20,
}


def chunked(path: Path, chunk_bytes: int, **overrides: Any) -> Report:
    options = JournalOptions(**{**OPTIONS, **overrides})
    engine = _backend.active()
    checker = engine.JournalChecker(options)
    for start, end in chunk_ranges(os.path.getsize(path), chunk_bytes):
        checker.feed(engine.check_journal_chunk(str(path), start, end, options))
    raw, stats = checker.finish(False)
    return Report(findings=[Finding.from_raw(r, str(path)) for r in raw], stats=stats)


def assert_same(path: Path, chunk_bytes: int, **overrides: Any) -> Report:
    whole = pf.check_journal(path, **{**OPTIONS, **overrides})
    report = chunked(path, chunk_bytes, **overrides)
    assert [f.to_dict() for f in report.findings] == [f.to_dict() for f in whole.findings]
    assert report.to_dict() == whole.to_dict()
    return whole


def write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(lines))
    return path


def test_chunk_ranges_cover_the_file_once() -> None:
    assert chunk_ranges(10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert chunk_ranges(8, 4) == [(0, 4), (4, 8)]
    assert chunk_ranges(0, 4) == [(0, 0)]
    with pytest.raises(ValueError, match="at least 1"):
        chunk_ranges(10, 0)


def test_every_chunk_size_of_a_small_journal(backend: _backend.Engine, tmp_path: Path) -> None:
    """Every byte offset is a chunk boundary somewhere: CRLF, blank lines, invalid lines, a chain
    edited in the middle, an unclosed run and a truncated last line."""
    events = [
        {"kind": "run_started", "run_id": "r1", "data": {}, "timestamp": "2026-01-01T00:00:01Z"},
        {"kind": "state_changed", "run_id": "r1", "data": {}, "timestamp": "2026-01-01T00:00:00Z"},
        {"kind": "run_completed", "run_id": "r1", "data": {}, "timestamp": "2026-01-01T00:00:02Z"},
        {"kind": "run_started", "run_id": "r2", "data": {}, "timestamp": "2026-01-01T00:00:03Z"},
    ]
    previous = None
    lines = []
    for event in events:
        chained = chain_event(event, previous)
        previous = chained["hash"]
        lines.append(event_line(chained))
    lines[1] = lines[1].replace(b'"data":{}', b'"data":{"edited":1}')
    lines[2] = lines[2].replace(b"\n", b"\r\n")
    lines[3:3] = [b"\n", b"not json\n", b'{"a":1,"a":2}\n', b"[1]\n"]
    gap = {"kind": "state_changed", "run_id": "r2", "data": {}, "timestamp": "2026-01-01T00:00:04Z"}
    lines += [event_line(gap), b'{"kind":"run_comp']
    path = write(tmp_path / "small.jsonl", lines)
    whole = pf.check_journal(path, **OPTIONS)
    assert {f.code for f in whole.findings} == {
        "PF001",
        "PF002",
        "PF301",
        "PF302",
        "PF310",
        "PF312",
        "PF328",
        "PF329",
        "PF360",  # run_started / run_completed without the data CAR writes (car_payloads.toml)
    }
    for chunk_bytes in range(1, os.path.getsize(path) + 2):
        assert_same(path, chunk_bytes)


def test_every_chunk_size_of_a_broken_chain(backend: _backend.Engine, tmp_path: Path) -> None:
    """A chunk verifies its own links and ships neither hash of a link that holds: a deleted
    event, a swapped pair, a missing ``prev_hash`` and an inserted unchained event are reported
    word for word (each message quotes the hashes) wherever the chunk boundaries fall."""
    previous = None
    chained = []
    for number in range(12):
        second = f"{number:02d}"
        event = {
            "kind": "state_changed",
            "data": {"n": number},
            "timestamp": f"2026-01-01T00:00:{second}Z",
        }
        event = chain_event(event, previous)
        previous = event["hash"]
        chained.append(event)
    without_prev = dict(chained[9])
    del without_prev["prev_hash"]
    lines = [event_line(event) for event in chained]
    lines[9] = event_line(without_prev)
    lines[6], lines[7] = lines[7], lines[6]
    del lines[3]
    unchained = {"kind": "state_changed", "data": {}, "timestamp": "2026-01-01T00:00:30Z"}
    lines.insert(5, event_line(unchained))
    path = write(tmp_path / "broken.jsonl", lines)
    whole = pf.check_journal(path, **OPTIONS)
    assert [f.code for f in whole.findings].count("PF311") >= 4
    assert "PF312" in {f.code for f in whole.findings}
    # Chunks of 1 to 150 bytes put a boundary at every offset (each event is ~250 bytes).
    size = os.path.getsize(path)
    for chunk_bytes in [*range(1, 151), *range(151, size + 2, 41)]:
        assert_same(path, chunk_bytes)


@pytest.mark.parametrize("chunk_bytes", [50, 997, 4096, 1 << 20])
def test_generated_journal_with_every_defect(
    backend: _backend.Engine, tmp_path: Path, chunk_bytes: int
) -> None:
    lines, expected = generate_journal(300, seed=4, chain=True, defects=18)
    path = write(tmp_path / "defects.jsonl", lines)
    whole = assert_same(path, chunk_bytes)
    found = {(f.line, f.code) for f in whole.findings}
    assert {(e["line"], e["code"]) for e in expected} <= found


@pytest.mark.parametrize(
    "overrides",
    [
        {"chain": "require"},
        {"chain": "off"},
        {"lifecycle": False},
        {"profile": "car-compatible"},
        {"max_findings": 3},
        {"max_line_length": 200},
    ],
)
def test_options_reach_both_stages(
    backend: _backend.Engine, tmp_path: Path, overrides: dict[str, Any]
) -> None:
    lines, _ = generate_journal(150, seed=5, chain=False, defects=18)
    path = write(tmp_path / "options.jsonl", lines)
    assert_same(path, 700, **overrides)


def test_an_empty_journal(backend: _backend.Engine, tmp_path: Path) -> None:
    path = write(tmp_path / "empty.jsonl", [])
    assert assert_same(path, 10).stats["lines"] == 0


def test_a_finished_checker_refuses_more(backend: _backend.Engine) -> None:
    checker = backend.JournalChecker(JournalOptions("auto", True, None, "strict", 1000))
    checker.finish(False)
    with pytest.raises(ValueError, match="finished"):
        checker.feed(b"")
    with pytest.raises(ValueError, match="finished"):
        checker.finish(False)


def test_bad_options_are_refused(backend: _backend.Engine, tmp_path: Path) -> None:
    path = write(tmp_path / "one.jsonl", [b"{}\n"])
    with pytest.raises(ValueError, match="chain"):
        backend.check_journal_chunk(
            str(path), 0, 3, JournalOptions("sometimes", max_line_length=1000)
        )
    with pytest.raises(ValueError, match="profile"):
        backend.JournalChecker(JournalOptions("auto", True, None, "lenient", 1000))


def test_a_missing_file_is_an_os_error(backend: _backend.Engine, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        options = JournalOptions("auto", True, None, "strict", 1000)
        backend.check_journal_chunk(str(tmp_path / "absent.jsonl"), 0, 10, options)


def test_a_malformed_chunk_is_refused_on_the_core(tmp_path: Path) -> None:
    with _backend.selected("rust") as engine:
        checker = engine.JournalChecker(JournalOptions("auto", True, None, "strict", 1000))
        with pytest.raises(ValueError, match="malformed journal chunk"):
            checker.feed(b"\x07")
