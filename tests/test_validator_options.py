"""``Validator``'s options with jsonschema-rs's names and meanings (``formats``,
``ignore_unknown_formats``), on both backends and against ``jsonschema_rs`` itself."""

from __future__ import annotations

import json
import pickle
import sys
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import pytest
from test_schema_suite import INVALID_CASES, Case, _compiled, case_id, remotes

import pairling_fast as pf
from pairling_fast import _backend

DRAFT7 = "http://json-schema.org/draft-07/schema#"


def even(text: str) -> bool:
    return len(text) % 2 == 0


FORMATS = {"even": even, "date": lambda text: text == "today"}

# (schema, validate_formats, instance)
CASES: list[tuple[dict[str, Any], bool | None, Any]] = [
    ({"format": "even"}, True, "ab"),
    ({"format": "even"}, True, "abc"),
    ({"format": "even"}, True, 3),  # a format constrains strings only
    ({"format": "even"}, None, "abc"),  # 2020-12: formats annotate unless asked
    ({"$schema": DRAFT7, "format": "even"}, None, "abc"),  # draft 7 asserts them
    ({"format": "date"}, True, "2020-01-01"),  # the caller's check replaces the built-in one
    ({"format": "date"}, True, "today"),
    ({"properties": {"a": {"format": "even"}}, "items": {"format": "even"}}, True, {"a": "xyz"}),
    ({"format": "ipv4"}, True, "1.2.3"),  # the others keep their checks
]


@pytest.mark.parametrize(("schema", "validate_formats", "instance"), CASES)
def test_formats_as_jsonschema_rs(
    backend: _backend.Engine, schema: dict[str, Any], validate_formats: bool | None, instance: Any
) -> None:
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    theirs = jsonschema_rs.validator_for(schema, formats=FORMATS, validate_formats=validate_formats)
    ours = pf.Validator(schema, formats=FORMATS, validate_formats=validate_formats)
    assert ours.is_valid(instance) is theirs.is_valid(instance)
    assert sorted(f.message for f in ours.iter_errors(instance)) == sorted(
        e.message for e in theirs.iter_errors(instance)
    )


def test_formats_in_batches_and_pickles(backend: _backend.Engine) -> None:
    # Over 1024 documents the core validates a batch on its pool unless the validator calls
    # Python: the batch must not wait forever for the GIL, and must answer per document.
    validator = pf.Validator({"format": "even"}, formats={"even": even}, validate_formats=True)
    texts = ["ab", "abc"] * 1500
    assert validator.is_valid_many(texts) == [even(text) for text in texts]
    assert [bool(errors) for errors in validator.iter_errors_many(texts)] == [
        not even(text) for text in texts
    ]
    assert validator.is_valid_json(b'"abc"') is False
    assert validator.validate_json('"abcd"').ok
    again = pickle.loads(pickle.dumps(validator))
    assert again.is_valid("abc") is False
    assert again.is_valid("abcd") is True


def test_a_format_that_raises_does_not_match(
    backend: _backend.Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    reported: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda hook: reported.append(hook.exc_value))

    def broken(text: str) -> bool:
        raise RuntimeError(f"cannot check {text}")

    validator = pf.Validator({"format": "x"}, formats={"x": broken}, validate_formats=True)
    assert validator.is_valid("value") is False
    assert [type(error) for error in reported] == [RuntimeError]
    assert str(reported[0]) == "cannot check value"


@pytest.mark.parametrize("validate_formats", [True, None])
def test_unknown_formats(backend: _backend.Engine, validate_formats: bool | None) -> None:
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    schema = {"$schema": DRAFT7, "properties": {"a": {"format": "no-such-format"}}}
    # Ignored by default, as in jsonschema-rs.
    assert pf.Validator(schema, validate_formats=validate_formats).is_valid({"a": "x"})
    with pytest.raises(jsonschema_rs.ValidationError, match="Unknown format"):
        jsonschema_rs.validator_for(
            schema, validate_formats=validate_formats, ignore_unknown_formats=False
        )
    with pytest.raises(pf.SchemaCompileError) as raised:
        pf.Validator(schema, validate_formats=validate_formats, ignore_unknown_formats=False)
    assert raised.value.code == "PF102"
    assert raised.value.schema_pointer == "/properties/a/format"
    assert "Unknown format: 'no-such-format'" in raised.value.message
    # A format of the caller's is known.
    known = pf.Validator(
        schema,
        validate_formats=validate_formats,
        ignore_unknown_formats=False,
        formats={"no-such-format": even},
    )
    assert known.is_valid({"a": "xy"})
    assert not known.is_valid({"a": "xyz"})


