"""A failing ``oneOf``/``anyOf`` names its closest branch (``Finding.best_match``) on every path
``check`` takes, on both backends alike: a capability map, an RPC result and params, a
transcript's results and params (under ``/result`` and ``/params``), a journal payload schema's
(under ``/data``); and it travels with the finding: the JSON report, the text, SARIF and GitHub
formats, pickling (a Dask task's findings), a ``--state`` entry and ``check --follow`` resuming from
one. Each document is a real one (examples/, CAR's own session fixture) with one value broken.

The expected closest branches are written out once and both backends must give them; they are
python-jsonschema's ``best_match`` picks (docs/reports.md; tests/test_schema_suite.py holds the
rule to it over the official suite).
"""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import Cli

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast._fallback.journal import car_payloads
from pairling_fast.journal.state_file import fingerprint
from pairling_fast.map_diff_output import render_diff
from pairling_fast.report import BestMatch, Finding

EXAMPLES = Path(__file__).parents[1] / "examples"
CAR_SESSION = Path(__file__).with_name("data") / "car" / "car-server-core-0.60.0.session.jsonl"

# A release_membership whose flag is a string: the oneOf [release_membership, null] fails, and
# the closest branch is the flag's type.
MAP_BEST = BestMatch(
    "/implementations/0/release_membership/physical_device_required",
    "/$defs/release_membership/properties/physical_device_required/type",
    '"sometimes" is not of type "boolean"',
)
# A tools.poll chunk whose progress fraction is a string: ToolStreamChunk's oneOf fails, and the
# progress branch comes closest.
POLL_BEST = BestMatch(
    "/chunks/0/fraction",
    "/definitions/ToolStreamChunk/oneOf/2/properties/fraction/type",
    '"half" is not of type "number"',
)
# runs.record_model_turn's token_usage (anyOf [RunModelTokenUsage, null]) with a string count.
USAGE = {"completion_tokens": "ten", "context_window": 1, "prompt_tokens": 1, "total_tokens": 1}
USAGE_BEST = BestMatch(
    "/token_usage/completion_tokens",
    "/definitions/RunModelTokenUsage/properties/completion_tokens/type",
    '"ten" is not of type "integer"',
)


def _broken_map() -> dict[str, Any]:
    document = json.loads((EXAMPLES / "maps" / "capability-map.json").read_text("utf-8"))
    document["implementations"][0]["release_membership"]["physical_device_required"] = "sometimes"
    return document


def _poll_result() -> dict[str, Any]:
    for line in (EXAMPLES / "transcripts" / "session.jsonl").read_text("utf-8").splitlines():
        result = json.loads(line).get("result")
        if isinstance(result, dict) and "chunks" in result:
            broken = copy.deepcopy(result)
            broken["chunks"][0] = {"kind": "progress", "fraction": "half"}
            return broken
    raise AssertionError("the example transcript has no tools.poll result")


def _record_model_turn(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "run_id": "run-1",
        "turn_index": 0,
        "model_id": "remote/acme-large@2025-09",
        "assistant_text": "done",
        "duration_ms": 12,
        "token_usage": usage,
    }


def _composites(report: pf.Report) -> list[Finding]:
    return [f for f in report.findings if f.kind in ("oneOf", "anyOf")]


def test_a_map(backend: _backend.Engine) -> None:
    [finding] = _composites(pf.check_map(_broken_map()))
    assert finding.pointer == "/implementations/0/release_membership"
    assert finding.best_match == MAP_BEST


def test_an_rpc_result(backend: _backend.Engine) -> None:
    [finding] = _composites(pf.check_rpc_result("tools.poll", _poll_result(), car_version="0.60.0"))
    assert (finding.pointer, finding.best_match) == ("", POLL_BEST)


def test_rpc_params(backend: _backend.Engine) -> None:
    params = _record_model_turn(USAGE)
    report = pf.check_rpc_params("runs.record_model_turn", params, car_version="0.60.0")
    [finding] = report.findings
    assert (finding.pointer, finding.best_match) == ("/token_usage", USAGE_BEST)
    valid = _record_model_turn({**USAGE, "completion_tokens": 10})
    assert pf.check_rpc_params("runs.record_model_turn", valid, car_version="0.60.0").ok


