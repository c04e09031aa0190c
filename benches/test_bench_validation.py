"""Schema validation of journal event lines: both backends, bytes vs parsed objects, and the peers.

Disabled by default (``--benchmark-disable`` in pyproject: each function then runs once, as a
test); measure on purpose with a release build:

    maturin develop --release -q && pytest benches/test_bench_validation.py --benchmark-only

Every 10th line is made invalid, so each contender's verdicts are checked against the known ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from compare import (
    EVENT_SCHEMA_ID,
    fastjsonschema_verdict,
    invalid_variant,
    python_jsonschema_validator,
)

import pairling_fast as pf
from pairling_fast import _backend, schemas

LINES = 500


@pytest.fixture(scope="module")
def lines() -> list[bytes]:
    generator = pytest.importorskip("pairling_fast.generate.journal")
    generated, _ = generator.generate_journal(LINES, seed=4)
    return [
        json.dumps(invalid_variant(json.loads(line), number)).encode() if number % 10 == 9 else line
        for number, line in enumerate(generated)
    ]


@pytest.fixture(scope="module")
def expected(lines: list[bytes]) -> list[bool]:
    return [number % 10 != 9 for number in range(len(lines))]


def verdicts(is_valid: Callable[[bytes], bool], lines: list[bytes]) -> list[bool]:
    return [is_valid(line) for line in lines]


@pytest.mark.parametrize("backend_name", _backend.BACKENDS)
def test_validate_json(
    benchmark: Any, lines: list[bytes], expected: list[bool], backend_name: str
) -> None:
    with _backend.selected(backend_name):
        validator = pf.schema_validator(EVENT_SCHEMA_ID)
        assert benchmark(verdicts, lambda line: validator.validate_json(line).ok, lines) == expected


def test_rust_is_valid_orjson(benchmark: Any, lines: list[bytes], expected: list[bool]) -> None:
    loads = pytest.importorskip("orjson").loads
    with _backend.selected("rust"):
        validator = pf.schema_validator(EVENT_SCHEMA_ID)
        assert benchmark(verdicts, lambda line: validator.is_valid(loads(line)), lines) == expected


def test_jsonschema_rs_orjson(benchmark: Any, lines: list[bytes], expected: list[bool]) -> None:
    loads = pytest.importorskip("orjson").loads
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    validator = jsonschema_rs.validator_for(schemas.schema(EVENT_SCHEMA_ID))
    assert benchmark(verdicts, lambda line: validator.is_valid(loads(line)), lines) == expected


def test_fastjsonschema_orjson(benchmark: Any, lines: list[bytes], expected: list[bool]) -> None:
    loads = pytest.importorskip("orjson").loads
    fastjsonschema = pytest.importorskip("fastjsonschema")
    validate = fastjsonschema.compile(schemas.schema(EVENT_SCHEMA_ID))

    def is_valid(line: bytes) -> bool:
        return fastjsonschema_verdict(fastjsonschema, validate, loads(line))

    assert benchmark(verdicts, is_valid, lines) == expected


def test_python_jsonschema(benchmark: Any, lines: list[bytes], expected: list[bool]) -> None:
    validator = python_jsonschema_validator(schemas.schema(EVENT_SCHEMA_ID))
    assert benchmark(verdicts, lambda line: validator.is_valid(json.loads(line)), lines) == expected
