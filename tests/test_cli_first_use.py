"""What a new user met in the first hour (issue 50), through the real entry point on both
backends: a check stopped by Ctrl-C never looks like a pass in any format, ``--state`` makes its
cache folder, usage errors are one line with the closest spelling, ``--follow`` refuses what is
not a journal, JSON findings carry the column their message gives, ``JournalStream.feed`` says it
takes bytes, a ``--dask`` run says what it waits for, and botocore never looks for credentials
beyond loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_helpers import PACKAGE_PARENT, Cli, run_cli, run_python

from pairling_fast import _backend
from pairling_fast.output import FORMATS

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
EVENT = json.dumps(
    {"kind": "state_changed", "data": {"key": "k"}, "timestamp": "2026-12-02T14:00:00Z"}
).encode()


@pytest.fixture(params=_backend.BACKENDS)
def cli(request: pytest.FixtureRequest, tmp_path: Path) -> Cli:
    return Cli(request.param, tmp_path)


# --- 1. Ctrl-C: a journal checked part way is neither ok nor failed ---------------------------


def _feed_until_read(fifo: Path, stop: threading.Event, read: threading.Event) -> None:
    """Writes clean events into ``fifo`` until ``stop``; sets ``read`` once far more than a pipe
    holds has been written, so the check has read (and checked) a good part of them."""
    block = (EVENT + b"\n") * 2000
    written = 0
    try:
        with fifo.open("wb") as stream:
            while not stop.is_set():
                stream.write(block)
                written += len(block)
                if written >= 4 << 20:
                    read.set()
    except OSError:
        pass  # the reader went away


def _interrupted_check(cli: Cli, *args: str) -> subprocess.CompletedProcess[str]:
    """``check`` of an endless clean journal (a FIFO) and a broken one, stopped by SIGINT once
    the journal is being checked."""
    fifo = cli.cwd / "big.jsonl"
    os.mkfifo(fifo)
    (cli.cwd / "torn.jsonl").write_bytes(EVENT + b"\n{torn\n")
    stop, read = threading.Event(), threading.Event()
    writer = threading.Thread(target=_feed_until_read, args=(fifo, stop, read), daemon=True)
    writer.start()
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT, PAIRLING_FAST_BACKEND=cli.backend)
    process = subprocess.Popen(
        [sys.executable, "-m", "pairling_fast", "check", "big.jsonl", "torn.jsonl", *args],
        cwd=cli.cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert read.wait(120), "the check never read the journal"
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        stop.set()
        process.kill()
    writer.join(30)
    assert "Traceback" not in stderr, stderr
    assert process.returncode == 130, stderr
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.mark.parametrize("format_name", FORMATS)
def test_a_journal_checked_part_way_is_said_to_be_partial_in_every_format(
    cli: Cli, format_name: str
) -> None:
    done = _interrupted_check(cli, "--format", format_name)
    note = [line for line in done.stderr.splitlines() if "big.jsonl: partly checked" in line]
    assert len(note) == 1 and "interrupted after " in note[0], done.stderr
    out = done.stdout
    if format_name == "text":
        (line,) = [line for line in out.splitlines() if "big.jsonl" in line]
        assert line.startswith("PART big.jsonl (journal): partly checked: interrupted after ")
        assert "partly" in out.splitlines()[-1] and "interrupted" in out.splitlines()[-1]
    elif format_name == "json":
        report = json.loads(out)
        (big,) = [file for file in report["files"] if file["path"] == "big.jsonl"]
        assert big["status"] == "partial" and big["ok"] is None
        assert big["stats"]["lines"] > 0 and big["stats"]["interrupted"] is True
        assert report["ok"] is not True and report["interrupted"] is True
    elif format_name == "jsonl":
        assert all(json.loads(line)["path"] != "big.jsonl" for line in out.splitlines())
    elif format_name == "sarif":
        (invocation,) = json.loads(out)["runs"][0]["invocations"]
        assert invocation["executionSuccessful"] is False
        texts = [n["message"]["text"] for n in invocation["toolExecutionNotifications"]]
        assert any(
            text.startswith("big.jsonl: partly checked: interrupted after ") for text in texts
        )
    elif format_name == "junit":
        suite = ET.fromstring(out).find("testsuite")
        assert suite is not None and suite.get("skipped") == "1"
        (case,) = [case for case in suite.iter("testcase") if case.get("name") == "big.jsonl"]
        skipped = case.find("skipped")
        assert skipped is not None and case.find("failure") is None
        assert skipped.get("message", "").startswith("partly checked: interrupted after ")
    else:
        assert any(
            line.startswith("::warning file=big.jsonl,title=Partly checked::partly checked")
            for line in out.splitlines()
        ), out


# --- 2. --state makes its folder ---------------------------------------------------------------


def test_state_file_folder_is_created_and_a_file_in_its_way_refused(cli: Cli) -> None:
    (cli.cwd / "events.jsonl").write_bytes((EXAMPLES / "journals" / "chained.jsonl").read_bytes())
    done = cli("check", "events.jsonl", "--state", ".cache/journals.state")
    assert done.returncode == 0, done.stderr
    head = (cli.cwd / ".cache" / "journals.state").read_bytes().split(b"\n", 1)[0]
    assert json.loads(head)["journals"]
    (cli.cwd / "afile").write_text("")
    for state, reason in (
        ("afile/j.state", "'afile' is not a directory"),
        ("afile/x/j.state", "cannot create directory 'afile/x': Not a directory"),
    ):
        refused = cli("check", "events.jsonl", "--state", state)
        assert refused.returncode == 2
        assert refused.stderr == f"pairling-fast: error: --state {state}: {reason}\n"


# --- 3. usage errors in one line --------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["check", ".", "--fromat", "json"],
            "pairling-fast check: error: unrecognized arguments: --fromat json "
            "(did you mean --format?); `pairling-fast check --help` lists the options",
        ),
        (
            ["check", ".", "--fromat=json"],
            "pairling-fast check: error: unrecognized arguments: --fromat=json "
            "(did you mean --format?); `pairling-fast check --help` lists the options",
        ),
        (
            ["chek", "."],
            "pairling-fast: error: argument COMMAND: invalid choice: 'chek' (choose from 'check', "
            "'digest', 'canonicalize', 'seal', 'chain', 'generate', 'schemas', 'explain') "
            "(did you mean check?); `pairling-fast --help` lists the options",
        ),
        (
            ["generate", "journal", "--bogus"],
            "pairling-fast generate journal: error: unrecognized arguments: --bogus; "
            "`pairling-fast generate journal --help` lists the options",
        ),
        (
            ["check"],
            "pairling-fast check: error: the following arguments are required: PATH; "
            "`pairling-fast check --help` lists the options",
        ),
    ],
)
def test_usage_errors_are_one_line_with_the_closest_spelling(
    cli: Cli, args: list[str], line: str
) -> None:
    done = cli(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    if args[0] == "chek":
        # The list of commands grows; the line's shape and its suggestion are what matter.
        assert done.stderr.count("\n") == 1 and "(did you mean check?)" in done.stderr
        assert done.stderr.endswith("; `pairling-fast --help` lists the options\n")
    else:
        assert done.stderr == line + "\n"


def test_a_mistyped_choice_gets_the_closest_one(cli: Cli) -> None:
    done = cli("check", ".", "--format", "jsn")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "invalid choice: 'jsn'" in done.stderr and "(did you mean json?)" in done.stderr


# --- 6. --follow on what is not a journal ------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("map.json", "a map, not a CAR journal"),
        ("notes.txt", "not JSON, not a CAR journal"),
        ("app.log", "not JSON, not a CAR journal"),
    ],
)
def test_follow_refuses_what_is_not_a_journal_in_one_line(cli: Cli, name: str, reason: str) -> None:
    source = EXAMPLES / "maps" / "capability-map.json"
    text = source.read_text() if name == "map.json" else "notes\n" * 1230
    (cli.cwd / name).write_text(text)
    done = cli("check", "--follow", name)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"pairling-fast: error: {name}: {reason}; --follow takes journals "
        f"(`pairling-fast check {name}` checks it once)\n"
    )


# --- 7. the column of a JSON syntax error ------------------------------------------------------


@pytest.mark.parametrize("profile", ["strict", "car-compatible"])
def test_findings_carry_the_column_their_message_gives(cli: Cli, profile: str) -> None:
    (cli.cwd / "j.jsonl").write_bytes(EVENT + b"\n" + EVENT[:40] + b"\n" + EVENT[:25])
    as_jsonl = cli("check", "j.jsonl", "--format", "jsonl", "--profile", profile)
    findings = [json.loads(line) for line in as_jsonl.stdout.splitlines()]
    report = json.loads(cli("check", "j.jsonl", "--format", "json", "--profile", profile).stdout)
    assert findings == report["files"][0]["findings"]
    located = {(f["code"], f["line"]): f["column"] for f in findings}
    for finding in findings:
        if "(column " in finding["message"]:
            column = int(finding["message"].rsplit("(column ", 1)[1].split(")")[0])
            assert finding["column"] == column, finding
    assert located[("PF001", 2)] is not None
    assert located[("PF302", 3)] is not None
    sarif = json.loads(cli("check", "j.jsonl", "--format", "sarif", "--profile", profile).stdout)
    regions = [
        result["locations"][0]["physicalLocation"]["region"]
        for result in sarif["runs"][0]["results"]
        if result["ruleId"] == "PF001"
    ]
    assert regions == [{"startLine": 2, "startColumn": located[("PF001", 2)]}]


# --- 9. a cluster run says what it waits for ---------------------------------------------------


def test_a_local_cluster_run_shows_its_progress_on_stderr(cli: Cli) -> None:
    pytest.importorskip("distributed", reason="needs the [dask] extra")
    (cli.cwd / "a.jsonl").write_bytes((EXAMPLES / "journals" / "chained.jsonl").read_bytes())
    # Warnings as warnings: another cluster on this machine may hold Dask's dashboard port,
    # which Dask warns about (an error under the suite's PYTHONWARNINGS=error).
    # Dask's own log (a worker's heartbeat on a loaded machine) may carry its tracebacks: only
    # this tool's lines are looked at.
    quiet = {"PYTHONWARNINGS": "default"}
    args = ("check", "a.jsonl", "--dask", "local:1", "--format", "json")
    done = run_cli(cli.backend, *args, cwd=cli.cwd, extra_env=quiet)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("pairling-fast: ")]
    assert notes[0] == "pairling-fast: starting a local Dask cluster …"
    assert notes[1].startswith("pairling-fast: cluster ready in ")
    assert notes[1].endswith(": 1 worker(s), 1 thread(s)")
    assert notes[2].startswith("pairling-fast: checking 1 file(s), ")
    assert notes[-1] == "pairling-fast: 1/1 file(s) checked"
    assert json.loads(done.stdout)["summary"]["files"] == 1


# --- 11. no credential lookup beyond loopback --------------------------------------------------


def test_botocore_never_asks_the_instance_metadata_service(tmp_path: Path) -> None:
    assert os.environ.get("AWS_EC2_METADATA_DISABLED") == "true"
    child = run_python(
        _backend.active_name(),
        "-c",
        "import os; print(os.environ.get('AWS_EC2_METADATA_DISABLED'))",
        cwd=tmp_path,
    )
    assert child.stdout == "true\n"
