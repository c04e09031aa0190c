"""Every output format of ``check``: text (snapshot, colour off; rich on a terminal), json, SARIF
2.1.0 (validated against the OASIS schema), JUnit XML (parsed strictly), GitHub annotations."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cli_helpers import GOOD_RESULT, PACKAGE_PARENT, run_cli, sample_tree, write_tree

from pairling_fast import _backend
from pairling_fast.codes import CODES
from pairling_fast.output import github, junit, plain_text, sarif
from pairling_fast.paths import FileResult, PathsReport, Skipped
from pairling_fast.report import Finding

SARIF_SCHEMA = Path(__file__).with_name("data") / "sarif" / "sarif-schema-2.1.0.json"


def _report(fail_on: Any = "error") -> PathsReport:
    """A fixed report with every shape a file result takes."""
    broken = "maps/broken.json"
    return PathsReport(
        files=[
            FileResult(
                broken,
                "map",
                [
                    Finding("PF101", "error", "'x' is not of type 'integer'", broken, 7, "/a/0"),
                    Finding("PF001", "warning", "50% done,\nthen: stop", broken, 9, ""),
                    Finding("PF401", "info", "no result schema", broken),
                ],
                size=120,
            ),
            FileResult("maps/clean.json", "map", [], size=80),
            FileResult(
                "gone.json", None, [Finding("PF501", "error", "Permission denied", "gone.json")]
            ),
        ],
        skipped=[Skipped("notes.txt", "not JSON"), Skipped("pipe", "a FIFO, not read")],
        backend="rust",
        fail_on=fail_on,
    )


TEXT_SNAPSHOT = """\
FAIL maps/broken.json (map): 1 error, 1 warning, 1 info
  maps/broken.json:7 /a/0: error PF101: 'x' is not of type 'integer'
  maps/broken.json:9: warning PF001: 50% done,\\nthen: stop
  maps/broken.json: info PF401: no result schema
ok   maps/clean.json (map)
FAIL gone.json (unknown kind): 1 error
  gone.json: error PF501: Permission denied
