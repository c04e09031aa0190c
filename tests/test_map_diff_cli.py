"""``pairling-fast diff``: the four formats, exit codes, and where OLD and NEW are read from (a
file, ``-``, ``REV:PATH`` from git), run as users run it, on both backends."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import Cli, run_python
from map_twins import EXAMPLE, example

from pairling_fast import _backend, seal_map

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(params=_backend.BACKENDS)
def cli(request: pytest.FixtureRequest, tmp_path: Path) -> Cli:
    return Cli(request.param, tmp_path)


def _write_loosened(path: Path) -> None:
    """The example with the shell capability made safe and a forbids entry of prompt_send
    removed, re-sealed; bindings listed in reverse (a reorder, no change)."""
    document = example()
    document["capabilities"][5]["remote_safety"] = "safe"
    document["operation_bindings"][1]["forbids"].pop(0)
    document["operation_bindings"].reverse()
    path.write_bytes(json.dumps(seal_map(document), indent=2).encode() + b"\n")


def test_text_and_exit_codes(cli: Cli, tmp_path: Path) -> None:
    new = tmp_path / "new.json"
    _write_loosened(new)
    done = cli("diff", str(EXAMPLE), str(new))
    assert done.returncode == 0, done.stderr
    assert "loosening  PF270 changed capabilities[northwind_cli.shell.raw_exec] remote_safety" in (
        done.stdout
    )
    assert "2 changes in 2 entries: 2 loosening, 0 tightening, 0 neutral" in done.stdout
    assert "1 binding to review" in done.stdout
    assert cli("diff", str(EXAMPLE), str(new), "--fail-on", "loosening").returncode == 1
    assert cli("diff", str(EXAMPLE), str(new), "--fail-on", "change").returncode == 1
    assert cli("diff", str(EXAMPLE), str(EXAMPLE), "--fail-on", "change").returncode == 0


def test_json_is_versioned_data(cli: Cli, tmp_path: Path) -> None:
    new = tmp_path / "new.json"
    _write_loosened(new)
    done = cli("diff", str(EXAMPLE), str(new), "--format", "json")
    report = json.loads(done.stdout)
    assert report["diff_version"] == 1 and report["diffed"] and report["new"]["ok"]
    assert report["backend"] == cli.backend
    forbids = next(c for c in report["changes"] if c["member"] == "forbids[]")
    assert forbids["old"] == {"kind": "replay_without_recovery"} and "new" not in forbids
    assert forbids["old_pointer"] == "/operation_bindings/1/forbids/0"
    assert forbids["new_pointer"] == "/operation_bindings/9/forbids"
    assert report["review"][0]["members"] == ["forbids[]"]


def test_sarif_locates_each_loosening_in_new(cli: Cli, tmp_path: Path) -> None:
    new = tmp_path / "new.json"
    _write_loosened(new)
    done = cli("diff", str(EXAMPLE), "new.json", "--format", "sarif", "-o", "out.sarif")
    assert done.returncode == 0, done.stderr
    log = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    lines = new.read_text(encoding="utf-8").splitlines()
    loosenings = [r for r in log["runs"][0]["results"] if r["ruleId"] == "PF270"]
    assert len(loosenings) == 2
    for result in loosenings:
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "new.json"
        member = result["properties"]["member"].split("/")[-1].rstrip("[]")
        assert f'"{member}"' in lines[location["region"]["startLine"] - 1]
        rules = log["runs"][0]["tool"]["driver"]["rules"]
        assert rules[result["ruleIndex"]]["id"] == "PF270"


def test_markdown_puts_loosenings_first(cli: Cli, tmp_path: Path) -> None:
    new = tmp_path / "new.json"
    document = example()
    document["transports"][0]["description"] = "Another description."
    document["capabilities"][0]["remote_safety"] = "confirmation"
    document["capabilities"][5]["remote_safety"] = "safe"
    new.write_bytes(json.dumps(seal_map(document)).encode())
    done = cli("diff", str(EXAMPLE), str(new), "--format", "markdown")
    text = done.stdout
    assert text.startswith("### Capability map diff: 3 changes in 3 entries: 1 loosening, ")
    assert text.index("#### `capabilities`") < text.index("#### `transports`")
    capability_rows = [line for line in text.splitlines() if "`remote_safety`" in line]
    assert capability_rows[0].startswith("| **loosening** |")
    assert capability_rows[1].startswith("| tightening |")
    assert "Why these are loosenings" in text


def test_an_invalid_new_fails_and_is_shown(cli: Cli, tmp_path: Path) -> None:
    document = example()
    document["operation_bindings"][1]["requires"].pop()
    (tmp_path / "new.json").write_text(json.dumps(document), encoding="utf-8")
    done = cli("diff", str(EXAMPLE), "new.json")
    assert done.returncode == 1
    assert "NEW new.json: INVALID: " in done.stdout and "PF234" in done.stdout
    assert "requirement_removed" in done.stdout


def _committed(repository: Path) -> None:
    """``repository`` made a git repository with everything in it committed."""
    for args in (("init", "-q"), ("add", "."), ("commit", "-qm", "map")):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
            cwd=repository,
            check=True,
            capture_output=True,
            timeout=60,
        )


def test_git_revisions_and_stdin(cli: Cli, tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repository = tmp_path / "repo"
    (repository / "maps").mkdir(parents=True)
    shutil.copy(EXAMPLE, repository / "maps" / "map.json")

    _committed(repository)
    _write_loosened(repository / "maps" / "map.json")
    done = cli(
        "diff", "HEAD:maps/map.json", "maps/map.json", "--fail-on", "loosening", cwd=repository
    )
    assert done.returncode == 1 and "2 loosening" in done.stdout
    assert "OLD HEAD:maps/map.json: valid" in done.stdout
    piped = cli(
        "diff",
        "HEAD:maps/map.json",
        "-",
        cwd=repository,
        input=(repository / "maps" / "map.json").read_text(),
    )
    assert piped.returncode == 0 and "2 loosening" in piped.stdout
    missing = cli("diff", "HEAD:maps/none.json", "maps/map.json", cwd=repository)
    assert missing.returncode == 2
    assert missing.stderr.startswith("pairling-fast: error: HEAD:maps/none.json: no such file")
    assert len(missing.stderr.splitlines()) == 1


def test_unreadable_inputs_are_one_line_errors(cli: Cli) -> None:
    done = cli("diff", "absent.json", str(EXAMPLE))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    both = cli("diff", "-", "-")
    assert both.returncode == 2 and "cannot both be -" in both.stderr


def test_explain_covers_the_diff_codes(cli: Cli) -> None:
    for code in ("PF270", "PF271", "PF272", "PF273"):
        done = cli("explain", code)
        assert done.returncode == 0 and "pairling-fast diff" in done.stdout


def test_the_readme_pull_request_snippet_runs_as_written(cli: Cli, tmp_path: Path) -> None:
    """The README's GitHub Actions job: its diff step, in a clone whose base branch is
    origin/main, writes the Markdown comment and reports the loosening in its exit status."""
    if shutil.which("git") is None or shutil.which("bash") is None:
        pytest.skip("git and bash are needed")
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    [block] = [b for b in readme.split("```yaml\n") if "gh pr comment" in b.split("```")[0]]
    step = block.split("run: |\n", 1)[1].split("        env:", 1)[0]
    assert "pairling-fast diff" in step and "--fail-on loosening" in step
    repository = tmp_path / "repo"
    (repository / "maps").mkdir(parents=True)
    shutil.copy(EXAMPLE, repository / "maps" / "map.json")
    _committed(repository)
    subprocess.run(
        ["git", "update-ref", "refs/remotes/origin/main", "HEAD"], cwd=repository, check=True
    )
    _write_loosened(repository / "maps" / "map.json")
    output = repository / "status"
    script = 'pairling-fast() { "$PYTHON" -m pairling_fast "$@"; }\n' + step
    done = run_python(
        cli.backend,
        "-c",
        "import subprocess, sys; sys.exit(subprocess.run(['bash', '-c', sys.argv[1]]).returncode)",
        script,
        cwd=repository,
        extra_env={"BASE": "main", "GITHUB_OUTPUT": str(output), "PYTHON": sys.executable},
    )
    assert done.returncode == 0, done.stderr
    assert output.read_text(encoding="utf-8") == "status=1\n"
    comment = (repository / "map-diff.md").read_text(encoding="utf-8")
    assert comment.startswith("### Capability map diff: 2 changes in 2 entries: 2 loosening")


def test_the_pre_commit_diff_hook_fails_a_loosening_commit(cli: Cli, tmp_path: Path) -> None:
    """The ``pairling-fast-diff`` hook of .pre-commit-hooks.yaml, configured as the README says,
    run by pre-commit on a staged map: a loosening fails the commit, a reorder passes."""
    pytest.importorskip("pre_commit")
    command = shutil.which("pairling-fast", path=str(Path(sys.executable).parent))
    if command is None:
        pytest.skip("the pairling-fast command is not installed beside this interpreter")
    root = Path(__file__).resolve().parents[1]
    hooks = tmp_path / "hooks"
    subprocess.run(
        ["git", "clone", "--quiet", str(root), str(hooks)], check=True, capture_output=True
    )
    revision = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=hooks, check=True, capture_output=True, text=True
    ).stdout.strip()
    project = tmp_path / "project"
    (project / "maps").mkdir(parents=True)
    shutil.copy(EXAMPLE, project / "maps" / "map.json")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: {revision}\n    hooks:\n"
        "      - id: pairling-fast-diff\n"
        "        args: [HEAD:maps/map.json, maps/map.json]\n"
        "        files: ^maps/map\\.json$\n",
        encoding="utf-8",
    )
    _committed(project)
    environment = {
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "PATH": f"{Path(command).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }

    def pre_commit() -> subprocess.CompletedProcess[str]:
        subprocess.run(["git", "add", "-A"], cwd=project, check=True)
        return run_python(
            cli.backend, "-m", "pre_commit", "run", cwd=project, extra_env=environment
        )

    document = example()
    document["operation_bindings"].reverse()
    (project / "maps" / "map.json").write_text(json.dumps(document), encoding="utf-8")
    reordered = pre_commit()
    assert reordered.returncode == 0, reordered.stdout + reordered.stderr
    _write_loosened(project / "maps" / "map.json")
    loosened = pre_commit()
    assert loosened.returncode == 1, loosened.stdout + loosened.stderr
    assert "2 loosening" in loosened.stdout


def test_the_docs_example_is_what_diff_prints(cli: Cli, tmp_path: Path) -> None:
    """docs/maps.md's example, rebuilt as the page describes it, prints what the page shows."""
    shutil.copy(EXAMPLE, tmp_path / "old.json")
    document = example()
    document["capabilities"][5]["remote_safety"] = "confirmation"
    binding = document["operation_bindings"][1]
    binding["forbids"] = [f for f in binding["forbids"] if f["kind"] != "terminal_injection"]
    next(r for r in binding["requires"] if r["kind"] == "fresh_snapshot")["max_age_seconds"] = 5
    document["transports"][0]["description"] = "JSON-RPC 2.0 over the CLI's stdio."
    document["operation_bindings"].reverse()
    (tmp_path / "new.json").write_text(json.dumps(seal_map(document), indent=2) + "\n")
    page = (Path(__file__).resolve().parents[1] / "docs" / "maps.md").read_text(encoding="utf-8")
    for format_name in ("text", "markdown"):
        done = cli("diff", "old.json", "new.json", "--format", format_name)
        assert done.returncode == 0 and done.stdout.strip() in page, format_name
