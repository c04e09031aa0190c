"""pairling_fast.distributed on a real (local, multi-process) Dask cluster: reports identical to
``check_journal`` on one machine, for several chunk sizes, on both backends."""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from waiting import wait_for

import pairling_fast as pf
from pairling_fast import _backend, cli
from pairling_fast.generate.journal import generate_journal
from pairling_fast.journal import cluster as pfd
from pairling_fast.journal.options import JournalOptions
from pairling_fast.report import Report
from pairling_fast.validator import schema_validator

distributed = pytest.importorskip(
    "distributed", reason="needs the [dask] extra: pip install 'pairling_fast[dask]'"
)

CHUNK_SIZES = [1000, 4096, 1 << 20]
"""1 MiB holds each test journal whole; chunks smaller than a line have their own (smaller)
journal, as they make thousands of tasks (every chunk size is checked without a cluster in
test_journal_chunks.py)."""


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with (
        distributed.LocalCluster(
            processes=True, n_workers=2, threads_per_worker=1, dashboard_address="127.0.0.1:0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def journals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Generated journals, each with what a chunk boundary could get wrong."""
    directory = tmp_path_factory.mktemp("journals")

    def write(name: str, lines: list[bytes]) -> Path:
        path = directory / f"{name}.jsonl"
        path.write_bytes(b"".join(lines))
        return path

    clean, _ = generate_journal(120, seed=1)
    chained, _ = generate_journal(120, seed=2, chain=True)
    defects, _ = generate_journal(200, seed=3, chain=True, defects=18)
    # Tampered at 4096-byte boundaries: the line that begins the second chunk is edited, the line
    # that begins the fourth is deleted (so the next one, now beginning it, does not link).
    tampered, _ = generate_journal(120, seed=2, chain=True)
    edited = _first_line_at(tampered, 4096)
    tampered[edited] = tampered[edited].replace(b'"data":{', b'"data":{"x":1,', 1)
    del tampered[_first_line_at(tampered, 3 * 4096)]
    truncated = [*clean, b'{"kind":"run_completed","run_id":"run-0000']
    small, _ = generate_journal(20, seed=7, chain=True, defects=18)
    return {
        "clean": write("clean", clean),
        "chained": write("chained", chained),
        "defects": write("defects", defects),
        "tampered": write("tampered", tampered),
        "truncated": write("truncated", truncated),
        "small": write("small", small),
    }


def assert_identical(report: Report, path: Path, **options: Any) -> Report:
    single = pf.check_journal(path, **options)
    assert [f.to_dict() for f in report.findings] == [f.to_dict() for f in single.findings]
    assert report.to_dict() == single.to_dict()
    return single


@pytest.mark.parametrize("chunk_bytes", CHUNK_SIZES)
@pytest.mark.parametrize("name", ["clean", "chained", "defects", "tampered", "truncated"])
def test_reports_equal_one_machine_on_the_core(
    client: Any, journals: dict[str, Path], name: str, chunk_bytes: int
) -> None:
    with _backend.selected("rust"):
        path = journals[name]
        report = pfd.check_journal_on_cluster(
            path, client, chunk_bytes=chunk_bytes, max_findings=None
        )
        single = assert_identical(report, path, max_findings=None)
    codes = {f.code for f in single.findings}
    expected_codes = {
        "clean": set(),
        "chained": set(),
        "defects": {"PF001", "PF101", "PF302", "PF321", "PF329", "PF330"},
        "tampered": {"PF310", "PF311"},
        "truncated": {"PF302"},
    }[name]
    assert expected_codes <= codes
    if name in ("clean", "chained"):
        assert report.ok and report.stats["events"] > 100


@pytest.mark.parametrize("backend_name", _backend.BACKENDS)
def test_reports_equal_one_machine_on_both_backends(
    client: Any, journals: dict[str, Path], backend_name: str
) -> None:
    """Including chunks smaller than one line (64 bytes: most chunks own no line at all)."""
    with _backend.selected(backend_name):
        for name, chunk_bytes in (("small", 64), ("small", 150), ("tampered", 4096)):
            path = journals[name]
            report = pfd.check_journal_on_cluster(
                path, client, chunk_bytes=chunk_bytes, max_findings=None
            )
            assert_identical(report, path, max_findings=None)
    small = journals["small"].read_bytes()
    assert len(small.splitlines()) < len(small) / 64 / 2, "most 64-byte chunks own no line"


def test_a_journal_is_one_task_whole_or_the_reducer_of_its_chunks(
    client: Any, journals: dict[str, Path]
) -> None:
    """Reports, not facts, reach the driver: a journal that fits a chunk is one task; a bigger
    one is one reducer task whose chunk tasks are submitted from the worker, not the driver."""
    from dask.utils import key_split

    paths = [journals["clean"], journals["defects"]]
    size = max(path.stat().st_size for path in paths)
    for chunk_bytes, chunks in (
        (size, 0),
        (4096, sum(-(-p.stat().st_size // 4096) for p in paths)),
    ):
        with distributed.get_task_stream(client) as stream:
            report = pfd.check_journal_paths_on_cluster(paths, client, chunk_bytes=chunk_bytes)
        ran = [key_split(task["key"]) for task in stream.data]
        assert ran.count("journal_task") == 2
        assert ran.count("check_chunk") == chunks
        assert not client.futures, "the driver holds no chunk result"
        for path in paths:
            assert report.stats["files"][str(path)] == pf.check_journal(path).stats


def _worker_running(prefix: str, dask_scheduler: Any) -> str | None:
    """The address of a worker running a task of ``prefix`` (on the scheduler)."""
    for task in dask_scheduler.tasks.values():
        if task.prefix.name == prefix and task.processing_on is not None:
            return str(task.processing_on.address)
    return None


@pytest.mark.parametrize("victim", ["reducer", "chunks"])
def test_a_worker_killed_mid_run_leaves_the_report_identical(tmp_path: Path, victim: str) -> None:
    """SIGKILL to a worker process while a journal is checked (the reducer's worker, or the
    other one, running chunks): Dask's nanny restarts it, the tasks it held run again, and the
    report is the one machine's."""
    import os
    import signal
    import threading

    lines, _ = generate_journal(2500, seed=21, chain=True, defects=12)
    path = tmp_path / "journal.jsonl"
    path.write_bytes(b"".join(lines))
    outcome: list[Any] = []
    with (
        _backend.selected("python"),  # the slower backend: the run outlasts the kill
        # Its own cluster, beside the module's (dashboards on free ports: None means :8787).
        distributed.LocalCluster(
            processes=True, n_workers=2, threads_per_worker=1, dashboard_address="127.0.0.1:0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        pids = client.run(os.getpid)

        def check() -> None:
            try:
                outcome.append(
                    pfd.check_journal_on_cluster(path, client, chunk_bytes=8192, max_findings=None)
                )
            except BaseException as error:
                outcome.append(error)

        runner = threading.Thread(target=check)
        runner.start()

        def running() -> tuple[Any, Any] | bool:
            reducer = client.run_on_scheduler(_worker_running, "journal_task")
            chunk_worker = client.run_on_scheduler(_worker_running, "check_chunk")
            if reducer is not None and chunk_worker is not None:
                return reducer, chunk_worker
            assert runner.is_alive(), "the run ended before the kill"
            return False

        reducer, _ = wait_for(running, "the reducer and a chunk running at once")
        doomed = reducer if victim == "reducer" else next(w for w in pids if w != reducer)
        os.kill(pids[doomed], signal.SIGKILL)
        runner.join(120)
        assert runner.is_alive() is False
        (report,) = outcome
        assert isinstance(report, Report), report
        assert report.stats["events"] > 2500
        assert_identical(report, path, max_findings=None)
        assert doomed not in client.run(os.getpid), "the worker was killed (its nanny restarts it)"


def test_the_tampering_sits_at_a_chunk_boundary(client: Any, journals: dict[str, Path]) -> None:
    report = pfd.check_journal_on_cluster(journals["tampered"], client, chunk_bytes=4096)
    edited, deleted = (f for f in report.findings if f.code in ("PF310", "PF311"))
    assert (edited.code, deleted.code) == ("PF310", "PF311")
    offsets = _line_offsets(journals["tampered"])
    assert offsets[edited.line - 1] >= 4096 > offsets[edited.line - 2]
    assert offsets[deleted.line - 1] >= 3 * 4096 > offsets[deleted.line - 2]
    assert report.stats["chain"] == {"tampered_at": edited.line - 1}


def test_runs_span_chunks(client: Any, journals: dict[str, Path]) -> None:
    """With 1000-byte chunks, runs open in one chunk and close in a later one; none is reported
    as not open or still open (the lifecycle state crosses the boundaries)."""
    path = journals["chained"]
    offsets = _line_offsets(path)
    opened: dict[str, int] = {}
    spanning = 0
    for number, line in enumerate(path.read_bytes().splitlines(), start=1):
        event = json.loads(line)
        if event["kind"] == "run_started":
            opened[event["run_id"]] = number
        elif event["kind"] == "run_completed":
            started = opened.pop(event["run_id"])
            spanning += offsets[started - 1] // 1000 < offsets[number - 1] // 1000
    assert spanning >= 3
    report = pfd.check_journal_on_cluster(path, client, chunk_bytes=1000)
    assert report.ok and not report.findings and report.stats["open_runs"] == []


def test_findings_cap_and_options_match(client: Any, journals: dict[str, Path]) -> None:
    path = journals["defects"]
    for options in (
        {"max_findings": 3},
        {"chain": "require", "profile": "car-compatible"},
        {"chain": "off", "lifecycle": False},
        {"car_version": "0.58.0"},  # its 53 kinds: the newer kinds of the journal are PF101
    ):
        report = pfd.check_journal_on_cluster(path, client, chunk_bytes=1000, **options)
        assert_identical(report, path, **options)
    older = pfd.check_journal_on_cluster(path, client, chunk_bytes=1000, car_version="0.58.0")
    assert len(older.errors) > len(
        pfd.check_journal_on_cluster(path, client, chunk_bytes=1000).errors
    )


def test_check_paths_runs_one_pipeline_over_many_files(
    client: Any, journals: dict[str, Path], tmp_path: Path
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    paths = [journals["defects"], empty, journals["clean"].parent, journals["defects"]]
    report = pfd.check_journal_paths_on_cluster(paths, client, chunk_bytes=1000, max_in_flight=1)
    directory = sorted(str(p) for p in journals["clean"].parent.glob("*.jsonl"))
    files = [str(journals["defects"]), str(empty)]
    files += [file for file in directory if file != files[0]]
    assert list(report.stats["files"]) == files
    findings = []
    for file in files:
        single = pf.check_journal(file)
        assert report.stats["files"][file] == single.stats
        findings += [f.to_dict() for f in single.findings]
    assert [f.to_dict() for f in report.findings] == findings
    assert not report.ok


def test_many_files_take_check_journals_keywords(client: Any, journals: dict[str, Path]) -> None:
    path = journals["defects"]
    options: dict[str, Any] = {"max_findings": 2, "chain": "require", "profile": "car-compatible"}
    report = pfd.check_journal_paths_on_cluster([path], client, chunk_bytes=1000, **options)
    single = pf.check_journal(path, **options)
    assert single.stats != pf.check_journal(path).stats
    assert report.stats["files"][str(path)] == single.stats
    assert [f.to_dict() for f in report.findings] == [f.to_dict() for f in single.findings]


def test_the_old_names_warn_and_give_the_same_reports(
    client: Any, journals: dict[str, Path]
) -> None:
    path = journals["defects"]
    with pytest.warns(DeprecationWarning, match="check_journal_on_cluster"):
        old = pfd.check_journal(path, client, chunk_bytes=1000)
    assert old.to_dict() == pfd.check_journal_on_cluster(path, client, chunk_bytes=1000).to_dict()
    with pytest.warns(DeprecationWarning, match="check_journal_paths_on_cluster"):
        old = pfd.check_paths([path], client, chunk_bytes=1000)
    new = pfd.check_journal_paths_on_cluster([path], client, chunk_bytes=1000)
    assert old.to_dict() == new.to_dict()


def test_a_path_workers_cannot_read_is_a_located_error(client: Any, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"absent\.jsonl"):
        pfd.check_journal_paths_on_cluster([tmp_path / "absent.jsonl"], client)


def test_validators_pickle_and_run_on_workers(client: Any) -> None:
    validator = schema_validator("car.journal.event")
    rebuilt = pickle.loads(pickle.dumps(validator))
    event = {"kind": "state_changed", "data": {}, "timestamp": "2026-01-01T00:00:00Z"}
    assert rebuilt.is_valid(event)
    future = client.submit(lambda v: [f.code for f in v.iter_errors({**event, "data": 1})], rebuilt)
    assert future.result() == ["PF101"]


def test_the_command_line(
    client: Any, journals: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """``pairling-fast check --dask`` prints the report it prints without a cluster."""
    address = client.scheduler.address
    directory = str(journals["clean"].parent)
    assert cli.main(["check", directory, "-f", "json"]) == 1
    local = json.loads(capsys.readouterr().out)
    assert cli.main(["check", directory, "-f", "json", "--dask", address]) == 1
    assert json.loads(capsys.readouterr().out) == local
    assert [file["path"] for file in local["files"]] == sorted(map(str, journals.values()))
    assert cli.main(["check", directory, "--dask", "local:0"]) == 2
    assert "local:N needs a positive N" in capsys.readouterr().err


def _first_line_at(lines: list[bytes], offset: int) -> int:
    """The index of the first line that begins at or after ``offset``."""
    position = 0
    for index, line in enumerate(lines):
        if position >= offset:
            return index
        position += len(line)
    raise ValueError(f"no line begins after {offset}")


def _line_offsets(path: Path) -> list[int]:
    offsets, position = [], 0
    for line in path.read_bytes().splitlines(keepends=True):
        offsets.append(position)
        position += len(line)
    return offsets


class _InterruptingClient:
    """Runs chunks at once, in the driver; Ctrl-C arrives while waiting for the third one."""

    def __init__(self) -> None:
        self.submitted = 0
        self.cancelled: list[Any] = []

    def run(self, function: Any, *args: Any) -> dict[str, Any]:
        return {"worker": function(*args)}

    def nthreads(self) -> dict[str, int]:
        return {"worker": 1}

    def submit(self, function: Any, *args: Any, pure: bool) -> Any:
        self.submitted += 1
        client = self

        class Done:
            number = client.submitted

            def result(self) -> Any:
                if self.number == 3:
                    raise KeyboardInterrupt
                return function(*args)

            def release(self) -> None:
                pass

        return Done()

    def cancel(self, futures: list[Any]) -> None:
        self.cancelled += futures


def test_ctrl_c_cancels_the_chunks_in_flight_and_keeps_the_partial_report(
    journals: dict[str, Path],
) -> None:
    """The reducer (a journal's task on a worker) stops at Ctrl-C with the lines fed so far."""
    fake = _InterruptingClient()
    path = str(journals["chained"])
    options = JournalOptions()
    engine = _backend.active()
    _, stats = pfd._reduce(engine, path, Path(path).stat().st_size, fake, options, 1000, 2)
    assert (
        stats["interrupted"]
        and 0 < stats["lines"] < pf.check_journal(journals["chained"]).stats["lines"]
    )
    assert len(fake.cancelled) == 1  # two chunks in flight: the one interrupted, one ahead


def test_other_documents_are_whole_file_tasks(
    client: Any, journals: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = Path(pf.__file__).with_name("_schemas") / "car-wire-schema.v1.json"
    (tmp_path / "wire.json").write_bytes(bundle.read_bytes())
    (tmp_path / "journal.jsonl").write_bytes(journals["tampered"].read_bytes())
    example_map = Path(__file__).parents[1] / "examples" / "maps" / "capability-map.json"
    (tmp_path / "map.json").write_bytes(example_map.read_bytes())
    assert cli.main(["check", str(tmp_path), "-f", "json"]) == 1
    local = json.loads(capsys.readouterr().out)
    assert [file["kind"] for file in local["files"]] == ["journal", "map", "wire-schema"]
    assert cli.main(["check", str(tmp_path), "-f", "json", "--dask", client.scheduler.address]) == 1
    assert json.loads(capsys.readouterr().out) == local


class _ReportingClient:
    """A cluster whose workers answer ``check_workers`` with canned builds."""

    def __init__(self, builds: dict[str, tuple[str, str | None]]) -> None:
        self.builds = builds

    def run(self, function: Any, *args: Any) -> dict[str, tuple[str, str | None]]:
        return self.builds


def test_workers_of_another_build_are_refused(client: Any) -> None:
    pfd.check_workers(client)  # the LocalCluster runs this very package
    same = (pf.__version__, None)
    with pytest.raises(pfd.ClusterError, match=r"w2: pairling_fast 0\.0\.1, the driver has"):
        pfd.check_workers(_ReportingClient({"w1": same, "w2": ("0.0.1", None)}))
    missing = (pf.__version__, "No module named 'pairling_fast._core'")
    with pytest.raises(pfd.ClusterError, match="w1: the rust backend is unavailable"):
        pfd.check_workers(_ReportingClient({"w1": missing}), "rust")


def test_workers_are_checked_once_per_client_not_per_journal(
    client: Any, journals: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = pfd.check_workers

    def counting(cluster: Any, backend: str | None = None) -> None:
        calls.append(backend or "")
        real(cluster, backend)

    monkeypatch.setattr(pfd, "check_workers", counting)
    monkeypatch.setattr(pfd, "_VERIFIED", type(pfd._VERIFIED)())
    for path in list(journals.values()) * 2:
        pfd.check_journal_on_cluster(path, client, chunk_bytes=1 << 16)
    assert calls == [_backend.active_name()]
