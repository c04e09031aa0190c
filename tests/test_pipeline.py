"""`import pairling_fast` in a pipeline (docs/pipelines.md): the Rust core validates plain Python
documents in place (rust/python/pynode.rs) and converts anything else the exact way; both give
the same answers, the JSON value model still holds, and the batch calls answer as the loops do."""

from __future__ import annotations

import dataclasses
import json
import math
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
from test_schema_suite import Case, remotes, suite_cases

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast.report import Report

DATA = Path(__file__).with_name("data")
FIXTURE = DATA / "car" / "native-car-doctor.events.jsonl"
RPC_RESULT = DATA / "car" / "car-server-core-0.58.0.host.capabilities.list.result.json"


class Mapping(dict):  # type: ignore[type-arg]
    """A dict subclass: the core never reads one in place, so it takes the exact route."""


def subclassed(value: Any) -> Any:
    """`value` with every dict a subclass instance: the same JSON, through the exact route."""
    if isinstance(value, dict):
        return Mapping((key, subclassed(item)) for key, item in value.items())
    if isinstance(value, list):
        return [subclassed(item) for item in value]
    return value


def events() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FIXTURE.read_bytes().splitlines() if line.strip()]


def broken_events() -> list[dict[str, Any]]:
    """Every fixture event with one planted schema violation each, of several kinds."""
    out = []
    for number, event in enumerate(events()):
        broken = json.loads(json.dumps(event))
        planted = number % 5
        if planted == 0:
            broken["kind"] = "no_such_kind"
        elif planted == 1:
            broken.pop("kind")
        elif planted == 2:
            broken["timestamp"] = "yesterday"
        elif planted == 3:
            broken["data"] = [1, 2.5, None, True]
        else:
            broken["unexpected"] = {"nested": [1, {"a": "é"}]}
        out.append(broken)
    return out


def findings(validator: pf.Validator, instance: Any) -> list[dict[str, Any]]:
    return [finding.to_dict() for finding in validator.iter_errors(instance)]


def test_in_place_and_exact_routes_agree_on_car_documents() -> None:
    event = pf.schema_validator("car.journal.event")
    for instance in events() + broken_events():
        exact = subclassed(instance)
        assert event.is_valid(instance) is event.is_valid(exact)
        assert findings(event, instance) == findings(event, exact)
    result = pf.schema_validator("car.rpc.capabilities.list.result")
    document = json.loads(RPC_RESULT.read_text())
    assert result.is_valid(document) and result.is_valid(subclassed(document))
    document["methods"] = [{"id": 7}, *document["methods"][:3]]
    document["count"] = -1.5
    assert findings(result, document) == findings(result, subclassed(document))
    assert findings(result, document)


def test_validate_raises_what_iter_errors_gives(backend: _backend.Engine) -> None:
    # The core answers validate itself (no Python frame for a valid document); its error must
    # carry the same findings iter_errors gives, for violations and for values outside the model.
    event = pf.schema_validator("car.journal.event")
    instances = events() + broken_events() + [defect for defect, _, _ in DEFECTS]
    raised = 0
    for instance in instances:
        expected = findings(event, instance)
        try:
            assert event.validate(instance) is None
            assert expected == [], instance
        except pf.ValidationError as error:
            assert [finding.to_dict() for finding in error.findings] == expected != [], instance
            raised += 1
    assert raised == len(broken_events()) + len(DEFECTS)


def _suite_sample() -> list[Case]:
    return [case for case in suite_cases() if case.draft == "draft2020-12"]


def test_in_place_and_exact_routes_agree_on_the_schema_suite() -> None:
    with _backend.selected("rust"):
        for case in _suite_sample():
            try:
                validator = pf.Validator(
                    case.schema, validate_formats=case.validate_formats, resources=remotes()
                )
            except (pf.SchemaCompileError, pf.CanonicalizationError):
                continue
            exact = subclassed(case.data)
            assert validator.is_valid(case.data) is validator.is_valid(exact), case
            assert findings(validator, case.data) == findings(validator, exact), case


