"""CAR wire checks (issue 5): RPC results, JSON-RPC transcripts and the wire-schema bundle.

Every broken input is derived from a clean one (the example session, the bundled wire schema) by
one mutation, and must fire its own code; every case runs on both backends, and the parity tests
compare the two backends finding for finding.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import pairling_fast
from pairling_fast import _backend, schemas
from pairling_fast.report import Report

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "transcripts" / "session.jsonl"
# The example session is a CAR 0.58.0 session: its handshake and server.schema name this bundle.
WIRE = Path(schemas.bundle_path("0.58.0"))
WIRE_DIGEST = hashlib.sha256(WIRE.read_bytes()).hexdigest()
BUNDLE = json.loads(WIRE.read_bytes())

Messages = list[dict[str, Any]]


def session() -> Messages:
    return [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]


def as_lines(messages: Messages) -> list[str]:
    return [json.dumps(message) for message in messages]


def index_of(messages: Messages, request_id: Any, *, request: bool) -> int:
    for index, message in enumerate(messages):
        if message.get("id") == request_id and ("method" in message) == request:
            return index
    raise LookupError(request_id)


def result_of(messages: Messages, method: str) -> Any:
    """The first result answering a request for ``method`` in ``messages``."""
    for message in messages:
        if message.get("method") == method:
            return messages[index_of(messages, message["id"], request=False)]["result"]
    raise LookupError(method)


def located(report: Report) -> list[tuple[Any, ...]]:
    return [(f.code, f.severity, f.pointer, f.line, f.schema_pointer) for f in report.findings]


def codes(report: Report) -> set[str]:
    return {finding.code for finding in report.findings}


def on_both(run: Callable[[], Report]) -> dict[str, Report]:
    reports = {}
    for name in _backend.BACKENDS:
        with _backend.selected(name):
            reports[name] = run()
    return reports


def assert_parity(run: Callable[[], Report]) -> Report:
    reports = on_both(run)
    rust, python = reports["rust"], reports["python"]
    assert located(rust) == located(python)
    assert rust.stats == python.stats
    return rust


# ---------------------------------------------------------------------------------------------
# The clean example


def test_example_session_passes_clean(backend: _backend.Engine) -> None:
    report = pairling_fast.check_transcript(EXAMPLE, wire_schema=WIRE)
    assert report.findings == []
    assert report.stats == {
        "lines": 41,
        "blank_lines": 0,
        "messages": 41,
        "requests": 20,
        "notifications": 1,
        "responses": 20,
        "error_responses": 1,
        "max_in_flight": 2,
        "unanswered": 0,
        "unmatched_responses": 0,
        "params_validated": 1,
        "car_version": "0.58.0",
    }


def test_example_session_calls_every_covered_method() -> None:
    methods = {message["method"] for message in session() if "method" in message}
    assert set(BUNDLE["coverage"]["rpc_results"]["covered"]) <= methods


@pytest.mark.parametrize(
    "source_kind", ["path", "binary file", "text file", "lines", "bytes lines"]
)
def test_every_transcript_source_gives_the_same_report(
    backend: _backend.Engine, source_kind: str, tmp_path: Path
) -> None:
    broken = session()
    broken[index_of(broken, 7, request=False)]["result"]["count"] = 5
    text = "\n".join(as_lines(broken)) + "\n"
    path = tmp_path / "broken.jsonl"
    path.write_text(text, encoding="utf-8")
    sources: dict[str, Callable[[], Any]] = {
        "path": lambda: path,
        "binary file": lambda: io.BytesIO(text.encode()),
        "text file": lambda: io.StringIO(text),
        "lines": lambda: text.splitlines(),
        "bytes lines": lambda: [line.encode() for line in text.splitlines(keepends=True)],
    }
    report = pairling_fast.check_transcript(sources[source_kind]())
    assert located(report) == [("PF403", "error", "/result/count", 14, None)]
    assert report.findings[0].path == (str(path) if source_kind == "path" else None)


# ---------------------------------------------------------------------------------------------
# Transcript twins: one mutation of the clean session each, and the finding it must cause


def _drop(request_id: Any, *, request: bool) -> Callable[[Messages], None]:
    def mutate(messages: Messages) -> None:
        del messages[index_of(messages, request_id, request=request)]

    return mutate


def _response(
    request_id: Any, change: Callable[[dict[str, Any]], None]
) -> Callable[[Messages], None]:
    def mutate(messages: Messages) -> None:
        change(messages[index_of(messages, request_id, request=False)])

    return mutate


def _result(request_id: Any, change: Callable[[Any], None]) -> Callable[[Messages], None]:
    return _response(request_id, lambda message: change(message["result"]))


def _set(path: str, value: Any) -> Callable[[Any], None]:
    *parents, last = path.split("/")

    def change(document: Any) -> None:
        for token in parents:
            document = document[int(token) if isinstance(document, list) else token]
        document[int(last) if isinstance(document, list) else last] = value

    return change


def _swap_models(result: Any) -> None:
    models = result["models"]
    models[0], models[1] = models[1], models[0]


def _duplicate_model(result: Any) -> None:
    result["models"].insert(1, copy.deepcopy(result["models"][0]))


def _reuse_id(messages: Messages) -> None:
    # id 7 is requested while id 6 is still in flight; both answers then name id 6 or 7.
    messages[index_of(messages, 7, request=True)]["id"] = 6


def _replace_line(index: int, text: str) -> Callable[[Messages], None]:
    def mutate(messages: Messages) -> None:
        messages[index] = {"__raw__": text}

    return mutate


# name: (mutation, the findings it must cause as (code, severity, pointer, line))
TRANSCRIPT_TWINS: dict[str, tuple[Callable[[Messages], None], list[tuple[Any, ...]]]] = {
    "request never answered": (
        _drop(12, request=False),
        [("PF424", "warning", "/id", 28)],
    ),
    "response without request": (
        _drop(12, request=True),
        [("PF422", "error", "/id", 28)],
    ),
    "duplicate id in flight": (
        _reuse_id,
        [("PF423", "error", "/id", 12), ("PF422", "error", "/id", 14)],
    ),
    "missing jsonrpc": (
        _response(8, lambda message: message.pop("jsonrpc")),
        [("PF420", "error", "", 16)],
    ),
    "wrong jsonrpc version": (
        _response(8, _set("jsonrpc", "1.0")),
        [("PF420", "error", "/jsonrpc", 16)],
    ),
    "both result and error": (
        _response(8, _set("error", {"code": -32000, "message": "boom"})),
        [("PF420", "error", "", 16)],
    ),
    "error code not an integer": (
        _response(17, _set("error/code", "-32601")),
        [("PF421", "error", "/error/code", 39)],
    ),
    "error object with an extra member": (
        _response(17, _set("error/detail", "x")),
        [("PF421", "error", "/error/detail", 39)],
    ),
    "error object not an object": (
        _response(17, _set("error", "method not found")),
        [("PF421", "error", "/error", 39)],
    ),
    "float id": (
        _response(8, _set("id", 8.5)),
        [("PF424", "warning", "/id", 15), ("PF420", "error", "/id", 16)],
    ),
    "params neither array nor object": (
        lambda messages: _set("params", 3)(messages[index_of(messages, 8, request=True)]),
        [("PF420", "error", "/params", 15)],
    ),
    "not JSON": (
        _replace_line(15, '{"jsonrpc": "2.0", "id": 8, "result": }'),
        [("PF424", "warning", "/id", 15), ("PF001", "error", "", 16)],
    ),
    "schema violation": (
        _response(8, _set("result", "done")),
        [("PF101", "error", "/result", 16)],
    ),
    "tools.list count": (
        _result(7, _set("count", 3)),
        [("PF403", "error", "/result/count", 14)],
    ),
    "capabilities.list count": (
        _result(3, _set("count", 2)),
        [("PF403", "error", "/result/count", 6)],
    ),
    "infer usage total": (
        _result(12, _set("usage/total_tokens", 2000)),
        [("PF404", "warning", "/result/usage/total_tokens", 29)],
    ),
    "infer catalog revision": (
        _result(12, _set("catalog_revision", "0" * 64)),
        [("PF410", "error", "/result/catalog_revision", 29)],
    ),
    "infer model not in snapshot": (
        _result(12, _set("resolved_model_id", "remote/unknown@2025-01")),
        [("PF411", "error", "/result/resolved_model_id", 29)],
    ),
    "infer row digest": (
        _result(12, _set("row_digest", "f" * 64)),
        [("PF412", "error", "/result/row_digest", 29)],
    ),
    "poll failed without error": (
        _result("run-2", lambda result: result.pop("error")),
        [("PF405", "error", "/result", 26)],
    ),
    "poll failed, error differs from its chunk": (
        _result("run-2", _set("error", "2 tests failed")),
        [("PF405", "error", "/result/error", 26)],
    ),
    "poll failed, last chunk not terminal": (
        _result("run-2", lambda result: result["chunks"].reverse()),
        [("PF406", "error", "/result/chunks/0", 26), ("PF406", "error", "/result/chunks/1", 26)],
    ),
    "poll running with a terminal chunk": (
        _result("run-1", lambda result: result["chunks"].append({"kind": "done"})),
        [("PF406", "error", "/result/chunks/2", 25)],
    ),
    "snapshot not sorted": (
        _result(4, _swap_models),
        [
            ("PF407", "error", "/result/models/1/model/id", 8),
            ("PF439", "error", "/result/catalog_revision", 8),
        ],
    ),
    "snapshot duplicate id": (
        _result(4, _duplicate_model),
        [
            ("PF408", "error", "/result/models/1/model/id", 8),
            ("PF439", "error", "/result/catalog_revision", 8),
        ],
    ),
    "snapshot row digest": (
        _result(4, _set("models/2/row_digest", "0" * 64)),
        [
            ("PF409", "error", "/result/models/2/row_digest", 8),
            ("PF439", "error", "/result/catalog_revision", 8),
        ],
    ),
    "server.schema digest": (
        _result(2, _set("digest", "0" * 64)),
        [("PF414", "error", "/result/digest", 4), ("PF438", "warning", "/result/digest", 4)],
    ),
    "uncovered method": (
        _response(17, lambda message: (message.pop("error"), message.update(result={}))),
        [("PF401", "info", "/result", 39)],
    ),
    "unknown method": (
        lambda messages: _set("method", "tools.describe")(
            messages[index_of(messages, 18, request=True)]
        ),
        [("PF402", "warning", "/result", 41)],
    ),
    "neither request nor response": (
        _response(8, lambda message: message.pop("result")),
        [("PF424", "warning", "/id", 15), ("PF420", "error", "", 16)],
    ),
}


def twin_lines(name: str) -> list[str]:
    messages = session()
    mutate, _expected = TRANSCRIPT_TWINS[name]
    mutate(messages)
    return [
        message["__raw__"] if "__raw__" in message else json.dumps(message) for message in messages
    ]


@pytest.mark.parametrize("name", sorted(TRANSCRIPT_TWINS))
def test_transcript_twin_fires_its_code(backend: _backend.Engine, name: str) -> None:
    report = pairling_fast.check_transcript(twin_lines(name), wire_schema=WIRE)
    found = [(f.code, f.severity, f.pointer, f.line) for f in report.findings]
    assert found == TRANSCRIPT_TWINS[name][1]


@pytest.mark.parametrize("name", sorted(TRANSCRIPT_TWINS))
def test_transcript_twin_parity(name: str) -> None:
    lines = twin_lines(name)
    assert_parity(lambda: pairling_fast.check_transcript(lines, wire_schema=WIRE))


def test_row_digest_error_shows_both_values(backend: _backend.Engine) -> None:
    report = pairling_fast.check_transcript(twin_lines("snapshot row digest"))
    finding = report.findings[0]
    assert finding.code == "PF409"
    assert "0" * 64 in finding.message
    row = result_of(session(), "models.catalog_snapshot")["models"][2]
    assert row["row_digest"] in finding.message


def test_blank_lines_and_crlf_are_accepted(backend: _backend.Engine) -> None:
    lines = [line + "\r\n" for line in as_lines(session())]
    lines.insert(3, "   \n")
    report = pairling_fast.check_transcript(lines)
    assert report.findings == []
    assert report.stats["blank_lines"] == 1
    assert report.stats["lines"] == 42


def test_null_id_error_response_pairs_with_nothing(backend: _backend.Engine) -> None:
    lines = [
        '{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}',
        '{"jsonrpc": "2.0", "id": null, "result": "ok"}',
        '{"jsonrpc": "2.0", "id": true, "method": "state.get"}',
        '["not", "an", "object"]',
        '{"jsonrpc": "2.0", "method": 5}',
    ]
    report = pairling_fast.check_transcript(lines)
    assert [(f.code, f.pointer, f.line) for f in report.findings] == [
        ("PF420", "/id", 2),
        ("PF420", "/id", 3),
        ("PF420", "", 4),
        ("PF420", "/method", 5),
    ]
    assert report.stats["error_responses"] == 1


def test_duplicate_response_while_waiting_for_its_request(backend: _backend.Engine) -> None:
    lines = [
        '{"jsonrpc": "2.0", "id": "a", "result": "ok"}',
        '{"jsonrpc": "2.0", "id": "a", "result": "ok"}',
        '{"jsonrpc": "2.0", "id": "a", "method": "state.set"}',
    ]
    report = pairling_fast.check_transcript(lines)
    assert [(f.code, f.pointer, f.line) for f in report.findings] == [("PF423", "/id", 2)]


def test_undecodable_lines_are_located(backend: _backend.Engine) -> None:
    lines = [
        b'{"jsonrpc": "2.0", "id": 1, "method": "state.get"}\n',
        b'{"jsonrpc": "2.0", "id": 1, "result": "caf\xe9"}\n',
        '{"jsonrpc": "2.0", "id": 2, "method": "state.get", "params": ["\ud800"]}',
        '{"jsonrpc": "2.0", "id": 3, "method": "state.get", "params": ["\\ud800"]}',
        "[" * 600 + "]" * 600,
    ]
    report = pairling_fast.check_transcript(lines)
    assert [(f.code, f.line) for f in report.findings] == [
        ("PF424", 1),
        ("PF003", 2),
        ("PF003", 3),
        ("PF004", 4),
        ("PF008", 5),
    ]


def test_transcript_parity_on_undecodable_lines() -> None:
    lines = [b'{"id": 1, "result": "caf\xe9"}', b'{"a": 1, "a": 2}', b"[1e400]", b"{"]
    assert_parity(lambda: pairling_fast.check_transcript(lines))


def test_a_transcript_source_of_the_wrong_type_is_refused(backend: _backend.Engine) -> None:
    with pytest.raises(TypeError, match="not bytes"):
        pairling_fast.check_transcript(b'{"jsonrpc": "2.0"}')
    with pytest.raises(TypeError, match="must be bytes or str"):
        pairling_fast.check_transcript([1, 2])


def test_a_missing_transcript_file_raises(backend: _backend.Engine, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        pairling_fast.check_transcript(tmp_path / "missing.jsonl")


# ---------------------------------------------------------------------------------------------
# check_rpc_result


def test_every_result_of_the_session_passes(backend: _backend.Engine) -> None:
    messages = session()
    snapshot = result_of(messages, "models.catalog_snapshot")
    for message in messages:
        if "method" not in message or "id" not in message:
            continue
        response = messages[index_of(messages, message["id"], request=False)]
        if "result" not in response:
            continue
        report = pairling_fast.check_rpc_result(
            message["method"],
            response["result"],
            catalog=snapshot,
            wire_schema=WIRE,
            car_version="0.58.0",
        )
        assert report.findings == [], message["method"]
        assert report.stats == {
            "method": message["method"],
            "coverage": "covered",
            "car_version": "0.58.0",
        }


def test_uncovered_and_unknown_methods(backend: _backend.Engine) -> None:
    uncovered = pairling_fast.check_rpc_result("models.route", {"anything": True})
    assert [(f.code, f.severity, f.pointer) for f in uncovered.findings] == [("PF401", "info", "")]
    assert "unchecked: no schema in CAR 0.60.0's wire schema" in uncovered.findings[0].message
    assert uncovered.ok
    unknown = pairling_fast.check_rpc_result("tools.describe", {})
    assert [(f.code, f.severity) for f in unknown.findings] == [("PF402", "warning")]
    assert unknown.stats == {
        "method": "tools.describe",
        "coverage": "unknown",
        "car_version": "0.60.0",
    }


def test_schema_violation_skips_the_semantic_checks(backend: _backend.Engine) -> None:
    report = pairling_fast.check_rpc_result("tools.list", {"count": 3, "tools": [], "extra": 1})
    assert [(f.code, f.pointer) for f in report.findings] == [("PF101", "")]
    assert report.findings[0].schema_pointer == "/additionalProperties"


def test_infer_cross_checked_against_a_given_catalog(backend: _backend.Engine) -> None:
    messages = session()
    snapshot = result_of(messages, "models.catalog_snapshot")
    infer = result_of(messages, "infer")
    assert pairling_fast.check_rpc_result("infer", infer, catalog=snapshot).findings == []
    assert pairling_fast.check_rpc_result("infer", infer).findings == []
    other = copy.deepcopy(snapshot)
    other["catalog_revision"] = "1" * 64
    other["models"][1]["row_digest"] = "2" * 64
    report = pairling_fast.check_rpc_result("infer", infer, catalog=other)
    assert [(f.code, f.pointer) for f in report.findings] == [
        ("PF410", "/catalog_revision"),
        ("PF412", "/row_digest"),
    ]


def test_a_catalog_that_is_not_a_snapshot(backend: _backend.Engine) -> None:
    infer = result_of(session(), "infer")
    report = pairling_fast.check_rpc_result("infer", infer, catalog={"models": []})
    assert [(f.code, f.pointer) for f in report.findings] == [("PF413", None)]


def test_server_schema_digest_against_a_wire_schema_file(
    backend: _backend.Engine, tmp_path: Path
) -> None:
    result = result_of(session(), "server.schema")
    assert pairling_fast.check_rpc_result("server.schema", result, wire_schema=WIRE).ok
    reformatted = tmp_path / "wire-schema.json"
    reformatted.write_text(json.dumps(json.loads(WIRE.read_bytes()), indent=1))
    report = pairling_fast.check_rpc_result("server.schema", result, wire_schema=reformatted)
    [finding] = report.findings
    assert (finding.code, finding.pointer) == ("PF414", "/digest")
    assert pairling_fast.wire_schema_digest(reformatted) in finding.message


def test_a_result_that_is_not_json(backend: _backend.Engine) -> None:
    report = pairling_fast.check_rpc_result("state.get", {"ratio": float("nan")})
    assert [(f.code, f.pointer) for f in report.findings] == [("PF006", "/ratio")]


def test_poll_succeeded_without_result(backend: _backend.Engine) -> None:
    poll = {
        "handle": "h",
        "tool": "t",
        "action_id": "a",
        "status": "succeeded",
        "chunks": [{"kind": "done", "result": 1}],
    }
    report = pairling_fast.check_rpc_result("tools.poll", poll)
    assert [(f.code, f.pointer) for f in report.findings] == [("PF405", "")]
    assert pairling_fast.check_rpc_result("tools.poll", {**poll, "chunks": [], "result": 1}).ok
    assert pairling_fast.check_rpc_result("tools.poll", None).findings == []


RPC_CASES: dict[str, tuple[str, Any]] = {
    "count": ("capabilities.list", {"caller_role": "owner", "count": 1.0, "methods": []}),
    "usage": (
        "infer",
        {
            **result_of(session(), "infer"),
            "usage": {**result_of(session(), "infer")["usage"], "total_tokens": 1},
        },
    ),
    "snapshot": ("models.catalog_snapshot", {"catalog_revision": "r", "models": []}),
    "uncovered": ("a2a.send", [1, 2]),
    "unknown": ("nope", 1),
    "violation": ("state.keys", ["a", 1, None]),
}


@pytest.mark.parametrize("name", sorted(RPC_CASES))
def test_rpc_result_parity(name: str) -> None:
    method, result = RPC_CASES[name]
    assert_parity(lambda: pairling_fast.check_rpc_result(method, result))


# ---------------------------------------------------------------------------------------------
# The wire-schema bundle


def test_bundled_wire_schema_passes_clean(backend: _backend.Engine) -> None:
    report = pairling_fast.check_wire_schema(WIRE)
    assert report.findings == []
    assert report.stats == {"digest": WIRE_DIGEST, "schemas": 19, "car_version": "0.58.0"}


def test_wire_schema_digest_is_over_the_exact_bytes(backend: _backend.Engine) -> None:
    assert pairling_fast.wire_schema_digest(WIRE) == WIRE_DIGEST
    assert result_of(session(), "server.schema")["digest"] == WIRE_DIGEST


def _kinds(bundle: Any) -> list[Any]:
    return bundle["schemas"]["journal.event"]["definitions"]["EventKind"]["oneOf"]


def _drop_listed_kind(bundle: Any) -> None:
    bundle["coverage"]["journal_event_payloads"]["uncovered"].remove("gate_accepted")


def _rename_enum_kind(bundle: Any) -> None:
    kinds = _kinds(bundle)[0]["enum"]
    kinds[kinds.index("gate_accepted")] = "gate_reopened"


def _unlisted_schema(bundle: Any) -> None:
    bundle["schemas"]["type.tool_receipt"] = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
    }


def _listed_without_schema(bundle: Any) -> None:
    del bundle["schemas"]["type.action_result"]


def _unsorted(bundle: Any) -> None:
    uncovered = bundle["coverage"]["rpc_results"]["uncovered"]
    uncovered[10], uncovered[11] = uncovered[11], uncovered[10]


def _wrong_total(bundle: Any) -> None:
    bundle["coverage"]["rpc_results"]["total"] += 1


def _covered_and_uncovered(bundle: Any) -> None:
    rpc = bundle["coverage"]["rpc_results"]
    rpc["uncovered"] = sorted([*rpc["uncovered"], "infer"])
    rpc["total"] += 1


def _covered_method_without_schema(bundle: Any) -> None:
    rpc = bundle["coverage"]["rpc_results"]
    rpc["uncovered"].remove("models.list")
    rpc["covered"] = sorted([*rpc["covered"], "models.list"])


def _rpc_schema_not_covered(bundle: Any) -> None:
    rpc = bundle["coverage"]["rpc_results"]
    rpc["covered"].remove("state.keys")
    rpc["uncovered"] = sorted([*rpc["uncovered"], "state.keys"])


def _listed_twice(bundle: Any) -> None:
    events = bundle["coverage"]["journal_event_payloads"]
    events["uncovered"].insert(0, "action_deduplicated")
    events["total"] += 1


def _invalid_schema(bundle: Any) -> None:
    bundle["schemas"]["rpc.tools.cancel.result"]["type"] = "objekt"


def _no_draft(bundle: Any) -> None:
    del bundle["schemas"]["rpc.tools.cancel.result"]["$schema"]


def _wrong_format(bundle: Any) -> None:
    bundle["format"] = "car.wire-schema.v2"


def _no_event_kind(bundle: Any) -> None:
    del bundle["schemas"]["journal.event"]["definitions"]["EventKind"]
    bundle["schemas"]["journal.event"]["properties"]["kind"] = {"type": "string"}


_EVENTS = BUNDLE["coverage"]["journal_event_payloads"]["uncovered"]
_COVERED = BUNDLE["coverage"]["rpc_results"]["covered"]
_UNCOVERED = BUNDLE["coverage"]["rpc_results"]["uncovered"]


def _position(listed: list[str], added: str) -> int:
    """Where ``added`` lands once inserted into the sorted list ``listed``."""
    return sorted([*listed, added]).index(added)


# name: (mutation, the findings it must cause as (code, pointer))
BUNDLE_TWINS: dict[str, tuple[Callable[[Any], None], list[tuple[str, str]]]] = {
    "drop a listed kind": (
        _drop_listed_kind,
        [
            ("PF433", "/coverage/journal_event_payloads/total"),
            ("PF436", "/coverage/journal_event_payloads"),
        ],
    ),
    "renamed EventKind": (
        _rename_enum_kind,
        [
            ("PF436", "/coverage/journal_event_payloads"),
            (
                "PF436",
                f"/coverage/journal_event_payloads/uncovered/{_EVENTS.index('gate_accepted')}",
            ),
        ],
    ),
    "schema not listed": (_unlisted_schema, [("PF431", "/schemas/type.tool_receipt")]),
    "listed without schema": (_listed_without_schema, [("PF431", "/coverage/covered/18")]),
    "unsorted list": (_unsorted, [("PF432", "/coverage/rpc_results/uncovered/11")]),
    "wrong total": (_wrong_total, [("PF433", "/coverage/rpc_results/total")]),
    "covered and uncovered": (
        _covered_and_uncovered,
        [
            (
                "PF434",
                f"/coverage/rpc_results/uncovered/{_position(_UNCOVERED, 'infer')}",
            )
        ],
    ),
    "listed twice": (
        _listed_twice,
        [("PF434", "/coverage/journal_event_payloads/uncovered/1")],
    ),
    "covered method without schema": (
        _covered_method_without_schema,
        [("PF435", f"/coverage/rpc_results/covered/{_position(_COVERED, 'models.list')}")],
    ),
    "rpc schema not covered": (
        _rpc_schema_not_covered,
        [("PF435", "/schemas/rpc.state.keys.result")],
    ),
    "invalid schema": (_invalid_schema, [("PF430", "/schemas/rpc.tools.cancel.result/type")]),
    "no draft-07": (_no_draft, [("PF430", "/schemas/rpc.tools.cancel.result")]),
    "wrong format": (_wrong_format, [("PF437", "/format")]),
    "no EventKind": (_no_event_kind, [("PF436", "/schemas/journal.event")]),
}


@pytest.fixture
def write_bundle(tmp_path: Path) -> Callable[[str], Path]:
    def write(name: str) -> Path:
        bundle = json.loads(WIRE.read_bytes())
        BUNDLE_TWINS[name][0](bundle)
        path = tmp_path / "wire-schema.json"
        path.write_text(json.dumps(bundle, indent=2), encoding="utf-8")
        return path

    return write


@pytest.mark.parametrize("name", sorted(BUNDLE_TWINS))
def test_bundle_mutation_fires_its_code(
    backend: _backend.Engine, write_bundle: Callable[[str], Path], name: str
) -> None:
    report = pairling_fast.check_wire_schema(write_bundle(name))
    found = sorted((f.code, f.pointer) for f in report.findings)
    assert found == sorted(BUNDLE_TWINS[name][1])


@pytest.mark.parametrize("name", sorted(BUNDLE_TWINS))
def test_bundle_mutation_parity(write_bundle: Callable[[str], Path], name: str) -> None:
    path = write_bundle(name)
    assert_parity(lambda: pairling_fast.check_wire_schema(path))


def test_a_bundle_that_is_not_json(backend: _backend.Engine, tmp_path: Path) -> None:
    path = tmp_path / "wire-schema.json"
    path.write_bytes(b'{\n  "format": "car.wire-schema.v1",\n  "schemas": {,\n}')
    report = pairling_fast.check_wire_schema(path)
    assert [(f.code, f.line, f.path) for f in report.findings] == [("PF001", 3, str(path))]
    assert report.stats["digest"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_bundle_that_is_not_an_object(backend: _backend.Engine, tmp_path: Path) -> None:
    path = tmp_path / "wire-schema.json"
    path.write_text("[]")
    assert [(f.code, f.pointer) for f in pairling_fast.check_wire_schema(path).findings] == [
        ("PF437", "")
    ]


@pytest.mark.parametrize("part", ["result", "params"])
def test_a_schema_named_rpc_dot_part_names_no_method(
    backend: _backend.Engine, tmp_path: Path, part: str
) -> None:
    # ``rpc.result`` is not ``rpc.<method>.result``: only "not listed in coverage.covered" (PF431),
    # not a method missing from coverage.rpc_results (PF435), on both backends.
    bundle = json.loads(Path(schemas.bundle_path("0.60.0")).read_bytes())  # with rpc_params
    bundle["schemas"][f"rpc.{part}"] = {"$schema": "http://json-schema.org/draft-07/schema#"}
    path = tmp_path / "wire-schema.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    report = pairling_fast.check_wire_schema(path)
    assert [(f.code, f.pointer) for f in report.findings] == [("PF431", f"/schemas/rpc.{part}")]


# ---------------------------------------------------------------------------------------------
# Streaming: memory bounded by the ids in flight


def _generated(messages: int) -> Iterator[str]:
    from pairling_fast.generate.transcript import generate_transcript

    return generate_transcript(messages, seed=11)


def test_large_transcript_keeps_in_flight_state_bounded(backend: _backend.Engine) -> None:
    report = pairling_fast.check_transcript(_generated(10_000))
    assert report.findings == []
    assert report.stats["messages"] == 10_000
    assert report.stats["max_in_flight"] <= 6


def test_fallback_memory_does_not_grow_with_transcript_length() -> None:
    import tracemalloc

    def peak(messages: int) -> int:
        lines = _generated(messages)
        next(lines)  # the generator's own one-off state is not the checker's
        tracemalloc.start()
        try:
            pairling_fast.check_transcript(lines)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    with _backend.selected("python"):
        pairling_fast.check_transcript(_generated(300))  # compiles and caches the validators
        short, long = peak(800), peak(4_000)
    assert long < short * 1.2, (short, long)


# ---------------------------------------------------------------------------------------------
# The transcript generator


@pytest.mark.parametrize("messages", [0, 1, 2, 3, 5, 8, 13, 250])
def test_generated_transcripts_are_valid_at_any_length(
    backend: _backend.Engine, messages: int
) -> None:
    from pairling_fast.generate.transcript import generate_transcript

    report = pairling_fast.check_transcript(list(generate_transcript(messages, seed=messages)))
    # A session cut before its handshake result is read against the newest bundle, which does not
    # inventory the daemon's tools.stream.chunk notifications: an info, nothing more.
    assert [(f.code, f.severity) for f in report.findings] in ([], [("PF440", "info")])
    assert report.stats["messages"] == messages
    assert report.stats["unanswered"] == 0


def test_generated_transcripts_depend_only_on_the_seed() -> None:
    from pairling_fast.generate.transcript import generate_transcript

    first = list(generate_transcript(400, seed=4))
    assert first == list(generate_transcript(400, seed=4))
    assert first != list(generate_transcript(400, seed=5))


def test_generate_transcript_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from pairling_fast.generate import transcript

    parser = argparse.ArgumentParser()
    transcript.add_arguments(parser)
    output = tmp_path / "generated.jsonl"
    assert transcript.run(parser.parse_args(["--messages", "60", "-o", str(output)])) == 0
    assert len(output.read_text(encoding="utf-8").splitlines()) == 60
    assert pairling_fast.check_transcript(output).findings == []
    assert transcript.run(parser.parse_args(["--messages", "-1"])) == 2
    assert "--messages" in capsys.readouterr().err
