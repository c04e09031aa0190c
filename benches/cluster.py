"""Throughput of a 2-worker Dask LocalCluster vs one process, on one generated journal, same run.

    maturin develop --release
    python benches/cluster.py /tmp/journal-1g.jsonl --size-mb 1024 [--chunk-mb 32] [--rounds 2]

Generates the journal (chained) if it does not exist; checks it, alternately, with
``check_journal`` and with ``pairling_fast.distributed.check_journal_on_cluster`` on
``LocalCluster(n_workers=2, threads_per_worker=1)``; asserts the reports are identical and prints
both rates. Then, in this process, runs the two stages the cluster splits, chunk by chunk: the
per-line stage (what a worker does) and the ordered stage fed with its output (what the driver
does), and prints the bytes a worker ships per event and each stage's rate in MB/s of journal —
the ordered stage's rate is the driver's ceiling, however many workers feed it. Deletes the
journal afterwards unless ``--keep``.

``benches/compare.py`` imports this module for its cluster workload (``measure`` on journals of
several sizes, then ``crossover``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import resource
import sys
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast import distributed as pfd
from pairling_fast.generate.journal import write_journal
from pairling_fast.journal.options import JournalOptions

if TYPE_CHECKING:
    from distributed import Client

EVENT_BYTES = 323  # a generated chained event's line, on average (compare.py sizes with it)


@dataclasses.dataclass(frozen=True)
class ClusterRun:
    """One journal checked by one process and on the cluster (the best of the rounds), and the
    two stages the cluster splits, run in this process over the same chunks."""

    megabytes: float
    events: int
    single_seconds: float
    cluster_seconds: float
    shipped_bytes: int
    per_line_seconds: float
    ordered_seconds: float

    @property
    def shipped_per_event(self) -> float:
        return self.shipped_bytes / max(self.events, 1)


@contextlib.contextmanager
def local_cluster(workers: int) -> Iterator[Client]:
    """A client of ``workers`` one-thread worker processes; ImportError without distributed (this
    module imports without it, so compare.py can report "not installed")."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        pfd.check_workers(client)  # every worker imports the core now, before any timed check
        yield client


def measure(path: str, client: Client, chunk_bytes: int, rounds: int) -> ClusterRun:
    """Checks ``path`` in this process and on ``client``, alternately (so load from elsewhere hits
    both), ``rounds`` times each; fails if the two reports differ."""
    single_seconds = cluster_seconds = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        single = pf.check_journal(path)
        single_seconds = min(single_seconds, time.perf_counter() - started)
        started = time.perf_counter()
        report = pfd.check_journal_on_cluster(path, client, chunk_bytes=chunk_bytes)
        cluster_seconds = min(cluster_seconds, time.perf_counter() - started)
        if report.to_dict() != single.to_dict():
            raise RuntimeError(f"{path}: the cluster's report differs from one process's")
    shipped, per_line, ordered = split_stages(path, chunk_bytes)
    return ClusterRun(
        megabytes=os.path.getsize(path) / 1e6,
        events=single.stats["events"],
        single_seconds=single_seconds,
        cluster_seconds=cluster_seconds,
        shipped_bytes=shipped,
        per_line_seconds=per_line,
        ordered_seconds=ordered,
    )


def split_stages(path: str, chunk_bytes: int) -> tuple[int, float, float]:
    """(bytes the per-line stage encodes for the driver, its seconds, the ordered stage's seconds)
    over ``path`` in ``chunk_bytes`` chunks, both stages run here on the active backend, as
    ``check_journal_on_cluster`` runs them on workers and on the driver."""
    options = JournalOptions()
    engine = _backend.active()
    checker = engine.JournalChecker(options)
    shipped, per_line, ordered = 0, 0.0, 0.0
    for start, end in pfd.chunk_ranges(os.path.getsize(path), chunk_bytes):
        started = time.perf_counter()
        encoded = engine.check_journal_chunk(path, start, end, options)
        per_line += time.perf_counter() - started
        shipped += len(encoded)
        started = time.perf_counter()
        checker.feed(encoded)
        ordered += time.perf_counter() - started
    started = time.perf_counter()
    checker.finish(False)
    ordered += time.perf_counter() - started
    return shipped, per_line, ordered


