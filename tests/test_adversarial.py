"""The adversarial corpus (tests/adversarial/) on both backends: every hostile input gets its
expected code and location, in bounded time, never a traceback, a crash or a hang."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pairling_fast
from pairling_fast import CanonicalizationError, Validator, _backend

sys.path.insert(0, str(Path(__file__).with_name("adversarial")))
import make_corpus

EXPECTED: dict[str, dict[str, Any]] = json.loads(make_corpus.EXPECTED.read_text("utf-8"))

# Generous: the slowest case (50 MB on the pure-Python backend) takes a few seconds.
SECONDS_PER_CASE = 30.0


def outcome(data: bytes) -> dict[str, Any]:
    """What the active backend makes of ``data``, in the corpus's expectation format."""
    try:
        return {"canonical": pairling_fast.canonicalize_json(data).decode("utf-8")}
    except CanonicalizationError as error:
        return {
            "code": error.code,
            "pointer": error.pointer,
            "line": error.line,
            "column": error.column,
        }


def timed_outcome(data: bytes) -> dict[str, Any]:
    started = time.monotonic()
    result = outcome(data)
    assert time.monotonic() - started < SECONDS_PER_CASE
    return result


def test_committed_corpus_is_what_the_generator_makes() -> None:
    cases = make_corpus.small_cases()
    assert {case.name: case.expected for case in cases} == EXPECTED
    for case in cases:
        assert (make_corpus.CORPUS / f"{case.name}.json").read_bytes() == case.data, case.name
    assert len(list(make_corpus.CORPUS.iterdir())) == len(cases)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_small_case(backend: _backend.Engine, name: str) -> None:
    data = (make_corpus.CORPUS / f"{name}.json").read_bytes()
    assert timed_outcome(data) == EXPECTED[name]


@pytest.fixture(scope="module")
def large_cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, make_corpus.LargeCase]:
    folder = tmp_path_factory.mktemp("adversarial")
    return {case.name: case for case in make_corpus.write_large_cases(folder)}


LARGE_CASE_NAMES = [
    "depth-100000-arrays",
    "depth-100000-objects",
    "depth-100000-unclosed",
    "array-1m-elements",
    "single-line-50mb",
    "single-line-50mb-error-at-end",
    "negative-integer-100k-digits",
    "float-100k-digit-mantissa",
    "float-100k-digit-fraction",
    "float-100k-digit-exponent",
    "float-100k-digit-negative-exponent",
    "float-1m-digit-mantissa-large-exponent",
]


def test_every_large_case_is_tested(large_cases: dict[str, make_corpus.LargeCase]) -> None:
    assert sorted(large_cases) == sorted(LARGE_CASE_NAMES)


@pytest.mark.parametrize("name", LARGE_CASE_NAMES)
def test_large_case(
    backend: _backend.Engine, large_cases: dict[str, make_corpus.LargeCase], name: str
) -> None:
    case = large_cases[name]
    assert timed_outcome(case.path.read_bytes()) == case.expected


def test_duplicate_keys_are_rejected_because_the_digest_would_be_ambiguous(
    backend: _backend.Engine,
) -> None:
    data = (make_corpus.CORPUS / "digest-ambiguity.json").read_bytes()
    last_wins = json.loads(data)
    first_wins = json.loads(data, object_pairs_hook=lambda pairs: dict(reversed(pairs)))
    digests = {pairling_fast.digest(last_wins), pairling_fast.digest(first_wins)}
    assert len(digests) == 2  # two readings, two digests: no answer would be safe
    with pytest.raises(CanonicalizationError) as raised:
        pairling_fast.digest_hex(pairling_fast.parse_json(data))
    assert (raised.value.code, raised.value.pointer) == ("PF002", "/amount")


ESCAPED_AND_LITERAL = [
    ('"\\u00e9"', '"\u00e9"'),
    ('"\\/"', '"/"'),
    ('"\\u0041\\u0062"', '"Ab"'),
    ('"\\ud83d\\ude00"', '"\U0001f600"'),
    ('"\\uD83D\\uDE00"', '"\U0001f600"'),
    ('"\\u007f\\u2028"', '"\x7f\u2028"'),
    ('{"\\u0062":1,"a":{"\\u00e9":"\\t"}}', '{"a":{"\u00e9":"\\u0009"},"b":1}'),
    ('["\\u000a", "\\n"]', '["\\n", "\\u000A"]'),
]


@pytest.mark.parametrize(("escaped", "literal"), ESCAPED_AND_LITERAL)
def test_escaped_and_literal_spellings_canonicalize_identically(
    backend: _backend.Engine, escaped: str, literal: str
) -> None:
    canonical = pairling_fast.canonicalize_json(escaped.encode())
    assert canonical == pairling_fast.canonicalize_json(literal.encode())
    assert hashlib.sha256(canonical).hexdigest() == pairling_fast.digest_hex(
        pairling_fast.parse_json(literal)
    )


