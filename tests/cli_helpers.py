"""Shared by the CLI tests: run the real entry point in a subprocess, build small document trees."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pairling_fast

# The subprocess imports the very package these tests import (installed or a source tree).
PACKAGE_PARENT = str(Path(pairling_fast.__file__).resolve().parents[1])

# One valid and one invalid result of `tools.cancel` ({"cancelled": boolean}, nothing else), and
# one that is not JSON at all: every build reports the last one as PF001.
GOOD_RESULT = '{"cancelled": true}\n'
BAD_RESULT = '{\n  "cancelled": "yes"\n}\n'
BROKEN_RESULT = '{"cancelled": tru\n'

# The processes the running test started, each with what it wrote on stderr so far: conftest.py
# shows them under a failing test, whatever its assertion printed.
STARTED: list[tuple[str, Callable[[], str]]] = []


def started(argv: Sequence[str], stderr: Callable[[], str]) -> None:
    """Records a process the running test started, and how to get its stderr."""
    STARTED.append((shlex.join(argv), stderr))


def run_python(
    backend: str,
    *argv: str,
    cwd: Path,
    extra_env: dict[str, str] | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python ARGV`` importing this package on ``backend``, colours off, output captured."""
    env = dict(os.environ)
    env.update(
        {
            "PYTHONPATH": PACKAGE_PARENT,
            "PAIRLING_FAST_BACKEND": backend,
            "NO_COLOR": "1",
            "PYTHONWARNINGS": "error",
        }
    )
    env.update(extra_env or {})
    command = [sys.executable, *argv]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            input=input,
        )
    except subprocess.TimeoutExpired as late:
        said = str(late.stderr or "")
        started(command, lambda: said)
        raise
    started(command, lambda: done.stderr)
    return done


def run_cli(
    backend: str,
    *args: str,
    cwd: Path,
    extra_env: dict[str, str] | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m pairling_fast ARGS`` on ``backend``, colours off, output captured."""
    return run_python(
        backend, "-m", "pairling_fast", *args, cwd=cwd, extra_env=extra_env, input=input
    )


class Cli:
    """``cli(*args)`` runs the entry point on one backend with ``cwd`` as working directory; a
    traceback on stderr fails the test, whatever else it checks."""

    def __init__(self, backend: str, cwd: Path) -> None:
        self.backend = backend
        self.cwd = cwd

    def __call__(self, *args: str, **options: Any) -> subprocess.CompletedProcess[str]:
        options.setdefault("cwd", self.cwd)
        done = run_cli(self.backend, *args, **options)
        assert "Traceback" not in done.stderr, done.stderr
        return done


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def sample_tree(root: Path) -> Path:
    """docs/: a clean result, a defective one, an unparsable one, and a file to skip."""
    return write_tree(
        root,
        {
            "docs/good.tools.cancel.result.json": GOOD_RESULT,
            "docs/bad.tools.cancel.result.json": BAD_RESULT,
            "docs/nested/broken.tools.cancel.result.json": BROKEN_RESULT,
            "docs/notes.txt": "not a document\n",
        },
    )
