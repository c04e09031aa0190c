"""Throughput of a 2-worker Dask LocalCluster vs one process, on one generated journal, same run.

    maturin develop --release
    python benches/cluster.py /tmp/journal-1g.jsonl --size-mb 1024 [--chunk-mb 32] [--keep]

Generates the journal (chained) if it does not exist, checks it with ``check_journal`` and then
with ``pairling_fast.distributed.check_journal`` on ``LocalCluster(n_workers=2,
threads_per_worker=1)``, asserts the reports are identical and prints both rates. Deletes the
journal afterwards unless ``--keep``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import pairling_fast as pf
from distributed import Client, LocalCluster
from pairling_fast import distributed as pfd
from pairling_fast.generate.journal import write_journal

EVENT_BYTES = 330  # about, in generated chained journals


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--chunk-mb", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    if not os.path.exists(args.path):
        started = time.perf_counter()
        with open(args.path, "wb", buffering=1 << 20) as out:
            write_journal(out, args.size_mb * 2**20 // EVENT_BYTES, seed=1, chain=True)
        print(f"generated in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    size = os.path.getsize(args.path)
    try:
        started = time.perf_counter()
        single = pf.check_journal(args.path)
        single_seconds = time.perf_counter() - started
        with LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster, Client(cluster) as client:
            started = time.perf_counter()
            report = pfd.check_journal(args.path, client, chunk_bytes=args.chunk_mb << 20)
            cluster_seconds = time.perf_counter() - started
        assert report.to_dict() == single.to_dict(), "reports differ"
    finally:
        if not args.keep:
            os.remove(args.path)
    megabytes = size / 1e6
    print(f"journal: {megabytes:.0f} MB, {single.stats['events']} events, build {pf.__build__}")
    print(f"one process:  {single_seconds:6.1f} s  {megabytes / single_seconds:6.1f} MB/s")
    print(
        f"LocalCluster({args.workers}x1), {args.chunk_mb} MiB chunks: "
        f"{cluster_seconds:6.1f} s  {megabytes / cluster_seconds:6.1f} MB/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
