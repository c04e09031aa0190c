"""Strict parsing and RFC 8785 canonicalization, on both backends (the ``backend`` fixture)."""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pairling_fast import _fallback
from pairling_fast._backend import Engine
from pairling_fast.errors import CanonicalizationError

DATA = Path(__file__).with_name("data")
JCS_CASES = sorted(path.name for path in (DATA / "jcs" / "input").glob("*.json"))
ORACLE = [
    json.loads(line)
    for line in (DATA / "oracle" / "car-proposal-digests.jsonl").read_text("utf-8").split("\n")
    if line.strip()
]
MAX_SAFE_INTEGER = 2**53 - 1


def nested_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("name", JCS_CASES)
def test_rfc8785_vectors(backend: Engine, name: str) -> None:
    text = (DATA / "jcs" / "input" / name).read_bytes()
    expected = (DATA / "jcs" / "output" / name).read_bytes()
    assert backend.canonicalize_json(text) == expected
    assert backend.canonicalize(backend.parse_json(text)) == expected


@pytest.mark.parametrize("case", ORACLE, ids=[case["preimage"]["id"] for case in ORACLE])
def test_car_proposal_digests(backend: Engine, case: dict[str, Any]) -> None:
    assert backend.digest_hex(case["preimage"]) == case["sha256_hex"]
    text = json.dumps(case["preimage"], ensure_ascii=False, indent=1)
    assert hashlib.sha256(backend.canonicalize_json(text)).hexdigest() == case["sha256_hex"]


TEXT_VALUE_DEFECTS = [
    ('{"a":{"b":1,"b":2}}', "PF002", "/a/b"),
    ('{"a":1,"a":NaN}', "PF002", "/a"),
    ('{"a":NaN,"a":1}', "PF006", "/a"),
    ('{"a":[1,"\\ud800"]}', "PF004", "/a/1"),
    ('["\\ud83d\\u0041"]', "PF004", "/0"),
    ('{"k\\udc00":1}', "PF004", "/k\ufffd"),
    ('{"n": 18446744073709551616}', "PF005", "/n"),
    ("[-9223372036854775809]", "PF005", "/0"),
    ("[" + "9" * 5000 + "]", "PF005", "/0"),
    ("[1e400]", "PF006", "/0"),
    ("[NaN]", "PF006", "/0"),
    ('{"x": -Infinity}', "PF006", "/x"),
    ('{"a/b": {"~": Infinity}}', "PF006", "/a~1b/~0"),
    ('[[1e999], "\\udfff"]', "PF006", "/0/0"),
]


@pytest.mark.parametrize(("text", "code", "pointer"), TEXT_VALUE_DEFECTS)
def test_value_defects_in_text(backend: Engine, text: str, code: str, pointer: str) -> None:
    for parse in (backend.parse_json, backend.canonicalize_json):
        with pytest.raises(CanonicalizationError) as caught:
            parse(text)
        error = caught.value
        assert (error.code, error.pointer, error.line, error.column) == (code, pointer, None, None)


TEXT_DEFECTS: list[tuple[Any, str, str, int, int]] = [
    ("", "PF001", "Expecting value", 1, 1),
    ("[1,]", "PF001", "Expecting value", 1, 4),
    ('{"a":1,}', "PF001", "Expecting property name enclosed in double quotes", 1, 8),
    ('{"a" 1}', "PF001", "Expecting ':' delimiter", 1, 6),
    ("[1 2]", "PF001", "Expecting ',' delimiter", 1, 4),
    ("[1] x", "PF001", "Extra data", 1, 5),
    ("01", "PF001", "Extra data", 1, 2),
    ('"ab', "PF001", "Unterminated string starting at", 1, 1),
    ('["é😀\x01"]', "PF001", "Invalid control character at", 1, 5),
    ('"\\x"', "PF001", "Invalid \\escape", 1, 2),
    ('"\\u12x4"', "PF001", "Invalid \\uXXXX escape", 1, 3),
    ('[\n  "é",\n  x]', "PF001", "Expecting value", 3, 3),
    ("[NaN, 1,]", "PF001", "Expecting value", 1, 9),
    ("\ufeff{}", "PF001", "BOM not allowed", 1, 1),
    (b"\xef\xbb\xbf{}", "PF001", "BOM not allowed", 1, 1),
    (b'{"a":"\xff"}', "PF003", "text is not valid UTF-8", 1, 7),
    (b'[\n"\xc3\xa9\xed\xa0\x80"]', "PF003", "text is not valid UTF-8", 2, 3),
    ('[\n"é\ud800"]', "PF003", "text is not valid UTF-8", 2, 3),
    ("[" * 100_000, "PF008", "nesting deeper than 512 arrays/objects", 1, 513),
    ("[" * 513 + "]" * 513, "PF008", "nesting deeper than 512 arrays/objects", 1, 513),
    ('{"a":' * 513, "PF008", "nesting deeper than 512 arrays/objects", 1, 2561),
    ("[NaN, " + "[" * 600, "PF008", "nesting deeper than 512 arrays/objects", 1, 518),
    ("[1 " + "[" * 600, "PF001", "Expecting ',' delimiter", 1, 4),
]


