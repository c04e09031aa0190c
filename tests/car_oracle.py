"""CAR's own journal code (``interop/car-oracle``, built on car-eventlog 0.58.0) as a test oracle.

The binary is found at ``$PAIRLING_CAR_ORACLE`` or ``interop/car-oracle/target/debug/car-oracle``.
In CI (``CI=true``) a missing oracle fails the tests that need it; elsewhere they are skipped with
the command that builds it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "interop" / "car-oracle" / "target" / "debug" / "car-oracle"
BUILD = "cargo build --manifest-path interop/car-oracle/Cargo.toml"


def oracle_path() -> Path:
    """The oracle binary; fails (CI) or skips (elsewhere) when it is not built."""
    path = Path(os.environ.get("PAIRLING_CAR_ORACLE") or DEFAULT)
    if path.is_file() and os.access(path, os.X_OK):
        return path
    reason = f"the CAR oracle is not built ({path}); build it with `{BUILD}`"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def _run(*args: str) -> str:
    result = subprocess.run(
        [str(oracle_path()), *args], capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def write(directory: Path) -> list[Path]:
    """Journals CAR's ``EventLog`` writes (plain, chained, run-bound, compacted, ...)."""
    return [Path(line) for line in _run("write", str(directory)).splitlines()]


def load(paths: list[Path]) -> list[dict[str, Any]]:
    """CAR's ``EventLog::load_read_only`` verdict on each file, in order."""
    verdicts: list[dict[str, Any]] = []
    for start in range(0, len(paths), 200):
        output = _run("load", *(str(p) for p in paths[start : start + 200]))
        verdicts.extend(json.loads(line) for line in output.split("\n") if line)
    return verdicts


def parse(path: Path) -> list[dict[str, Any]]:
    """Each line of ``path`` parsed as CAR's ``Event``, with the parts CAR's digest hashes."""
    return [json.loads(line) for line in _run("parse", str(path)).split("\n") if line]