DEFECTS = [
    ({"a": float("nan")}, "PF006", "/a"),
    ({"a": [1, math.inf]}, "PF006", "/a/1"),
    ({"a": "\ud800"}, "PF004", "/a"),
    ({"\udc00": 1}, "PF004", "/\ufffd"),
    ({"a": 2**64}, "PF005", "/a"),
    ({"a": -(2**63) - 1}, "PF005", "/a"),
    ({1: "a"}, "PF007", ""),
    ({"a": {1, 2}}, "PF009", "/a"),
    ({"a": b"bytes"}, "PF009", "/a"),
]


@pytest.mark.parametrize("schema", [{}, {"type": "object"}, True])
@pytest.mark.parametrize(("instance", "code", "pointer"), DEFECTS)
def test_the_value_model_holds_for_every_schema(
    backend: _backend.Engine, schema: Any, instance: Any, code: str, pointer: str
) -> None:
    validator = pf.Validator(schema)
    assert validator.is_valid(instance) is False
    [finding] = validator.iter_errors(instance)
    assert (finding.code, finding.pointer) == (code, pointer)
    with pytest.raises(pf.ValidationError):
        validator.validate(instance)


def test_the_value_model_holds_deep_and_at_the_limits(backend: _backend.Engine) -> None:
    validator = pf.Validator({})
    deep: Any = 1
    for _ in range(513):
        deep = [deep]
    assert not validator.is_valid(deep)
    assert [f.code for f in validator.iter_errors(deep)] == ["PF008"]
    within: Any = 1
    for _ in range(512):
        within = [within]
    assert validator.is_valid(within)
    for fine in (2**64 - 1, -(2**63), 1e308, "\U0001f600", (1, "a"), OrderedDict(a=1), True):
        assert validator.is_valid({"v": fine}), fine


def _mixed_batch(count: int) -> list[Any]:
    """Valid and invalid events and values outside the JSON model, interleaved."""
    good, bad = events(), broken_events()
    defects = [instance for instance, _, _ in DEFECTS]
    batch: list[Any] = []
    for number in range(count):
        source = (good, bad, defects)[number % 3]
        batch.append(source[number % len(source)])
    return batch


# A large batch on the core times a few documents each way and picks a route; these force each
# route in turn (rust/python/batches.rs), so both are held to the loops whatever the timing says.
BATCH_ROUTES = [None, "pipelined", "per-document"]


