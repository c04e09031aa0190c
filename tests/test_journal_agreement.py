"""The seven disagreements of issue 45, each held on every path (tests/journal_paths.py: the Rust
fast and full paths, the fallback, ``JournalStream``, a ``--state`` resume and chunks, on both
backends) to the verdict CAR's own code gives: car-eventlog's ``event_digest`` and
``load_from_journal`` (the 0.58.0 and 0.60.0 sources), quoted in each test. They are also the
regression seeds of both differentials (tests/test_journal_differential.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import journal_paths
import pytest

from pairling_fast.journal.writers import chain_event, event_line

STAMP = "2026-01-01T00:00:00Z"
LEAP = (
    '{"kind":"state_changed","data":{},"timestamp":"2026-12-31T23:59:60Z","prev_hash":"",'
    '"hash":"8796ac0e61b61d0ebf036fbb02130c1136c5a6094614b5f05606598e5312d4cd"}'
)


def event(**members: Any) -> bytes:
    """One journal line (with its newline): a ``state_changed`` event with ``members``."""
    return (
        json.dumps({"kind": "state_changed", "data": {}, "timestamp": STAMP, **members}) + "\n"
    ).encode()


def chained(events: list[dict[str, Any]]) -> bytes:
    """The events' lines, linked as CAR's ``EventLog`` links them."""
    lines, previous = [], None
    for member in events:
        linked = chain_event(member, previous)
        previous = linked["hash"]
        lines.append(event_line(linked))
    return b"".join(lines)


def agreed(tmp_path: Path, data: bytes, **options: Any) -> dict[str, Any]:
    """The one report every path gives for ``data`` under ``options`` (asserted)."""
    path = tmp_path / "journal.jsonl"
    path.write_bytes(data)
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    options = {"max_findings": None, **options}
    for seed in range(3):  # other cuts, resume points and chunk sizes
        reports = journal_paths.every_report(path, options, random.Random(seed), scratch)
        assert journal_paths.disagreements(reports) == [], data
    return reports["rust-full"]


def errors(report: dict[str, Any]) -> list[tuple[int | None, str]]:
    return [(f["line"], f["code"]) for f in report["findings"] if f["severity"] == "error"]


def codes(report: dict[str, Any]) -> list[str]:
    return [f["code"] for f in report["findings"]]


@pytest.mark.parametrize("profile", ["strict", "car-compatible"])
def test_a_leap_second_is_hashed_with_cars_text(tmp_path: Path, profile: str) -> None:
    """car-eventlog's ``event_digest`` hashes ``timestamp.to_rfc3339()``: a whole leap second is
    ``23:59:60+00:00`` (no fraction), through an offset too. The default path used to hash
    ``23:59:60.000+00:00``, refusing CAR's digest and accepting a forged one."""
    report = agreed(tmp_path, LEAP.encode() + b"\n", profile=profile)
    assert report["findings"] == [] and report["stats"]["chain"] == {"verified": 1}
    forged = LEAP.replace(
        "8796ac0e61b61d0ebf036fbb02130c1136c5a6094614b5f05606598e5312d4cd",
        "c41aba91c44ed776dd43c003bc34e205ba2c3383c9a258d7e701c55408d01086",  # over `:60.000`
    )
    report = agreed(tmp_path, forged.encode() + b"\n", profile=profile)
    assert errors(report) == [(1, "PF310")]
    stamps = ("2026-12-31T18:59:60-05:00", "2026-12-31T23:59:60.25Z", "2026-12-31t23:59:60z")
    leaps = [{"kind": "state_changed", "data": {}, "timestamp": stamp} for stamp in stamps]
    report = agreed(tmp_path, chained(leaps), profile=profile)
    assert errors(report) == [] and report["stats"]["chain"] == {"verified": 3}


def test_car_058_refuses_the_kinds_only_060_knows(tmp_path: Path) -> None:
    """``--car-version 0.58.0``: CAR 0.58.0's ``EventKind`` has no ``model_call_refused``, so its
    parser refuses the line (``unknown variant``) and its loader the journal."""
    data = event(kind="model_call_refused")
    report = agreed(tmp_path, data, profile="car-compatible", car_version="0.58.0")
    assert errors(report) == [(1, "PF101")]
    assert agreed(tmp_path, data, profile="car-compatible", car_version="0.60.0")["ok"]


@pytest.mark.parametrize("tail", [b" ", b"\t", b"\r", b"\x0c", b"  \r"])
def test_a_whitespace_last_line_without_newline_is_a_torn_tail(tmp_path: Path, tail: bytes) -> None:
    """car-eventlog's ``load_from_journal`` skips whitespace lines, but records an unterminated
    one as ``torn_tail_line``: ``load_read_only`` refuses the journal there."""
    report = agreed(tmp_path, event() + tail, profile="car-compatible")
    assert ("PF342" in codes(report)) and errors(report) == [(2, "PF342")]
    assert report["stats"]["blank_lines"] == 1
    assert agreed(tmp_path, event() + tail)["ok"], "only car-compatible models CAR's loader"


