"""The README's install snippets, run as a user would: the pre-commit configuration (with
pre-commit itself, against a clone of this repository) and the CI snippet's commands. The wheel
install and the CI snippet on the installed wheel run in ``scripts/release`` (a ``.ci/run`` step).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import BROKEN_RESULT, GOOD_RESULT, run_cli, write_tree

from pairling_fast import _backend

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
EXAMPLES = REPO / "examples"


def _yaml_block(containing: str) -> str:
    blocks = re.findall(r"```yaml\n(.*?)```", README, flags=re.DOTALL)
    [block] = [b for b in blocks if containing in b]
    return block


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.mark.parametrize("backend", _backend.BACKENDS)
def test_the_readme_pre_commit_snippet_runs_the_installed_command(
    backend: str, tmp_path: Path
) -> None:
    pytest.importorskip("pre_commit")
    command = shutil.which("pairling-fast", path=str(Path(sys.executable).parent))
    assert command is not None, "the package installs the pairling-fast command"
    snippet = _yaml_block("pairling-fast-installed")
    repo_url = re.search(r"repo: (\S+)", snippet)
    rev = re.search(r"rev: (\S+)", snippet)
    assert repo_url is not None and rev is not None
    # This repository as users get it: a clone (branches, no tags), tagged by the README's own
    # command, run as written.
    [tag_command] = re.findall(r"^git -C \S+ tag \S+$", README, flags=re.MULTILINE)
    clone_name, tag = tag_command.split()[2], tag_command.split()[4]
    assert tag == rev.group(1), "the README tags what its snippet names"
    hooks = tmp_path / clone_name
    _git("clone", "--quiet", "--no-tags", str(REPO), str(hooks), cwd=tmp_path)
    subprocess.run(tag_command.split(), cwd=tmp_path, check=True, capture_output=True)
    project = tmp_path / "project"
    write_tree(
        project,
        {
            ".pre-commit-config.yaml": snippet.replace(repo_url.group(1), str(hooks)),
            "package.json": '{"name": "not a document"}\n',
        },
    )
    _git("init", "--quiet", cwd=project)
    environment = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "PATH": f"{Path(command).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PAIRLING_FAST_BACKEND": backend,
        "NO_COLOR": "1",
    }

    def pre_commit() -> subprocess.CompletedProcess[str]:
        _git("add", "-A", cwd=project)
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--all-files"],
            cwd=project,
            env=environment,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    # Staged JSON without a document passes: the hook does not require files.
    quiet = pre_commit()
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert "pairling-fast check (installed)" in quiet.stdout and "Passed" in quiet.stdout
    write_tree(
        project,
        {
            "good.tools.cancel.result.json": GOOD_RESULT,
            "bad.tools.cancel.result.json": BROKEN_RESULT,
        },
    )
    failing = pre_commit()
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "Failed" in failing.stdout
    assert "bad.tools.cancel.result.json:1: error PF001" in failing.stdout
    (project / "bad.tools.cancel.result.json").unlink()
    assert pre_commit().returncode == 0


@pytest.mark.parametrize("backend", _backend.BACKENDS)
def test_the_readme_ci_snippet_writes_sarif_for_code_scanning(backend: str, tmp_path: Path) -> None:
    snippet = _yaml_block("upload-sarif")
    runs = re.findall(r"- run: (.+)", snippet)
    assert runs[0].startswith("pip install ") and "abi3" in runs[0]
    arguments = runs[1].split()
    assert arguments[0] == "pairling-fast"
    # scripts/release installs the wheel and runs this very command with it.
    release = (REPO / "scripts" / "release").read_text(encoding="utf-8")
    assert f'"$venv/bin/pairling-fast" {" ".join(arguments[1:])}' in release
    assert "sarif_file: pairling.sarif" in snippet
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    done = run_cli(backend, *arguments[1:], cwd=tmp_path)
    assert done.returncode == 1  # the examples have two broken documents
    sarif = json.loads((tmp_path / "pairling.sarif").read_text(encoding="utf-8"))
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {
        "PF213",
        "PF221",
        "PF310",
        "PF311",
    }


@pytest.mark.parametrize("backend", _backend.BACKENDS)
def test_the_readme_python_tour_runs_as_written(backend: str) -> None:
    """Every ```python block of the README, run from a checkout's top as a user would, with its
    asserts (the figures it states: digests verified, the tampered journal's codes...)."""
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)
    assert blocks
    for block in blocks:
        done = subprocess.run(
            [sys.executable, "-c", block],
            cwd=REPO,
            env={**os.environ, "PAIRLING_FAST_BACKEND": backend},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr


def test_the_test_setup_builds_the_fast_profile_and_the_main_job_the_optimised_one() -> None:
    """The README's test command (and CI's set-up, which should match it) builds the core in
    Cargo.toml's fastdev profile, no fat LTO; the main job's `pip install .` keeps release's."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # the package's own dependency there
        import tomli as tomllib

    profiles = tomllib.loads((REPO / "Cargo.toml").read_text(encoding="utf-8"))["profile"]
    assert profiles["release"]["lto"] == "fat" and profiles["fastdev"]["lto"] is False
    fast = "--config-settings=build-args='--profile fastdev'"
    [test_command] = re.findall(r"^python3 -m venv .*pytest.*$", README, flags=re.MULTILINE)
    assert f"pip install -e '.[test]' {fast} &&" in test_command
    [main_job] = re.findall(r"^python3 -m venv .*pip install \. .*$", README, flags=re.MULTILINE)
    assert "--config-settings" not in main_job and "profile" not in main_job
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    [ci_install] = re.findall(r"^python -m pip install --quiet -e .*$", ci, flags=re.MULTILINE)
    assert ci_install.endswith(fast)
    assert "export AWS_EC2_METADATA_DISABLED=true" in ci
