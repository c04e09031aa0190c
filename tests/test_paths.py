"""check_paths: walking, classification by content, skipping with reasons, parallel checks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import BAD_RESULT, BROKEN_RESULT, GOOD_RESULT, sample_tree, write_tree

import pairling_fast
from pairling_fast import _backend, paths
from pairling_fast.paths import PathArgumentError, Skipped, check_paths, classify

ROOT = Path(__file__).resolve().parents[1]
METHODS = frozenset({"tools.cancel", "tools.stream.subscribe", "state.get"})
MAP_HEAD = b'{\n  "$schema": "./coding-agent-remote-control-capability-map.schema.json",\n'


# --- classification -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "head", "kind"),
    [
        ("anything.json", MAP_HEAD, "map"),
        ("x.txt", b'{"schema_version": "2.0.0", "providers": []}', "map"),
        ("bundle.json", b'{"coverage": {}, "format": "car.wire-schema.v1"}', "wire-schema"),
        ("run.log", b'\n{"kind": "run_started", "data": {}, "timestamp": "t"}\n', "journal"),
        ("t.jsonl", b'{"jsonrpc": "2.0", "id": 1, "method": "tools.list"}\n', "transcript"),
        ("t.jsonl", b'[{"jsonrpc": "2.0", "id": 1, "result": 1}]\n', "transcript"),
        ("t.jsonl", b'{"dir": "in", "message": {"jsonrpc": "2.0", "id": 1}}\n', "transcript"),
        ("a.tools.cancel.result.json", b"true", "rpc-result"),
        ("tools.stream.subscribe.result.json", b"", "rpc-result"),
        ("\xef\xbb\xbfbom.json", b"\xef\xbb\xbf" + MAP_HEAD, "map"),
        ("min.json", b'{"schema_version":"2.0.0","providers":[]}\n', "map"),
        # A transcript whose records mention a bundle is still a transcript.
        (
            "s.jsonl",
            b'{"jsonrpc":"2.0","id":1,"result":{"format":"car.wire-schema.v1"}}\n{}',
            "transcript",
        ),
    ],
)
def test_kinds_are_told_by_content_and_result_names(name: str, head: bytes, kind: str) -> None:
    assert classify(name, head, METHODS).kind == kind


def test_the_method_is_the_longest_known_suffix_of_the_name() -> None:
    found = classify("ci.run7.tools.stream.subscribe.result.json", b"{}", METHODS)
    assert (found.kind, found.method) == ("rpc-result", "tools.stream.subscribe")


@pytest.mark.parametrize(
    ("name", "head", "reason"),
    [
        ("empty.json", b"  \n", "empty file"),
        ("notes.md", b"# title\n", "not JSON"),
        ("blob.bin", b"{\x00\x01", "binary file"),
        ("config.json", b'{"name": "x", "version": 1}', "not a document kind"),
        ("nope.frobnicate.result.json", b"{}", "no known RPC method"),
        ("events.jsonl", b'{"kind": "x"}\n', "not a document kind"),
        ("nested.json", b'{"data": {"format": "car.wire-schema.v1"}}', "not a document kind"),
    ],
)
def test_other_files_are_skipped_with_a_reason(name: str, head: bytes, reason: str) -> None:
    found = classify(name, head, METHODS)
    assert found.kind is None
    assert reason in found.reason


# --- walking ------------------------------------------------------------------------------------


def _skipped(report: paths.PathsReport) -> dict[str, str]:
    return {s.path: s.reason for s in report.skipped}


def test_every_file_is_either_checked_or_skipped_with_its_reason(
    backend: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(sample_tree(tmp_path))
    report = check_paths(["docs"])
    checked = {f.path: f for f in report.files}
    assert sorted(checked) == [
        os.path.join("docs", "bad.tools.cancel.result.json"),
        os.path.join("docs", "good.tools.cancel.result.json"),
        os.path.join("docs", "nested", "broken.tools.cancel.result.json"),
    ]
    assert _skipped(report) == {os.path.join("docs", "notes.txt"): "not JSON"}
    good = checked[os.path.join("docs", "good.tools.cancel.result.json")]
    bad = checked[os.path.join("docs", "bad.tools.cancel.result.json")]
    broken = checked[os.path.join("docs", "nested", "broken.tools.cancel.result.json")]
    assert {f.kind for f in report.files} == {"rpc-result"}
    assert [f for f in good.findings if f.severity != "info"] == []
    # The schema finding is on the value, located on its line although the check gives none.
    [violation] = [f for f in bad.findings if f.severity == "error"]
    assert (violation.pointer, violation.line, violation.path) == ("/cancelled", 2, bad.path)
    assert [f.code for f in broken.findings if f.severity == "error"] == ["PF001"]
    assert not report.ok
    assert report.summary == {
        "files": 3,
        "errors": 2,
        "warnings": 0,
        "infos": 0,
        "not_listed": 0,
    }


def test_report_json_shape_is_version_1(backend: Any, tmp_path: Path) -> None:
    report = check_paths([sample_tree(tmp_path) / "docs"]).to_dict()
    assert list(report) == [
        "report_version",
        "tool",
        "version",
        "backend",
        "ok",
        "files",
        "skipped",
        "summary",
        "max_findings",
    ]
    assert (report["report_version"], report["tool"]) == (1, "pairling_fast")
    assert report["version"] == pairling_fast.__version__
    assert report["backend"] == _backend.active_name()
    assert report["ok"] is False
    assert [list(f) for f in report["files"]] == [
        ["path", "kind", "ok", "status", "stats", "findings", "not_listed"]
    ] * 3
    assert [f["ok"] for f in report["files"]] == [False, True, False]
    assert [list(s) for s in report["skipped"]] == [["path", "reason"]]
    assert list(report["summary"]) == ["files", "errors", "warnings", "infos", "not_listed"]


def test_excludes_match_names_and_paths_and_are_listed(tmp_path: Path) -> None:
    root = sample_tree(tmp_path) / "docs"
    report = check_paths([root], exclude=["nested", "*.txt"])
    assert [Path(f.path).name for f in report.files] == [
        "bad.tools.cancel.result.json",
        "good.tools.cancel.result.json",
    ]
    assert sorted(_skipped(report).values()) == ["excluded by '*.txt'", "excluded by 'nested'"]


def test_vcs_and_tool_directories_are_skipped_by_default(tmp_path: Path) -> None:
    write_tree(tmp_path, {".git/x.tools.cancel.result.json": GOOD_RESULT})
    assert _skipped(check_paths([tmp_path])) == {str(tmp_path / ".git"): "excluded by '.git'"}
    assert len(check_paths([tmp_path], default_excludes=False).files) == 1


def test_symlinks_are_not_followed_unless_asked_and_loops_are_detected(tmp_path: Path) -> None:
    write_tree(tmp_path, {"real/a.tools.cancel.result.json": GOOD_RESULT})
    (tmp_path / "real" / "loop").symlink_to(tmp_path)
    (tmp_path / "real" / "dangling").symlink_to(tmp_path / "missing")
    (tmp_path / "alias.tools.cancel.result.json").symlink_to(
        tmp_path / "real" / "a.tools.cancel.result.json"
    )
    plain = check_paths([tmp_path / "real"])
    assert _skipped(plain) == {
        str(tmp_path / "real" / "dangling"): "symbolic link, not followed (use --follow-symlinks)",
        str(tmp_path / "real" / "loop"): "symbolic link, not followed (use --follow-symlinks)",
    }
    followed = check_paths([tmp_path], follow_symlinks=True)
    assert [f.path for f in followed.files] == [str(tmp_path / "alias.tools.cancel.result.json")]
    assert _skipped(followed) == {
        str(tmp_path / "real" / "a.tools.cancel.result.json"): "same file as "
        + str(tmp_path / "alias.tools.cancel.result.json"),
        str(tmp_path / "real" / "dangling"): "broken symbolic link",
        str(tmp_path / "real" / "loop"): "symbolic link loop (leads back to a parent)",
    }


def test_fifos_are_skipped_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.tools.cancel.result.json")
    report = check_paths([tmp_path], jobs=1)
    assert report.files == []
    assert list(_skipped(report).values()) == ["a FIFO, not read"]


def test_a_missing_argument_raises_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PathArgumentError, match="no such file or directory"):
        check_paths([tmp_path / "missing.json"])


def test_an_unreadable_file_is_a_finding_and_the_others_are_still_checked(tmp_path: Path) -> None:
    good = write_tree(tmp_path, {"g.tools.cancel.result.json": GOOD_RESULT})
    # Reading /proc/self/mem at offset 0 fails with EIO, even as root: a real read error.
    report = check_paths(["/proc/self/mem", good])
    unreadable, checked = report.files
    assert (unreadable.path, unreadable.kind) == ("/proc/self/mem", None)
    assert [(f.code, f.severity) for f in unreadable.findings] == [("PF501", "error")]
    assert checked.kind == "rpc-result"
    assert report.io_errors == unreadable.findings


def test_one_failing_check_does_not_stop_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {f"f{i}.tools.cancel.result.json": GOOD_RESULT for i in range(8)})
    real = paths._run_check

    def flaky(kind: str, path: Path, *args: Any) -> pairling_fast.Report:
        if path.name == "f3.tools.cancel.result.json":
            raise RuntimeError("boom")
        return real(kind, path, *args)

    monkeypatch.setattr(paths, "_run_check", flaky)
    report = check_paths([tmp_path], jobs=4)
    assert len(report.files) == 8
    failed = [f for f in report.files if f.fails("error")]
    assert [f.path for f in failed] == [str(tmp_path / "f3.tools.cancel.result.json")]
    [finding] = failed[0].findings
    assert (finding.code, finding.message) == (
        "PF901",
        "the rpc-result check failed: RuntimeError: boom",
    )


def test_forced_type_checks_files_whatever_their_content(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x.json": '{"name": "not a map"}'})
    assert check_paths([tmp_path]).files == []
    [forced] = check_paths([tmp_path], kind="map").files
    assert forced.kind == "map"
    assert forced.fails("error")


def test_forced_rpc_result_needs_the_method_in_the_name(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x.json": "true"})
    report = check_paths([tmp_path], kind="rpc-result")
    assert report.files == []
    assert "*.<method>.result.json" in report.skipped[0].reason


# --- severities and thresholds ------------------------------------------------------------------


def test_severity_overrides_change_or_drop_findings(tmp_path: Path) -> None:
    write_tree(tmp_path, {"b.tools.cancel.result.json": BROKEN_RESULT})
    as_warning = check_paths([tmp_path], severities={"PF001": "warning"})
    assert [f.severity for f in as_warning.findings if f.code == "PF001"] == ["warning"]
    assert as_warning.ok
    assert not check_paths([tmp_path], severities={"PF001": "warning"}, fail_on="warning").ok
    silenced = check_paths([tmp_path], severities={"PF001": "off"})
    assert [f.code for f in silenced.findings if f.code == "PF001"] == []
    with pytest.raises(ValueError, match="severity of PF001"):
        check_paths([tmp_path], severities={"PF001": "loud"})  # type: ignore[dict-item]


def test_timings_are_reported_only_when_asked(tmp_path: Path) -> None:
    write_tree(tmp_path, {"g.tools.cancel.result.json": GOOD_RESULT})
    plain = check_paths([tmp_path]).to_dict()
    assert "timing" not in plain["files"][0]["stats"]
    timed = check_paths([tmp_path], timings=True).to_dict()
    timing = timed["files"][0]["stats"]["timing"]
    assert timing["bytes"] == len(GOOD_RESULT)
    assert timing["seconds"] >= 0
    assert timed["summary"]["timing"]["bytes"] == len(GOOD_RESULT)


def test_progress_hears_about_every_file(tmp_path: Path) -> None:
    sample_tree(tmp_path)
    events: list[Any] = []

    class Recorder:
        def start(self, files: int, total_bytes: int) -> None:
            events.append(("start", files, total_bytes))

        def advance(self, result: paths.FileResult | Skipped, size: int) -> None:
            events.append((type(result).__name__, size))

    check_paths([tmp_path / "docs"], progress=Recorder())
    sizes = [len(t) for t in (BAD_RESULT, GOOD_RESULT, BROKEN_RESULT, "not a document\n")]
    assert events[0] == ("start", 4, sum(sizes))
    assert sorted(events[1:]) == sorted(
        [("FileResult", s) for s in sizes[:3]] + [("Skipped", sizes[3])]
    )


def test_check_paths_can_pick_the_backend(tmp_path: Path) -> None:
    write_tree(tmp_path, {"g.tools.cancel.result.json": GOOD_RESULT})
    assert check_paths([tmp_path], backend="python").backend == "python"


def test_a_directory_that_cannot_be_listed_is_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {"ok/g.tools.cancel.result.json": GOOD_RESULT, "locked/x.json": "{}"})
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(paths.os, "scandir", scandir)
    report = check_paths([tmp_path])
    locked, good = report.files
    assert (locked.path, locked.kind) == (str(tmp_path / "locked"), None)
    assert [(f.code, f.message) for f in locked.findings] == [
        ("PF501", "cannot list directory: Permission denied")
    ]
    assert good.kind == "rpc-result"


def test_a_journal_is_read_from_the_handle_its_kind_was_told_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: _backend.Engine
) -> None:
    """A journal is opened once: its head tells its kind, and its check reads on from the same
    handle. Removed once opened, it is still checked whole, as a check of the file gives."""
    journal = tmp_path / "run.jsonl"
    journal.write_bytes((ROOT / "examples" / "journals" / "tampered.jsonl").read_bytes())
    expected = pairling_fast.check_journal(journal)
    real = paths._opened

    def removed_once_open(source: Path | str) -> Any:
        handle = real(source)
        Path(source).unlink()
        return handle

    monkeypatch.setattr(paths, "_opened", removed_once_open)
    (file,) = check_paths([journal], backend=_backend.name_of(backend)).files
    assert not journal.exists()
    assert (file.kind, file.stats) == ("journal", expected.stats)
    assert file.findings == expected.findings
    assert expected.findings  # the example is tampered: findings to compare