@pytest.mark.parametrize("tail", [b"0", b'"x"', b"[1]", b"true", b"null"])
def test_an_unterminated_last_line_that_is_json_but_no_object_is_a_torn_tail(
    tmp_path: Path, tail: bytes
) -> None:
    """``load_from_journal`` reads an unterminated last line serde cannot make an ``Event`` of as
    a torn tail, whatever JSON it is; the CAR differential (seed 2029) found ``0`` reported as a
    line CAR cannot parse (PF301 alone) instead."""
    report = agreed(tmp_path, event() + tail, profile="car-compatible")
    assert errors(report) == [(2, "PF301"), (2, "PF342")]
    assert agreed(tmp_path, event() + tail)["findings"][-1]["code"] == "PF301", "strict: no PF342"


@pytest.mark.parametrize(
    "tail",
    [
        b'{"kind":"state_changed","data":{},"timestamp":"not a time"}',
        b'{"kind":"no_such_kind","data":{},"timestamp":"2026-01-01T00:00:00Z"}',
        b'{"kind":"state_changed","data":{"x":1e400},"timestamp":"2026-01-01T00:00:00Z"}',
    ],
)
def test_an_unterminated_line_car_cannot_parse_is_no_link(tmp_path: Path, tail: bytes) -> None:
    """``load_from_journal`` drops an unterminated last line serde cannot parse (a torn tail): it
    is none of CAR's events, so ``verify_chain`` never sees it: no chain gap, no
    ``tampered_at``; the chained line before it verifies."""
    first = chained([{"kind": "state_changed", "data": {}, "timestamp": STAMP}])
    report = agreed(tmp_path, first + tail, profile="car-compatible")
    assert "PF312" not in codes(report)
    assert report["stats"]["chain"] == {"verified": 1}
    # The torn tail, or PF302 for a line that is not even JSON.
    assert errors(report)[0][0] == 2 and {"PF342", "PF302"} & set(codes(report))


@pytest.mark.parametrize(
    "data",
    [
        rb'{"x":1e400,"x":1}',
        rb'{"x":"\ud800","x":1}',
        b'{"x":"\xff","x":1}',
        rb'{"x":{"y":1e400,"y":1}}',
        rb'{"x":[{"y":"\udc00","y":2}],"x":1}',
    ],
)
def test_a_value_a_duplicate_key_replaces_must_still_read(tmp_path: Path, data: bytes) -> None:
    """serde_json reads every value of ``data`` (a ``HashMap<String, Value>``) before a later
    duplicate key replaces it: a number out of f64's range, a lone surrogate or invalid UTF-8
    there makes CAR refuse the line."""
    line = b'{"kind":"state_changed","data":' + data + b',"timestamp":"2026-01-01T00:00:00Z"}\n'
    report = agreed(tmp_path, line, profile="car-compatible")
    assert [number for number, _ in errors(report)] == [1]
    assert not {"PF335", "PF336"} & set(codes(report))


def test_a_skipped_member_too_deep_for_python_is_still_read_for_syntax(tmp_path: Path) -> None:
    """serde_json's ``ignore_value`` checks the syntax of a member CAR does not know at any depth:
    a syntax error 200 levels down refuses the line; the same member well-formed is skipped."""
    deep = "[" * 200 + '{"a" 1}' + "]" * 200
    line = f'{{"kind":"state_changed","data":{{}},"timestamp":"{STAMP}","skip":{deep}}}\n'
    report = agreed(tmp_path, line.encode(), profile="car-compatible")
    assert errors(report) == [(1, "PF001")]
    well_formed = line.replace('{"a" 1}', '{"a":1}')
    report = agreed(tmp_path, well_formed.encode(), profile="car-compatible")
    assert errors(report) == [] and "PF304" in codes(report)


def test_an_empty_action_id_is_an_id(tmp_path: Path) -> None:
    """Only ``null`` or a missing member is an absent id (docs/journals.md): an empty
    ``action_id`` of a proposal's action is checked like any other."""
    lines = [
        event(kind="proposal_received", run_id="r", proposal_id="p"),
        event(kind="action_succeeded", run_id="r", proposal_id="p", action_id=""),
    ]
    report = agreed(tmp_path, b"".join(lines), lifecycle=True)
    assert "PF327" in codes(report), report["findings"]


@pytest.mark.parametrize(
    "kind", [b'{"run_started":[],"run_started":null}', b'{"run_started":null,"run_started":null}']
)
def test_a_kind_written_as_a_map_has_one_member(tmp_path: Path, kind: bytes) -> None:
    """Found by the paths differential: serde_json reads an enum written as a map as one key
    and its unit value, then expects the map's end, so a repeated key refuses the line (CAR
    0.58.0: ``invalid type: sequence, expected unit``, ``expected value``); the fallback took the
    last member alone."""
    line = b'{"kind":' + kind + b',"data":{},"timestamp":"2026-01-01T00:00:00Z"}\n'
    report = agreed(tmp_path, line, profile="car-compatible")
    assert errors(report) == [(1, "PF002")]
