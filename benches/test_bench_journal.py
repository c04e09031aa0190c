"""Journal-check throughput, Rust core vs the pure-Python fallback (pytest-benchmark).

Disabled by default (``--benchmark-disable`` in pyproject); run on purpose with a release build:

    maturin develop --release -q
    python -m pytest benches/test_bench_journal.py --benchmark-enable -p no:cacheprovider

The journal is generated once per session (seeded, chained, with defects), so both backends
check the same bytes; ``extra_info`` records events and MB/s.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast.generate.journal import write_journal

EVENTS = {"rust": 50_000, "python": 2_000}


@pytest.fixture(scope="module")
def journals(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    directory = tmp_path_factory.mktemp("journals")
    paths = {}
    for name, events in EVENTS.items():
        path = directory / f"{name}.jsonl"
        with path.open("wb") as out:
            write_journal(out, events, seed=1, chain=True, defects=16)
        paths[name] = path
    yield paths


@pytest.mark.parametrize("name", _backend.BACKENDS)
def test_check_journal(benchmark: Any, journals: dict[str, Path], name: str) -> None:
    path = journals[name]
    with _backend.selected(name):
        report = benchmark.pedantic(pf.check_journal, args=(path,), rounds=3, iterations=1)
    megabytes = path.stat().st_size / 1e6
    benchmark.extra_info["events"] = report.stats["events"]
    benchmark.extra_info["MB"] = round(megabytes, 1)
    if benchmark.stats is not None:  # None when benchmarks are disabled (the default run)
        benchmark.extra_info["MB/s"] = round(megabytes / benchmark.stats.stats.mean, 1)
    assert report.stats["chain"] == {"verified": report.stats["events"]}
