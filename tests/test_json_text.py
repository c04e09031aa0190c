"""Indented reports and maps (``_json_text.dumps``): the text ``json.dumps(value,
indent=N, ensure_ascii=False)`` writes, byte for byte, whether the core lays it out or not."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pairling_fast import _json_text
from pairling_fast._load_core import import_core

try:
    CORE_INDENT = import_core().indent_json
except ImportError:  # the fallback-only install: json.dumps itself is the route
    CORE_INDENT = None

needs_core = pytest.mark.skipif(CORE_INDENT is None, reason="the Rust core is not installed")

# Every scalar json.dumps writes: strings with quotes, backslashes, control characters,
# separators and brackets inside, non-ASCII and lone surrogates; floats json writes its own way
# (NaN, Infinity, -0.0, exponents); integers past 64 bits.
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(), max_size=12)
    | st.sampled_from(['"', "\\", '\\"', "{}", "[]", ",", ":", '",:', "\x00\x1f", "é☃\U0001f600"])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=30,
)
PROPERTIES = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@needs_core
@PROPERTIES
@given(value=VALUES, indent=st.sampled_from([0, 1, 2, 4]))
@example(value={"a": [], "b": {}, "c": [{}, [[]]]}, indent=2)
@example(value={"k,:{[": 'v"]},\\', "é": "\x01"}, indent=2)
def test_the_core_lays_out_the_compact_text_as_json_dumps_indents(value: Any, indent: int) -> None:
    compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    expected = json.dumps(value, indent=indent, ensure_ascii=False)
    try:
        laid_out = CORE_INDENT(compact, indent)  # type: ignore[misc]
    except UnicodeEncodeError:
        # A lone surrogate: the text is not UTF-8, and _json_text.dumps takes json's own route.
        assert any(0xD800 <= ord(c) <= 0xDFFF for c in compact)
        return
    assert laid_out == expected


@PROPERTIES
@given(value=VALUES)
def test_dumps_is_json_dumps_with_indent(value: Any) -> None:
    assert _json_text.dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


@needs_core
def test_a_lone_surrogate_takes_jsons_own_route() -> None:
    value = {"line": "\ud800 torn"}
    with pytest.raises(UnicodeEncodeError):
        CORE_INDENT(json.dumps(value, ensure_ascii=False), 2)  # type: ignore[misc]
    assert _json_text.dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_the_reports_json_is_the_indented_text_of_its_dict(tmp_path: Any) -> None:
    from pairling_fast import check_paths

    journal = tmp_path / "j.jsonl"
    journal.write_text('{"kind":"run_started","run_id":"r\\u00e9"}\nnot json\n', encoding="utf-8")
    report = check_paths([journal])
    assert report.to_json() == json.dumps(report.to_dict(), indent=2, ensure_ascii=False)
    assert report.to_json(indent=None) == json.dumps(report.to_dict(), ensure_ascii=False)


@pytest.mark.parametrize("indent", [None, -1, 0, 3, 65, "\t", True])
def test_every_indent_json_takes_gives_its_text(indent: Any) -> None:
    value = {"a": [1, {"b": None}], "c": []}
    assert _json_text.dumps(value, indent) == json.dumps(value, indent=indent, ensure_ascii=False)
