"""``Validator.evaluate`` against jsonschema-rs's ``evaluate`` over the official suite's cases: on
both backends the output formats, error entries and annotations are jsonschema-rs's
(docs/pipelines.md, "Coming from jsonschema-rs")."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from test_schema_suite import CASES, Case, case_id, known_failure, remotes

import pairling_fast as pf
from pairling_fast import _backend, _bundled

jsonschema_rs = pytest.importorskip("jsonschema_rs")

# Every case of every draft, valid and invalid, but the known failures of test_schema_suite.py.
SAMPLE = [case for case in CASES if known_failure(case) is None]


def _theirs(case: Case) -> Any:
    try:
        return jsonschema_rs.validator_for(
            case.schema, validate_formats=case.validate_formats, retriever=remotes().__getitem__
        )
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError):
        return None


def _ours(case: Case) -> pf.Validator | None:
    try:
        return pf.Validator(
            case.schema, validate_formats=case.validate_formats, resources=remotes()
        )
    except pf.SchemaCompileError:
        return None


def _sorted(value: Any) -> Any:
    """``value`` with every object's keys in order: jsonschema-rs's binding reads a dict in key
    order, pairling_fast in the document's, and messages and annotations quote objects and
    names in the order read."""
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def _without_format_units(unit: dict[str, Any]) -> dict[str, Any]:
    """``unit`` without what a ``format`` keyword adds where it holds: pairling_fast checks formats
    with its own keyword (docs/formats.md), which the crate evaluates as a custom keyword, a unit
    with no annotation, where the crate's own keyword annotates (or, for a format it does not
    assert, makes no unit)."""
    unit = dict(unit)
    if unit.get("evaluationPath", "").endswith("/format") and isinstance(
        unit.get("annotations", unit.get("droppedAnnotations")), str
    ):
        unit.pop("annotations", None)
        unit.pop("droppedAnnotations", None)
    if "details" in unit:
        unit["details"] = [
            _without_format_units(child) for child in unit["details"] if not _bare_format(child)
        ]
        if not unit["details"] and "evaluationPath" in unit:
            del unit["details"]  # a unit with nothing below it has no "details"
    return unit


def _without_format_annotations(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The annotation entries but a ``format``'s (the crate's own keyword annotates with the
    format's name, pairling_fast's keyword does not; ``_without_format_units``)."""
    return [
        entry
        for entry in entries
        if not entry["schemaLocation"].endswith("/format")
        or not isinstance(entry["annotations"], str)
    ]


def _bare_format(unit: dict[str, Any]) -> bool:
    return unit["evaluationPath"].endswith("/format") and set(unit) <= {
        "evaluationPath",
        "instanceLocation",
        "schemaLocation",
        "valid",
        "annotations",
    }


# Where the errors themselves differ, as test_schema_suite.py says (TRIPLES_DIFFER): floats
# beyond 2**53 are worded in exponent form by pairling_fast ("9.727837981879871e+26"), in full by
# jsonschema-rs, which reads them with arbitrary precision; and in draft 4 jsonschema-rs reports
# only `multipleOf` for 1e308 against `{"type": "integer", "multipleOf": 0.123456789}`.
ERRORS_DIFFER = {("optional/bignum.json", None), ("multipleOf.json", "float division = inf")}


@pytest.mark.parametrize("case", SAMPLE, ids=case_id)
def test_evaluate_as_jsonschema_rs(backend: _backend.Engine, case: Case) -> None:
    # The order of a schema's keys is the order of its output units in the crate, and messages
    # quote schemas in the order read.
    case = case._replace(schema=_sorted(case.schema), data=_sorted(case.data))
    theirs, ours = _theirs(case), _ours(case)
    if theirs is None or ours is None:
        pytest.skip("does not compile")
    expected = theirs.evaluate(case.data)
    got = ours.evaluate(case.data)
    assert got.flag() == expected.flag() == {"valid": case.valid}
    if {(case.file, None), (case.file, case.group)} & ERRORS_DIFFER:
        return
    assert got.errors() == expected.errors()
    assert _without_format_annotations(got.annotations()) == _without_format_annotations(
        expected.annotations()
    )
    assert _without_format_units(got.list()) == _without_format_units(expected.list())
    assert _without_format_units(got.hierarchical()) == _without_format_units(
        expected.hierarchical()
    )


