"""The command line as a platform engineer meets it on a real tree (issue 16): true totals when
findings are capped, progress from inside a check, quiet output on built trees, an exit status for
runs that check nothing, the config spellings, ``--version``, output destinations checked first,
and the API giving the same locations as the CLI. Run in a subprocess on both backends."""

from __future__ import annotations

import json
import os
import shutil
import threading
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import cli_helpers
import pytest
from cli_helpers import BROKEN_RESULT, GOOD_RESULT, write_tree
from waiting import wait_for

import pairling_fast as pf
from pairling_fast import _backend, _interrupt, paths
from pairling_fast.paths import FileResult, Skipped, check_paths
from pairling_fast.terminal import RichProgress

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
FIRST_EVENT = (EXAMPLES / "journals" / "chained.jsonl").read_bytes().splitlines(keepends=True)[0]
# Every one of these lines is a JSON syntax error: one error finding each, whatever the rules.
BAD_LINES = 1500


def _bad_journal(directory: Path, bad_lines: int = BAD_LINES) -> Path:
    path = directory / "bad.jsonl"
    path.write_bytes(FIRST_EVENT + b"{not json\n" * bad_lines)
    return path


class Cli(cli_helpers.Cli):
    def json(self, *args: str) -> dict[str, Any]:
        done = self("check", *args, "--format", "json")
        report: dict[str, Any] = json.loads(done.stdout)
        return report


@pytest.fixture(params=_backend.BACKENDS)
def cli(request: pytest.FixtureRequest, tmp_path: Path) -> Cli:
    return Cli(request.param, tmp_path)


# --- honest counts ------------------------------------------------------------------------------