@pytest.mark.parametrize(
    ("data", "code", "message", "line", "column"),
    TEXT_DEFECTS,
    ids=[repr(case[0])[:30] for case in TEXT_DEFECTS],
)
def test_text_defects(
    backend: Engine, data: Any, code: str, message: str, line: int, column: int
) -> None:
    with pytest.raises(CanonicalizationError) as caught:
        backend.parse_json(data)
    error = caught.value
    assert (error.code, error.message, error.pointer) == (code, message, "")
    assert (error.line, error.column) == (line, column)


def test_the_fallback_parser_keeps_its_hooks_per_thread() -> None:
    """The fallback's parser reuses one decoder per thread, whose hooks note on it what the value
    model forbids: threads parsing at once must each note on their own, and a text after a
    defective one must start clean."""
    from pairling_fast._fallback import parse

    texts: list[tuple[str, str | None]] = [
        ('{"a":{"b":1,"b":2}}', "PF002"),
        ('{"n": 18446744073709551616}', "PF005"),
        ('{"a": [1, 2.5, "x"]}', None),
    ]

    def parse_many(rounds: int) -> list[tuple[str | None, str | None]]:
        seen: list[tuple[str | None, str | None]] = []
        for index in range(rounds):
            text, code = texts[index % len(texts)]
            try:
                parse.parse_json(text)
            except CanonicalizationError as error:
                seen.append((code, error.code))
            else:
                seen.append((code, None))
        return seen

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        outcomes = list(pool.map(parse_many, [600] * 4))
        mine = parse._suspicions()
        others = set(pool.map(lambda _: id(parse._suspicions()), range(16)))
    assert all(expected == got for seen in outcomes for expected, got in seen)
    assert mine is parse._suspicions() and id(mine) not in others
    with pytest.raises(CanonicalizationError):
        parse.parse_json(texts[0][0])
    assert mine.found
    parse.parse_json(texts[2][0])
    assert not mine.found


def test_nesting_up_to_the_limit_is_fine(backend: Engine) -> None:
    text = "[" * 512 + "]" * 512
    assert backend.canonicalize_json(text) == text.encode()
    assert backend.canonicalize(nested_list(512)) == text.encode()


def test_parse_keeps_member_order_and_number_types(backend: Engine) -> None:
    value = backend.parse_json(
        '{"b": -0, "a": [1.0, -0.0, 18446744073709551615, "\\ud83d\\ude00"]}'
    )
    assert list(value) == ["b", "a"]
    assert value["b"] == 0 and type(value["b"]) is int
    assert [type(item) for item in value["a"]] == [float, float, int, str]
    assert value["a"][1] == 0.0 and str(value["a"][1]) == "-0.0"
    assert value["a"][2:] == [2**64 - 1, "\U0001f600"]


PYTHON_VALUE_DEFECTS: list[tuple[Any, str, str]] = [
    ({1: 2}, "PF007", ""),
    ({"a": [{None: 1}]}, "PF007", "/a/0"),
    ({"s": {1, 2}}, "PF009", "/s"),
    ([b"bytes"], "PF009", "/0"),
    ({"x": "\ud800"}, "PF004", "/x"),
    ({"k\udc00": 1}, "PF004", "/k\ufffd"),
    ({"n": 2**64}, "PF005", "/n"),
    ([-(2**63) - 1], "PF005", "/0"),
    (float("nan"), "PF006", ""),
    ({"a/b": {"~": float("inf")}}, "PF006", "/a~1b/~0"),
    (nested_list(100_000), "PF008", ""),
    ({"big": 2**53}, "PF005", "/big"),
    ({"small": -(2**53)}, "PF005", "/small"),
    ({"big": 2**63}, "PF005", "/big"),
    # A value-model defect wins, in document order; otherwise the first PF005 in canonical order.
    ({"b": 2**60, "a": float("nan")}, "PF006", "/a"),
    ({"b": float("nan"), "a": {1}}, "PF006", "/b"),
    ({"b": 2**60, "a": [2**61]}, "PF005", "/a/0"),
]


