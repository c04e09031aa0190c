"""The suite's shared fixtures: every behaviour test runs on both backends (parity is the default,
not an extra), with the network refused and the test data at hand."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import cli_helpers
import pytest
from network_guard import network_refused

from pairling_fast import _backend

DATA = Path(__file__).with_name("data")

# botocore (s3fs, moto) looks for credentials on the EC2 instance metadata service when the
# variables do not give them: set here, for this process and every CLI, worker and server it
# starts, no lookup ever leaves loopback (nor waits on that service's timeouts).
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"


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


@pytest.fixture(scope="session", autouse=True)
def _ctrl_c_deliverable() -> Iterator[None]:
    """The Ctrl-C tests (test_follow.py, test_hostile.py) send SIGINT to the CLIs they start. A
    suite started in the background by a shell without job control (`pytest &`, `nohup`) inherits
    SIGINT ignored, and so would every CLI it starts, which then never stops: restored here, as
    exec gives the children the default disposition (Python's KeyboardInterrupt)."""
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    if ignored:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    cli_helpers.STARTED.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failing test shows the stderr of each process it started (cli_helpers.started): the
    cause is often there, a traceback or a note, not in the assertion."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.failed and report.when in ("call", "teardown"):
        for command, stderr in cli_helpers.STARTED:
            report.sections.append((f"stderr of {command}", stderr() or "(nothing)"))
