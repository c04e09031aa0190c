"""Capability maps: check and seal a generated 10k-binding map, Rust core vs the fallback.

Run on purpose (benchmarks are disabled in the default pytest run), on a release build:
``maturin develop --release -q && pytest benches/test_bench_maps.py --benchmark-only``.
"""

from __future__ import annotations

from typing import Any

import pytest

from pairling_fast import _backend, check_map, seal_map
from pairling_fast.generate.map import generate_map
from pairling_fast.maps import dump_map

BINDINGS = 10_000
# The fallback takes seconds per round; one round says enough.
ROUNDS = {"rust": 10, "python": 1}


@pytest.fixture(scope="module")
def map_text() -> bytes:
    with _backend.selected("rust"):
        return dump_map(generate_map(BINDINGS, seed=1)).encode("utf-8")


@pytest.mark.parametrize("backend_name", _backend.BACKENDS)
def test_check_map_10k(benchmark: Any, map_text: bytes, backend_name: str) -> None:
    with _backend.selected(backend_name):
        report = benchmark.pedantic(check_map, args=(map_text,), rounds=ROUNDS[backend_name])
    assert report.findings == []
    assert report.stats["digests"]["verified"] == BINDINGS


@pytest.mark.parametrize("backend_name", _backend.BACKENDS)
def test_seal_map_10k(benchmark: Any, map_text: bytes, backend_name: str) -> None:
    with _backend.selected(backend_name):
        sealed = benchmark.pedantic(seal_map, args=(map_text,), rounds=ROUNDS[backend_name])
    assert len(sealed["operation_bindings"]) == BINDINGS
