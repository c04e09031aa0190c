"""``JournalStream``: a journal fed in pieces cut anywhere gives ``check_journal``'s report, and
``feed`` returns, in order, the report's findings decided before the end (docs/journals.md,
"Streams and --follow")."""

from __future__ import annotations

import json
import random
from itertools import pairwise
from pathlib import Path
from typing import Any

import car_oracle
import pytest
from hypothesis import given
from hypothesis import strategies as st
from journal_samples import JOURNAL_PROPERTIES, journals

import pairling_fast as pf
from pairling_fast import _backend

REPEATED = " later event"  # the count a repeated cause's first finding gets at the end


def _pieces(data: bytes, cuts: list[float]) -> list[bytes]:
    offsets = sorted({int(fraction * len(data)) for fraction in cuts} | {0, len(data)})
    return [data[start:end] for start, end in pairwise(offsets)]


def _same_finding(early: pf.Finding, final: pf.Finding) -> bool:
    """The finding ``feed`` returned is the report's, but for the count of later repeats that
    only the end knows."""
    if early == final:
        return True
    head, _, _ = final.message.rpartition(" (and ")
    return (
        REPEATED in final.message
        and early.message == head
        and early.to_dict() | {"message": ""} == final.to_dict() | {"message": ""}
    )


def _assert_streams_like_check(data: bytes, pieces: list[bytes], **options: Any) -> None:
    whole = pf.check_journal(data, **options)
    stream = pf.JournalStream(**options)
    early: list[pf.Finding] = []
    for piece in pieces:
        early += stream.feed(piece)
        assert stream.offset == data.rfind(b"\n", 0, stream.offset + stream.pending) + 1
    if not stream.pending:  # every line complete: its counts are the whole journal's
        assert (stream.lines, stream.events) == (whole.stats["lines"], whole.stats["events"])
    report = stream.close()
    assert [f.to_dict() for f in report.findings] == [f.to_dict() for f in whole.findings]
    assert report.stats == whole.stats
    assert len(early) <= len(report.findings)
    for got, final in zip(early, report.findings, strict=False):
        assert _same_finding(got, final), (got, final)
    # What is left to the end is only what the end decides: the last line without a newline
    # and the end-of-journal findings.
    torn = not data.endswith(b"\n") and data.strip() != b""
    last = data.count(b"\n") + 1
    for finding in report.findings[len(early) :]:
        assert finding.code in {"PF329", "PF330", "PF343"} or (torn and finding.line == last)


@JOURNAL_PROPERTIES
@given(
    journal=journals(max_events=150, max_defects=8),
    cuts=st.lists(st.floats(0, 1), min_size=0, max_size=12),
    max_findings=st.sampled_from([None, 3, 1000]),
    tail=st.sampled_from([b"", b'{"kind"', b"\n\n", b"not json\n", '{"é'.encode()[:-1]]),
    profile=st.sampled_from(["strict", "car-compatible"]),
)
def test_a_stream_cut_anywhere_is_checked_as_a_whole(
    backend: _backend.Engine,
    journal: bytes,
    cuts: list[float],
    max_findings: int | None,
    tail: bytes,
    profile: Any,
) -> None:
    data = journal + tail
    _assert_streams_like_check(
        data, _pieces(data, cuts), max_findings=max_findings, profile=profile
    )


def test_byte_by_byte_through_utf8_characters(backend: _backend.Engine) -> None:
    event = {"kind": "run_started", "data": {"ключ": "値 🎉"}, "timestamp": "2026-01-01T00:00:00Z"}
    line = json.dumps(event, ensure_ascii=False).encode()
    data = line + b"\n" + line[:-3] + b"\n\xff\xfe\n" + line
    _assert_streams_like_check(data, [data[i : i + 1] for i in range(len(data))])