@pytest.mark.parametrize(("value", "code", "pointer"), PYTHON_VALUE_DEFECTS)
def test_python_value_defects(backend: Engine, value: Any, code: str, pointer: str) -> None:
    for canonical in (backend.canonicalize, backend.digest_hex):
        with pytest.raises(CanonicalizationError) as caught:
            canonical(value)
        assert (caught.value.code, caught.value.pointer) == (code, pointer)


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (5e-324, "5e-324"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (-0.0, "0"),
        (0.1, "0.1"),
        (-1.5e300, "-1.5e+300"),
        (1.5e300, "1.5e+300"),
        (56.0, "56"),
        (123456789012345680000.0, "123456789012345680000"),
        (333333333.33333329, "333333333.3333333"),
        (2.0**53, "9007199254740992"),
        (MAX_SAFE_INTEGER, "9007199254740991"),
        (-MAX_SAFE_INTEGER, "-9007199254740991"),
        (0, "0"),
        (True, "true"),
    ],
)
def test_numbers_follow_ecmascript(backend: Engine, number: Any, expected: str) -> None:
    assert backend.canonicalize(number) == expected.encode()
    assert backend.canonicalize_json(json.dumps(number)) == expected.encode()


def test_keys_sort_by_utf16_code_units(backend: Engine) -> None:
    # By code point (and UTF-8 bytes) U+E000 sorts first; by UTF-16 units \ud83d < \ue000.
    value = {"\ue000": 1, "\U0001f600": 2, "b": 3, "": 4, "a": 5}
    expected = '{"":4,"a":5,"b":3,"\U0001f600":2,"\ue000":1}'.encode()
    assert backend.canonicalize(value) == expected
    assert backend.canonicalize_json(json.dumps(value)) == expected


def test_strings_escape_only_what_jcs_requires(backend: Engine) -> None:
    value = '"\\\b\f\n\r\t\x00\x1f\x7f\u2028/é😀'
    expected = '"\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f\x7f\u2028/é😀"'.encode()
    assert backend.canonicalize(value) == expected


def test_tuples_are_arrays(backend: Engine) -> None:
    assert backend.canonicalize({"t": (1, "x", None)}) == b'{"t":[1,"x",null]}'


def test_digest_is_sha256_of_canonical_bytes(backend: Engine) -> None:
    value = {"b": [1, 2.5, None], "a": "é"}
    expected = hashlib.sha256(b'{"a":"\xc3\xa9","b":[1,2.5,null]}').hexdigest()
    assert backend.digest_hex(value) == expected


def reparses_as_unsafe_integer(number: float) -> bool:
    """ECMAScript writes integral floats below 1e21 without exponent, so the canonical text of
    one beyond 2^53-1 reads back as an integer that has no canonical form (PF005)."""
    return number.is_integer() and MAX_SAFE_INTEGER < abs(number) < 1e21


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False).filter(
        lambda number: not reparses_as_unsafe_integer(number)
    )
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values)
def test_backends_agree_and_canonical_form_is_a_fixed_point(backend: Engine, value: Any) -> None:
    canonical = backend.canonicalize(value)
    assert canonical == _fallback.canonicalize(value)
    assert backend.canonicalize_json(canonical) == canonical
    assert backend.digest_hex(value) == hashlib.sha256(canonical).hexdigest()


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet='[]{}",:\\u0d8eE.-+1 \nNaIfy"é😀\x01', max_size=20))
def test_backends_agree_on_arbitrary_text(backend: Engine, text: str) -> None:
    assert outcome(backend, text) == outcome(_fallback, text)


def outcome(engine: Engine, text: str) -> tuple[bytes | None, Any]:
    try:
        return engine.canonicalize_json(text), None
    except CanonicalizationError as error:
        return None, (error.code, error.message, error.pointer, error.line, error.column)
