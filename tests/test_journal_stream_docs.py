"""docs/journals.md's pipeline example ("Streams and --follow"), run as it is written, on both
backends: a generator of a socket's chunks fed to a ``JournalStream``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_helpers import run_python

from pairling_fast import _backend

DOCS = Path(__file__).resolve().parents[1] / "docs" / "journals.md"


def _example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    [block] = [b for b in blocks if "def chunks(" in b]
    return block


@pytest.mark.parametrize("backend", _backend.BACKENDS)
def test_the_socket_pipeline_example_runs(backend: str, tmp_path: Path) -> None:
    script = tmp_path / "pipeline.py"
    script.write_text(_example(), encoding="utf-8")
    result = run_python(backend, str(script), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    *findings, summary = result.stdout.splitlines()
    assert len(findings) >= 3  # the planted defects, printed as their lines completed
    assert all(line.startswith("relay:7:") for line in findings)
    assert summary == "2005 events, chain {'verified': 2005}, ok=False"