def test_summaries_give_true_totals_and_say_how_many_are_not_listed(cli: Cli) -> None:
    _bad_journal(cli.cwd)
    everything = cli.json(".", "--max-findings", "0")
    summary = everything["summary"]
    errors, warnings = summary["errors"], summary["warnings"]
    total = len(everything["files"][0]["findings"])
    assert errors >= BAD_LINES
    assert total == errors + warnings + summary["infos"]
    assert summary["not_listed"] == 0

    capped = cli.json(".")  # the default cap, 1000
    assert (capped["summary"]["errors"], capped["summary"]["warnings"]) == (errors, warnings)
    assert capped["summary"]["not_listed"] == total - 1000
    assert sum(capped["files"][0]["not_listed"].values()) == total - 1000
    assert len(capped["files"][0]["findings"]) == 1000

    text = cli("check", ".", "--max-findings", "10")
    assert text.returncode == 1
    warned = f"{warnings} warning{'' if warnings == 1 else 's'}"
    assert text.stdout.splitlines()[-1] == (
        f"1 file checked, 0 skipped: {errors} errors, {warned}, {total - 10} not listed "
        "(--max-findings 10); failed (--fail-on error)"
    )
    assert f"  … {total - 10} more not listed (--max-findings 10; 0 lists all)" in text.stdout
    assert text.stdout.count(": error ") == 10

    sarif = json.loads(cli("check", ".", "-f", "sarif", "--max-findings", "10").stdout)["runs"][0]
    assert len(sarif["results"]) == 10
    assert sarif["properties"]["summary"]["errors"] == errors
    (note,) = sarif["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "note" and f"{total - 10} more not listed" in note["message"]["text"]

    junit = ET.fromstring(cli("check", ".", "-f", "junit", "--max-findings", "10").stdout)
    failure = junit.find("testsuite/testcase/failure")
    assert failure is not None and failure.get("message") == f"{errors} errors, {warned}"
    assert failure.text is not None and f"{total - 10} more not listed" in failure.text


def test_max_findings_from_config_and_overrides_apply_to_unlisted_findings(cli: Cli) -> None:
    _bad_journal(cli.cwd)
    findings = cli.json(".", "--max-findings", "0")["files"][0]["findings"]
    (cli.cwd / "pairling-fast.toml").write_text("max-findings = 3\n")
    assert cli.json(".")["summary"]["not_listed"] == len(findings) - 3
    assert cli.json(".", "--max-findings", "5")["summary"]["not_listed"] == len(findings) - 5
    # A project that makes the codes warnings gets every finding, listed or not, as a warning.
    codes = sorted({f["code"] for f in findings})
    severity = ", ".join(f'{code} = "warning"' for code in codes)
    (cli.cwd / "pairling-fast.toml").write_text(f"max-findings = 3\nseverity = {{{severity}}}\n")
    relaxed = cli.json(".")
    assert relaxed["summary"]["errors"] == 0
    assert relaxed["summary"]["warnings"] == len(findings)
    assert relaxed["ok"] is True
    (cli.cwd / "pairling-fast.toml").write_text("max-findings = -1\n")
    done = cli("check", ".")
    assert done.returncode == 2
    assert "max-findings must be a whole number" in done.stderr


def test_the_cap_applies_to_every_kind(cli: Cli) -> None:
    defects = EXAMPLES / "maps" / "capability-map-with-defects.json"
    report = cli.json(str(defects), "--max-findings", "1")
    assert report["summary"]["errors"] == 3
    assert report["summary"]["not_listed"] == 2
    assert len(report["files"][0]["findings"]) == 1
    assert report["ok"] is False


# --- progress from inside a check ---------------------------------------------------------------


def _big_journal(directory: Path) -> Path:
    """12,000 lines (3.5 MB): three of the core's batches (4096 lines) read through its 1 MiB
    buffer, three of the fallback's 1 MiB reads; small enough for the fallback to be quick."""
    path = directory / "big.jsonl"
    path.write_bytes(FIRST_EVENT * 12_000)
    return path


def test_check_journal_reports_bytes_read_while_it_runs(backend: Any, tmp_path: Path) -> None:
    path = _big_journal(tmp_path)
    size = path.stat().st_size
    seen: list[int] = []
    pf.check_journal(path, progress=seen.append, max_findings=10)
    assert seen == sorted(seen)
    assert seen[-1] == size
    assert len([done for done in seen if 0 < done < size]) >= 2, seen  # moved before the end
    with path.open("rb") as stream:  # a file object is counted the same way
        seen.clear()
        pf.check_journal(stream, progress=seen.append, max_findings=10)
        assert seen[-1] == size and len(seen) >= 3


def test_an_exception_in_the_progress_callback_stops_the_check(
    backend: Any, tmp_path: Path
) -> None:
    path = _big_journal(tmp_path)

    def explode(done: int) -> None:
        raise RuntimeError(f"stop at {done}")

    with pytest.raises(RuntimeError, match="stop at"):
        pf.check_journal(path, progress=explode)


def test_check_paths_passes_partial_progress_to_the_bar(backend: Any, tmp_path: Path) -> None:
    path = _big_journal(tmp_path)
    size = path.stat().st_size
    partial: list[tuple[str, int]] = []

    class Recorder:
        def start(self, files: int, total_bytes: int) -> None:
            assert (files, total_bytes) == (1, size)

        def checking(self, name: str, done: int) -> None:
            partial.append((name, done))

        def advance(self, result: FileResult | Skipped, done: int) -> None:
            assert done == size

    check_paths([path], progress=Recorder(), max_findings=10)
    assert {name for name, _ in partial} == {str(path)}
    assert any(0 < done < size for _, done in partial)


# Ctrl-C reaches a worker as an asynchronous KeyboardInterrupt (_interrupt.stop); landing between
# open() and its `with`, it leaves that file to the garbage collector, which closes it with a
# ResourceWarning. That is the price of stopping pure-Python work mid-way, not a leak that lasts.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_ctrl_c_stops_a_journal_being_checked_in_a_worker(
    backend: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _big_journal(tmp_path)
    small = write_tree(tmp_path, {"a.tools.cancel.result.json": GOOD_RESULT})
    interrupted = threading.Event()
    journal_outcomes: list[str] = []
    checked_after_ctrl_c: list[int] = []
    real_check_journal = paths.check_journal_on

    def check_journal_after_ctrl_c(*args: Any, **options: Any) -> Any:
        # Ctrl-C reaches a worker as the KeyboardInterrupt _interrupt.stop sends it, or as the
        # stop the journal check asks for between batches: either way the check ends early. The
        # worker starts once the main thread has asked it to stop: between the KeyboardInterrupt
        # and that request a running check may well report progress, which is not a fault.
        try:
            assert interrupted.wait(timeout=60)
            wait_for(_interrupt.stop_requested, "the main thread asks the worker to stop")
            report = real_check_journal(*args, **options)
        except BaseException as error:
            journal_outcomes.append(type(error).__name__)
            raise
        journal_outcomes.append("interrupted" if report.stats.get("interrupted") else "finished")
        return report

    class CtrlCInTheMainThread:
        def start(self, files: int, total_bytes: int) -> None:
            pass

        def checking(self, name: str, done: int) -> None:
            checked_after_ctrl_c.append(done)

        def advance(self, result: FileResult | Skipped, done: int) -> None:
            # Ctrl-C arrives in the main thread only: here, as the small file completes.
            interrupted.set()
            raise KeyboardInterrupt

    monkeypatch.setattr(paths, "check_journal_on", check_journal_after_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        check_paths([small / "a.tools.cancel.result.json", path], progress=CtrlCInTheMainThread())
    # The journal's worker was stopped (before or inside the check), before any progress.
    assert journal_outcomes in ([], ["KeyboardInterrupt"], ["JournalInterrupted"], ["interrupted"])
    assert checked_after_ctrl_c == []


def test_the_rich_bar_counts_files_in_flight(tmp_path: Path) -> None:
    from rich.console import Console

    bar = RichProgress(Console(file=open(os.devnull, "w"), force_terminal=True))
    bar.start(30, 1000)
    assert bar.progress is not None and bar.task is not None
    bar.checking("a.jsonl", 300)
    bar.checking("b.jsonl", 100)
    assert bar.progress.tasks[0].completed == 400
    bar.checking("a.jsonl", 500)
    bar.advance(FileResult("a.jsonl", "journal"), 600)
    assert bar.progress.tasks[0].completed == 700  # 600 finished + 100 in flight
    bar.stop()
    bar.console.file.close()


# --- noise --------------------------------------------------------------------------------------


def _built_tree(root: Path) -> None:
    write_tree(
        root,
        {
            "docs/good.tools.cancel.result.json": GOOD_RESULT,
            "docs/notes.txt": "not a document\n",
            "target/release/deps/x.json": "{}",
            ".hypothesis/examples/y.json": "{}",
            ".benchmarks/Linux/z.json": "{}",
            "dist/pkg.json": "{}",
            "build/lib/b.tools.cancel.result.json": BROKEN_RESULT,
            "src/pairling.egg-info/PKG-INFO.json": "{}",
        },
    )


def test_build_outputs_are_excluded_and_skips_are_listed_only_when_asked(cli: Cli) -> None:
    _built_tree(cli.cwd)
    report = cli.json(".")
    assert [f["path"] for f in report["files"]] == [
        os.path.join("docs", "good.tools.cancel.result.json")
    ]
    excluded = {s["path"]: s["reason"] for s in report["skipped"]}
    for directory in ("target", ".hypothesis", ".benchmarks", "dist", "build"):
        assert excluded[directory] == f"excluded by {directory!r}"
    assert excluded[os.path.join("src", "pairling.egg-info")] == "excluded by '*.egg-info'"
    quiet = cli("check", ".")
    assert quiet.returncode == 0
    assert [line for line in quiet.stdout.splitlines() if "skip" in line] == [
        "1 file checked, 7 skipped: 0 errors, 0 warnings; passed"
    ]
    for flag in ("-v", "--show-skipped"):
        listed = cli("check", ".", flag).stdout
        assert f"skip {os.path.join('docs', 'notes.txt')}: not JSON" in listed
        assert "skip target: excluded by 'target'" in listed
    github = cli("check", ".", "-f", "github").stdout
    assert "skipped" not in github.replace("7 skipped", "")
    # A path named on the command line is checked even where a default exclude matches it.
    named = cli.json("build/lib/b.tools.cancel.result.json")
    assert named["summary"]["errors"] == 1


def test_junit_lists_checked_files_only(cli: Cli) -> None:
    _built_tree(cli.cwd)
    suite = ET.fromstring(cli("check", ".", "-f", "junit").stdout).find("testsuite")
    assert suite is not None
    assert [case.get("name") for case in suite.iter("testcase")] == [
        os.path.join("docs", "good.tools.cancel.result.json")
    ]
    assert (suite.get("tests"), suite.get("skipped")) == ("1", "0")
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["skipped-files"] == "7"


# --- runs that check nothing --------------------------------------------------------------------


def test_no_document_checked_exits_5_and_says_so(cli: Cli) -> None:
    (cli.cwd / "empty").mkdir()
    write_tree(cli.cwd, {"other/notes.txt": "hello\n"})
    for target in ("empty", "other"):
        done = cli("check", target)
        assert done.returncode == 5, done
        assert done.stdout.splitlines()[-1].endswith("; no document checked")
        assert "no document checked" in done.stderr
    assert cli("check", "other", "--no-require-files").returncode == 0
    assert json.loads(cli("check", "empty", "-f", "json").stdout)["summary"]["files"] == 0
    (cli.cwd / "pairling-fast.toml").write_text("require-files = false\n")
    assert cli("check", "empty").returncode == 0
    assert cli("check", "empty", "--require-files").returncode == 5


# --- configuration and --version ----------------------------------------------------------------


@pytest.mark.parametrize("section", ["pairling-fast", "pairling_fast"])
def test_both_spellings_of_the_pyproject_section_are_read(cli: Cli, section: str) -> None:
    write_tree(cli.cwd, {"a.tools.cancel.result.json": BROKEN_RESULT})
    (cli.cwd / "pyproject.toml").write_text(f'[tool.{section}]\nseverity = {{PF001 = "off"}}\n')
    assert cli("check", ".").returncode == 0
    assert cli("check", ".", "--isolated").returncode == 1


def test_both_sections_at_once_is_an_error(cli: Cli) -> None:
    write_tree(cli.cwd, {"a.tools.cancel.result.json": GOOD_RESULT})
    (cli.cwd / "pyproject.toml").write_text(
        "[tool.pairling-fast]\nfail-on = 'error'\n[tool.pairling_fast]\nfail-on = 'warning'\n"
    )
    done = cli("check", ".")
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "both [tool.pairling-fast] and [tool.pairling_fast]; keep one of them"
    )


def test_version(cli: Cli) -> None:
    done = cli("--version")
    assert done.returncode == 0
    assert done.stdout == f"pairling-fast {pf.__version__} ({cli.backend} backend)\n"


# --- output destinations ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "destination", "message"),
    [
        (
            ["check", "."],
            "missing/report.json",
            "--output missing/report.json: directory 'missing' does not exist",
        ),
        (["check", "."], "existing", "--output existing: is a directory; name a file to write"),
        (
            ["canonicalize", "a.tools.cancel.result.json"],
            "existing",
            "--output existing: is a directory",
        ),
        (["chain", "j.jsonl"], "missing/j.jsonl", "--output missing/j.jsonl: directory 'missing'"),
        (["seal", "map.json"], "existing", "--output existing: is a directory"),
    ],
)
def test_output_destinations_are_checked_before_the_run(
    cli: Cli, command: list[str], destination: str, message: str
) -> None:
    write_tree(cli.cwd, {"a.tools.cancel.result.json": GOOD_RESULT, "existing/keep": ""})
    shutil.copy(EXAMPLES / "journals" / "chained.jsonl", cli.cwd / "j.jsonl")
    shutil.copy(EXAMPLES / "maps" / "capability-map.json", cli.cwd / "map.json")
    done = cli(*command, "--output", destination)
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"pairling-fast: error: {message}"), line
    assert ".tmp" not in line
    assert sorted(p.name for p in (cli.cwd / "existing").iterdir()) == ["keep"]


