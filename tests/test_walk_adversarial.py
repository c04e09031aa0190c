"""Directory walks over hostile trees (issue 8): names that are not UTF-8, files that vanish
between listing and checking, devices. Every file ends up checked, skipped with a reason, or a
PF501 finding; the CLI's JSON report stays valid JSON. (Symlink loops, dangling links, FIFOs and
unreadable files are covered in test_paths.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import BROKEN_RESULT, GOOD_RESULT

from pairling_fast import _backend, paths
from pairling_fast.paths import check_paths

NOT_UTF8_FILE = b"bad\xff\xfe.tools.cancel.result.json"
NOT_UTF8_DIRECTORY = b"dir\xff"


@pytest.fixture
def not_utf8_tree(tmp_path: Path) -> Path:
    root = os.fsencode(tmp_path)
    with open(os.path.join(root, NOT_UTF8_FILE), "w", encoding="utf-8") as broken:
        broken.write(BROKEN_RESULT)
    os.mkdir(os.path.join(root, NOT_UTF8_DIRECTORY))
    with open(os.path.join(root, NOT_UTF8_DIRECTORY, b"ok.tools.cancel.result.json"), "w") as ok:
        ok.write(GOOD_RESULT)
    return tmp_path


@pytest.mark.parametrize("backend_name", _backend.BACKENDS)
def test_names_that_are_not_utf8_are_checked_and_reported_as_they_are(
    not_utf8_tree: Path, backend_name: str
) -> None:
    report = check_paths([not_utf8_tree], backend=backend_name)
    by_bytes = {os.fsencode(f.path): f for f in report.files}
    root = os.fsencode(not_utf8_tree)
    broken = by_bytes[os.path.join(root, NOT_UTF8_FILE)]
    good = by_bytes[os.path.join(root, NOT_UTF8_DIRECTORY, b"ok.tools.cancel.result.json")]
    assert (broken.kind, good.kind) == ("rpc-result", "rpc-result")
    assert broken.findings and all(f.path == broken.path for f in broken.findings)
    assert good.findings == []


def test_cli_json_report_with_names_that_are_not_utf8(not_utf8_tree: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "pairling_fast", "check", str(not_utf8_tree), "--format", "json"],
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert run.returncode == 1, run.stderr  # findings, not a crash
    assert b"Traceback" not in run.stderr
    report = json.loads(run.stdout)
    reported = {os.fsencode(file["path"]) for file in report["files"]}
    assert os.path.join(os.fsencode(not_utf8_tree), NOT_UTF8_FILE) in reported


def deleting_first(real: Callable[..., Any], path_argument: int) -> Callable[..., Any]:
    """``real``, but deleting ``a.tools.cancel.result.json`` just before it is handled."""

    def vanishing(*args: Any) -> Any:
        path = Path(args[path_argument])
        if path.name == "a.tools.cancel.result.json":
            path.unlink()
        return real(*args)

    return vanishing


# Where the path is among the arguments: the file is opened (its head tells its kind), then the
# check runs.
STAGES = {"_opened": 0, "_run_check": 1}


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_a_file_deleted_mid_walk_is_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    (tmp_path / "a.tools.cancel.result.json").write_text(GOOD_RESULT, "utf-8")
    (tmp_path / "b.tools.cancel.result.json").write_text(GOOD_RESULT, "utf-8")
    monkeypatch.setattr(paths, stage, deleting_first(getattr(paths, stage), STAGES[stage]))
    vanished, kept = check_paths([tmp_path], jobs=1).files
    assert vanished.path.endswith("a.tools.cancel.result.json")
    assert [(f.code, f.message) for f in vanished.findings] == [
        ("PF501", "No such file or directory")
    ]
    assert kept.findings == []


def test_devices_are_skipped_not_read() -> None:
    report = check_paths(["/dev/null", "/dev/zero"])
    assert report.files == []
    assert {skip.path: skip.reason for skip in report.skipped} == {
        "/dev/null": "a character device, not read",
        "/dev/zero": "a character device, not read",
    }
