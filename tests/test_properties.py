"""Property tests (hypothesis, bounded): the two backends agree on values and texts they were never
shown, hostile ones included. test_canonical.py covers in-model values; this file adds values
outside the model, the idempotence exception, schema verdicts and mutated journal events."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pairling_fast import CanonicalizationError, _backend, schema_validator, schemas
from pairling_fast.errors import PairlingError

RUST = _backend.engine("rust")
PYTHON = _backend.engine("python")
MAX_SAFE_INTEGER = 2**53 - 1

PROPERTIES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Everything a caller might pass, in or out of the value model: integers of any size, NaN and
# infinities, strings with lone surrogates, non-string keys, tuples.
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(2**64), 2**64)
    | st.floats()
    | st.text()
    | st.text(st.characters(codec=None, categories=["Cs", "Ll"]), max_size=3)
)
keys = (
    st.text(max_size=6) | st.integers(0, 3) | st.text(st.characters(categories=["Cs"]), max_size=2)
)
any_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(keys, children, max_size=4)
    ),
    max_leaves=25,
)


def canonical_outcome(engine: _backend.Engine, value: Any) -> tuple[str, Any]:
    try:
        return "bytes", engine.canonicalize(value)
    except CanonicalizationError as error:
        return "error", (error.code, error.pointer)


@PROPERTIES
@given(value=any_values)
@example(value={"a": [float("nan")], 0: 1})
@example(value=[2**53, "\ud800"])
def test_backends_canonicalize_any_python_value_alike(value: Any) -> None:
    assert canonical_outcome(RUST, value) == canonical_outcome(PYTHON, value)


in_model_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=25,
)


def integral_float_beyond_2_53(value: Any) -> bool:
    """ECMAScript writes an integral float below 1e21 as integer digits; beyond 2^53 they read
    back as an integer with no canonical form (the documented exception, docs/limits.md)."""
    if isinstance(value, float):
        return value.is_integer() and MAX_SAFE_INTEGER < abs(value) < 1e21
    if isinstance(value, list):
        return any(integral_float_beyond_2_53(item) for item in value)
    if isinstance(value, dict):
        return any(integral_float_beyond_2_53(item) for item in value.values())
    return False


@PROPERTIES
@given(value=in_model_values)
@example(value=[2.0**60])
@example(value=[4270993, 1e20])  # found by the parse_strict fuzz target
def test_canonicalization_is_idempotent_except_for_large_integral_floats(value: Any) -> None:
    for engine in (RUST, PYTHON):
        canonical = engine.canonicalize(value)
        if integral_float_beyond_2_53(value):
            # Parsing fails from 2^64 on, canonicalizing the integer from 2^53 on.
            try:
                assert engine.canonicalize(engine.parse_json(canonical)) == canonical
            except CanonicalizationError as error:
                assert error.code == "PF005"
        else:
            assert engine.canonicalize(engine.parse_json(canonical)) == canonical


EVENT_KINDS = [
    kind
    for alternative in schemas.schema("car.journal.event")["definitions"]["EventKind"]["oneOf"]
    for kind in alternative["enum"]
]

timestamps = st.sampled_from(
    ["2026-12-02T14:21:11Z", "2026-12-02T14:21:11.877945340+01:00", "1990-12-31T23:59:60Z"]
) | st.text(alphabet="0123456789-:TZ.+", max_size=30)
json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
events = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(EVENT_KINDS) | st.text(max_size=8),
        "data": st.dictionaries(st.text(max_size=5), json_leaves, max_size=3) | json_leaves,
        "timestamp": timestamps | json_leaves,
    },
    optional={
        "action_id": st.none() | st.text(max_size=5) | st.integers(),
        "proposal_id": st.none() | st.text(max_size=5),
        "unexpected": json_leaves,
    },
)
action_results = st.fixed_dictionaries(
    {
        "action_id": st.text(max_size=5) | json_leaves,
        "status": st.sampled_from(["proposed", "succeeded", "failed", "finished"]),
        "state_changes": st.dictionaries(st.text(max_size=5), json_leaves, max_size=3)
        | json_leaves,
        "timestamp": timestamps,
    },
    optional={
        "duration_ms": st.none() | st.floats(allow_nan=False, allow_infinity=False),
        "rolled_back": st.booleans() | st.none(),
        "output": json_leaves,
    },
)


def verdicts(schema_id: str, instance: Any) -> dict[str, Any]:
    per_backend = {}
    for name in _backend.BACKENDS:
        with _backend.selected(name):
            validator = schema_validator(schema_id)
            findings = [
                (f.code, f.pointer, f.schema_pointer) for f in validator.iter_errors(instance)
            ]
            per_backend[name] = (validator.is_valid(instance), findings)
    return per_backend


@PROPERTIES
@given(event=events)
def test_backends_agree_on_journal_events(event: dict[str, Any]) -> None:
    per_backend = verdicts("car.journal.event", event)
    assert per_backend["rust"] == per_backend["python"]


@PROPERTIES
@given(result=action_results)
def test_backends_agree_on_action_results(result: dict[str, Any]) -> None:
    per_backend = verdicts("car.type.action_result", result)
    assert per_backend["rust"] == per_backend["python"]


VALID_EVENT = json.dumps(
    {
        "kind": "action_succeeded",
        "data": {"output": {"ok": True, "n": [1, 2.5, None]}, "note": "caf\u00e9 \U0001f600"},
        "timestamp": "2026-12-02T14:21:11.877945340Z",
        "action_id": "a0",
    },
    ensure_ascii=False,
).encode()

mutations = st.lists(
    st.tuples(
        st.sampled_from(["flip", "insert", "delete"]),
        st.integers(0, len(VALID_EVENT) - 1),
        st.sampled_from(list(b'{}[]",:\\ 0189eE.-+tfnuNI\x00\r\n\xc3\xa9\xff\xed')),
    ),
    min_size=1,
    max_size=4,
)


def mutated(mutation_list: list[tuple[str, int, int]]) -> bytes:
    data = bytearray(VALID_EVENT)
    for kind, position, byte in mutation_list:
        position = min(position, len(data) - 1)
        if kind == "flip":
            data[position] = byte
        elif kind == "insert":
            data.insert(position, byte)
        elif len(data) > 1:
            del data[position]
    return bytes(data)


def text_outcome(data: bytes) -> dict[str, Any]:
    per_backend: dict[str, Any] = {}
    for name in _backend.BACKENDS:
        with _backend.selected(name):
            try:
                parsed: Any = ("parsed", _backend.active().canonicalize_json(data))
            except PairlingError as error:
                parsed = ("error", error.args)
            validator = schema_validator("car.journal.event")
            report = validator.validate_json(data)
            assert validator.is_valid_json(data) == report.ok
            findings = [(f.code, f.pointer, f.line, f.schema_pointer) for f in report.findings]
            per_backend[name] = (parsed, findings)
    return per_backend


@PROPERTIES
@given(mutation_list=mutations)
def test_backends_agree_on_mutated_events(mutation_list: list[tuple[str, int, int]]) -> None:
    per_backend = text_outcome(mutated(mutation_list))
    assert per_backend["rust"] == per_backend["python"]