def nested_lists(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def nested_dicts(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def self_containing_list() -> list[Any]:
    loop: list[Any] = [1]
    loop.append(loop)
    return loop


PYTHON_VALUES = {
    "list-depth-100000": (nested_lists(100_000), "PF008", ""),
    "dict-depth-100000": (nested_dicts(100_000), "PF008", ""),
    "list-containing-itself": (self_containing_list(), "PF008", ""),
    "integer-2^53": ({"n": 2**53}, "PF005", "/n"),
    "integer-minus-2^53": ([-(2**53)], "PF005", "/0"),
    "integer-2^64": ([2**64], "PF005", "/0"),
    # Beyond Python's 4300-digit int/str conversion limit: never a ValueError.
    "integer-10^5000": ([10**5000], "PF005", "/0"),
    "nan": ([float("nan")], "PF006", "/0"),
    "infinity": ({"x": float("inf")}, "PF006", "/x"),
    "lone-surrogate": (["\ud800"], "PF004", "/0"),
    # Two code points of a str, not a pair: each is shown as U+FFFD in the pointer.
    "surrogate-halves-in-key": ({"\ud800\udc00": 1}, "PF004", "/\ufffd\ufffd"),
}


@pytest.mark.parametrize("name", sorted(PYTHON_VALUES))
def test_python_value_outside_the_value_model(backend: _backend.Engine, name: str) -> None:
    value, code, pointer = PYTHON_VALUES[name]
    for function in (pairling_fast.canonicalize, pairling_fast.digest_hex):
        with pytest.raises(CanonicalizationError) as raised:
            function(value)
        assert (raised.value.code, raised.value.pointer) == (code, pointer)


def test_deep_python_values_are_not_valid_instances(backend: _backend.Engine) -> None:
    validator = Validator({"type": "array"})
    assert not validator.is_valid(nested_lists(100_000))
    [finding] = validator.iter_errors(nested_lists(100_000))
    assert finding.code == "PF008"


CATASTROPHIC = "^(a+)+$"


@pytest.fixture
def pattern_errors(backend: _backend.Engine) -> Iterator[Any]:
    def errors(pattern: str, text: str) -> list[tuple[str, str, str]]:
        started = time.monotonic()
        validator = Validator({"type": "string", "pattern": pattern})
        findings = list(validator.iter_errors(text))
        assert validator.is_valid(text) is not findings
        assert time.monotonic() - started < SECONDS_PER_CASE
        return [(f.code, f.pointer, f.schema_pointer or "") for f in findings]

    yield errors


def test_catastrophic_pattern_is_decided_in_bounded_time(pattern_errors: Any) -> None:
    # Python's `re` would take about 2^64 steps here.
    assert pattern_errors(CATASTROPHIC, "a" * 64 + "!") == [("PF101", "", "/pattern")]
    assert pattern_errors(CATASTROPHIC, "a" * 64) == []


def test_catastrophic_pattern_on_a_long_string_is_bounded(pattern_errors: Any) -> None:
    # The Rust core decides this one (the `regex` crate is linear); the pure-Python backend may
    # give up after its time limit, which is reported as the same violation (docs/limits.md).
    assert pattern_errors(CATASTROPHIC, "a" * 10_000 + "!") == [("PF101", "", "/pattern")]


def test_catastrophic_pattern_with_a_backreference_is_bounded(pattern_errors: Any) -> None:
    # A backreference needs fancy-regex in the Rust core, which stops at its backtrack limit.
    assert pattern_errors(r"^(a|a)*\1b", "a" * 30 + "!") == [("PF101", "", "/pattern")]


def test_undecided_match_is_reported_like_the_rust_core(monkeypatch: pytest.MonkeyPatch) -> None:
    from pairling_fast._fallback import validate as fallback

    monkeypatch.setattr(fallback, "PATTERN_TIME_LIMIT", 0.000_001)
    compiled = fallback.compile_schema({"properties": {"s": {"pattern": CATASTROPHIC}}}, None, None)
    assert compiled.errors({"s": "a" * 50_000 + "!"}) == [
        ("/s", "/properties/s/pattern", "pattern", fallback.UNDECIDED_MATCH, None)
    ]


def test_recursive_schema_reaches_the_nesting_limit(backend: _backend.Engine) -> None:
    validator = Validator({"type": "array", "items": {"$ref": "#"}})
    assert validator.is_valid(nested_lists(511))
    innermost_wrong: Any = "x"
    for _ in range(511):
        innermost_wrong = [innermost_wrong]
    [finding] = validator.iter_errors(innermost_wrong)
    assert (finding.code, finding.pointer, finding.schema_pointer) == ("PF101", "/0" * 511, "/type")


@pytest.mark.parametrize(
    "schema", [{"$ref": "#"}, {"allOf": [{"$ref": "#"}], "type": "integer"}], ids=["ref", "allOf"]
)
def test_endless_self_reference_never_crashes(schema: dict[str, Any]) -> None:
    # JSON Schema leaves such a schema undefined. jsonschema-rs gives a verdict; python-jsonschema
    # recurses forever, which the fallback turns into a clear PF102 (docs/limits.md).
    with _backend.selected("rust"):
        Validator(schema).is_valid(1)
    with _backend.selected("python"), pytest.raises(pairling_fast.SchemaCompileError) as raised:
        Validator(schema).is_valid(1)
    assert raised.value.code == "PF102"