@pytest.mark.parametrize("case", INVALID_CASES[::7], ids=case_id)
def test_every_schema_finding_has_its_keyword_as_kind(backend: _backend.Engine, case: Case) -> None:
    # A seventh of the suite's invalid cases: every keyword, every draft.
    try:
        validator = pf.Validator(
            case.schema, validate_formats=case.validate_formats, resources=remotes()
        )
    except pf.SchemaCompileError:
        pytest.skip("does not compile")
    raw = _compiled(_backend.active_name(), case).errors(case.data)
    findings = list(validator.iter_errors(case.data))
    assert [f.kind for f in findings] == [keyword for _, _, keyword, *_ in raw]
    assert all(f.kind for f in findings)


def test_kind_on_other_paths(backend: _backend.Engine) -> None:
    report = pf.schema_validator("car.rpc.tools.cancel.result").validate_json('{"cancelled": 1}')
    assert [f.kind for f in report.findings] == ["type"]
    assert pf.Finding.of("PF001", "Expecting value").kind is None


def _suite_schemas() -> list[Any]:
    """Every distinct schema of the official suite (valid ones), plus broken variants of some."""
    seen: dict[str, Any] = {}
    for case in INVALID_CASES:
        seen.setdefault(json.dumps(case.schema, sort_keys=True), case.schema)
    schemas = list(seen.values())
    broken = [
        {**schema, "type": "strin", "minLength": -1}
        for schema in schemas[::25]
        if isinstance(schema, dict)
    ]
    return schemas + broken


def test_meta_answers_as_jsonschema_rs(backend: _backend.Engine) -> None:
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    schemas = _suite_schemas()
    assert len(schemas) > 1000
    differ = []
    for schema in schemas:
        try:
            theirs = jsonschema_rs.meta.is_valid(schema)
        except (jsonschema_rs.ReferencingError, ValueError):
            continue
        ours = pf.meta.is_valid(schema)
        if ours is not theirs or ours is not (not list(pf.meta.iter_errors(schema))):
            differ.append(schema)
    assert differ == []


def test_meta_locates_every_problem(backend: _backend.Engine) -> None:
    schema = {
        "$schema": DRAFT7,
        "type": "strin",
        "properties": {"a": {"minLength": -1}},
        "required": "a",
    }
    findings = list(pf.meta.iter_errors(schema))
    assert [(f.code, f.pointer, f.kind) for f in findings] == [
        ("PF102", "/properties/a/minLength", "minimum"),
        ("PF102", "/required", "type"),
        ("PF102", "/type", "anyOf"),
    ]
    assert findings[0].schema_pointer == "/definitions/nonNegativeInteger/minimum"
    with pytest.raises(pf.ValidationError) as raised:
        pf.meta.validate(schema)
    assert raised.value.findings == findings
    assert pf.meta.is_valid({"type": "string"}) and pf.meta.is_valid(True)
    pf.meta.validate({"type": "string"})


def test_meta_of_an_own_metaschema(backend: _backend.Engine) -> None:
    own = "https://example.com/strict-meta"
    metaschema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": own,
        "type": "object",
        "required": ["title"],
    }
    assert not pf.meta.is_valid({"$schema": own}, resources={own: metaschema})
    assert pf.meta.is_valid({"$schema": own, "title": "t"}, resources={own: metaschema})
    with pytest.raises(pf.SchemaCompileError) as raised:
        pf.meta.is_valid({"$schema": own})
    assert raised.value.code == "PF103"


DRAFT_CASES: list[tuple[dict[str, Any], Any]] = [
    # items as an array: a tuple up to 2019-09, an invalid schema in 2020-12 (prefixItems).
    ({"items": [{"type": "integer"}]}, ["x"]),
    (
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "prefixItems": [{"type": "integer"}],
        },
        ["x"],
    ),
    # $ref beside other keywords: ignored up to draft 7.
    (
        {
            "$defs": {"s": {"type": "string"}},
            "definitions": {"s": {"type": "string"}},
            "$ref": "#/definitions/s",
            "minLength": 3,
        },
        "ab",
    ),
    # Formats asserted by default up to draft 7.
    ({"format": "ipv4"}, "1.2.3"),
    ({"exclusiveMinimum": True, "minimum": 3}, 3),
    ({"dependentRequired": {"a": ["b"]}}, {"a": 1}),
]


