"""CAR journals: line checks, the hash chain, lifecycles, profiles and writers, on both backends."""

from __future__ import annotations

import argparse
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast.generate.journal import DEFECTS, add_arguments, car_data, generate_journal, run
from pairling_fast.journal import event_kinds
from pairling_fast.journal.options import JournalInterrupted
from pairling_fast.journal.writers import chain_event, event_line
from pairling_fast.paths import check_paths
from pairling_fast.report import Report

TS = "2026-01-01T00:00:{:02d}Z"


def event(kind: str, second: int = 0, **members: Any) -> dict[str, Any]:
    """An event of ``kind`` with the ``data`` CAR writes for it, unless ``data`` is given."""
    return {
        "kind": kind,
        "data": members.pop("data", car_data(kind)),
        "timestamp": TS.format(second),
        **members,
    }


def lines_of(*events: dict[str, Any]) -> list[bytes]:
    return [event_line(e) for e in events]


def chained(*events: dict[str, Any]) -> list[bytes]:
    previous: str | None = None
    out = []
    for e in events:
        e = chain_event(e, previous)
        previous = e["hash"]
        out.append(event_line(e))
    return out


def located(report: Report) -> list[tuple[int | None, str, str | None]]:
    return [(f.line, f.code, f.pointer) for f in report.findings]


