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
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

from distributed import Client, LocalCluster

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast import distributed as pfd
from pairling_fast.generate.journal import write_journal
from pairling_fast.journal import JournalOptions

EVENT_BYTES = 323  # on average, in generated chained journals


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
    size = os.path.getsize(args.path)
    megabytes = size / 1e6
    parameters = f"LocalCluster({args.workers}x1), {args.chunk_mb} MiB chunks"
    try:
        with (
            LocalCluster(
                n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            for _ in range(args.rounds):  # alternating, so load from elsewhere hits both
                started = time.perf_counter()
                single = pf.check_journal(args.path)
                seconds = time.perf_counter() - started
                print(f"one process: {seconds:6.1f} s  {megabytes / seconds:6.1f} MB/s")
                started = time.perf_counter()
                report = pfd.check_journal_on_cluster(
                    args.path, client, chunk_bytes=args.chunk_mb << 20
                )
                seconds = time.perf_counter() - started
                print(f"{parameters}: {seconds:6.1f} s  {megabytes / seconds:6.1f} MB/s")
                assert report.to_dict() == single.to_dict(), "reports differ"
        shipped, per_line, ordered = split_stages(args.path, args.chunk_mb << 20)
    finally:
        if not args.keep:
            os.remove(args.path)
    print(f"journal: {megabytes:.0f} MB, {single.stats['events']} events, build {pf.__build__}")
    events = single.stats["events"]
    print(
        f"shipped worker -> driver: {shipped / 1e6:.0f} MB, {shipped / max(events, 1):.0f} bytes"
        f" per event, {shipped / size:.0%} of the input"
    )
    print(f"in this process: per-line stage {megabytes / per_line:6.1f} MB/s")
    print(f"in this process: ordered stage  {megabytes / ordered:6.1f} MB/s (the driver's ceiling)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this (driver) process over both runs: {peak:.0f} MiB")
    return 0


def split_stages(path: str, chunk_bytes: int) -> tuple[int, float, float]:
    """(bytes the per-line stage encodes for the driver, its seconds, the ordered stage's seconds)
    over ``path`` in ``chunk_bytes`` chunks, both stages run here on the active backend, as
    ``check_journal_on_cluster`` runs them on workers and on the driver."""
    options = JournalOptions()
    engine = _backend.active()
    checker = engine.JournalChecker(*options.engine_args(), car_version=options.car_version)
    shipped, per_line, ordered = 0, 0.0, 0.0
    for start, end in pfd.chunk_ranges(os.path.getsize(path), chunk_bytes):
        started = time.perf_counter()
        encoded = engine.check_journal_chunk(
            path,
            start,
            end,
            options.chain,
            options.profile,
            options.max_line_length,
            car_version=options.car_version,
        )
        per_line += time.perf_counter() - started
        shipped += len(encoded)
        started = time.perf_counter()
        checker.feed(encoded)
        ordered += time.perf_counter() - started
    started = time.perf_counter()
    checker.finish(False)
    ordered += time.perf_counter() - started
    return shipped, per_line, ordered


if __name__ == "__main__":
    sys.exit(main())
