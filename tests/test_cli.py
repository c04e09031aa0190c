"""The command line, run as users run it: ``python -m pairling_fast`` in a subprocess, on both
backends. Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage/config/I-O errors."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_helpers import BROKEN_RESULT, GOOD_RESULT, Cli, sample_tree, write_tree

import pairling_fast
from pairling_fast import _backend
from pairling_fast.cli import findings_markdown

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(params=_backend.BACKENDS)
def cli(request: pytest.FixtureRequest, tmp_path: Path) -> Cli:
    return Cli(request.param, tmp_path)


def _one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


# --- check: exit codes --------------------------------------------------------------------------


def test_clean_files_exit_0(cli: Cli, tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.tools.cancel.result.json": GOOD_RESULT, "b.txt": "x"})
    done = cli("check", ".", "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True
    assert report["backend"] == cli.backend
    assert report["skipped"] == [{"path": "b.txt", "reason": "not JSON"}]


def test_findings_exit_1_and_are_reported_per_file(cli: Cli, tmp_path: Path) -> None:
    sample_tree(tmp_path)
    done = cli("check", "docs", "--format", "json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    by_path = {f["path"]: f for f in report["files"]}
    bad = by_path[os.path.join("docs", "bad.tools.cancel.result.json")]
    assert [(f["pointer"], f["line"]) for f in bad["findings"] if f["severity"] == "error"] == [
        ("/cancelled", 2)
    ]
    assert report["summary"] == {
        "files": 3,
        "errors": 2,
        "warnings": 0,
        "infos": 0,
        "not_listed": 0,
    }


def test_a_missing_path_is_one_line_and_exit_2(cli: Cli) -> None:
    done = cli("check", "missing.json")
    assert done.returncode == 2
    assert _one_error_line(done.stderr) == (
        "pairling-fast: error: missing.json: no such file or directory"
    )
    assert done.stdout == ""


def test_an_unreadable_file_is_reported_and_exits_2(cli: Cli, tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.tools.cancel.result.json": GOOD_RESULT})
    done = cli("check", "/proc/self/mem", ".", "--format", "json")
    assert done.returncode == 2
    assert _one_error_line(done.stderr) == (
        "pairling-fast: error: /proc/self/mem: Input/output error"
    )
    report = json.loads(done.stdout)
    assert report["files"][0]["findings"][0]["code"] == "PF501"
    assert report["files"][1]["kind"] == "rpc-result"


def test_usage_errors_exit_2(cli: Cli) -> None:
    assert cli("check").returncode == 2
    assert cli("check", ".", "--type", "bogus").returncode == 2
    assert cli("check", ".", "--jobs", "0").returncode == 2
    assert cli("frobnicate").returncode == 2


def test_backend_option_overrides_the_environment(cli: Cli, tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.tools.cancel.result.json": GOOD_RESULT})
    for backend in _backend.BACKENDS:
        done = cli("check", ".", "--format", "json", "--backend", backend)
        assert json.loads(done.stdout)["backend"] == backend


def test_jobs_and_stats(cli: Cli, tmp_path: Path) -> None:
    write_tree(tmp_path, {f"r{i}.tools.cancel.result.json": GOOD_RESULT for i in range(6)})
    done = cli("check", ".", "--jobs", "3", "--stats")
    assert done.returncode == 0
    assert done.stdout.count(" bytes in ") == 7  # six files and the total
    assert "MB/s" in done.stdout


def test_output_file_gets_the_report_and_stderr_the_summary(cli: Cli, tmp_path: Path) -> None:
    sample_tree(tmp_path)
    done = cli("check", "docs", "--format", "json", "--output", "report.json")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("3 files checked, 1 skipped: 2 errors, 0 warnings")
    assert json.loads((tmp_path / "report.json").read_text())["summary"]["errors"] == 2


# --- check: configuration -----------------------------------------------------------------------


def test_pyproject_config_excludes_and_cli_adds(cli: Cli, tmp_path: Path) -> None:
    sample_tree(tmp_path)
    write_tree(tmp_path, {"pyproject.toml": '[tool.pairling_fast]\nexclude = ["nested"]\n'})
    report = json.loads(cli("check", "docs", "-f", "json", "--exclude", "bad.*").stdout)
    assert [Path(f["path"]).name for f in report["files"]] == ["good.tools.cancel.result.json"]
    assert sorted(s["reason"] for s in report["skipped"]) == [
        "excluded by 'bad.*'",
        "excluded by 'nested'",
        "not JSON",
    ]


def test_fail_on_and_severities_from_config_and_cli(cli: Cli, tmp_path: Path) -> None:
    write_tree(tmp_path, {"b.tools.cancel.result.json": BROKEN_RESULT})
    config = tmp_path / "pairling-fast.toml"
    config.write_text('severity = {PF001 = "warning"}\n')
    assert cli("check", ".").returncode == 0
    assert cli("check", ".", "--fail-on", "warning").returncode == 1
    config.write_text('fail-on = "warning"\nseverity = {PF001 = "warning"}\n')
    assert cli("check", ".").returncode == 1
    assert cli("check", ".", "--fail-on", "error").returncode == 0
    config.write_text('severity = {PF001 = "off"}\n')
    report = json.loads(cli("check", ".", "-f", "json").stdout)
    assert [f["code"] for f in report["files"][0]["findings"] if f["code"] == "PF001"] == []
    assert cli("check", ".", "--isolated").returncode == 1


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("excludes = []\n", "unknown key 'excludes'"),
        ('fail-on = "info"\n', "fail-on must be one of error, warning"),
        ('severity = {PF777 = "off"}\n', "unknown finding code 'PF777'"),
        ('severity = {PF001 = "loud"}\n', "severity of PF001 must be one of"),
        ("exclude = 'x'\n", "exclude must be a list"),
        ("exclude = [\n", "not valid TOML"),
    ],
)
def test_bad_config_is_one_line_and_exit_2(
    cli: Cli, tmp_path: Path, config: str, message: str
) -> None:
    write_tree(tmp_path, {"pairling-fast.toml": config, "a.tools.cancel.result.json": GOOD_RESULT})
    done = cli("check", ".")
    assert done.returncode == 2
    assert message in _one_error_line(done.stderr)


def test_unknown_key_in_pyproject_section_is_an_error(cli: Cli, tmp_path: Path) -> None:
    write_tree(tmp_path, {"pyproject.toml": "[tool.pairling_fast]\nfail_on = 'error'\n"})
    done = cli("check", ".")
    assert done.returncode == 2
    assert "[tool.pairling_fast]: unknown key 'fail_on'" in _one_error_line(done.stderr)


def test_config_is_found_in_a_parent_directory(cli: Cli, tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"pairling-fast.toml": "exclude = ['*.json']\n", "sub/a.tools.cancel.result.json": "x"},
    )
    done = cli("check", ".", "--show-skipped", cwd=tmp_path / "sub")
    assert done.returncode == 5  # everything excluded: no document checked
    assert "excluded by '*.json'" in done.stdout


# --- other commands -----------------------------------------------------------------------------


def test_digest_whole_document_pointer_and_hex(cli: Cli, tmp_path: Path) -> None:
    document = {"b": [1, {"c": "d"}], "a": "x/y"}
    write_tree(tmp_path, {"doc.json": json.dumps(document, indent=2)})
    with _backend.selected(cli.backend):
        whole = pairling_fast.digest(document)
        part = pairling_fast.digest_hex(document["b"][1])  # type: ignore[index]
    assert cli("digest", "doc.json").stdout == whole + "\n"
    assert cli("digest", "doc.json", "--pointer", "/b/1", "--hex").stdout == part + "\n"
    missing = cli("digest", "doc.json", "--pointer", "/b/7")
    assert missing.returncode == 2
    assert "nothing at '7'" in _one_error_line(missing.stderr)


def test_digest_of_invalid_json_is_a_located_finding(cli: Cli, tmp_path: Path) -> None:
    write_tree(tmp_path, {"dup.json": '{"a": 1,\n "a": 2}', "syntax.json": '{"a": 1,\n ,}'})
    duplicate = cli("digest", "dup.json")
    assert duplicate.returncode == 1
    assert _one_error_line(duplicate.stderr).startswith("dup.json")
    assert "PF002 at /a" in duplicate.stderr
    syntax = cli("digest", "syntax.json")
    assert syntax.returncode == 1
    assert _one_error_line(syntax.stderr).startswith("syntax.json:2:2: PF001")


def test_canonicalize_to_stdout_and_atomically_to_a_file(cli: Cli, tmp_path: Path) -> None:
    write_tree(tmp_path, {"doc.json": '{"b": 2, "a": [1.0, "\\u00e9"]}', "out.json": "old"})
    with _backend.selected(cli.backend):
        expected = pairling_fast.canonicalize_json((tmp_path / "doc.json").read_bytes())
    done = cli("canonicalize", "doc.json")
    assert (done.returncode, done.stdout.encode("utf-8")) == (0, expected)
    assert cli("canonicalize", "doc.json", "-o", "out.json").returncode == 0
    assert (tmp_path / "out.json").read_bytes() == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.json", "out.json"]


def test_canonicalize_a_missing_file_is_one_line(cli: Cli) -> None:
    done = cli("canonicalize", "nope.json")
    assert done.returncode == 2
    assert _one_error_line(done.stderr) == (
        "pairling-fast: error: nope.json: No such file or directory"
    )


def test_schemas_lists_ids_with_their_source(cli: Cli) -> None:
    lines = cli("schemas").stdout.splitlines()
    assert (
        "pairling.capability-map.2.0.0\tcoding-agent-remote-control-capability-map.schema.json"
        in lines
    )
    assert (
        "car.rpc.tools.cancel.result\t"
        "car-wire-schema.0.60.0.json#/schemas/rpc.tools.cancel.result" in lines
    )


def test_explain(cli: Cli) -> None:
    done = cli("explain", "pf101")
    assert done.returncode == 0
    assert done.stdout.startswith("PF101 schema violation (default severity: error)\n")
    unknown = cli("explain", "PF777")
    assert unknown.returncode == 2
    assert "unknown finding code 'PF777'" in _one_error_line(unknown.stderr)
    assert cli("explain", "--all", "--markdown").stdout == findings_markdown()


def test_docs_findings_md_is_generated_from_the_catalogue() -> None:
    # Regenerate with: python -m pairling_fast explain --all --markdown > docs/findings.md
    assert (REPO / "docs" / "findings.md").read_text(encoding="utf-8") == findings_markdown()


def test_explicit_config_file(cli: Cli, tmp_path: Path) -> None:
    sample_tree(tmp_path)
    write_tree(tmp_path, {"ci/strict.toml": "exclude = ['bad.*', 'nested']\n"})
    assert cli("check", "docs").returncode == 1
    assert cli("check", "docs", "--config", "ci/strict.toml").returncode == 0
    missing = cli("check", "docs", "--config", "ci/none.toml")
    assert missing.returncode == 2
    assert "ci/none.toml: No such file or directory" in _one_error_line(missing.stderr)


# --- the README's flows, end to end --------------------------------------------------------------

EXAMPLES = REPO / "examples"
DEFECTIVE_MAP = EXAMPLES / "maps" / "capability-map-with-defects.json"
UNKNOWN_CAPABILITY = "no_such_capability"


def _codes(done: subprocess.CompletedProcess[str]) -> set[str]:
    return {
        finding["code"] for file in json.loads(done.stdout)["files"] for finding in file["findings"]
    }


def test_check_names_the_defects_of_the_example_map(cli: Cli) -> None:
    done = cli("check", str(DEFECTIVE_MAP), "--format", "json")
    assert done.returncode == 1, done.stderr
    assert {"PF221", "PF213"} <= _codes(done)


def test_fixing_a_map_then_sealing_it_in_place_makes_it_pass(cli: Cli, tmp_path: Path) -> None:
    document = json.loads(DEFECTIVE_MAP.read_text(encoding="utf-8"))
    for binding in document["operation_bindings"]:
        binding["capability_ids"] = [
            c for c in binding["capability_ids"] if c != UNKNOWN_CAPABILITY
        ]
    fixed = tmp_path / "map.json"
    fixed.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    assert _codes(cli("check", str(fixed), "--format", "json")) == {"PF221"}

    sealed = cli("seal", str(fixed), "--in-place")
    assert sealed.returncode == 0, sealed.stderr
    checked = cli("check", str(fixed))
    assert checked.returncode == 0, checked.stdout


def test_seal_refuses_a_map_with_other_errors_and_leaves_it_alone(cli: Cli, tmp_path: Path) -> None:
    copy = tmp_path / "map.json"
    copy.write_bytes(DEFECTIVE_MAP.read_bytes())
    done = cli("seal", str(copy), "--in-place")
    assert done.returncode == 1
    assert "PF213" in done.stderr
    assert "Traceback" not in done.stderr
    assert copy.read_bytes() == DEFECTIVE_MAP.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["map.json"]  # no temporary left behind


def test_a_chained_journal_checks_as_verified(cli: Cli, tmp_path: Path) -> None:
    chained = tmp_path / "out.jsonl"
    done = cli("chain", str(EXAMPLES / "journals" / "chained.jsonl"), "-o", str(chained))
    assert done.returncode == 0, done.stderr
    checked = cli("check", str(chained), "--format", "json")
    assert checked.returncode == 0, checked.stdout
    [file] = json.loads(checked.stdout)["files"]
    assert file["kind"] == "journal"
    assert file["stats"]["events"] > 0
    assert file["stats"]["chain"] == {"verified": file["stats"]["events"]}


@pytest.mark.parametrize(
    ("generator", "options", "kind"),
    [
        ("map", ("--bindings", "50", "--seed", "1"), "map"),
        ("journal", ("--events", "200", "--seed", "1", "--chain"), "journal"),
        ("transcript", ("--messages", "200", "--seed", "1"), "transcript"),
    ],
)
def test_generated_documents_pass_check(
    cli: Cli, tmp_path: Path, generator: str, options: tuple[str, ...], kind: str
) -> None:
    output = tmp_path / f"generated-{generator}"
    done = cli("generate", generator, *options, "-o", str(output))
    assert done.returncode == 0, done.stderr
    checked = cli("check", str(output), "--format", "json")
    assert checked.returncode == 0, checked.stdout
    [file] = json.loads(checked.stdout)["files"]
    assert (file["kind"], file["findings"]) == (kind, [])


def test_check_of_the_examples_fails_on_exactly_the_known_defective_files(cli: Cli) -> None:
    done = cli("check", "examples/", "--format", "json", cwd=REPO)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert len(report["files"]) == 6
    assert report["skipped"] == []
    failing = [file["path"] for file in report["files"] if not file["ok"]]
    assert failing == [
        "examples/journals/tampered.jsonl",
        "examples/maps/capability-map-with-defects.json",
    ]


def test_profile_decides_what_an_unknown_journal_member_is(cli: Cli, tmp_path: Path) -> None:
    event = {
        "kind": "state_changed",
        "timestamp": "2026-01-01T00:00:00Z",
        "data": {},
        "extra": 1,
    }
    journal = tmp_path / "journal.jsonl"
    journal.write_text(json.dumps(event) + "\n", encoding="utf-8")

    def located(*options: str) -> tuple[int, list[tuple[str, str, str]]]:
        done = cli("check", str(journal), "--format", "json", *options)
        [file] = json.loads(done.stdout)["files"]
        return done.returncode, [(f["code"], f["severity"], f["pointer"]) for f in file["findings"]]

    # The schema places additionalProperties at the event itself; PF304 names the member.
    assert located() == (1, [("PF101", "error", "")])
    assert located("--profile", "strict") == located()
    assert located("--profile", "car-compatible") == (0, [("PF304", "warning", "/extra")])
    refused = cli("check", str(journal), "--profile", "lenient")
    assert refused.returncode == 2
