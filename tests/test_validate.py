"""Schema validation engine: bundled schemas, our formats, compile errors, backend parity."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest
from waiting import DEADLINE

from pairling_fast import _backend
from pairling_fast.errors import CanonicalizationError, SchemaCompileError

DRAFT7 = "http://json-schema.org/draft-07/schema#"
DRAFT2020 = "https://json-schema.org/draft/2020-12/schema"
ACTION_RESULT = "car.type.action_result"
JOURNAL_EVENT = "car.journal.event"


def format_schema(name: str, dialect: str = DRAFT7) -> dict[str, Any]:
    return {"$schema": dialect, "format": name}


def accepts(engine: _backend.Engine, name: str, instance: Any, formats: bool | None = True) -> bool:
    return engine.compile_schema(format_schema(name), formats, None).is_valid(instance)


def test_bundled_ids(backend: _backend.Engine) -> None:
    ids = backend.bundled_schema_ids()
    assert ids == sorted(ids)
    assert "pairling.capability-map.2.0.0" in ids
    assert {ACTION_RESULT, JOURNAL_EVENT, "car.cli.car_inspect.result"} <= set(ids)
    # The default bundle's (CAR 0.60.0's) result schemas.
    assert len([i for i in ids if i.startswith("car.rpc.") and i.endswith(".result")]) == 23
    for schema_id in ids:
        backend.bundled_validator(schema_id)


def test_oracle_action_results_are_valid(backend: _backend.Engine, data_dir: Path) -> None:
    validator = backend.bundled_validator(ACTION_RESULT)
    text = (data_dir / "oracle" / "car-action-results.jsonl").read_text("utf-8")
    # Not `splitlines()`: the strings hold U+2028 and friends, which it would split on.
    lines = [line for line in text.split("\n") if line]
    assert lines
    for line in lines:
        result = json.loads(line)
        assert validator.errors(result) == [], line
        assert validator.is_valid(result)


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("2024-02-29T12:00:00Z", True),  # leap year
        ("2000-02-29T00:00:00+00:00", True),  # divisible by 400
        ("2023-02-29T12:00:00Z", False),
        ("1900-02-29T00:00:00Z", False),  # divisible by 100, not 400
        ("2026-12-02T14:21:11.877945340Z", True),
        ("2026-12-02t14:21:11z", True),  # RFC 3339 5.6: T and Z in either case
        ("2026-12-02 14:21:11Z", False),
        ("2026-12-02T14:21:11", False),  # no offset
        ("2026-12-02T24:00:00Z", False),
        ("2026-12-02T23:60:00Z", False),
        ("2026-04-31T00:00:00Z", False),
        ("2026-12-02T14:21:11.Z", False),
        ("2026-12-02T14:21:11+24:00", False),
        ("2026-12-02T14:21:11+05:30", True),
        ("1998-12-31T23:59:60Z", True),  # leap second
        ("1998-12-31T15:59:60-08:00", True),  # the same leap second, at 23:59 UTC
        ("1998-12-31T23:58:60Z", False),
        ("1998-12-31T23:59:61Z", False),
        ("\uff12\uff10\uff12\uff16-12-02T14:21:11Z", False),  # fullwidth: only ASCII digits count
        ("", False),
    ],
)
def test_date_time(backend: _backend.Engine, text: str, valid: bool) -> None:
    assert accepts(backend, "date-time", text) is valid


@pytest.mark.parametrize(
    ("name", "instance", "valid"),
    [
        ("date", "2024-02-29", True),
        ("date", "2023-02-29", False),
        ("date", "2024-1-01", False),
        ("time", "23:59:59.5+01:00", True),
        ("time", "23:59:59", False),
        ("uint8", 255, True),
        ("uint8", 300, False),
        ("uint8", 5.0, True),
        ("uint8", -1, False),
        ("uint64", 18446744073709551615, True),
        ("uint64", -1, False),
        ("uint", -1, False),
        ("int8", -128, True),
        ("int8", 128, False),
        ("int32", 2.5, False),
        ("int32", 2147483648, False),
        ("int64", -9223372036854775808, True),
        ("int64", 9.3e18, False),
        ("double", 2.5, True),
        ("double", -1e300, True),
        ("float", 1, True),
        ("uint8", "300", True),  # an integer format does not constrain strings
        ("date-time", 5, True),  # a string format does not constrain numbers
        ("uint8", True, True),  # booleans are not numbers
        ("no-such-format", "anything", True),
    ],
)
def test_formats(backend: _backend.Engine, name: str, instance: Any, valid: bool) -> None:
    assert accepts(backend, name, instance) is valid


def test_formats_follow_the_draft_unless_forced(backend: _backend.Engine) -> None:
    bad = "2023-02-29T00:00:00Z"
    assert not accepts(backend, "date-time", bad, formats=None)  # draft 7 asserts
    annotation = backend.compile_schema(format_schema("date-time", DRAFT2020), None, None)
    assert annotation.is_valid(bad)  # 2020-12 annotates
    assert not backend.compile_schema(format_schema("date-time", DRAFT2020), True, None).is_valid(
        bad
    )
    assert accepts(backend, "date-time", bad, formats=False)


def test_format_violation(backend: _backend.Engine) -> None:
    compiled = backend.compile_schema(format_schema("uint8"), True, None)
    [(pointer, schema_pointer, keyword, _message, _best)] = compiled.errors(300)
    assert (pointer, schema_pointer, keyword) == ("", "/format", "format")


def test_remote_ref_is_refused_at_compile_time(backend: _backend.Engine) -> None:
    schema = {"$schema": DRAFT7, "properties": {"a": {"$ref": "https://example.com/s.json"}}}
    with pytest.raises(SchemaCompileError) as caught:
        backend.compile_schema(schema, None, None)
    assert caught.value.code == "PF103"
    assert "remote $ref refused (no network): https://example.com/s.json" in caught.value.message


def test_unresolvable_local_ref(backend: _backend.Engine) -> None:
    with pytest.raises(SchemaCompileError) as caught:
        backend.compile_schema({"$schema": DRAFT7, "$ref": "#/definitions/missing"}, None, None)
    assert caught.value.code == "PF103"


def test_invalid_schema(backend: _backend.Engine) -> None:
    with pytest.raises(SchemaCompileError) as caught:
        backend.compile_schema({"$schema": DRAFT7, "properties": {"a": {"type": 5}}}, None, None)
    assert caught.value.code == "PF102"
    assert caught.value.schema_pointer == "/properties/a/type"


def test_resources_serve_refs(backend: _backend.Engine) -> None:
    resources = {"https://example.com/port.json#": {"type": "integer", "format": "uint16"}}
    schema = {"$schema": DRAFT7, "properties": {"port": {"$ref": "https://example.com/port.json"}}}
    compiled = backend.compile_schema(schema, None, resources)
    assert compiled.is_valid({"port": 8080})
    [(pointer, schema_pointer, keyword, _message, _best)] = compiled.errors({"port": 70000})
    assert (pointer, schema_pointer, keyword) == ("/port", "/format", "format")


VALID_ACTION_RESULT = {
    "action_id": "a0",
    "status": "succeeded",
    "state_changes": {},
    "timestamp": "2026-12-02T14:21:11.877945340Z",
}
INVALID_ACTION_RESULTS = [
    {**VALID_ACTION_RESULT, "status": "exploded"},
    {**VALID_ACTION_RESULT, "surprise": 1, "another": 2},
    {**VALID_ACTION_RESULT, "timestamp": "2026-02-30T00:00:00Z"},
    {**VALID_ACTION_RESULT, "action_id": 7, "duration_ms": "slow", "terminal": "yes"},
    {"status": "succeeded"},
    [],
]
INVALID_JOURNAL_EVENTS = [
    {"kind": "no_such_kind", "timestamp": "2026-12-02T14:21:11Z"},
    {"kind": 3, "timestamp": "yesterday", "data": []},
    {"timestamp": "2026-12-02T14:21:11Z", "run_id": 5, "extra": True},
    {"kind": "proposal_received", "timestamp": "2026-12-02T25:00:00Z", "prev_hash": 1},
    "not an event",
]


@pytest.mark.parametrize(
    ("schema_id", "instance"),
    [(ACTION_RESULT, i) for i in INVALID_ACTION_RESULTS]
    + [(JOURNAL_EVENT, i) for i in INVALID_JOURNAL_EVENTS],
)
def test_backends_report_the_same_violations(schema_id: str, instance: Any) -> None:
    pytest.importorskip("pairling_fast._core", reason="the Rust core is not built")
    triples = []
    for name in _backend.BACKENDS:
        errors = _backend.engine(name).bundled_validator(schema_id).errors(instance)
        assert errors, name
        triples.append(
            [(pointer, schema_pointer, keyword) for pointer, schema_pointer, keyword, *_ in errors]
        )
    assert triples[0] == triples[1]


def test_violations_locate_the_keyword_behind_refs(backend: _backend.Engine) -> None:
    errors = backend.bundled_validator(ACTION_RESULT).errors({**VALID_ACTION_RESULT, "status": "x"})
    assert [(p, s, k) for p, s, k, *_ in errors] == [
        ("/status", "/definitions/ActionStatus/enum", "enum")
    ]


# ---------------------------------------------------------------------------------------------
# Issue #17: the two backends agree with jsonschema-rs beyond the test suite's cases.


@pytest.mark.parametrize(
    ("pattern", "text", "valid"),
    [
        ("^\\d$", "7", True),
        ("^\\d$", "\u07c0", False),  # NKO digit zero: not an ECMA-262 \d
        ("^\\w+$", "\u00e9t\u00e9", False),
        ("^\\s$", "\u2003", True),  # an em space is ECMA-262 white space
        ("^\\s$", "\u0085", False),  # NEL is not
        ("^[a-z]+$", "ab\n", False),  # $ never matches before a trailing newline
        ("^[a-z]+$", "ab", True),
        ("^.$", "\r", False),  # . excludes every line terminator
        ("^\\cC$", "\u0003", True),
        ("(?<=a+)b", "aab", True),  # look-behind of any length
        ("(?<=a+)b", "cb", False),
        ("^a{2}{3}$", "aa{3}", True),  # a count after a quantifier is text, as in the Rust core
        ("^a{2}{3}$", "aaaaaa", False),
        ("a{1000}{1000}{1000}", "a", False),
        ("^[]a]+$", "]a", True),  # a `]` first in a class is itself, as in the Rust core
        ("^\\p{Lu}$", "\u00c9", True),
        ("^(?<year>\\d{4})-(\\d\\d)-\\2$", "2024-12-12", True),
        ("^(?<year>\\d{4})-(\\d\\d)-\\2$", "2024-12-13", False),
    ],
)
def test_patterns_have_their_ecma_262_meaning(
    backend: _backend.Engine, pattern: str, text: str, valid: bool
) -> None:
    assert backend.compile_schema({"pattern": pattern}, None, None).is_valid(text) is valid


@pytest.mark.parametrize(
    "pattern", ["\\a", "(", "a{2,1}", "[b-a]", "\\c1", "[]", "[^]", "(?<n>a)\\k<n>"]
)
def test_patterns_the_rust_core_refuses_are_pf102(backend: _backend.Engine, pattern: str) -> None:
    with pytest.raises(SchemaCompileError) as raised:
        backend.compile_schema({"pattern": pattern}, None, None)
    assert raised.value.code == "PF102"


@pytest.mark.parametrize(
    ("name", "instance", "valid"),
    [
        ("email", "joe.bloggs@example.com", True),
        ("email", "2962", False),
        ("hostname", "-a-host-name-that-starts-with--", False),
        ("hostname", "xn--4gbwdl.xn--wgbh1c", True),
        ("idn-hostname", "\u5b9e\u4f8b.\u6d4b\u8bd5", True),
        ("idn-hostname", "\u302e\u5b9e\u4f8b.\u6d4b\u8bd5", False),
        ("ipv4", "192.168.0.1", True),
        ("ipv4", "087.10.0.1", False),
        ("ipv6", "::ffff:192.168.0.1", True),
        ("ipv6", "fe80::a%eth1", False),
        ("uri", "http://foo.bar/?baz=qux#quux", True),
        ("uri", "//foo.bar/?baz=qux#quux", False),
        ("uri-reference", "#frag", True),
        ("iri", "http://\u0192\u00f8\u00f8.\u00df\u00e5r/?\u2202\u00e9\u0153=\u03c0\u00eex", True),
        ("uri-template", "http://example.com/dictionary/{term:1}/{term}", True),
        ("uri-template", "http://example.com/dictionary/{term:1}/{term", False),
        ("json-pointer", "/foo/bar~0/baz~1/%a", True),
        ("json-pointer", "/foo/bar~", False),
        ("relative-json-pointer", "0#", True),
        ("relative-json-pointer", "01", False),
        ("regex", "([abc])+\\s+$", True),
        ("regex", "^(abc]", False),
        ("uuid", "2EB8AA08-AA98-11EA-B4AA-73B441D16380", True),
        ("uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d1638", False),
        ("duration", "P4DT12H30M5S", True),
        ("duration", "PT1D", False),
        ("date-time", "1963-06-19T08:30:06.283185Z", True),  # ours, on top of the crate's
        ("uint8", 256, False),
    ],
)
def test_crate_formats_on_both_backends(
    backend: _backend.Engine, name: str, instance: Any, valid: bool
) -> None:
    compiled = backend.compile_schema(format_schema(name, DRAFT2020), True, None)
    assert compiled.is_valid(instance) is valid


def test_formats_a_draft_does_not_know_assert_nothing(backend: _backend.Engine) -> None:
    # `uuid` and `duration` came with 2019-09: under draft 7 they are unknown names.
    assert accepts(backend, "uuid", "not a uuid")
    assert accepts(backend, "duration", "not a duration")
    assert not accepts(backend, "ipv4", "not an address")


@pytest.mark.parametrize(
    ("instance", "multiple", "valid"),
    [
        (0.07, 0.01, True),
        (1e308, 1e-308, True),
        (1e-308, 1e308, False),
        (12391239123, 1e-8, True),
        (1e308, 0.123456789, False),
        (0.0075, 0.0001, True),
        (0.00751, 0.0001, False),
        (18446744073709551615, 2, False),
        (4.5, 1.5, True),
        (-12, 4, True),
    ],
)
def test_multiple_of_is_exact_decimal_arithmetic(
    backend: _backend.Engine, instance: float, multiple: float, valid: bool
) -> None:
    compiled = backend.compile_schema({"multipleOf": multiple}, None, None)
    assert compiled.is_valid(instance) is valid


def nested_schema(depth: int) -> dict[str, Any]:
    """A schema ``depth`` objects deep: ``{"not": {"not": ... {}}}``."""
    schema: dict[str, Any] = {}
    for _ in range(depth - 1):
        schema = {"not": schema}
    return schema


def test_deep_schemas_compile_up_to_the_nesting_limit(backend: _backend.Engine) -> None:
    compiled = backend.compile_schema(nested_schema(512), None, None)
    assert compiled.is_valid(1) is False  # 511 `not`s around the empty schema
    with pytest.raises(CanonicalizationError) as raised:
        backend.compile_schema(nested_schema(513), None, None)
    assert raised.value.code == "PF008"


def test_integers_beyond_64_bits_are_outside_the_value_model(backend: _backend.Engine) -> None:
    with pytest.raises(CanonicalizationError) as raised:
        backend.compile_schema({"minimum": -18446744073709551615}, None, None)
    assert (raised.value.code, raised.value.pointer) == ("PF005", "/minimum")


def test_unevaluated_properties_match_names_in_bounded_time(backend: _backend.Engine) -> None:
    schema = {"patternProperties": {"^(a+)+$": {}}, "unevaluatedProperties": False}
    compiled = backend.compile_schema(schema, None, None)
    started = time.monotonic()
    [(pointer, schema_pointer, keyword, _, _best)] = compiled.errors({"a" * 32 + "!": 1})
    assert time.monotonic() - started < DEADLINE  # backtracking would take 2**32 steps
    assert (pointer, schema_pointer, keyword) == (
        "",
        "/unevaluatedProperties",
        "unevaluatedProperties",
    )


def test_a_metaschema_from_resources_sets_draft_and_vocabularies(backend: _backend.Engine) -> None:
    metaschema = {
        "$schema": DRAFT2020,
        "$id": "https://example.com/meta",
        "$vocabulary": {
            "https://json-schema.org/draft/2020-12/vocab/core": True,
            "https://json-schema.org/draft/2020-12/vocab/applicator": True,
            "https://json-schema.org/draft/2020-12/vocab/format-assertion": True,
        },
        "$dynamicAnchor": "meta",
        "allOf": [{"$ref": "https://json-schema.org/draft/2020-12/meta/core"}],
    }
    schema = {
        "$schema": "https://example.com/meta",
        "format": "ipv4",
        "properties": {"n": {"minimum": 5, "multipleOf": 7}},
    }
    compiled = backend.compile_schema(schema, None, {"https://example.com/meta": metaschema})
    assert not compiled.is_valid("not-an-ipv4")  # format-assertion listed: formats assert
    assert compiled.is_valid({"n": 1})  # no validation vocabulary: `minimum`, `multipleOf` ignored


_PATTERN_ATOMS = [
    *("a", "b", ".", "é", "{", "}", "]", "^", "$", "\\b", "\\B", "\\.", "\\-", "\\/", "\\\\"),
    *("\\d", "\\w", "\\s", "\\D", "\\W", "\\S", "\\p{L}", "\\P{L}", "\\p{Lu}"),
    *("[a-c]", "[^a]", "[\\d_]", "[-a]", "[a-]", "[\\]]", "[\\b]", "(a|b)", "(?:ab)"),
    *("\\u0041", "\\x41", "\\n", "\\t", "\\cJ", "\\0"),
]
_QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "*?", "{2,}"]
_PATTERN_TEXTS = ["", "a", "ab", "aab\n", "1", "\u07c0", "é", "A", "_", " ", "\u2003", "\n", "\r"]


def test_random_patterns_mean_the_same_on_both_backends() -> None:
    """Differential check of the ECMA-262 translation (without look-around and backreferences,
    docs/formats.md): compile outcome and every verdict must match the Rust core's."""
    pytest.importorskip("pairling_fast._core", reason="the Rust core is not built")
    rng = random.Random(17)
    for _ in range(400):
        pattern = "".join(
            rng.choice(_PATTERN_ATOMS) + rng.choice(_QUANTIFIERS) for _ in range(rng.randint(1, 4))
        )
        outcomes = []
        for name in _backend.BACKENDS:
            try:
                compiled = _backend.engine(name).compile_schema({"pattern": pattern}, None, None)
            except SchemaCompileError as error:
                outcomes.append(error.code)
                continue
            outcomes.append(str([compiled.is_valid(text) for text in _PATTERN_TEXTS]))
        assert outcomes[0] == outcomes[1], pattern