@pytest.fixture(scope="module")
def car_journals(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return car_oracle.write(tmp_path_factory.mktemp("car"))


def test_car_journals_cut_at_random(backend: _backend.Engine, car_journals: list[Path]) -> None:
    rng = random.Random(27)
    for path in car_journals:
        data = path.read_bytes()
        for _ in range(3):
            cuts = [rng.random() for _ in range(rng.randrange(1, 40))]
            _assert_streams_like_check(data, _pieces(data, cuts), chain="require")


def test_a_long_partial_line_is_counted_not_held(backend: _backend.Engine) -> None:
    data = b'{"kind": "x"}\n' + b"y" * 5000 + b"\n" + b"z" * 3000
    stream = pf.JournalStream(max_line_length=100)
    for start in range(0, len(data), 64):
        stream.feed(data[start : start + 64])
    assert stream.pending == 3000
    report = stream.close()
    whole = pf.check_journal(data, max_line_length=100)
    assert [f.to_dict() for f in report.findings] == [f.to_dict() for f in whole.findings]
    assert [f.code for f in report.findings][-2:] == ["PF303", "PF303"]


@JOURNAL_PROPERTIES
@given(
    journal=journals(max_events=100, max_defects=5, chained=True),
    stop=st.floats(0, 1),
    resumer=st.sampled_from(_backend.BACKENDS),
)
def test_a_stream_resumes_from_its_state(
    backend: _backend.Engine,
    tmp_path_factory: pytest.TempPathFactory,
    journal: bytes,
    stop: float,
    resumer: str,
) -> None:
    """A stream that stops is saved in a state file and resumed, on either backend, from its
    ``offset``: the report is the whole journal's."""
    data = journal
    first = pf.JournalStream(chain="require")
    first.feed(data[: int(stop * len(data))])
    states = pf.JournalStates()
    states.put("stream:events", first.state())
    saved = tmp_path_factory.mktemp("stream") / "state.json"
    states.save(saved)
    entry = pf.JournalStates.load(saved).entry("stream:events")
    assert entry is not None
    with _backend.selected(resumer):
        second = pf.JournalStream(chain="require", state=entry)
        assert second.lines == entry["lines"]
        second.feed(data[entry["offset"] :])
        report = second.close()
    whole = pf.check_journal(data, chain="require")
    assert [f.to_dict() for f in report.findings] == [f.to_dict() for f in whole.findings]
    assert report.stats == whole.stats


def test_a_state_under_other_options_is_refused(backend: _backend.Engine) -> None:
    stream = pf.JournalStream()
    stream.feed(b"{}\n")
    with pytest.raises(pf.JournalStateError, match=r"other options .*lifecycle"):
        pf.JournalStream(lifecycle=False, state=stream.state())
    with pytest.raises(pf.JournalStateError, match="malformed"):
        pf.JournalStream(state=stream.state() | {"checker": '{"lines": 1}'})


def test_a_closed_stream_refuses_more(backend: _backend.Engine) -> None:
    stream = pf.JournalStream()
    stream.feed(b"{}\n{")
    interrupted = stream.close(interrupted=True)
    assert interrupted.stats["lines"] == 1 and interrupted.stats["interrupted"]
    assert stream.closed
    refused = [
        lambda: stream.feed(b"{}\n"),
        lambda: stream.close(),
        lambda: stream.state(),
        lambda: stream.lines,
        lambda: stream.events,
        lambda: stream.pending,
        lambda: stream.offset,
    ]
    for call in refused:
        with pytest.raises(ValueError, match=r"^this JournalStream is closed$"):
            call()
    with pf.JournalStream(name="live.jsonl") as live:
        (finding,) = live.feed(b"[1]\n")
        assert finding.path == "live.jsonl" and finding.code == "PF301"
    assert live.closed


def test_feeding_text_says_bytes_are_expected(backend: _backend.Engine) -> None:
    stream = pf.JournalStream()
    with pytest.raises(TypeError, match=r"takes bytes .*UTF-8.*not str .*encode\('utf-8'\)"):
        stream.feed('{"kind": "x"}\n')  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"takes bytes .*not list$"):
        stream.feed([1, 2])  # type: ignore[arg-type]
    assert stream.feed(bytearray(b"[1]\n"))[0].code == "PF301"  # bytes-like pieces still work
    assert stream.feed(memoryview(b"[2]\n"))[0].code == "PF301"


def test_a_stream_takes_the_payloads_option_as_check_journal_does(
    backend: _backend.Engine,
) -> None:
    # run_started without agent_id, intent, started_at: CAR's payload contract (PF360 by
    # default, nothing when off, PF363 as errors).
    line = b'{"kind":"run_started","timestamp":"2026-12-03T10:00:00Z","data":{}}\n'
    for payloads in ("warn", "off", "error"):
        stream = pf.JournalStream(payloads=payloads, lifecycle=False)
        stream.feed(line)
        expected = pf.check_journal(line, payloads=payloads, lifecycle=False)
        assert stream.close().findings == expected.findings
    codes = {f.code for f in pf.check_journal(line, payloads="error", lifecycle=False).findings}
    assert "PF363" in codes