def linear_fit(points: Sequence[tuple[float, float]]) -> tuple[float, float] | None:
    """(intercept, slope) of the least-squares line through ``points``; None without two
    distinct x."""
    if len({x for x, _ in points}) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum(
        (x - mean_x) ** 2 for x, _ in points
    )
    return mean_y - slope * mean_x, slope


def crossover(points: Sequence[tuple[float, float, float]]) -> str:
    """Where the cluster starts to beat one process, from (MB, one process's seconds, the
    cluster's seconds) per journal: the smallest measured size where it did, and the size where
    the two fitted lines (seconds = fixed cost + MB * cost per MB) cross."""
    if not points:
        return "not measured"
    by_size = sorted(points)
    faster = [megabytes for megabytes, single, on_cluster in by_size if on_cluster < single]
    largest, largest_single, largest_cluster = by_size[-1]
    observed = (
        f"cluster faster from {megabytes_label(faster[0])} on"
        if faster
        else f"none up to {megabytes_label(largest)}"
        f" (cluster/one process {largest_cluster / largest_single:.2f}x there)"
    )
    single = linear_fit([(megabytes, seconds) for megabytes, seconds, _ in by_size])
    cluster = linear_fit([(megabytes, seconds) for megabytes, _, seconds in by_size])
    if single is None or cluster is None:
        return observed
    if single[1] <= 0 or cluster[1] <= 0:
        return f"{observed}; no fit: fixed costs still dominate at these sizes"
    per_gb = f"{single[1] * 1000:.1f} s/GB one process, {cluster[1] * 1000:.1f} s/GB cluster"
    if cluster[1] >= single[1]:
        return f"{observed}; fitted: none, the cluster costs more per GB ({per_gb})"
    meeting = max(0.0, (cluster[0] - single[0]) / (single[1] - cluster[1]))
    return f"{observed}; fitted: crossover at {megabytes_label(meeting)} ({per_gb})"


def megabytes_label(megabytes: float) -> str:
    return f"{megabytes:.0f} MB" if megabytes >= 10 else f"{megabytes:.2g} MB"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--chunk-mb", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    if not os.path.exists(args.path):
        started = time.perf_counter()
        with open(args.path, "wb", buffering=1 << 20) as out:
            write_journal(out, args.size_mb * 2**20 // EVENT_BYTES, seed=1, chain=True)
        print(f"generated in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    try:
        with local_cluster(args.workers) as client:
            run = measure(args.path, client, args.chunk_mb << 20, args.rounds)
    finally:
        if not args.keep:
            os.remove(args.path)
    parameters = f"LocalCluster({args.workers}x1), {args.chunk_mb} MiB chunks"
    megabytes = run.megabytes
    print(f"one process: {run.single_seconds:6.1f} s  {megabytes / run.single_seconds:6.1f} MB/s")
    print(
        f"{parameters}: {run.cluster_seconds:6.1f} s  {megabytes / run.cluster_seconds:6.1f} MB/s"
    )
    print(f"journal: {megabytes:.0f} MB, {run.events} events, build {pf.__build__}")
    print(
        f"shipped worker -> driver: {run.shipped_bytes / 1e6:.0f} MB,"
        f" {run.shipped_per_event:.0f} bytes per event,"
        f" {run.shipped_bytes / (megabytes * 1e6):.0%} of the input"
    )
    print(f"in this process: per-line stage {megabytes / run.per_line_seconds:6.1f} MB/s")
    print(
        f"in this process: ordered stage  {megabytes / run.ordered_seconds:6.1f} MB/s"
        " (the driver's ceiling)"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this (driver) process over both runs: {peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
