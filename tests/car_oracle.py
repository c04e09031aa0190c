"""CAR's own journal code as a test oracle: ``interop/car-oracle`` built on car-eventlog 0.58.0,
and the same source built on car-eventlog 0.60.0 (``interop/car-oracle-0.60``).

The 0.58.0 binary is found at ``$PAIRLING_CAR_ORACLE`` or
``interop/car-oracle/target/debug/car-oracle``, the 0.60.0 one at ``$PAIRLING_CAR_ORACLE_060`` or
``interop/car-oracle-0.60/target/debug/car-oracle``. In CI (``CI=true``) a missing oracle fails
the tests that need it; elsewhere they are skipped with the command that builds it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Each CAR release's oracle: its crate directory and the environment variable naming its binary.
ORACLES = {
    "0.58.0": ("car-oracle", "PAIRLING_CAR_ORACLE"),
    "0.60.0": ("car-oracle-0.60", "PAIRLING_CAR_ORACLE_060"),
}


def oracle_path(release: str = "0.58.0") -> Path:
    """CAR ``release``'s oracle binary; fails (CI) or skips (elsewhere) when it is not built."""
    crate, variable = ORACLES[release]
    default = ROOT / "interop" / crate / "target" / "debug" / "car-oracle"
    path = Path(os.environ.get(variable) or default)
    if path.is_file() and os.access(path, os.X_OK):
        return path
    build = f"cargo build --manifest-path interop/{crate}/Cargo.toml"
    reason = f"the CAR {release} oracle is not built ({path}); build it with `{build}`"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def _run(*args: str, release: str = "0.58.0") -> str:
    result = subprocess.run(
        [str(oracle_path(release)), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def write(directory: Path, release: str = "0.58.0") -> list[Path]:
    """Journals CAR's ``EventLog`` writes (plain, chained, run-bound, compacted, ...)."""
    return [Path(line) for line in _run("write", str(directory), release=release).splitlines()]


def load(paths: list[Path], release: str = "0.58.0") -> list[dict[str, Any]]:
    """CAR's ``EventLog::load_read_only`` verdict on each file, in order."""
    verdicts: list[dict[str, Any]] = []
    for start in range(0, len(paths), 200):
        output = _run("load", *(str(p) for p in paths[start : start + 200]), release=release)
        verdicts.extend(json.loads(line) for line in output.split("\n") if line)
    return verdicts


def parse(path: Path) -> list[dict[str, Any]]:
    """Each line of ``path`` parsed as CAR's ``Event``, with the parts CAR's digest hashes."""
    return [json.loads(line) for line in _run("parse", str(path)).split("\n") if line]
