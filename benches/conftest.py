"""Benchmarks are disabled in the default pytest run (``--benchmark-disable`` in pyproject);
``pytest benches/ --benchmark-only`` turns them back on instead of failing on the two options."""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("benchmark_only", default=False):
        config.option.benchmark_enable = True