def _under(prefix: str, best: BestMatch) -> BestMatch:
    return BestMatch(prefix + best.pointer, best.schema_pointer, best.message)


def test_a_transcript_puts_them_under_result_and_params(backend: _backend.Engine) -> None:
    """CAR's own 0.60.0 session with a tools.poll exchange and a runs.record_model_turn request
    added: each finding, and its closest branch, is located in the message."""
    lines = CAR_SESSION.read_text("utf-8").splitlines()
    added = [
        {"jsonrpc": "2.0", "id": "poll", "method": "tools.poll", "params": {"handle": "h"}},
        {"jsonrpc": "2.0", "id": "poll", "result": _poll_result()},
        {
            "jsonrpc": "2.0",
            "id": "turn",
            "method": "runs.record_model_turn",
            "params": _record_model_turn(USAGE),
        },
    ]
    text = [line.encode() for line in lines] + [json.dumps(m).encode() for m in added]
    found = {
        (f.line, f.pointer): f.best_match
        for f in pf.check_transcript(text).findings
        if f.best_match is not None
    }
    assert found == {
        (len(lines) + 2, "/result"): _under("/result", POLL_BEST),
        (len(lines) + 3, "/params/token_usage"): _under("/params", USAGE_BEST),
    }


def test_a_journal_payload_schema_puts_them_under_data() -> None:
    """The fallback's half (the core's: car_payloads::tests): no bundled release covers a kind's
    payload yet (``coverage.journal_event_payloads.covered`` is empty), so a bundle made for the
    test covers one."""
    bundle = {
        "coverage": {"journal_event_payloads": {"covered": ["run_started"]}},
        "schemas": {
            car_payloads.covered_schema_name("run_started"): {
                "type": "object",
                "properties": {
                    "limit": {
                        "anyOf": [
                            {"type": "object", "properties": {"max": {"type": "integer"}}},
                            {"type": "null"},
                        ]
                    }
                },
            }
        },
    }
    rules = car_payloads.Payloads("0.58.0", bundle, ["run_started"])
    [finding] = rules.findings("run_started", {"limit": {"max": "ten"}}, "warn", 1)
    assert finding.pointer == "/data/limit"
    assert finding.best_match == (
        "/data/limit/max",
        "/properties/limit/anyOf/0/properties/max/type",
        '"ten" is not of type "integer"',
    )


def test_an_unknown_event_kind_is_named_and_has_no_closest_branch(
    backend: _backend.Engine,
) -> None:
    """The bundled event schemas' one composite, EventKind's oneOf of enums: every branch fails
    alike, so none is named; the finding names the closest kinds instead."""
    event = {"kind": "action_rejectd", "run_id": None, "timestamp": "2026-01-01T00:00:00Z"}
    [finding] = _composites(pf.check_journal((json.dumps({**event, "data": {}}) + "\n").encode()))
    assert finding.best_match is None
    assert '"action_rejectd" is an unknown event kind for CAR' in finding.message


def test_the_engine_record_carries_it_through_pickle(backend: _backend.Engine) -> None:
    """A Dask task's findings come back pickled (journal/cluster.py): the field travels."""
    raw = backend.RawFinding("PF101", "error", "m", 3, "/a", "/oneOf", ("/a/b", "/oneOf/0", "n"))
    again = pickle.loads(pickle.dumps(raw))
    assert again == raw
    assert Finding.from_raw(again).best_match == BestMatch("/a/b", "/oneOf/0", "n")
    assert "best_match=('/a/b', '/oneOf/0', 'n')" in repr(raw)


def _resumed_state(backend: _backend.Engine, finding: dict[str, Any]) -> dict[str, Any]:
    """A stream's ``--state`` entry whose checker state lists ``finding`` (by name), as one
    backend's snapshot after one line; the other backend reads it alike."""
    with pf.JournalStream(backend=_backend.name_of(backend)) as stream:
        stream.feed(b"\n")
        entry = stream.state()
    checker = json.loads(entry["checker"])
    checker["findings"].append(finding)
    checker["errors"] += 1
    return {**entry, "checker": json.dumps(checker)}


