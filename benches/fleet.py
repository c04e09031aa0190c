"""A fleet of journals on a Dask cluster whose scheduler and workers run in their own processes
(``dask scheduler`` / ``dask worker`` on loopback), against ``check_paths`` in one process on the
same cores; then the same fleet from a moto S3 server, against reading its objects with s3fs
alone; then the reducer of one big journal split in chunks (issue #28, docs/cluster.md).

    maturin develop --release
    python benches/fleet.py /tmp/fleet [--journals 24] [--small-mb 2] [--large-mb 10]
        [--giant-mb 1024] [--workers 2] [--no-s3]

Two fleets of ``--journals`` chained journals (``--small-mb`` and ``--large-mb`` each) give the
*added* costs, free of fixed ones: the driver's CPU seconds per added GB and the bytes the driver
receives per added event (``ss``'s ``bytes_received`` of the driver's TCP sockets, loopback). The
cluster's time is compared with one process's on the large fleet, reports asserted identical.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cluster

import pairling_fast as pf
from pairling_fast.generate.journal import write_journal
from pairling_fast.results import PathsReport


def fleet_directory(root: Path, megabytes: float) -> Path:
    return root / f"{megabytes:g}MB"


def generate_fleet(directory: Path, journals: int, megabytes: float) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for number in range(journals):
        path = directory / f"session-{number:03d}.jsonl"
        if not path.exists():
            with open(path, "wb", buffering=1 << 20) as out:
                events = int(megabytes * 2**20 // cluster.EVENT_BYTES)
                write_journal(out, events, seed=1000 + number, chain=True)
        paths.append(path)
    return paths


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def dask_processes(workers: int, environment: dict[str, str]) -> Iterator[str]:
    """``dask scheduler`` and ``workers`` x ``dask worker --nthreads 1``, each its own process on
    127.0.0.1; yields the scheduler's address."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, **environment}
    dask = [sys.executable, "-m", "dask"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    started = [
        subprocess.Popen(
            [*dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            **quiet,  # type: ignore[call-overload]
        )
    ]
    try:
        for _ in range(workers):
            worker = [*dask, "worker", address, "--nthreads", "1", "--nworkers", "1"]
            worker += ["--host", "127.0.0.1", "--no-dashboard", "--no-nanny"]
            started.append(subprocess.Popen(worker, **quiet))  # type: ignore[call-overload]
        yield address
    finally:
        for process in reversed(started):
            process.terminate()
        for process in started:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def received_bytes(pid: int) -> int:
    """Bytes received so far by the TCP sockets of process ``pid`` (``ss -tinp``)."""
    output = subprocess.run(
        ["ss", "-tinpH"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    total, mine = 0, False
    for line in output:
        if not line.startswith((" ", "\t")):
            mine = f"pid={pid}," in line
            continue
        found = re.search(r"bytes_received:(\d+)", line)
        if mine and found:
            total += int(found[1])
    return total


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def comparable(report: PathsReport, prefix: str) -> list[dict[str, Any]]:
    """The report's files without timing and with paths relative to the fleet's root."""
    files = []
    for file in report.to_dict()["files"]:
        file = dict(file)
        file.pop("seconds", None)
        file["path"] = file["path"].removeprefix(prefix)
        file["findings"] = [{**f, "path": None} for f in file["findings"]]
        files.append(file)
    return files


def timed_check(paths: list[str], client: Any = None) -> tuple[PathsReport, float, float, int]:
    """(report, wall seconds, this process's CPU seconds, bytes it received over TCP)."""
    pid = os.getpid()
    received = received_bytes(pid)
    cpu = cpu_seconds()
    started = time.perf_counter()
    report = pf.check_paths(paths, client=client)
    wall = time.perf_counter() - started
    return report, wall, cpu_seconds() - cpu, received_bytes(pid) - received


def best_of(rounds: int, paths: list[str], client: Any) -> tuple[PathsReport, ...]:
    """(one process's report, its best wall seconds, the cluster's report, its best wall
    seconds, the driver's least CPU seconds, its fewest bytes received), the two checks
    alternated ``rounds`` times so that load from elsewhere hits both."""
    best: list[Any] = [None, float("inf"), None, float("inf"), float("inf"), 1 << 62]
    for _ in range(rounds):
        local, local_wall, _, _ = timed_check(paths)
        on_cluster, wall, cpu, received = timed_check(paths, client)
        best = [
            local,
            min(best[1], local_wall),
            on_cluster,
            min(best[3], wall),
            min(best[4], cpu),
            min(best[5], received),
        ]
    return tuple(best)


def events_of(report: PathsReport) -> int:
    return sum(file.stats.get("events", 0) for file in report.files)


def fleet_figures(root: Path, args: argparse.Namespace, client: Any) -> None:
    from distributed import Client

    assert isinstance(client, Client)
    rows = []
    for label, megabytes in (("small", args.small_mb), ("large", args.large_mb)):
        directory = fleet_directory(root, megabytes)
        files = generate_fleet(directory, args.journals, megabytes)
        size = sum(path.stat().st_size for path in files)
        local, local_wall, remote_report, wall, cpu, received = best_of(
            args.rounds, [str(directory)], client
        )
        if comparable(local, str(root)) != comparable(remote_report, str(root)):
            raise RuntimeError(f"{label} fleet: the cluster's report differs from one process's")
        events = events_of(local)
        rows.append((size, events, cpu, received))
        print(
            f"{label} fleet: {len(files)} journals, {size / 1e6:.0f} MB, {events} events;"
            f" one process {local_wall:.2f} s, cluster {wall:.2f} s"
            f" ({wall / local_wall:.2f}x); driver CPU {cpu:.2f} s, received {received} bytes"
            f" ({received / events:.1f} per event)"
        )
    (small_size, small_events, small_cpu, small_received) = rows[0]
    (large_size, large_events, large_cpu, large_received) = rows[1]
    added_gb = (large_size - small_size) / 1e9
    print(f"driver CPU per added GB: {(large_cpu - small_cpu) / added_gb:.3f} s")
    per_event = (large_received - small_received) / (large_events - small_events)
    print(f"bytes received by the driver per added event: {per_event:.2f}")


@contextlib.contextmanager
def moto_process() -> Iterator[dict[str, str]]:
    """moto's standalone S3 server on 127.0.0.1; yields the variables s3fs finds it by."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield {
            "AWS_ENDPOINT_URL_S3": f"http://127.0.0.1:{port}",
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",  # no credential lookup beyond loopback
            "NO_PROXY": "127.0.0.1",
        }
    finally:
        server.terminate()
        server.wait(30)


def s3_figures(root: Path, args: argparse.Namespace) -> None:
    with moto_process() as environment:
        os.environ.update(environment)
        import s3fs

        filesystem = s3fs.S3FileSystem(skip_instance_cache=True)
        filesystem.mkdir("bench")
        directory = fleet_directory(root, args.s3_mb)
        files = generate_fleet(directory, args.journals, args.s3_mb)
        for file in files:
            filesystem.put_file(str(file), f"bench/fleet/{file.name}")
        size = sum(file.stat().st_size for file in files)
        started = time.perf_counter()
        for file in files:
            with filesystem.open(f"bench/fleet/{file.name}", "rb") as handle:
                while handle.read(1 << 20):
                    pass
        read_seconds = time.perf_counter() - started
        print(f"s3fs alone, reading the {len(files)} objects: {size / 1e6 / read_seconds:.1f} MB/s")
        local = pf.check_paths([str(directory)])
        two = [f"s3://bench/fleet/{file.name}" for file in files[:2]]
        here_seconds = cluster_seconds = float("inf")
        with dask_processes(args.workers, environment) as address:
            from distributed import Client

            with Client(address) as client:
                client.wait_for_workers(args.workers)
                pf.check_paths(two, client=client)  # the workers import the core and s3fs
                for _ in range(args.rounds):
                    started = time.perf_counter()
                    here = pf.check_paths(["s3://bench/fleet/"])
                    here_seconds = min(here_seconds, time.perf_counter() - started)
                    started = time.perf_counter()
                    on_cluster = pf.check_paths(["s3://bench/fleet/"], client=client)
                    cluster_seconds = min(cluster_seconds, time.perf_counter() - started)
        print(f"check_paths in one process from S3: {size / 1e6 / here_seconds:.1f} MB/s")
        print(
            f"check_paths on the cluster from S3: {size / 1e6 / cluster_seconds:.1f} MB/s"
            f" ({cluster_seconds:.2f} s)"
        )
        expected = comparable(local, str(directory) + "/")
        if not (
            comparable(here, "s3://bench/fleet/")
            == comparable(on_cluster, "s3://bench/fleet/")
            == expected
        ):
            raise RuntimeError("the S3 fleet's reports differ from the local files'")
        print("reports from S3 (one process and cluster) identical to the local files'")


def giant_figures(root: Path, args: argparse.Namespace) -> None:
    path = root / f"giant-{args.giant_mb}.jsonl"
    if not path.exists():
        with open(path, "wb", buffering=1 << 20) as out:
            write_journal(out, args.giant_mb * 2**20 // cluster.EVENT_BYTES, seed=7, chain=True)
    shipped, per_line, ordered = cluster.split_stages(str(path), 32 << 20)
    megabytes = path.stat().st_size / 1e6
    events = pf.check_journal(path).stats["events"]
    print(
        f"giant journal {megabytes:.0f} MB, {events} events, 32 MiB chunks:"
        f" reducer (ordered stage) {megabytes / ordered:.0f} MB/s, {events / ordered:.0f} events/s;"
        f" per-line stage {megabytes / per_line:.0f} MB/s;"
        f" hand-off {shipped / events:.1f} bytes per event ({shipped / (megabytes * 1e6):.1%})"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", help="directory for the generated fleets (kept for reruns)")
    parser.add_argument("--journals", type=int, default=24)
    parser.add_argument("--small-mb", type=float, default=2)
    parser.add_argument("--large-mb", type=float, default=10)
    parser.add_argument("--giant-mb", type=int, default=1024)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-s3", action="store_true")
    parser.add_argument("--no-fleet", action="store_true")
    parser.add_argument("--s3-mb", type=float, default=10, help="the journals' size in S3")
    parser.add_argument("--no-giant", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--worker-threads",
        type=int,
        default=0,
        help="RAYON_NUM_THREADS of each worker (0: the core's default, every core)",
    )
    args = parser.parse_args()
    root = Path(args.root)
    print(f"build {pf.__build__}; load average {os.getloadavg()}; {vars(args)}")
    if not args.no_fleet:
        rayon = {"RAYON_NUM_THREADS": str(args.worker_threads)} if args.worker_threads else {}
        with dask_processes(args.workers, rayon) as address:
            from distributed import Client

            with Client(address) as client:
                client.wait_for_workers(args.workers)
                warm = generate_fleet(fleet_directory(root, args.small_mb), 2, args.small_mb)
                pf.check_paths(list(map(str, warm)), client=client)  # import the core
                fleet_figures(root, args, client)
    if not args.no_s3:
        s3_figures(root, args)
    if not args.no_giant:
        giant_figures(root, args)
    print(f"load average {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