def expected_of(expected: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    return sorted((e["line"], e["code"], e["pointer"]) for e in expected)


def check(lines: list[bytes], **options: Any) -> Report:
    return pf.check_journal(lines, **options)


RUN = "r1"


def run_of(*middle: dict[str, Any]) -> list[dict[str, Any]]:
    """A complete run around ``middle`` (whose events get the run id and rising timestamps)."""
    events = [event("run_started", 0, run_id=RUN)]
    for second, e in enumerate(middle, start=1):
        events.append({**e, "timestamp": TS.format(second), "run_id": RUN})
    events.append(event("run_completed", len(middle) + 1, run_id=RUN))
    return events


# --- generated corpora --------------------------------------------------------------------------


@pytest.mark.parametrize("chain", [False, True])
@pytest.mark.parametrize("seed", [0, 7])
def test_generated_journals_are_clean_and_every_kind_appears(
    backend: _backend.Engine, chain: bool, seed: int
) -> None:
    lines, expected = generate_journal(400, seed, chain=chain)
    report = check(lines)
    assert expected == []
    assert report.findings == []
    stats = report.stats
    assert stats["lines"] == stats["events"] == len(lines) >= 400
    assert stats["invalid_lines"] == stats["blank_lines"] == 0
    assert sorted(stats["kinds"]) == event_kinds()
    assert len(event_kinds()) == 56  # CAR 0.60.0's EventKind (the default wire bundle)
    assert sum(stats["kinds"].values()) == stats["events"]
    assert stats["chained"] == (len(lines) if chain else 0)
    assert stats["chain"] == {"verified": len(lines) if chain else 0}
    assert stats["open_runs"] == stats["open_proposals"] == []
    assert stats["interrupted"] is False


def test_the_generator_is_deterministic_per_seed() -> None:
    assert generate_journal(200, 3, defects=5) == generate_journal(200, 3, defects=5)
    assert generate_journal(200, 3)[0] != generate_journal(200, 4)[0]


@pytest.mark.parametrize("chain", [False, True])
@pytest.mark.parametrize(("seed", "defects"), [(1, len(DEFECTS)), (2, 40), (3, 5)])
def test_planted_defects_are_found_exactly_where_planted(
    backend: _backend.Engine, chain: bool, seed: int, defects: int
) -> None:
    lines, expected = generate_journal(600, seed, chain=chain, defects=defects)
    assert len(expected) >= defects
    report = check(lines, max_findings=None)
    assert sorted(located(report)) == expected_of(expected)
    if chain:
        assert report.stats["chain"] == {"verified": report.stats["events"]}


def test_every_defect_kind_is_planted() -> None:
    _lines, expected = generate_journal(600, 1, defects=len(DEFECTS))
    codes = {e["code"] for e in expected}
    assert codes == {
        "PF001", "PF002", "PF003", "PF101", "PF301", "PF302", "PF321", "PF323",
        "PF324", "PF326", "PF327", "PF328", "PF329", "PF330",
    }  # fmt: skip


def test_both_backends_give_identical_reports() -> None:
    lines, _ = generate_journal(500, 11, chain=True, defects=len(DEFECTS))
    tampered = list(lines)
    tampered[40], tampered[41] = tampered[41], tampered[40]
    del tampered[100]
    reports = {}
    for name in _backend.BACKENDS:
        with _backend.selected(name):
            report = check(tampered, max_findings=None)
            findings = [
                (f.code, f.severity, f.pointer, f.line, f.schema_pointer) for f in report.findings
            ]
            reports[name] = (findings, report.stats)
    assert reports["rust"] == reports["python"]


# --- line level ---------------------------------------------------------------------------------


def test_blank_lines_are_counted_and_crlf_is_accepted(backend: _backend.Engine) -> None:
    events = run_of(event("state_changed"))
    data = b"\n".join(line.rstrip(b"\n") + b"\r" for line in lines_of(*events)) + b"\n\n  \t\n"
    report = pf.check_journal(io.BytesIO(data))
    assert report.findings == []
    assert report.stats["lines"] == 5
    assert report.stats["events"] == 3
    assert report.stats["blank_lines"] == 2


@pytest.mark.parametrize(
    ("line", "code", "pointer"),
    [
        (b'{"kind": "state_changed"', "PF001", ""),
        (b'{"kind": "state_changed", "kind": "state_changed", "data": {}}', "PF002", "/kind"),
        (b'{"kind": "state_changed", "data": {"note": "\xc3\x28"}}', "PF003", ""),
        (b'"state_changed"', "PF301", ""),
        (b"42", "PF301", ""),
        (b"null", "PF301", ""),
    ],
)
def test_each_line_level_defect_has_its_code(
    backend: _backend.Engine, line: bytes, code: str, pointer: str
) -> None:
    good = lines_of(*run_of(event("state_changed")))
    report = check([good[0], line + b"\n", *good[1:]])
    assert located(report) == [(2, code, pointer)]
    assert report.stats["invalid_lines"] == 1
    assert report.stats["events"] == 3


def test_a_truncated_final_line_has_its_own_code(backend: _backend.Engine) -> None:
    good = b"".join(lines_of(*run_of()))
    report = pf.check_journal(io.BytesIO(good + b'{"kind": "state_cha'))
    assert located(report) == [(3, "PF302", "")]
    # A valid last line without a newline is fine; an invalid one with a newline is plain PF001.
    assert pf.check_journal(io.BytesIO(good.rstrip(b"\n"))).findings == []
    report = pf.check_journal(io.BytesIO(good + b'{"kind": "state_cha\n'))
    assert located(report) == [(3, "PF001", "")]


def test_a_too_long_line_is_reported_skipped_and_counted(backend: _backend.Engine) -> None:
    good = lines_of(*run_of(event("state_changed", data={"note": "x" * 50})))
    long_line = event_line({**event("state_changed", 1, run_id=RUN), "data": {"x": "y" * 5000}})
    report = check([good[0], long_line, *good[1:]], max_line_length=1000)
    assert located(report) == [(2, "PF303", "")]
    assert "over the limit of 1000 bytes" in report.findings[0].message
    assert report.stats["lines"] == 4
    assert report.stats["invalid_lines"] == 1
    assert check([good[0], long_line, *good[1:]], max_line_length=10_000).findings == []


def test_a_too_long_last_line_without_newline(backend: _backend.Engine) -> None:
    report = pf.check_journal(io.BytesIO(b"x" * 300), max_line_length=100)
    assert located(report) == [(1, "PF303", "")]


def test_schema_violations_are_located(backend: _backend.Engine) -> None:
    bad = event("state_changed", data=[1], run_id=RUN)
    report = check(lines_of(*run_of(bad)))
    assert [(f.line, f.code, f.pointer, f.schema_pointer) for f in report.findings] == [
        (2, "PF101", "/data", "/properties/data/type")
    ]


# --- profiles -----------------------------------------------------------------------------------


def test_car_compatible_profile_tolerates_what_car_tolerates(backend: _backend.Engine) -> None:
    extra = {**event("state_changed"), "x~tra/member": 1}
    no_time = {"kind": "state_changed", "data": {}}
    no_data = {"kind": "state_changed", "timestamp": TS.format(1), "extra": None}
    lines = lines_of(extra, no_time, no_data)
    strict = check(lines, lifecycle=False)
    assert {(f.line, f.code, f.severity) for f in strict.findings} == {
        (1, "PF101", "error"),
        (2, "PF101", "error"),
        (3, "PF101", "error"),
    }
    compatible = check(lines, lifecycle=False, profile="car-compatible")
    assert located(compatible) == [
        (1, "PF304", "/x~0tra~1member"),
        (2, "PF304", ""),
        (3, "PF304", "/extra"),
        (3, "PF304", ""),
    ]
    assert compatible.ok
    assert all(f.severity == "warning" for f in compatible.findings)


@pytest.mark.parametrize(
    ("bad", "pointer"),
    [
        ({"kind": "no_such_kind"}, "/kind"),
        ({"data": "text"}, "/data"),
        ({"timestamp": "yesterday"}, "/timestamp"),
        ({"run_id": 5}, "/run_id"),
    ],
)
def test_car_compatible_still_rejects_what_car_rejects(
    backend: _backend.Engine, bad: dict[str, Any], pointer: str
) -> None:
    report = check(lines_of({**event("state_changed"), **bad}), profile="car-compatible")
    assert {(f.code, f.pointer) for f in report.findings} == {("PF101", pointer)}
    assert not report.ok


def test_unknown_options_are_refused(backend: _backend.Engine) -> None:
    with pytest.raises(ValueError, match="profile"):
        check([], profile="lenient")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chain"):
        check([], chain="sometimes")  # type: ignore[arg-type]


# --- hash chain ---------------------------------------------------------------------------------


def chained_run(count: int = 6) -> list[bytes]:
    return chained(*run_of(*(event("state_changed", data={"n": n}) for n in range(count))))


def test_a_chained_journal_verifies(backend: _backend.Engine) -> None:
    report = check(chained_run())
    assert report.findings == []
    assert report.stats["chained"] == report.stats["verified"] == 8
    assert report.stats["chain"] == {"verified": 8}


def test_an_edited_event_is_a_hash_mismatch(backend: _backend.Engine) -> None:
    lines = chained_run()
    lines[3] = lines[3].replace(b'"n":2', b'"n":3')
    report = check(lines)
    assert located(report) == [(4, "PF310", "/hash")]
    assert report.stats["chain"] == {"tampered_at": 3}
    assert report.stats["verified"] == 7


def test_a_deleted_event_breaks_the_next_link(backend: _backend.Engine) -> None:
    lines = chained_run()
    del lines[3]
    report = check(lines)
    assert located(report) == [(4, "PF311", "/prev_hash")]
    assert report.stats["chain"] == {"tampered_at": 3}


def test_reordered_events_break_three_links(backend: _backend.Engine) -> None:
    lines = chained_run()
    lines[3], lines[4] = lines[4], lines[3]
    report = check(lines, lifecycle=False)  # the swap also makes a timestamp go backwards
    assert located(report) == [
        (4, "PF311", "/prev_hash"),
        (5, "PF311", "/prev_hash"),
        (6, "PF311", "/prev_hash"),
    ]
    assert report.stats["chain"] == {"tampered_at": 3}


def test_an_inserted_unchained_event_is_a_gap(backend: _backend.Engine) -> None:
    lines = chained_run()
    lines.insert(3, event_line({**event("state_changed", 2), "run_id": RUN}))
    report = check(lines)
    assert located(report) == [(4, "PF312", "")]
    assert report.stats["chain"] == {"tampered_at": 3}


def test_an_inserted_event_with_a_made_up_hash(backend: _backend.Engine) -> None:
    lines = chained_run()
    forged = {**event("state_changed", 2), "run_id": RUN, "prev_hash": "0" * 64, "hash": "f" * 64}
    lines.insert(3, event_line(forged))
    report = check(lines)
    assert located(report) == [
        (4, "PF310", "/hash"),
        (4, "PF311", "/prev_hash"),
        (5, "PF311", "/prev_hash"),
    ]
    assert report.stats["chain"] == {"tampered_at": 3}


def test_an_unchained_prefix_is_counted_and_the_first_prev_hash_trusted(
    backend: _backend.Engine,
) -> None:
    head = lines_of(event("state_changed", 0), event("state_changed", 1))
    tail = [event_line(chain_event(event("state_changed", 2), "a" * 64))]
    report = check(head + tail, lifecycle=False)
    assert report.findings == []
    assert report.stats["unchained"] == 2
    assert report.stats["chain"] == {"verified": 1}


def test_chain_modes(backend: _backend.Engine) -> None:
    plain = lines_of(*run_of())
    assert check(plain, chain="require").stats["chain"] == {"tampered_at": 0}
    assert located(check(plain, chain="require")) == [(1, "PF313", "")]
    assert check(plain).stats["chain"] == {"verified": 0}
    edited = chained_run()
    edited[2] = edited[2].replace(b'"n":1', b'"n":9')
    off = check(edited, chain="off")
    assert off.findings == []
    assert off.stats["chain"] is None
    assert off.stats["chained"] == 8


def test_an_event_whose_hash_car_cannot_compute(backend: _backend.Engine) -> None:
    """Not a false "edited": CAR's parser refuses the event (nesting 130 deep is within the
    strict parser's limit, beyond serde_json's), or it has no timestamp to hash."""
    deep: Any = []
    for _ in range(130):
        deep = [deep]
    rejected = event("state_changed", data={"n": deep}, hash="0" * 64)
    report = check([event_line(rejected)], lifecycle=False)
    assert located(report) == [(1, "PF331", "/hash")]
    assert report.stats["chain"] == {"tampered_at": 0}
    untimed = {k: v for k, v in event("state_changed", hash="0" * 64).items() if k != "timestamp"}
    report = check([event_line(untimed)], lifecycle=False, profile="car-compatible")
    assert [(f.line, f.code) for f in report.findings if f.severity == "error"] == [(1, "PF332")]


# --- lifecycle ----------------------------------------------------------------------------------

P = "p1"


def action(kind: str, action_id: str | None = "a0") -> dict[str, Any]:
    extra = {"action_id": action_id} if action_id is not None else {}
    return event(kind, proposal_id=P, **extra)


def proposal(*middle: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        event("proposal_received", proposal_id=P),
        *middle,
        event("proposal_completed", proposal_id=P),
    ]


@pytest.mark.parametrize(
    ("middle", "expected"),
    [
        ([event("run_cancellation_requested"), event("run_cancellation_result")], []),
        ([event("state_committed", proposal_id="p9")], [(2, "PF323", "/proposal_id")]),
        ([event("proposal_completed", proposal_id="p9")], [(2, "PF323", "/proposal_id")]),
        ([*proposal(), event("state_changed", proposal_id=P)], [(4, "PF324", "/proposal_id")]),
        # car-engine's executor journals proposal-level failures without an action_id.
        (proposal(action("action_failed", None)), []),
        # failure_behavior: skip -- every attempt failed, then the action is skipped.
        (
            proposal(action("action_executing"), action("action_failed"), action("action_skipped")),
            [],
        ),
        # Coder sessions: tool names as action ids, no proposal: no action rules.
        (
            [
                event("action_executing", action_id="read_file"),
                event("action_succeeded", action_id="read_file"),
                event("action_executing", action_id="read_file"),
                event("action_succeeded", action_id="read_file"),
            ],
            [],
        ),
        (proposal(action("action_succeeded")), [(3, "PF327", "/kind")]),
        (proposal(action("action_validated"), action("action_succeeded")), [(4, "PF327", "/kind")]),
        (
            proposal(
                action("action_executing"), action("action_succeeded"), action("action_executing")
            ),
            [(5, "PF326", "/kind")],
        ),
        (
            proposal(action("action_rejected"), action("action_retrying")),
            [(4, "PF326", "/kind")],
        ),
        (
            proposal(
                action("action_executing"),
                action("action_failed"),
                action("action_retrying"),
                action("action_executing"),
                action("action_succeeded"),
            ),
            [],
        ),
        (
            proposal(
                action("action_executing"), action("action_failed"), action("action_executing")
            ),
            [(5, "PF326", "/kind")],
        ),
        # Action ids repeat across proposals: a0 of another proposal is another action.
        (
            [
                *proposal(action("action_executing"), action("action_succeeded")),
                event("proposal_received", proposal_id="p2"),
                event("action_executing", proposal_id="p2", action_id="a0"),
                event("action_succeeded", proposal_id="p2", action_id="a0"),
                event("proposal_completed", proposal_id="p2"),
            ],
            [],
        ),
    ],
)
def test_lifecycle_rules(
    backend: _backend.Engine, middle: list[dict[str, Any]], expected: list[tuple[int, str, str]]
) -> None:
    report = check(lines_of(*run_of(*middle)))
    assert located(report) == expected
    assert check(lines_of(*run_of(*middle)), lifecycle=False).findings == []


def test_events_for_a_run_that_is_not_open(backend: _backend.Engine) -> None:
    events = [
        *run_of(),
        event("state_changed", 5, run_id=RUN),
        event("state_changed", 6, run_id="r2"),
    ]
    report = check(lines_of(*events))
    # After its run_completed: an error; a run never started here: the journal begins mid-run.
    assert located(report) == [(3, "PF321", "/run_id"), (4, "PF343", "")]


def test_a_cancelled_runs_receipt_after_its_terminal_is_cars_order(
    backend: _backend.Engine,
) -> None:
    """car-server-core 0.58.0 (session.rs, reconcile_durable_run_journals) writes the terminal,
    then the cancellation receipt still bound to the run, then clears the binding."""
    events = [
        event("run_started", 0, run_id=RUN),
        event("run_cancellation_requested", 1, run_id=RUN),
        event(
            "run_completed",
            2,
            run_id=RUN,
            data={**car_data("run_completed"), "termination_kind": "cancelled"},
        ),
        event("run_cancellation_result", 3, run_id=RUN),
    ]
    assert check(lines_of(*events)).findings == []
    # Anything else stamped with the run after its terminal is still PF321.
    report = check(lines_of(*events, event("state_changed", 4, run_id=RUN)))
    assert located(report) == [(5, "PF321", "/run_id")]


def test_what_cars_reconciliation_writes_is_no_finding(backend: _backend.Engine) -> None:
    """CAR's startup reconciliation (car-server-core 0.58.0 and 0.60.0 session.rs,
    reconcile_durable_run_journals and append_recovered_cancellation_result_journal) re-appends a
    run's run_started and writes a recovered cancellation result without the request: neither is
    a finding (PF320 and PF322, once our lints, are gone), and the run stays open from its first
    start, so its PF329 at the end names that line."""
    restarted = check(lines_of(*run_of(event("run_started"))))
    unrequested = check(lines_of(*run_of(event("run_cancellation_result"))))
    assert restarted.findings == [] and unrequested.findings == []
    reopened = check(lines_of(event("run_started", run_id=RUN), event("run_started", run_id=RUN)))
    assert located(reopened) == [(1, "PF329", "/run_id")]
    assert reopened.stats["open_runs"] == [RUN]


def test_one_root_cause_gives_one_finding(backend: _backend.Engine) -> None:
    """A journal cut by CAR's retention compaction: hundreds of events of runs and proposals whose
    start is gone give one PF343; events after a run completed give one PF321 with a count."""
    orphans = [event("state_changed", 0, run_id=f"r{n % 3}") for n in range(300)]
    completed = [event("proposal_completed", 0, run_id="r0", proposal_id=f"p{n}") for n in range(5)]
    after = [event("state_changed", 3, run_id=RUN) for _ in range(50)]
    report = check(lines_of(*orphans, *completed, *run_of(), *after))
    assert [(f.line, f.code) for f in report.findings] == [(308, "PF321"), (1, "PF343")]
    assert "and 49 later events" in report.findings[0].message
    assert "3 run(s) and 5 proposal(s)" in report.findings[1].message
    assert "305 event(s)" in report.findings[1].message
    assert report.stats["errors"] == 1


def test_timestamps_going_backwards_warn(backend: _backend.Engine) -> None:
    events = [event("state_changed", 5), event("state_changed", 4), event("state_changed", 4)]
    offset = {**event("state_changed"), "timestamp": "2026-01-01T01:00:10+01:00"}
    report = check(lines_of(*events, offset))
    assert located(report) == [(2, "PF328", "/timestamp")]
    assert report.findings[0].severity == "warning"
    assert report.ok


def test_open_runs_and_proposals_at_the_end(backend: _backend.Engine) -> None:
    events = [
        event("run_started", run_id="live"),
        event("proposal_received", 1, run_id="live", proposal_id=P),
    ]
    # The server completed another proposal: this one is open (a live tail).
    completed = [
        event("proposal_received", 1, run_id="live", proposal_id="done"),
        event("proposal_completed", 1, run_id="live", proposal_id="done"),
    ]
    report = check(lines_of(events[0], *completed, events[1]))
    assert located(report) == [(1, "PF329", "/run_id"), (4, "PF330", "/proposal_id")]
    assert report.stats["open_runs"] == ["live"]
    assert report.stats["open_proposals"] == [P]
    assert report.ok


def test_a_journal_without_server_completions_is_said_once(backend: _backend.Engine) -> None:
    """car-engine never writes proposal_completed (only car-server-core does): a journal with
    none leaves every proposal open, correctly, and gets one PF366 note, not a PF330 each."""
    events = [event("proposal_received", n, proposal_id=f"p{n}") for n in range(5)]
    ids = {"proposal_id": "p1", "action_id": "a0"}
    events += [event("action_executing", 6, **ids), event("action_succeeded", 7, **ids)]
    report = check(lines_of(*events))
    assert [(f.line, f.code, f.severity) for f in report.findings] == [(1, "PF366", "info")]
    assert "5 proposal(s)" in report.findings[0].message
    assert report.stats["open_proposals"] == [f"p{n}" for n in range(5)]


# --- limits, sources, interruption --------------------------------------------------------------


def test_max_findings_caps_the_list_not_the_checking(backend: _backend.Engine) -> None:
    lines, expected = generate_journal(600, 5, defects=20)
    full = check(lines, max_findings=None)
    capped = check(lines, max_findings=3)
    assert capped.findings == full.findings[:3]
    assert capped.stats["suppressed_findings"] == len(expected) - 3
    assert capped.stats["errors"] == full.stats["errors"] == len(full.errors) > 3
    assert {**capped.stats, "suppressed_findings": 0, "suppressed_codes": {}} == full.stats
    assert (
        sum(n for by in capped.stats["suppressed_codes"].values() for n in by.values())
        == (capped.stats["suppressed_findings"])
    )


def test_sources(backend: _backend.Engine, tmp_path: Path) -> None:
    lines, _ = generate_journal(200, 2, defects=4)
    path = tmp_path / "journal.jsonl"
    path.write_bytes(b"".join(lines))
    by_path = pf.check_journal(path)
    assert {f.path for f in by_path.findings} == {str(path)}
    expected = located(by_path)
    assert located(pf.check_journal(str(path))) == expected
    with path.open("rb") as binary:
        assert located(pf.check_journal(binary)) == expected
    with path.open(encoding="utf-8", errors="surrogateescape") as text:
        assert len(pf.check_journal(text).findings) == len(expected)
    assert located(pf.check_journal(iter(lines))) == expected
    stripped = [line.rstrip(b"\n").decode("utf-8", "surrogateescape") for line in lines]
    assert [c for _, c, _ in located(pf.check_journal(stripped))] == [c for _, c, _ in expected]
    # Bytes are the journal's text, as check_map takes a map's.
    assert located(pf.check_journal(b"".join(lines))) == expected
    with pytest.raises(FileNotFoundError):
        pf.check_journal(tmp_path / "missing.jsonl")


class _InterruptingReader:
    """A binary source where Ctrl-C arrives during the n-th read."""

    def __init__(self, data: bytes, interrupt_at: int) -> None:
        self._data = io.BytesIO(data)
        self._reads = 0
        self._interrupt_at = interrupt_at

    def read(self, size: int) -> bytes:
        self._reads += 1
        if self._reads == self._interrupt_at:
            raise KeyboardInterrupt
        return self._data.read(min(size, 4096))


def test_ctrl_c_gives_a_partial_report(backend: _backend.Engine) -> None:
    lines, _ = generate_journal(20_000, 9)
    data = b"".join(lines)
    with pytest.raises(JournalInterrupted) as raised:
        pf.check_journal(_InterruptingReader(data, interrupt_at=300))
    assert isinstance(raised.value, KeyboardInterrupt)
    stats = raised.value.report.stats
    assert stats["interrupted"] is True
    assert 0 < stats["lines"] < len(lines)
    assert raised.value.report.findings == []  # no end-of-file warnings for a partial read


# --- writers ------------------------------------------------------------------------------------


def test_chain_journal_round_trip(backend: _backend.Engine, tmp_path: Path) -> None:
    lines, _ = generate_journal(300, 4)
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_bytes(b"".join(lines))
    written = pf.chain_journal(src, dst)
    assert written.stats["newly_chained"] == len(lines)
    report = pf.check_journal(dst, chain="require")
    assert report.findings == []
    assert report.stats["chain"] == {"verified": len(lines)}
    assert [p.name for p in tmp_path.iterdir()] != [] and not list(tmp_path.glob("*.tmp"))


def test_chain_journal_continues_a_chained_head(backend: _backend.Engine, tmp_path: Path) -> None:
    head = chained_run(4)
    tail = lines_of(event("state_changed", 30), event("state_changed", 31))
    path = tmp_path / "journal.jsonl"
    path.write_bytes(b"".join(head + tail))
    written = pf.chain_journal(path, path)  # in place
    assert (written.stats["kept"], written.stats["newly_chained"]) == (len(head), len(tail))
    assert path.read_bytes().startswith(b"".join(head))
    report = pf.check_journal(path, chain="require")
    assert report.findings == []
    assert report.stats["chain"] == {"verified": len(head) + len(tail)}


def test_chain_journal_refuses_invalid_input(backend: _backend.Engine, tmp_path: Path) -> None:
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_bytes(b"".join(lines_of(*run_of())) + b"[1]\n")
    with pytest.raises(pf.ValidationError) as raised:
        pf.chain_journal(src, dst)
    assert [(f.line, f.code) for f in raised.value.findings] == [(3, "PF301")]
    assert not dst.exists()
    edited = chained_run()
    edited[2] = edited[2].replace(b'"n":1', b'"n":9')
    src.write_bytes(b"".join(edited))
    with pytest.raises(pf.ValidationError) as raised:
        pf.chain_journal(src, dst)
    assert [(f.line, f.code) for f in raised.value.findings] == [(3, "PF310")]
    assert not dst.exists() and list(tmp_path.iterdir()) == [src]


def test_journal_writer_appends_and_resumes(backend: _backend.Engine, tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    with pf.JournalWriter.open(path, fsync=True) as writer:
        first = writer.append(event("run_started", 0, run_id=RUN))
        assert first["prev_hash"] == ""  # as CAR's EventLog writes a chain's first event
        second = writer.append(event("state_changed", 1, run_id=RUN))
        assert second["prev_hash"] == first["hash"]
    with pf.JournalWriter(path) as writer:
        assert writer.last_hash == second["hash"]
        third = writer.append(event("run_completed", 2, run_id=RUN))
        assert third["prev_hash"] == second["hash"]
        with pytest.raises(pf.ValidationError):
            writer.append({"kind": "nope", "data": {}, "timestamp": TS.format(3)})
    report = pf.check_journal(path, chain="require")
    assert report.findings == []
    assert report.stats["chain"] == {"verified": 3}


def test_journal_writer_on_an_unterminated_or_broken_tail(
    backend: _backend.Engine, tmp_path: Path
) -> None:
    path = tmp_path / "live.jsonl"
    path.write_bytes(chained_run(1)[0].rstrip(b"\n"))
    with pf.JournalWriter(path) as writer:
        writer.append(event("state_changed", 1, run_id=RUN))
    assert pf.check_journal(path, lifecycle=False).stats["chain"] == {"verified": 2}
    path.write_bytes(b'{"kind": "run_sta')
    with pytest.raises(pf.ValidationError) as raised:
        pf.JournalWriter(path)
    assert raised.value.findings[0].code == "PF302"


def test_the_generator_command_writes_the_journal_and_its_expected_findings(
    backend: _backend.Engine, tmp_path: Path
) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = tmp_path / "journal.jsonl"
    args = parser.parse_args(["--events", "300", "--seed", "8", "--chain", "--defects", "6"])
    args.output = str(out)
    assert run(args) == 0
    expected = json.loads(Path(str(out) + ".expected.json").read_text(encoding="utf-8"))
    assert expected["generator"]["defects"] == 6
    report = pf.check_journal(out, max_findings=None)
    assert sorted(located(report)) == expected_of(expected["findings"])
    assert report.stats["chain"] == {"verified": report.stats["events"]}
    assert run(parser.parse_args(["--defects", "2"])) == 2  # findings need a file to go to


def test_cars_own_fixture_journal_is_clean(backend: _backend.Engine, data_dir: Path) -> None:
    """car-server-core 0.58.0's coder-session journal (tests/data/car/SOURCE.md): tool names as
    action ids, no proposals, `action_succeeded` without `action_executing` for the contract."""
    path = data_dir / "car" / "native-car-doctor.events.jsonl"
    for profile in ("strict", "car-compatible"):
        report = pf.check_journal(path, profile=profile)
        assert report.findings == [], report.findings[:3]
        assert report.stats["events"] == 108


SELFHEAL_FIXTURES = sorted(
    name
    for name in os.listdir(Path(__file__).parent / "data" / "car")
    if "selfheal" in name and name.endswith(".jsonl")
)


@pytest.mark.parametrize("fixture", SELFHEAL_FIXTURES)
def test_cars_selfheal_fixture_journals_have_no_errors(
    backend: _backend.Engine, data_dir: Path, tmp_path: Path, fixture: str
) -> None:
    """car-selfheal's and car-server-core's self-heal fixtures (tests/data/car/SOURCE.md): events
    as CAR's self-heal detectors read them from journals, each record ``{"event", "path"}``. Every
    journal they name, rebuilt from its events in order, has no error; what is missing from such an
    excerpt (the run's start, a proposal's end) is only a warning."""
    journals: dict[str, list[bytes]] = {}
    for line in (data_dir / "car" / fixture).read_bytes().splitlines():
        record = json.loads(line)
        journals.setdefault(record["path"], []).append(json.dumps(record["event"]).encode())
    assert journals
    for name, events in journals.items():
        report = check(events)
        assert report.errors == [], (name, report.errors[:3])
        allowed = {"PF343", "PF330", "PF366"}
        assert {f.code for f in report.findings} <= allowed, (name, report.findings)
        assert report.stats["events"] == len(events)


def test_car_version_checks_events_against_that_releases_kinds(
    backend: _backend.Engine, tmp_path: Path
) -> None:
    """CAR 0.60.0 added three kinds; under ``car_version`` 0.58 (or the seed) they are PF101 at
    /kind, under the default (newest) bundle they are events. ``check`` applies --car-version to
    journals too; a release not bundled is a ValueError before any line."""
    lines = lines_of(*run_of(event("worker_started"), event("model_call_refused")))
    assert check(lines).findings == []
    for release in ("0.58.0", "0.58", "seed"):
        report = check(lines, car_version=release)
        assert located(report) == [(2, "PF101", "/kind"), (3, "PF101", "/kind")]
        assert report.stats["kinds"] == {"run_started": 1, "run_completed": 1}
    with pytest.raises(ValueError, match="no bundled wire schema"):
        check(lines, car_version="0.1")
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(lines))
    assert check_paths([path]).ok
    assert not check_paths([path], car_version="0.58.0").ok


def test_a_bom_on_line_one_is_one_error(backend: _backend.Engine) -> None:
    """Issue #16: the unreadable first line (a run_started) is the one error; the run's later
    events are one warning that names it as the likely cause, not one finding each."""
    lines, _ = generate_journal(50, 3)
    report = check([b"\xef\xbb\xbf" + lines[0], *lines[1:]])
    assert [(f.line, f.code, f.severity) for f in report.findings] == [
        (1, "PF001", "error"),
        (2, "PF343", "warning"),
    ]
    assert "an unreadable line before them" in report.findings[1].message


def test_both_backends_compute_cars_digest_alike() -> None:
    """The fallback's serde_json number text and chrono timestamps against the Rust core's own
    serde_json and chrono, on random floats (any bit pattern), wide integers and timestamp forms
    (the oracle tests prove the core against CAR)."""
    import random
    import struct

    rng = random.Random(12)
    stamps = ["2026-01-01T00:00:00Z", "2026-01-01 12:30:60.5+0530", "0001-01-01T00:00:00.000001Z"]
    lines = []
    for n in range(3000):
        bits = rng.getrandbits(64)
        number = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if number != number or number in (float("inf"), float("-inf")):
            number = float(n)
        data = {"f": number, "i": rng.choice([2**64 + n, -(2**63) - n, n]), "k": {"b": [n], "a": 1}}
        timestamp = rng.choice(stamps).replace("00:00", f"{n % 24:02d}:{n % 60:02d}", 1)
        event = {"kind": "state_changed", "data": data, "timestamp": timestamp, "prev_hash": ""}
        lines.append(json.dumps(event).encode())
    with _backend.selected("rust") as rust:
        expected = [rust.journal_chain_digest(line) for line in lines]
    with _backend.selected("python") as python:
        assert [python.journal_chain_digest(line) for line in lines] == expected
    rejected = b'{"kind":"state_changed","timestamp":"2026-01-01T25:00:00Z"}'
    for name in _backend.BACKENDS:
        with _backend.selected(name) as engine, pytest.raises(ValueError):
            engine.journal_chain_digest(rejected)