# --- the API locates as the CLI does ------------------------------------------------------------


def test_check_map_on_a_path_or_bytes_has_the_lines_check_shows(backend: Any) -> None:
    defects = EXAMPLES / "maps" / "capability-map-with-defects.json"
    cli_lines = [(f.line, f.pointer) for f in check_paths([defects]).files[0].findings]
    assert all(line is not None for line, _ in cli_lines)
    assert [(f.line, f.pointer) for f in pf.check_map(defects).findings] == cli_lines
    assert [(f.line, f.pointer) for f in pf.check_map(defects.read_bytes()).findings] == cli_lines


def test_seal_refusal_lists_located_findings(cli: Cli) -> None:
    document = json.loads((EXAMPLES / "maps" / "capability-map-with-defects.json").read_text())
    document["providers"][0]["id"] = 7  # a schema error: sealing is refused
    (cli.cwd / "map.json").write_text(json.dumps(document, indent=2))
    done = cli("seal", "map.json", "--output", "sealed.json")
    assert done.returncode == 1
    assert not (cli.cwd / "sealed.json").exists()
    refused = [line for line in done.stderr.splitlines() if " PF101: " in line]
    assert refused and all(line.startswith("map.json:") for line in refused)
    assert any(line.split()[0].split(":")[1].isdigit() for line in refused)