SAVED = {
    "code": "PF101",
    "severity": "error",
    "message": "m",
    "line": 1,
    "pointer": "/data/limit",
    "schema_pointer": "/properties/limit/anyOf",
    "best_match": ["/data/limit/max", "/properties/limit/anyOf/0/properties/max/type", "n"],
}


@pytest.mark.parametrize("reader", _backend.BACKENDS)
def test_a_saved_state_keeps_it_by_name_for_either_backend(
    backend: _backend.Engine, reader: str
) -> None:
    entry = _resumed_state(backend, SAVED)
    stream = pf.JournalStream(state=entry, backend=reader)
    report = stream.close()
    [restored] = [f for f in report.findings if f.code == "PF101"]
    assert restored.best_match == BestMatch(*SAVED["best_match"])
    # As the engine writes it again, and as check --follow rebuilds a saved finding.
    again = json.loads(pf.JournalStream(state=entry, backend=reader).state()["checker"])
    assert again["findings"][-1] == SAVED
    engine = _backend.resolve(reader)
    assert Finding.from_raw(engine.RawFinding(**SAVED)) == Finding.from_raw(
        engine.RawFinding(**{**SAVED, "best_match": tuple(SAVED["best_match"])})
    )
    assert restored == Finding.from_raw(engine.RawFinding(**SAVED))


def test_a_state_finding_of_another_shape_is_refused(backend: _backend.Engine) -> None:
    for finding in (
        {**SAVED, "surplus": 1},
        {**SAVED, "best_match": ["/a", "/b"]},
        ["PF101", "error", "m", 1, "", None],
    ):
        entry = _resumed_state(backend, {})
        checker = json.loads(entry["checker"])
        checker["findings"][-1] = finding
        with pytest.raises(pf.JournalStateError):
            pf.JournalStream(state={**entry, "checker": json.dumps(checker)})
    assert fingerprint(pf.JournalStream().options)["rules"] >= 4


@pytest.fixture(params=_backend.BACKENDS)
def cli(request: pytest.FixtureRequest, tmp_path: Path) -> Cli:
    (tmp_path / "capability-map.json").write_text(json.dumps(_broken_map(), indent=1), "utf-8")
    (tmp_path / "tools.poll.result.json").write_text(json.dumps(_poll_result()), "utf-8")
    return Cli(request.param, tmp_path)


def test_every_format_shows_it(cli: Cli) -> None:
    """The JSON report's ``best_match`` (report_version 1's field), a second line in text, the
    message and ``properties.bestMatch`` in SARIF, the annotation's second line on GitHub."""
    name = "capability-map.json"
    report = json.loads(cli("check", name, "--format", "json").stdout)
    [finding] = [f for f in report["files"][0]["findings"] if f["best_match"]]
    assert finding["best_match"] == MAP_BEST.to_dict()
    closest = f"closest branch: {MAP_BEST.pointer}: {MAP_BEST.message} ({MAP_BEST.schema_pointer})"
    assert f"      {closest}\n" in cli("check", name).stdout
    sarif = json.loads(cli("check", name, "--format", "sarif").stdout)
    [result] = [r for r in sarif["runs"][0]["results"] if "bestMatch" in r["properties"]]
    assert result["properties"]["bestMatch"] == MAP_BEST.to_dict()
    assert result["message"]["text"].endswith("\n" + closest)
    github = cli("check", name, "--format", "github").stdout
    assert "%0A" + closest in github
    lines = cli("check", name, "--format", "jsonl").stdout.splitlines()
    assert MAP_BEST.to_dict() in [json.loads(line)["best_match"] for line in lines]


def test_a_map_diff_shows_it(backend: _backend.Engine) -> None:
    """``pairling-fast diff``'s text, markdown and SARIF name NEW's closest branch too."""
    old = json.loads((EXAMPLES / "maps" / "capability-map.json").read_text("utf-8"))
    diff = pf.diff_maps(old, _broken_map())
    [finding] = _composites(diff.new.report)
    assert finding.best_match == MAP_BEST
    closest = f"closest branch: {MAP_BEST.pointer}: {MAP_BEST.message}"
    for format_name in ("text", "markdown"):
        assert closest in render_diff(diff, format_name), format_name
    sarif = json.loads(render_diff(diff, "sarif"))
    assert any(closest in r["message"]["text"] for r in sarif["runs"][0]["results"])
