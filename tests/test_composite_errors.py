"""Readable composite errors (issue 48): an event kind its CAR release does not know is named as
such, with the release's closest kinds, on every journal path and both backends; a failing
``oneOf``/``anyOf`` names the branch error that came closest (``Finding.best_match``)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import journal_paths
import pytest

import pairling_fast as pf

STAMP = "2026-01-01T00:00:00Z"


def _line(kind: str) -> str:
    return json.dumps({"kind": kind, "data": {}, "timestamp": STAMP}) + "\n"


def _every_path(tmp_path: Path, data: str, **options: Any) -> dict[str, Any]:
    """The one report every journal path gives (asserted), as data."""
    path = tmp_path / "journal.jsonl"
    path.write_text(data, encoding="utf-8")
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    reports = journal_paths.every_report(path, options, random.Random(7), scratch)
    assert journal_paths.disagreements(reports) == []
    return reports["rust-full"]


@pytest.mark.parametrize("profile", ["strict", "car-compatible"])
def test_an_unknown_kind_names_the_release_and_its_closest_kinds(
    tmp_path: Path, profile: str
) -> None:
    data = _line("state_changed") + _line("action_rejectd") + _line("zzzz") + _line("x" * 5000)
    findings = _every_path(tmp_path, data, profile=profile)["findings"]
    kinds = [f for f in findings if f["pointer"] == "/kind"]
    assert [(f["line"], f["code"], f["schema_pointer"]) for f in kinds] == [
        (line, "PF101", "/definitions/EventKind/oneOf") for line in (2, 3, 4)
    ]
    assert kinds[0]["message"] == (
        '"action_rejectd" is an unknown event kind for CAR 0.60.0; the closest: "action_rejected"'
    )
    assert kinds[1]["message"] == (
        '"zzzz" is an unknown event kind for CAR 0.60.0; none of its kinds is within 3 edits'
    )
    # A value of any size is cut as every message is, and costs no distance computation.
    assert kinds[2]["message"].endswith("[message truncated: 5079 bytes]")


def test_the_kinds_are_the_checked_releases(tmp_path: Path) -> None:
    """``model_call_refused`` is new in CAR 0.60.0: checked against 0.58.0 it is unknown, and the
    seed schema is named as what it is."""
    data = _line("model_call_refused")
    report = _every_path(tmp_path, data, car_version="0.58.0")
    (finding,) = [f for f in report["findings"] if f["pointer"] == "/kind"]
    assert finding["message"] == (
        '"model_call_refused" is an unknown event kind for CAR 0.58.0; '
        "none of its kinds is within 3 edits"
    )
    report = _every_path(tmp_path, _line("run_startd"), car_version="seed")
    (finding,) = [f for f in report["findings"] if f["pointer"] == "/kind"]
    assert finding["message"] == (
        '"run_startd" is an unknown event kind for the seed wire schema '
        '(car-wire-schema.v1.json); the closest: "run_started"'
    )


def test_the_unknown_kind_is_redacted(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text(_line("sk-live-SECRET-kind"), encoding="utf-8")
    report = pf.check_journal(path).redacted()
    (finding,) = [f for f in report.findings if f.pointer == "/kind"]
    assert finding.message == (
        "*** is an unknown event kind for CAR 0.60.0; none of its kinds is within 3 edits"
    )


PORTS = {
    "properties": {
        "listen": {
            "oneOf": [
                {"type": "string"},
                {"type": "object", "properties": {"port": {"type": "integer", "minimum": 1}}},
            ]
        },
        "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    }
}


def test_a_failing_composite_names_its_closest_branch_error(backend: str) -> None:
    validator = pf.Validator(PORTS)
    instance = {"listen": {"port": 0}, "either": None}
    findings = list(validator.iter_errors(instance))
    assert [(f.pointer, f.kind) for f in findings] == [("/either", "anyOf"), ("/listen", "oneOf")]
    either, listen = findings
    # The composite keeps its location and words; the closest branch error is beside them.
    assert listen.message.endswith(
        "is not valid under any of the schemas listed in the 'oneOf' keyword"
    )
    assert listen.best_match == pf.BestMatch(
        "/listen/port",
        "/properties/listen/oneOf/1/properties/port/minimum",
        "0 is less than the minimum of 1",
    )
    assert listen.best_match.kind == "minimum"
    # Two branches equally close: neither is named (python-jsonschema's best_match stops too).
    assert either.best_match is None
    assert [f.best_match for f in validator.validate_json(json.dumps(instance)).findings] == [
        None,
        listen.best_match,
    ]
    assert validator.iter_errors_many([instance])[0] == findings
    # The JSON report carries it (null where there is none), and reads it back.
    data = listen.to_dict()
    assert data["best_match"] == {
        "pointer": "/listen/port",
        "schema_pointer": "/properties/listen/oneOf/1/properties/port/minimum",
        "message": "0 is less than the minimum of 1",
    }
    assert either.to_dict()["best_match"] is None
    assert pf.Finding.from_dict(data) == listen


def test_the_text_line_shows_the_closest_branch_on_a_second_line() -> None:
    from pairling_fast.output import finding_line

    (finding,) = pf.Validator(PORTS).iter_errors({"listen": {"port": "x\n"}})
    assert finding_line(finding).splitlines() == [
        "<input> /listen: error PF101: "
        '{"port":"x\\n"} is not valid under any of the schemas listed in the \'oneOf\' keyword',
        '      closest branch: /listen/port: "x\\n" is not of type "integer" '
        "(/properties/listen/oneOf/1/properties/port/type)",
    ]