# --- SARIF locations ----------------------------------------------------------------------------


def test_sarif_has_start_columns_and_the_root_pointer_as_is(cli: Cli) -> None:
    write_tree(cli.cwd, {"b.tools.cancel.result.json": BROKEN_RESULT})
    shutil.copy(EXAMPLES / "journals" / "tampered.jsonl", cli.cwd / "t.jsonl")
    with (cli.cwd / "t.jsonl").open("ab") as journal:
        journal.write(b"[]\n")  # not an object: a finding on the whole line, pointer ""
    results = json.loads(cli("check", ".", "-f", "sarif").stdout)["runs"][0]["results"]
    broken = [r for r in results if "b.tools" in str(r["locations"][0])]
    region = broken[0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 1, "startColumn": BROKEN_RESULT.index("tru") + 1}
    names = [
        r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
        for r in results
        if "logicalLocations" in r["locations"][0] and r["properties"]["pointer"] == ""
    ]
    assert names and set(names) == {""}


def test_the_json_report_is_unchanged_in_shape_for_a_clean_run(cli: Cli) -> None:
    write_tree(cli.cwd, {"a.tools.cancel.result.json": GOOD_RESULT})
    report = cli.json(".")
    assert report["summary"] == {
        "files": 1,
        "errors": 0,
        "warnings": 0,
        "infos": 0,
        "not_listed": 0,
    }
    assert report["max_findings"] == 1000
    assert report["files"][0]["not_listed"] == {}
