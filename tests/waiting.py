"""Waiting in tests: on a condition, with a deadline, never for a fixed time. A loaded machine (a
CI runner, ``pytest -n 4`` on two cores) makes everything slower, so the deadline is generous: it
is there to turn a hang into a failure, and a test that meets its condition early returns early.
Timing bounds that say something about speed belong in the benchmarks, not here."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeVar

import pytest

# Seconds a condition may take on a loaded machine before the test fails: far above what any of
# them takes on an idle one, far below the per-test timeout (pyproject.toml), so the failure says
# which condition was not met.
DEADLINE = 60.0

T = TypeVar("T")


def wait_for(
    condition: Callable[[], T], what: str, *, timeout: float = DEADLINE, interval: float = 0.02
) -> T:
    """``condition()``'s first true value, asked every ``interval`` seconds; fails the test, with
    ``what`` and the machine's load, if there is none within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"{what}: not within {timeout} s (load {os.getloadavg()})")
        time.sleep(interval)