@pytest.mark.parametrize("route", BATCH_ROUTES)
@pytest.mark.parametrize("count", [0, 5, 3000])
def test_batches_answer_as_the_loops_do(
    backend: _backend.Engine, count: int, route: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if route is not None:
        monkeypatch.setenv("PAIRLING_FAST_BATCH_ROUTE", route)
    validator = pf.schema_validator("car.journal.event")
    batch = _mixed_batch(count if backend is _backend.engine("rust") else min(count, 300))
    assert validator.is_valid_many(batch) == [validator.is_valid(x) for x in batch]
    assert validator.is_valid_many(iter(batch)) == [validator.is_valid(x) for x in batch]
    many = validator.iter_errors_many(batch)
    assert many == [list(validator.iter_errors(x)) for x in batch]
    if count:
        assert any(many) and not all(many)
    values = [x for x in batch if not isinstance(x, dict) or validator.is_valid(x)]
    assert pf.digest_hex_many(values) == [pf.digest_hex(x) for x in values]
    assert pf.digest_hex_many(tuple(values)) == [pf.digest_hex(x) for x in values]


@pytest.mark.parametrize("route", BATCH_ROUTES)
def test_digest_hex_many_raises_the_first_defect_as_digest_hex_does(
    backend: _backend.Engine, route: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first defect in the list's order raises, on either route: a value outside the JSON
    model (PF006), or before it an integer past ±(2^53-1) in a plain value (PF005)."""
    if route is not None:
        monkeypatch.setenv("PAIRLING_FAST_BATCH_ROUTE", route)
    values: list[Any] = [{"n": number} for number in range(2000)]
    values[1500] = {"bad": float("nan")}
    values[1700] = {"bad": 2**70}
    with pytest.raises(pf.CanonicalizationError) as raised:
        pf.digest_hex_many(values)
    assert (raised.value.code, raised.value.pointer) == ("PF006", "/bad")
    values[1400] = {"z": 1, "a": [0, 2**53]}
    with pytest.raises(pf.CanonicalizationError) as raised:
        pf.digest_hex_many(values)
    assert (raised.value.code, raised.value.pointer) == ("PF005", "/a/1")


@pytest.mark.parametrize("route", BATCH_ROUTES)
def test_digest_hex_many_gives_digest_hex_of_every_kind_of_value(
    backend: _backend.Engine, route: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each value's digest is `digest_hex`'s, across what canonical form turns on: key order by
    UTF-16 code units, escapes, ECMAScript numbers, the integer limit, nesting near the depth
    limit, tuples, and subclasses (which the core reads the exact way)."""
    if route is not None:
        monkeypatch.setenv("PAIRLING_FAST_BATCH_ROUTE", route)
    deep: Any = 1
    for _ in range(511):
        deep = [deep]
    samples: list[Any] = [
        {"\U0001f600": 1, "\uff61": 2, "a": 3, "": 4, "é": 5},
        {"s": 'quote " backslash \\ controls \x00\x07\x1f \u2028 \x7f é'},
        [0, -0.0, 1.0, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 2**53 - 1, -(2**53 - 1)],
        (True, False, None, (), {}, [], ""),
        OrderedDict(b=1, a=2),
        Mapping(b=[1], a={"y": 2, "x": 1}),
        deep,
        *events(),
    ]
    values = [samples[number % len(samples)] for number in range(3000)]
    assert pf.digest_hex_many(values) == [pf.digest_hex(value) for value in values]


def test_is_valid_json_answers_as_validate_json_does(backend: _backend.Engine) -> None:
    """`is_valid_json` is `validate_json(...).ok` without the Report, on both routes of the text
    (below and above the size where the core releases the GIL), for valid and invalid events and
    for text that is not strict JSON; what is not text is a TypeError, as for validate_json."""
    validator = pf.schema_validator("car.journal.event")
    lines = [json.dumps(event).encode() for event in [*events(), *broken_events()]]
    lines += [b'{"a": NaN}', b'{"a": 1, "a": 2}', b"[", b"", b'"\\ud800"', b"\xff", b"1e400"]
    pad = b"x" * (64 << 10)
    lines += [lines[0][:-1] + b',"pad":"' + pad + b'"}', b'{"pad": "' + pad + b'", "kind": 1}']
    texts: list[bytes | str] = [*lines, lines[0].decode(), lines[-1].decode()]
    answers = [validator.is_valid_json(text) for text in texts]
    assert answers == [validator.validate_json(text).ok for text in texts]
    assert any(answers) and not all(answers)
    for not_text in (7, bytearray(b"{}"), [123]):
        with pytest.raises(TypeError, match="expected JSON text as bytes or str"):
            validator.is_valid_json(not_text)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="expected JSON text as bytes or str"):
            validator.validate_json(not_text)  # type: ignore[arg-type]


def test_validate_json_reports_as_the_dataclass_does(backend: _backend.Engine) -> None:
    """The Rust core builds a valid document's Report without running `Report.__init__`
    (rust/python/schemas.rs, `empty_report`): it must be the same value, a new one each call, and
    `Report` must have no field that construction would leave unset."""
    assert [field.name for field in dataclasses.fields(Report)] == ["findings", "stats"]
    validator = pf.schema_validator("car.journal.event")
    line = FIXTURE.read_bytes().splitlines()[0]
    first, second = validator.validate_json(line), validator.validate_json(line.decode())
    assert type(first) is Report and first == Report(findings=[]) == second and first.ok
    assert first.findings is not second.findings and first.stats is not second.stats
    event = json.loads(line)
    event["kind"] = 7
    invalid = validator.validate_json(json.dumps(event).encode())
    assert invalid == Report(findings=list(validator.iter_errors(event))) and not invalid.ok
    for text, code in ((b'{"a": NaN}', "PF006"), (b'{"a": 1, "a": 2}', "PF002"), (b"[", "PF001")):
        [finding] = validator.validate_json(text).findings
        assert finding.code == code, text
    large = b'{"pad": "' + b"x" * (64 << 10) + b'", "kind": 1}'
    assert not validator.validate_json(large).ok
