"""RFC 8785 digests of varied objects: both backends and the peers (pytest-benchmark).

Disabled by default (``--benchmark-disable`` in pyproject: each function then runs once, as a
test); measure on purpose with a release build:

    maturin develop --release -q && pytest benches/test_bench_canonical.py --benchmark-only

``benches/compare.py`` runs the same comparison on 100k objects and prints the ratios.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any

import pytest
from compare import varied_object

from pairling_fast import _backend

OBJECTS = 1_000


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    rng = random.Random(2)
    return [varied_object(rng) for _ in range(OBJECTS)]


@pytest.fixture(scope="module")
def expected(objects: list[dict[str, Any]]) -> list[str]:
    """The digests every JCS-exact contender must give (from the canonical bytes, hashed here)."""
    canonicalize = _backend.engine("rust").canonicalize
    return [hashlib.sha256(canonicalize(value)).hexdigest() for value in objects]


def digests(digest: Callable[[Any], str], objects: list[dict[str, Any]]) -> list[str]:
    return [digest(value) for value in objects]


@pytest.mark.parametrize("backend_name", _backend.BACKENDS)
def test_digest_hex(
    benchmark: Any, objects: list[dict[str, Any]], expected: list[str], backend_name: str
) -> None:
    digest = _backend.engine(backend_name).digest_hex
    assert benchmark(digests, digest, objects) == expected


def test_rfc8785(benchmark: Any, objects: list[dict[str, Any]], expected: list[str]) -> None:
    rfc8785 = pytest.importorskip("rfc8785")

    def digest(value: Any) -> str:
        return hashlib.sha256(rfc8785.dumps(value)).hexdigest()

    assert benchmark(digests, digest, objects) == expected


def test_orjson_sort_keys(benchmark: Any, objects: list[dict[str, Any]]) -> None:
    """Fast but not RFC 8785 (number forms differ), so only the timing is of interest."""
    orjson = pytest.importorskip("orjson")

    def digest(value: Any) -> str:
        return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()

    assert len(benchmark(digests, digest, objects)) == OBJECTS