@pytest.mark.parametrize(
    "name",
    [
        "Draft4Validator",
        "Draft6Validator",
        "Draft7Validator",
        "Draft201909Validator",
        "Draft202012Validator",
    ],
)
@pytest.mark.parametrize(("schema", "instance"), DRAFT_CASES)
def test_draft_classes_as_jsonschema_rs(
    backend: _backend.Engine, name: str, schema: dict[str, Any], instance: Any
) -> None:
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    try:
        theirs = getattr(jsonschema_rs, name)(schema)
    except (jsonschema_rs.ValidationError, ValueError):
        with pytest.raises(pf.SchemaCompileError):
            getattr(pf, name)(schema)
        return
    ours = getattr(pf, name)(schema)
    assert ours.is_valid(instance) is theirs.is_valid(instance)
    assert sorted(f.message for f in ours.iter_errors(instance)) == sorted(
        e.message for e in theirs.iter_errors(instance)
    )
    by_number = pf.Validator(schema, draft=getattr(jsonschema_rs, name.removesuffix("Validator")))
    assert by_number.is_valid(instance) is ours.is_valid(instance)
    assert pickle.loads(pickle.dumps(ours)).is_valid(instance) is ours.is_valid(instance)


SCHEMA_URIS = [
    "http://json-schema.org/draft-04/schema#",
    "https://json-schema.org/draft-04/schema",
    "http://json-schema.org/draft-06/schema",
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2019-09/schema#",
    "http://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
    "http://json-schema.org/draft-03/schema#",  # not a draft either reads: 2020-12
    "http://json-schema.org/draft-04/schema#/",
    "HTTP://json-schema.org/draft-04/schema#",
    "https://example.com/my-meta",
]


@pytest.mark.parametrize(
    "schema",
    [{"$schema": uri} for uri in SCHEMA_URIS]
    + [
        {},
        True,
        False,
        {"$schema": 4},
        [1],
        '{"$schema": "http://json-schema.org/draft-06/schema#"}',
    ],
    ids=repr,
)
def test_validator_cls_for_as_jsonschema_rs(backend: _backend.Engine, schema: Any) -> None:
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    ours = pf.validator_cls_for(schema)
    assert ours.__name__ == jsonschema_rs.validator_cls_for(schema).__name__
    assert ours is getattr(pf, ours.__name__)
    if isinstance(schema, dict) and schema.get("$schema") in SCHEMA_URIS[:7]:  # the five drafts
        assert ours(schema).is_valid(None) is jsonschema_rs.validator_for(schema).is_valid(None)


def test_validator_cls_for_refuses_text_that_is_not_json() -> None:
    with pytest.raises(ValueError, match="not JSON text"):
        pf.validator_cls_for("nope")


def test_an_unknown_draft_is_refused() -> None:
    with pytest.raises(ValueError, match="draft must be one of 4, 6, 7, 19, 20"):
        pf.Validator({}, draft=2020)


BASE = "https://example.com/schemas/"
NAMES = {"type": "string", "minLength": 2}
# (schema, resources, instance): relative `$ref`s resolved against `base_uri`.
BASE_CASES: list[tuple[Any, dict[str, Any], Any]] = [
    ({"$ref": "name.json"}, {BASE + "name.json": NAMES}, "a"),
    ({"$ref": "name.json"}, {BASE + "name.json": NAMES}, "ab"),
    ({"properties": {"n": {"$ref": "name.json"}}}, {BASE + "name.json": NAMES}, {"n": "a"}),
    ({"$id": "sub/", "$ref": "name.json"}, {BASE + "sub/name.json": NAMES}, "a"),
    ({"$schema": DRAFT7, "$ref": "name.json"}, {BASE + "name.json": NAMES}, 3),
    (
        {"$schema": "http://json-schema.org/draft-04/schema#", "$ref": "name.json"},
        {BASE + "name.json": NAMES},
        "a",
    ),
]