def _objects(value: Any) -> list[dict[str, Any]]:
    """Every object in ``value``, outermost first."""
    if isinstance(value, dict):
        return [value, *(inner for item in value.values() for inner in _objects(item))]
    if isinstance(value, list):
        return [inner for item in value for inner in _objects(item)]
    return []


@cache
def _car_objects() -> list[dict[str, Any]]:
    """The objects of CAR's own journal fixtures (tests/data/car), sorted by their text."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted((Path(__file__).with_name("data") / "car").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                document = json.loads(line)
            except json.JSONDecodeError:
                continue  # a fixture's torn or corrupt line
            for found_object in _objects(document):
                found.setdefault(json.dumps(found_object, sort_keys=True), found_object)
    return [found[text] for text in sorted(found)]


@pytest.mark.parametrize("schema_id", sorted(_bundled.bundled_schema_ids()))
def test_evaluate_bundled_schemas_as_jsonschema_rs(
    backend: _backend.Engine, schema_id: str
) -> None:
    """Beyond the suite: each bundled schema against objects CAR writes, as jsonschema-rs."""
    schema = _sorted(_bundled.bundled_schema(schema_id))
    theirs = jsonschema_rs.validator_for(schema, validate_formats=True)
    ours = pf.Validator(schema, validate_formats=True)
    objects = _car_objects()
    start = sum(map(ord, schema_id)) % len(objects)
    for instance in [{}, [], "x", None, *objects[start : start + 12]]:
        expected, got = theirs.evaluate(_sorted(instance)), ours.evaluate(_sorted(instance))
        assert got.flag() == expected.flag()
        assert got.errors() == expected.errors()
        assert _without_format_units(got.list()) == _without_format_units(expected.list())
        assert _without_format_annotations(got.annotations()) == _without_format_annotations(
            expected.annotations()
        )


def test_evaluate_masks_and_keeps_the_value_model(backend: _backend.Engine) -> None:
    schema = {"properties": {"token": {"type": "integer"}}}
    secret = "ghp_SECRET1234"
    evaluation = pf.Validator(schema, mask="***").evaluate({"token": secret})
    assert evaluation.flag() == {"valid": False}
    assert evaluation.errors()[0]["error"] == '*** is not of type "integer"'
    for output in (evaluation.list(), evaluation.hierarchical(), evaluation.errors()):
        assert secret not in repr(output)
    assert secret in repr(pf.Validator(schema).evaluate({"token": secret}).list())
    with pytest.raises(pf.CanonicalizationError):
        pf.Validator(schema).evaluate({"token": float("nan")})


def test_evaluate_a_bundled_schema(backend: _backend.Engine) -> None:
    evaluation = pf.schema_validator("car.rpc.tools.cancel.result").evaluate({"cancelled": 1})
    assert evaluation.flag() == {"valid": False}
    assert [(e["instanceLocation"], e["error"]) for e in evaluation.errors()] == [
        ("/cancelled", '1 is not of type "boolean"')
    ]


def test_annotations_as_jsonschema_rs(backend: _backend.Engine) -> None:
    schema = {"title": "t", "properties": {"a": {"default": 1}}}
    evaluation = pf.Validator(schema, mask="***").evaluate({"a": "ghp_SECRET"})
    assert (
        evaluation.annotations()
        == jsonschema_rs.validator_for(schema).evaluate({"a": "ghp_SECRET"}).annotations()
    )
    assert "ghp_SECRET" not in repr(evaluation.annotations())
