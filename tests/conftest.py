"""The suite's shared fixtures: every behaviour test runs on both backends (parity is the default,
not an extra), with the network refused and the test data at hand."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from network_guard import network_refused

from pairling_fast import _backend

DATA = Path(__file__).with_name("data")


@pytest.fixture(params=_backend.BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[_backend.Engine]:
    """The engine of each backend in turn, also made the active one for the public API."""
    with _backend.selected(request.param) as engine:
        yield engine


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session", autouse=True)
def _no_network() -> Iterator[None]:
    """The whole suite runs with the network refused (loopback stays open for local tools)."""
    with network_refused(loopback_allowed=True):
        yield