@pytest.mark.parametrize(("schema", "resources", "instance"), BASE_CASES)
def test_base_uri_as_jsonschema_rs(
    backend: _backend.Engine, schema: Any, resources: dict[str, Any], instance: Any
) -> None:
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    theirs = jsonschema_rs.validator_for(schema, base_uri=BASE, retriever=resources.__getitem__)
    ours = pf.Validator(schema, base_uri=BASE, resources=resources)
    assert ours.is_valid(instance) is theirs.is_valid(instance)
    assert [(f.pointer, f.message) for f in ours.iter_errors(instance)] == [
        ("".join(f"/{token}" for token in e.instance_path), e.message)
        for e in theirs.iter_errors(instance)
    ]
    again = pickle.loads(pickle.dumps(ours))
    assert again.is_valid(instance) is ours.is_valid(instance)


def test_without_base_uri_a_relative_ref_is_refused(backend: _backend.Engine) -> None:
    with pytest.raises(pf.SchemaCompileError) as raised:
        pf.Validator({"$ref": "name.json"}, resources={BASE + "name.json": NAMES})
    assert raised.value.code == "PF103"


# (schema, instance): lookaround and backreferences, a catastrophic pattern, patternProperties.
PATTERN_CASES: list[tuple[dict[str, Any], Any]] = [
    ({"pattern": "a(?=b)"}, "ab"),
    ({"properties": {"a": {"pattern": "(x)\\1"}}}, {"a": "xx"}),
    ({"patternProperties": {"^(?!_)": {"type": "integer"}}}, {"a": "x", "_b": "y"}),
    ({"pattern": "^(a+)+$"}, "a" * 40 + "!"),
    ({"pattern": "^[a-z]+$", "patternProperties": {"^x": False}}, "abc"),
    ({"patternProperties": {"^x": False}}, {"xy": 1, "y": 2}),
]


@pytest.mark.parametrize("engine", ["FancyRegexOptions", "RegexOptions"])
@pytest.mark.parametrize(("schema", "instance"), PATTERN_CASES)
def test_pattern_options_as_jsonschema_rs(
    backend: _backend.Engine, engine: str, schema: dict[str, Any], instance: Any
) -> None:
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    try:
        theirs = jsonschema_rs.validator_for(
            schema, pattern_options=getattr(jsonschema_rs, engine)()
        )
    except jsonschema_rs.ValidationError as refused:
        with pytest.raises(pf.SchemaCompileError) as raised:
            pf.Validator(schema, pattern_options=getattr(pf, engine)())
        assert raised.value.code == "PF102"
        assert raised.value.message == refused.message
        return
    ours = pf.Validator(schema, pattern_options=getattr(pf, engine)())
    assert ours.is_valid(instance) is theirs.is_valid(instance)
    assert sorted(f.message for f in ours.iter_errors(instance)) == sorted(
        e.message for e in theirs.iter_errors(instance)
    )
    assert pickle.loads(pickle.dumps(ours)).is_valid(instance) is ours.is_valid(instance)


def test_pattern_limits_on_the_core(backend: _backend.Engine) -> None:
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    schema = {"pattern": "[a-z]{50}"}
    small = {"size_limit": 100}
    with pytest.raises(jsonschema_rs.ValidationError):
        jsonschema_rs.validator_for(schema, pattern_options=jsonschema_rs.RegexOptions(**small))
    if _backend.active_name() == "python":
        # The fallback has no compiled-size bound: its bound is the match's time limit.
        assert pf.Validator(schema, pattern_options=pf.RegexOptions(**small)).is_valid("a" * 50)
        return
    with pytest.raises(pf.SchemaCompileError) as raised:
        pf.Validator(schema, pattern_options=pf.RegexOptions(**small))
    assert raised.value.code == "PF102"
    assert pf.Validator(schema, pattern_options=pf.RegexOptions()).is_valid("a" * 50)


def test_pattern_options_of_another_type_are_refused() -> None:
    with pytest.raises(TypeError, match="pattern_options must be FancyRegexOptions"):
        pf.Validator({}, pattern_options={"backtrack_limit": 10})  # type: ignore[arg-type]


def _paths_and_instance(error: Any) -> tuple[Any, ...]:
    # jsonschema-rs drops an empty token (a member named ""); RFC 6901 keeps it, and so do we
    # (test_paths_read_tokens_as_jsonschema_rs): compared without them.
    return (
        [token for token in error.instance_path if token != ""],
        [token for token in error.schema_path if token != ""],
        json.dumps(error.instance, sort_keys=True),
    )