3 files checked, 2 skipped: 2 errors, 1 warning; unreadable files
"""
SKIP_LINES = "skip notes.txt: not JSON\nskip pipe: a FIFO, not read\n"


def test_text_snapshot() -> None:
    assert plain_text(_report()) == TEXT_SNAPSHOT
    # Skipped files get lines only when asked (-v): the summary counts them anyway.
    summary = TEXT_SNAPSHOT.splitlines(keepends=True)[-1]
    shown = plain_text(_report(), show_skipped=True)
    assert shown == TEXT_SNAPSHOT[: -len(summary)] + SKIP_LINES + summary


def test_text_verdicts() -> None:
    report = _report()
    report.files.pop()  # no unreadable file left
    assert plain_text(report).endswith("; failed (--fail-on error)\n")
    report.files[0].findings = report.files[0].findings[1:]
    assert plain_text(report).endswith("1 warning; passed\n")
    report.fail_on = "warning"
    assert plain_text(report).splitlines()[0].startswith("FAIL maps/broken.json")


@pytest.mark.parametrize("backend", _backend.BACKENDS)
def test_cli_text_is_plain_when_not_a_terminal(backend: str, tmp_path: Path) -> None:
    sample_tree(tmp_path)
    done = run_cli(backend, "check", "docs", "-v", cwd=tmp_path)
    lines = done.stdout.splitlines()
    assert "\x1b" not in done.stdout
    bad = os.path.join("docs", "bad.tools.cancel.result.json")
    assert lines[0] == f"FAIL {bad} (rpc-result): " + lines[0].split(": ", 1)[1]
    assert re.fullmatch(rf"  {re.escape(bad)}:2 /cancelled: error PF\d{{3}}: .+", lines[1])
    assert f"skip {os.path.join('docs', 'notes.txt')}: not JSON" in lines
    assert lines[-1] == "3 files checked, 1 skipped: 2 errors, 0 warnings; failed (--fail-on error)"


# --- rich, on a terminal ------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_COLOUR = re.compile(r"\x1b\[[0-9;]*(?:3[0-8]|9[0-7])(?:;[0-9;]*)?m")


def _on_terminal(tmp_path: Path, *args: str, env: dict[str, str]) -> str:
    """Run the CLI with stdout on a pseudo-terminal; returns what it printed."""
    controller, terminal = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    environment.update(
        {"PYTHONPATH": PACKAGE_PARENT, "COLUMNS": "120", "TERM": "xterm-256color", **env}
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "pairling_fast", *args],
        cwd=tmp_path,
        stdout=terminal,
        stderr=subprocess.PIPE,
        env=environment,
    )
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(controller)
    assert process.stderr is not None
    with process.stderr:
        assert process.stderr.read() == b""
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.parametrize("backend", _backend.BACKENDS)
def test_rich_output_on_a_terminal_has_colours_unless_disabled(
    backend: str, tmp_path: Path
) -> None:
    sample_tree(tmp_path)
    env = {"PAIRLING_FAST_BACKEND": backend}
    coloured = _on_terminal(tmp_path, "check", "docs", env=env)
    assert _COLOUR.search(coloured)
    assert "✗" in coloured and "✓" in coloured
    assert re.search(r"files\s+skipped\s+errors\s+warnings", _ANSI.sub("", coloured))
    for plain in (
        _on_terminal(tmp_path, "check", "docs", "--no-color", env=env),
        _on_terminal(tmp_path, "check", "docs", env={**env, "NO_COLOR": "1"}),
    ):
        assert not _COLOUR.search(plain)
        assert "failed (--fail-on error)" in plain


def test_rich_progress_on_long_runs_does_not_disturb_the_report(tmp_path: Path) -> None:
    write_tree(tmp_path, {f"r{i:02}.tools.cancel.result.json": GOOD_RESULT for i in range(30)})
    shown = _on_terminal(tmp_path, "check", ".", "--stats", env={"NO_COLOR": "1"})
    total = 30 * len(GOOD_RESULT)
    assert "checking" in shown and f"{total}/{total} bytes" in shown  # the bar, with bytes/s
    assert shown.count("✓") == 30
    assert "timings" in shown
    assert "passed" in shown


# --- json ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", _backend.BACKENDS)
def test_json_format_is_the_check_paths_report(backend: str, tmp_path: Path) -> None:
    from pairling_fast.paths import check_paths

    sample_tree(tmp_path)
    printed = json.loads(run_cli(backend, "check", "docs", "-f", "json", cwd=tmp_path).stdout)
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        expected = check_paths(["docs"], backend=backend).to_dict()
    finally:
        os.chdir(cwd)
    assert printed == expected


# --- SARIF --------------------------------------------------------------------------------------


def _sarif_validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def test_sarif_of_a_fixed_report_is_valid_and_places_results() -> None:
    log = sarif(_report())
    errors = sorted(_sarif_validator().iter_errors(log), key=lambda e: list(e.path))
    assert errors == []
    [run] = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == sorted(CODES)
    results = run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("PF101", "error"),
        ("PF001", "warning"),
        ("PF401", "note"),
        ("PF501", "error"),
    ]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    regions = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results]
    assert regions == [7, 9, 1, 1]
    location = results[0]["locations"][0]
    assert location["physicalLocation"]["artifactLocation"] == {
        "uri": "maps/broken.json",
        "uriBaseId": "%SRCROOT%",
    }
    assert location["logicalLocations"] == [{"fullyQualifiedName": "/a/0", "kind": "element"}]
    assert run["invocations"][0]["executionSuccessful"] is False
    assert run["properties"]["skipped"] == [
        {"path": "notes.txt", "reason": "not JSON"},
        {"path": "pipe", "reason": "a FIFO, not read"},
    ]


def test_sarif_is_invalid_when_broken_so_the_validation_can_fail() -> None:
    log = sarif(_report())
    log["runs"][0]["results"][0]["level"] = "fatal"
    del log["version"]
    assert len(list(_sarif_validator().iter_errors(log))) == 2


@pytest.mark.parametrize("backend", _backend.BACKENDS)
def test_cli_sarif_validates_against_sarif_2_1_0(backend: str, tmp_path: Path) -> None:
    sample_tree(tmp_path)
    done = run_cli(backend, "check", "docs", "--format", "sarif", "-o", "out.sarif", cwd=tmp_path)
    assert done.returncode == 1
    log = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    assert list(_sarif_validator().iter_errors(log)) == []
    results = log["runs"][0]["results"]
    bad = [r for r in results if r["level"] == "error" and "bad." in json.dumps(r["locations"])]
    [violation] = bad
    physical = violation["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "docs/bad.tools.cancel.result.json"
    assert physical["region"]["startLine"] == 2


# --- JUnit --------------------------------------------------------------------------------------


def test_junit_of_a_fixed_report_is_strict_xml_with_one_testcase_per_checked_file() -> None:
    report = _report()
    report.files[0].findings[0] = Finding("PF101", "error", "bad \x01 byte", "maps/broken.json")
    root = ET.fromstring(junit(report))
    assert root.tag == "testsuites"
    [suite] = list(root)
    assert suite.tag == "testsuite"
    counts = {key: suite.get(key) for key in ("tests", "failures", "errors", "skipped")}
    # Skipped files are no test cases (a built tree has thousands); a property counts them.
    assert counts == {"tests": "3", "failures": "1", "errors": "1", "skipped": "0"}
    assert {key: root.get(key) for key in counts} == counts
    cases = suite.findall("testcase")
    assert len(cases) == 3
    outcome = {
        case.get("name"): [(child.tag, child.get("type")) for child in case] for case in cases
    }
    assert outcome == {
        "maps/broken.json": [("failure", "PF101")],
        "maps/clean.json": [],
        "gone.json": [("error", "PF501")],
    }
    failure = cases[0].find("failure")
    assert failure is not None and failure.text is not None
    assert failure.get("message") == "1 error, 1 warning, 1 info"
    assert "bad \\x01 byte" in failure.text
    assert "maps/broken.json:9: warning PF001" in failure.text
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties == {
        "backend": "rust",
        "fail-on": "error",
        "skipped-files": "2",
        "findings-not-listed": "0",
    }


def test_junit_below_the_threshold_is_a_pass_with_output() -> None:
    report = _report()
    report.files, report.skipped = [report.files[0]], []
    report.files[0].findings = report.files[0].findings[1:]
    [case] = ET.fromstring(junit(report)).iter("testcase")
    assert [child.tag for child in case] == ["system-out"]
    report.fail_on = "warning"
    [case] = ET.fromstring(junit(report)).iter("testcase")
    assert [(child.tag, child.get("type")) for child in case] == [("failure", "PF001")]


@pytest.mark.parametrize("backend", _backend.BACKENDS)
def test_cli_junit(backend: str, tmp_path: Path) -> None:
    sample_tree(tmp_path)
    done = run_cli(backend, "check", "docs", "--format", "junit", cwd=tmp_path)
    assert done.returncode == 1
    suite = ET.fromstring(done.stdout).find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "2", "0")


# --- GitHub annotations -------------------------------------------------------------------------


def test_github_annotations_escape_data_and_properties() -> None:
    lines = github(_report(), show_skipped=True).splitlines()
    assert lines[:4] == [
        "::error file=maps/broken.json,line=7,title=PF101 schema violation::/a/0: 'x' is not of "
        "type 'integer'",
        "::warning file=maps/broken.json,line=9,title=PF001 invalid JSON::50%25 done,%0Athen: stop",
        "::notice file=maps/broken.json,title=PF401 RPC result unchecked::no result schema",
        "::error file=gone.json,title=PF501 file unreadable::Permission denied",
    ]
    assert lines[4:6] == ["skipped notes.txt: not JSON", "skipped pipe: a FIFO, not read"]
    assert lines[-1].startswith("3 files checked")
    assert github(_report()).splitlines()[4:] == lines[6:]  # no skip lines unless asked


@pytest.mark.parametrize("backend", _backend.BACKENDS)
def test_cli_github(backend: str, tmp_path: Path) -> None:
    sample_tree(tmp_path)
    done = run_cli(backend, "check", "docs", "--format", "github", cwd=tmp_path)
    assert done.returncode == 1
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::")]
    assert re.fullmatch(
        r"::error file=docs/bad\.tools\.cancel\.result\.json,line=2,title=PF\d{3} [^:]+::"
        r"/cancelled: .+",
        next(a for a in annotations if "bad." in a and a.startswith("::error")),
    )
