"""Reports safe to publish: ``mask=`` in the API, ``check --redact`` (and the ``redact`` config
key) replace every instance value a message quotes, on both backends and in every format.

A secret is planted in each kind of document — a CAR journal (CAR's own fixture whose action
parameters hold a ``ghp_`` token), a capability map, an RPC result, a transcript — where checks
quote it; without ``--redact`` every format shows it (so the plant is real), with ``--redact`` no
format does, and the findings keep their codes and locations. Schema findings are masked as
jsonschema-rs masks them: the official suite's invalid cases against ``jsonschema_rs`` with the
same ``mask``.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import Cli
from test_follow import Follower
from test_schema_suite import INVALID_CASES, Case, _compiled, case_id, remotes

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast.config import ConfigError, load_config
from pairling_fast.output import FORMATS
from pairling_fast.redact import redact_message

DATA = Path(__file__).with_name("data")
EXAMPLES = Path(__file__).parents[1] / "examples"
CAR_SECRET_JOURNAL = DATA / "car" / "car-server-core-0.58.0.selfheal_recurring_builtin_secret.jsonl"
MASK = "[REDACTED]"


def _fixture_secret() -> str:
    """The token CAR's fixture logs in an action's parameters (found, not typed in here)."""
    for line in CAR_SECRET_JOURNAL.read_text(encoding="utf-8").splitlines():
        for action in json.loads(line)["event"]["data"].get("proposal", {}).get("actions", []):
            token = action.get("parameters", {}).get("api_token")
            if token:
                return str(token)
    raise AssertionError("the fixture holds no api_token")


SECRET = _fixture_secret()


def _journal() -> str:
    """CAR's fixture (its events unwrapped), with the fixture's own secret also where checks
    quote it: a payload member, a timestamp, an event kind, a line that is not JSON."""
    events = [
        json.loads(line)["event"] for line in CAR_SECRET_JOURNAL.read_text("utf-8").splitlines()
    ]
    events[0]["timestamp"] = SECRET
    events[2]["kind"] = SECRET
    events[3]["data"]["error"] = [SECRET]
    lines = [json.dumps(event) for event in events]
    lines.append(SECRET)
    lines.append('{"kind": "' + SECRET)
    return "\n".join(lines) + "\n"


def _map() -> str:
    document = json.loads((EXAMPLES / "maps" / "capability-map.json").read_text("utf-8"))
    document["observed_at"] = SECRET
    document["providers"][0]["source_refs"] = [SECRET]
    document["providers"][0]["display_name"] = {"token": SECRET}
    document["capabilities"][0]["provider_id"] = SECRET
    # A failing oneOf ([release_membership, null]) whose closest branch quotes it.
    document["implementations"][0]["release_membership"]["physical_device_required"] = SECRET
    return json.dumps(document, indent=1)


def _rpc_result() -> str:
    document = json.loads((EXAMPLES / "rpc" / "session.tools.list.result.json").read_text("utf-8"))
    document["count"] = SECRET
    document["tools"][0]["name"] = [SECRET]
    # A failing anyOf ([ToolRateLimit, null]) whose closest branch quotes it.
    document["tools"][1]["rate_limit"] = {"interval_secs": SECRET, "max_calls": 1}
    return json.dumps(document, indent=1)


def _transcript() -> str:
    lines = (EXAMPLES / "transcripts" / "session.jsonl").read_text("utf-8").splitlines()
    messages = [json.loads(line) for line in lines]
    capabilities = next(m for m in messages if "caller_role" in (m.get("result") or {}))
    capabilities["result"]["caller_role"] = SECRET
    # A tools.poll result whose chunk fails ToolStreamChunk's oneOf, its closest branch quoting it.
    poll = next(
        m for m in messages if isinstance(m.get("result"), dict) and "chunks" in m["result"]
    )
    poll["result"]["chunks"][0] = {"kind": "progress", "fraction": SECRET}
    messages.append({"jsonrpc": "2.0", "id": 99, "method": SECRET, "params": {}})
    messages.append({"jsonrpc": "2.0", "id": SECRET, "error": {"code": 1, "message": SECRET}})
    return "".join(json.dumps(message) + "\n" for message in messages)


DOCUMENTS = {
    "journal.jsonl": _journal,
    "capability-map.json": _map,
    "session.tools.list.result.json": _rpc_result,
    "transcript.jsonl": _transcript,
}


@pytest.fixture(params=_backend.BACKENDS)
def cli(request: pytest.FixtureRequest, tmp_path: Path) -> Cli:
    """The CLI on each backend, in a folder holding every planted document."""
    for name, build in DOCUMENTS.items():
        (tmp_path / name).write_text(build(), encoding="utf-8")
    return Cli(request.param, tmp_path)


def _locations(report_json: str) -> list[tuple[Any, ...]]:
    report = json.loads(report_json)
    return [
        (file["path"], f["code"], f["line"], f["pointer"], f["schema_pointer"], f["column"])
        for file in report["files"]
        for f in file["findings"]
    ]


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_format_hides_a_planted_secret(cli: Cli, name: str) -> None:
    common = ("check", name, "--max-findings", "0", "--payloads", "error")
    for format_name in FORMATS:
        shown = cli(*common, "--format", format_name)
        assert shown.returncode == 1, shown.stderr
        assert SECRET in shown.stdout, f"{format_name}: the plant is not quoted"
        hidden = cli(*common, "--format", format_name, "--redact", MASK)
        assert hidden.returncode == 1, hidden.stderr
        assert SECRET not in hidden.stdout + hidden.stderr, format_name
        assert MASK in hidden.stdout, format_name
    # Codes, lines, pointers and schema locations stay.
    shown_json = cli(*common, "--format", "json").stdout
    hidden_json = cli(*common, "--format", "json", "--redact").stdout
    assert _locations(hidden_json) == _locations(shown_json)
    assert "***" in hidden_json
    # Where a composite fails, the closest branch quotes the plant too, and is masked.
    if name in COMPOSITE_PLANTED:
        assert any(SECRET in best["message"] for best in _best_matches(shown_json)), name
        assert _best_matches(hidden_json)
        assert [(b["pointer"], b["schema_pointer"]) for b in _best_matches(hidden_json)] == [
            (b["pointer"], b["schema_pointer"]) for b in _best_matches(shown_json)
        ]


# The documents with a failing oneOf/anyOf whose closest branch stands out. A journal has none:
# the bundled event schemas' one composite, EventKind's oneOf of enums, never has one branch
# error closer than the others (tests/test_best_match_paths.py).
COMPOSITE_PLANTED = {"capability-map.json", "session.tools.list.result.json", "transcript.jsonl"}


def _best_matches(report_json: str) -> list[dict[str, Any]]:
    report = json.loads(report_json)
    return [
        f["best_match"] for file in report["files"] for f in file["findings"] if f["best_match"]
    ]


def test_the_config_key_redacts(cli: Cli) -> None:
    (cli.cwd / "pairling-fast.toml").write_text('redact = "<hidden>"\n', encoding="utf-8")
    done = cli("check", "capability-map.json", "--format", "sarif")
    assert SECRET not in done.stdout
    assert "<hidden>" in done.stdout


def test_the_config_key_is_checked() -> None:
    assert load_config({"redact": True}, "t").redact == "***"
    assert load_config({"redact": False}, "t").redact is None
    for bad in ("", 1, ["***"]):
        with pytest.raises(ConfigError, match="redact must be"):
            load_config({"redact": bad}, "t")


SCHEMA = {
    "properties": {
        "token": {"type": "integer"},
        "note": {"not": {"type": "string"}},
        "tags": {"prefixItems": [{}], "items": False},
        "kind": {"enum": ["a", "b"]},
        "port": {
            "anyOf": [
                {"type": "null"},
                {"type": "object", "properties": {"n": {"type": "integer"}}},
            ]
        },
    },
    "required": ["id"],
}
INSTANCE = {
    "token": SECRET,
    "note": SECRET,
    "tags": [1, SECRET],
    "kind": SECRET,
    "port": {"n": SECRET},
}


def test_validator_mask_hides_values_in_every_method(backend: _backend.Engine) -> None:
    validator = pf.Validator(SCHEMA, mask=MASK)
    assert validator.is_valid(INSTANCE) is False
    messages = [f.message for f in validator.iter_errors(INSTANCE)]
    assert messages == [
        '"id" is a required property',
        f'{MASK} is not one of "a" or "b"',
        f'{{"type":"string"}} is not allowed for {MASK}',
        f"{MASK} is not valid under any of the schemas listed in the 'anyOf' keyword",
        f"False schema does not allow {MASK}",
        f'{MASK} is not of type "integer"',
    ]
    # The anyOf's closest branch error is masked too.
    (port,) = [f for f in validator.iter_errors(INSTANCE) if f.pointer == "/port"]
    assert port.best_match == pf.BestMatch(
        "/port/n", "/properties/port/anyOf/1/properties/n/type", f'{MASK} is not of type "integer"'
    )
    assert SECRET not in json.dumps([f.to_dict() for f in validator.iter_errors(INSTANCE)])
    assert [f.message for f in validator.validate_json(json.dumps(INSTANCE)).findings] == messages
    assert [f.message for f in validator.iter_errors_many([INSTANCE, {"id": 1}])[0]] == messages
    with pytest.raises(pf.ValidationError) as raised:
        validator.validate(INSTANCE)
    assert SECRET not in str(raised.value)
    assert all(SECRET not in f.message for f in raised.value.findings)
    again = pickle.loads(pickle.dumps(validator))
    assert [f.message for f in again.iter_errors(INSTANCE)] == messages
    # Without a mask, the values are quoted.
    assert SECRET in "".join(f.message for f in pf.Validator(SCHEMA).iter_errors(INSTANCE))


def test_bundled_validator_and_reports_take_a_mask(backend: _backend.Engine) -> None:
    validator = pf.schema_validator("car.rpc.tools.cancel.result", mask=MASK)
    (finding,) = validator.iter_errors({"cancelled": SECRET})
    assert finding.message == f'{MASK} is not of type "boolean"'
    report = pf.schema_validator("car.rpc.tools.cancel.result").validate_json(
        json.dumps({"cancelled": SECRET})
    )
    assert SECRET in report.to_json()
    assert SECRET not in report.redacted().to_json()
    assert report.redacted().findings[0].pointer == "/cancelled"


@pytest.mark.parametrize(
    ("message", "schema_pointer", "masked"),
    [
        ('"s" is not of type "integer"', "/type", '*** is not of type "integer"'),
        (
            '{"a":"x is not of type"} is not of type "string"',
            "/type",
            '*** is not of type "string"',
        ),
        ('"x" does not match "^a"', "/propertyNames/pattern", '*** does not match "^a"'),
        ("1 was expected", "/const", "1 was expected"),
        ('"id" is a required property', "/required", '"id" is a required property'),
        (
            "Additional properties are not allowed ('x' was unexpected)",
            "/additionalProperties",
            "Additional properties are not allowed ('x' was unexpected)",
        ),
        (
            'Additional items are not allowed (1, "a, b", {"c":[2]} were unexpected)',
            "/additionalItems",
            "Additional items are not allowed (3 items)",
        ),
        (
            "Unevaluated items are not allowed ('\"x\"' was unexpected)",
            "/unevaluatedItems",
            "Unevaluated items are not allowed (1 item)",
        ),
        (
            '{"type":"string"} is not allowed for "s"',
            "/not",
            '{"type":"string"} is not allowed for ***',
        ),
        (
            'None of ["s"] are valid under the given schema',
            "/contains",
            "None of *** are valid under the given schema",
        ),
        # Words other than jsonschema-rs's: every quoted literal.
        ("'sk' is not of type 'integer'", "/type", "*** is not of type ***"),
        # Not a schema finding.
        ("provider_id 'p' names no provider", None, "provider_id 'p' names no provider"),
        ("provider_id 'pq' names no provider", None, "provider_id *** names no provider"),
        ('response to id "abc" has no request', None, "response to id *** has no request"),
        ("expected value (sk live is not JSON)", None, "expected value (*** is not JSON)"),
        # A message cut inside the value keeps nothing of it.
        (
            '"' + "s" * 300 + " … [message truncated: 9000 bytes]",
            "/type",
            "*** … [message truncated: 9000 bytes]",
        ),
        ("Expecting ',' delimiter (column 4)", None, "Expecting ',' delimiter (column 4)"),
    ],
)
def test_redact_message(message: str, schema_pointer: str | None, masked: str) -> None:
    assert redact_message(message, schema_pointer) == masked


_ORACLES: dict[tuple[int, bool | None, str | None], Any] = {}


def _oracle(case: Case, mask: str | None) -> Any:
    """jsonschema-rs's validator of the case's schema; once per group."""
    import jsonschema_rs

    key = (id(case.schema), case.validate_formats, mask)
    if key not in _ORACLES:
        _ORACLES[key] = jsonschema_rs.validator_for(
            case.schema,
            validate_formats=case.validate_formats,
            retriever=remotes().__getitem__,
            mask=mask,
        )
    return _ORACLES[key]


# jsonschema-rs masks the instance of a propertyNames failure's message, but not the property
# name its inner error quotes; we mask the name too (the pointer, the object's, does not show it).
_NAME_QUOTED = "propertyNames.json"


@pytest.mark.parametrize("case", INVALID_CASES, ids=case_id)
def test_masked_messages_match_jsonschema_rs(case: Case, backend: _backend.Engine) -> None:
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    if case.file == _NAME_QUOTED:
        pytest.skip("property names: masked here, quoted by jsonschema-rs (see _NAME_QUOTED)")
    errors = _compiled(_backend.active_name(), case).errors(case.data)
    try:
        unmasked = sorted(error.message for error in _oracle(case, None).iter_errors(case.data))
        theirs = sorted(error.message for error in _oracle(case, MASK).iter_errors(case.data))
    except (jsonschema_rs.ValidationError, ValueError):
        pytest.skip("jsonschema-rs does not compile this schema")
    if sorted(error[3] for error in errors) != unmasked:
        # The jsonschema_rs wheel prints a schema's objects with sorted keys and some floats in
        # other digits (a `not`/`const` value, a limit): the masking is not what differs.
        pytest.skip("the unmasked messages differ already (schema values printed otherwise)")
    ours = sorted(redact_message(message, pointer, MASK) for _, pointer, _, message, _ in errors)
    assert ours == theirs


def test_follow_redacts_each_finding_as_it_prints(backend: _backend.Engine, tmp_path: Path) -> None:
    (tmp_path / "journal.jsonl").write_text(_journal(), encoding="utf-8")
    follower = Follower(_backend.name_of(backend), tmp_path, "journal.jsonl", "--redact")
    try:
        finding = follower.expect(lambda f: f["code"] == "PF101" and f["pointer"] == "/timestamp")
        assert finding["message"] == '*** is not a "date-time"'
        follower.expect(lambda f: f["code"] == "PF001")  # the journal's last line
        _code, stderr = follower.interrupt()
    finally:
        follower.close()
    assert SECRET not in json.dumps(follower.findings) + stderr