@pytest.mark.parametrize("case", INVALID_CASES[::3], ids=case_id)
def test_paths_and_instance_as_jsonschema_rs(backend: _backend.Engine, case: Case) -> None:
    # A third of the suite's invalid cases: every keyword, every draft.
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    try:
        theirs = jsonschema_rs.validator_for(
            case.schema, validate_formats=case.validate_formats, retriever=remotes().__getitem__
        )
        ours = pf.Validator(
            case.schema, validate_formats=case.validate_formats, resources=remotes()
        )
    except (jsonschema_rs.ValidationError, ValueError, pf.SchemaCompileError):
        pytest.skip("does not compile")
    findings = list(ours.iter_errors(case.data))
    expected = sorted(map(_paths_and_instance, theirs.iter_errors(case.data)), key=repr)
    if len(findings) != len(expected):
        pytest.skip("the errors differ already (test_schema_suite's TRIPLES_DIFFER)")
    assert sorted(map(_paths_and_instance, findings), key=repr) == expected
    assert [f.pointer for f in findings] == [
        "".join(f"/{pf_escape(token)}" for token in f.instance_path or ()) for f in findings
    ]
    (many,) = ours.iter_errors_many([case.data])
    assert [f.instance for f in many] == [f.instance for f in findings]
    with pytest.raises(pf.ValidationError) as raised:
        ours.validate(case.data)
    assert [f.instance for f in raised.value.findings] == [f.instance for f in findings]


def pf_escape(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def test_paths_read_tokens_as_jsonschema_rs(backend: _backend.Engine) -> None:
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    schema = {"properties": {k: {"type": "string"} for k in ("0", "01", "+1", "a/b~c", "9" * 23)}}
    instance = {"0": 0, "01": 1, "+1": 2, "a/b~c": 3, "9" * 23: 4}
    ours = sorted(map(_paths_and_instance, pf.Validator(schema).iter_errors(instance)), key=repr)
    theirs = jsonschema_rs.validator_for(schema).iter_errors(instance)
    assert ours == sorted(map(_paths_and_instance, theirs), key=repr)
    # jsonschema-rs drops an empty token (a member named ""); RFC 6901 keeps it, and so do we.
    (finding,) = pf.Validator({"properties": {"": {"type": "string"}}}).iter_errors({"": 1})
    assert (finding.instance_path, finding.schema_path) == ([""], ["properties", "", "type"])


def test_instance_is_masked_and_not_reported(backend: _backend.Engine) -> None:
    secret = "sk-live-SUPERSECRET-123"
    schema = {"properties": {"token": {"type": "integer"}}}
    (plain,) = pf.Validator(schema).iter_errors({"token": secret})
    assert plain.instance == secret
    assert secret not in json.dumps({**plain.to_dict(), "message": ""}) + repr(plain.redacted())
    assert plain.redacted().instance == "***"
    masked = pf.Validator(schema, mask="<hidden>")
    (finding,) = masked.iter_errors({"token": secret})
    assert finding.instance == "<hidden>"
    with pytest.raises(pf.ValidationError) as raised:
        masked.validate({"token": secret})
    assert [f.instance for f in raised.value.findings] == ["<hidden>"]
    (from_text,) = pf.Validator(schema).validate_json(json.dumps({"token": secret})).findings
    assert (from_text.instance, from_text.instance_path) == (None, ["token"])
    assert pf.Finding.of("PF001", "Expecting value").instance_path is None


class DivisibleBy:
    """jsonschema-rs's example keyword class (its ``KeywordValidator`` protocol)."""

    built: ClassVar[list[tuple[Any, Any, list[str | int]]]] = []

    def __init__(self, parent_schema: Any, value: Any, schema_path: list[str | int]) -> None:
        DivisibleBy.built.append((parent_schema, value, schema_path))
        self.divisor = value

    def validate(self, instance: Any) -> None:
        if isinstance(instance, int) and instance % self.divisor != 0:
            raise ValueError(f"{instance} is not divisible by {self.divisor}")


class EveryItem:
    """A keyword reporting several errors at once (``iter_errors``)."""

    def __init__(self, parent_schema: Any, value: Any, schema_path: list[str | int]) -> None:
        self.kind = value

    def validate(self, instance: Any) -> None:
        for error in self.iter_errors(instance):
            raise error

    def iter_errors(self, instance: Any) -> Iterator[Exception]:
        if isinstance(instance, list):
            for index, item in enumerate(instance):
                if type(item).__name__ != self.kind:
                    yield TypeError(f"item {index} is not a {self.kind}")


class Overrides:
    """A keyword of a built-in's name replaces the built-in one."""

    def __init__(self, parent_schema: Any, value: Any, schema_path: list[str | int]) -> None:
        pass

    def validate(self, instance: Any) -> None:
        if instance == "forbidden":
            raise ValueError("the word is forbidden")


KEYWORDS = {"divisibleBy": DivisibleBy, "everyItem": EveryItem, "minLength": Overrides}
KEYWORD_SCHEMA = {
    "properties": {"a": {"divisibleBy": 3}, "w": {"minLength": 100}},
    "items": {"divisibleBy": 2},
    "allOf": [{"everyItem": "int"}],
    "$defs": {"d": {"divisibleBy": 5}},
    "additionalProperties": {"$ref": "#/$defs/d"},
}


def _error_tuples(errors: Iterable[Any]) -> list[tuple[Any, ...]]:
    return sorted(
        ((e.message, e.instance_path, e.schema_path, repr(e.instance)) for e in errors), key=repr
    )


@pytest.mark.parametrize(
    "instance",
    [{"a": 4}, {"a": 3, "b": 7, "w": "forbidden"}, {"w": "ok"}, [2, 4], [1, 2, "x"], [4], 9],
    ids=repr,
)
def test_keywords_as_jsonschema_rs(backend: _backend.Engine, instance: Any) -> None:
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    theirs = jsonschema_rs.validator_for(KEYWORD_SCHEMA, keywords=KEYWORDS)
    DivisibleBy.built.clear()
    ours = pf.Validator(KEYWORD_SCHEMA, keywords=KEYWORDS)
    assert ours.is_valid(instance) is theirs.is_valid(instance)
    assert _error_tuples(ours.iter_errors(instance)) == _error_tuples(theirs.iter_errors(instance))
    assert [f.kind for f in ours.iter_errors(instance)] == [
        f.schema_path[-1] for f in ours.iter_errors(instance)
    ]
    assert sorted(map(repr, ours.evaluate(instance).errors())) == sorted(
        map(repr, theirs.evaluate(instance).errors())
    )
    evaluated, expected = ours.evaluate(instance), theirs.evaluate(instance)
    assert evaluated.list() == expected.list()
    assert evaluated.hierarchical() == expected.hierarchical()
    assert evaluated.annotations() == expected.annotations()
    assert ours.is_valid_json(json.dumps(instance)) is ours.is_valid(instance)
    # One object per place the keyword is used, whatever the validator is asked and however
    # often the core compiles the schema (Python objects, JSON text): jsonschema-rs's arguments.
    assert sorted(DivisibleBy.built, key=repr) == sorted(
        [
            ({"divisibleBy": 2}, 2, ["items", "divisibleBy"]),
            ({"divisibleBy": 3}, 3, ["properties", "a", "divisibleBy"]),
            ({"divisibleBy": 5}, 5, ["$defs", "d", "divisibleBy"]),
        ],
        key=repr,
    )


def test_keywords_in_batches_pickles_and_masks(backend: _backend.Engine) -> None:
    # Over 1024 documents the core would validate on its pool without the GIL: a validator that
    # calls Python keeps the GIL instead, and answers per document.
    validator = pf.Validator({"divisibleBy": 3}, keywords={"divisibleBy": DivisibleBy})
    numbers = list(range(3000))
    assert validator.is_valid_many(numbers) == [n % 3 == 0 for n in numbers]
    assert [bool(errors) for errors in validator.iter_errors_many(numbers)] == [
        n % 3 != 0 for n in numbers
    ]
    again = pickle.loads(pickle.dumps(validator))
    assert again.is_valid(4) is False
    masked = pf.Validator(
        {"properties": {"t": {"everyItem": "int"}}}, keywords={"everyItem": EveryItem}, mask="***"
    )
    (finding,) = masked.iter_errors({"t": ["sk-secret"]})
    assert finding.instance == "***"
    assert finding.message == "item 0 is not a int"  # the keyword's words, quoting no value


def test_a_keyword_class_that_raises_is_a_compile_error(backend: _backend.Engine) -> None:
    class Broken:
        def __init__(self, parent_schema: Any, value: Any, schema_path: list[str | int]) -> None:
            raise TypeError("nope")

    with pytest.raises(pf.SchemaCompileError) as raised:
        pf.Validator({"items": {"broken": 1}}, keywords={"broken": Broken})
    assert raised.value.code == "PF102"
    assert raised.value.schema_pointer == "/items/broken"
    assert "Failed to instantiate keyword class 'broken': TypeError: nope" in str(raised.value)
