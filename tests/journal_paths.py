"""Every way to check a journal, each giving its whole report as data (docs/journals.md,
"Differentials"): the Rust core with its per-line fast path on and off
(``PAIRLING_FAST_JOURNAL_FAST_PATH=0``), the pure-Python fallback, ``JournalStream`` fed in pieces
cut at random points (inside UTF-8 characters too), a ``--state`` resume after an append at a
random byte, and chunks of random sizes reduced as the Dask tasks reduce them
(``check_journal_chunk`` and the ``JournalChecker`` that ``journal.cluster._reduce`` feeds). The
reports are compared whole; a difference is a bug in one path, or a documented reason."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast.distributed import chunk_ranges
from pairling_fast.journal.options import JournalOptions
from pairling_fast.journal.state_file import JournalStates
from pairling_fast.report import Finding, Report

FAST_PATH = "PAIRLING_FAST_JOURNAL_FAST_PATH"
WHOLE = ("rust-fast", "rust-full", "python")
SPLIT = ("stream", "state", "chunks")


@contextmanager
def fast_path(on: bool) -> Iterator[None]:
    """The Rust core's fast path on or off (it reads the variable at every check)."""
    before = os.environ.get(FAST_PATH)
    if on:
        os.environ.pop(FAST_PATH, None)
    else:
        os.environ[FAST_PATH] = "0"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(FAST_PATH, None)
        else:
            os.environ[FAST_PATH] = before


def _data(report: Report, path: Path) -> dict[str, Any]:
    """The report as data, the same for every path: findings name ``path``; a resume's own
    ``stats["resumed"]`` (where it went on from) is left out."""
    data = report.to_dict()
    data["stats"].pop("resumed", None)
    for finding in data["findings"]:
        finding["path"] = str(path)
    return data


def whole(path: Path, backend: str, options: dict[str, Any], fast: bool = True) -> dict[str, Any]:
    """``check_journal`` of the file on ``backend`` (Rust: fast path ``fast``)."""
    with _backend.selected(backend), fast_path(fast):
        return _data(pf.check_journal(path, **options), path)


def streamed(
    path: Path, backend: str, options: dict[str, Any], rng: random.Random
) -> dict[str, Any]:
    """``JournalStream`` fed the file's bytes in pieces cut at random offsets (any byte: inside
    a line, a CRLF or a UTF-8 character)."""
    data = path.read_bytes()
    stream = pf.JournalStream(name=str(path), backend=backend, **options)
    inside = range(1, len(data))
    cuts = sorted(rng.sample(inside, min(len(inside), rng.randint(0, 6))))
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        stream.feed(data[start:end])
    return _data(stream.close(), path)


def resumed(
    path: Path, backend: str, options: dict[str, Any], rng: random.Random, scratch: Path
) -> dict[str, Any]:
    """``check --state``: the file's first bytes (cut at a random byte) checked with a state,
    then the rest appended and checked again, resumed from the recorded prefix."""
    data = path.read_bytes()
    grown = scratch / path.name
    grown.write_bytes(data[: rng.randint(0, len(data))])
    states = JournalStates()
    with _backend.selected(backend):
        pf.check_journal(grown, state=states, **options)
        with grown.open("ab") as appended:
            appended.write(data[grown.stat().st_size :])
        return _data(pf.check_journal(grown, state=states, **options), path)


def chunked(
    path: Path, backend: str, options: dict[str, Any], rng: random.Random
) -> dict[str, Any]:
    """The journal as a cluster checks it: chunks of a random size, each through
    ``check_journal_chunk`` (the chunk task), reduced in file order by a ``JournalChecker`` (the
    journal's task), as ``pairling_fast.distributed`` runs them."""
    size = path.stat().st_size
    # Up to a dozen chunks: every boundary falls somewhere over many cases, and a 1-byte chunk
    # still comes up for small journals.
    chunk_bytes = max(1, -(-size // rng.randint(1, 12)), rng.choice([1, 2, 7, 64, 333, 4096]))
    journal_options = JournalOptions(**options)
    engine = _backend.engine(backend)
    checker = engine.JournalChecker(journal_options)
    for start, end in chunk_ranges(size, chunk_bytes):
        checker.feed(engine.check_journal_chunk(str(path), start, end, journal_options))
    raw, stats = checker.finish(False)
    return _data(Report(findings=[Finding.from_raw(r, str(path)) for r in raw], stats=stats), path)


def every_report(
    path: Path,
    options: dict[str, Any],
    rng: random.Random,
    scratch: Path,
    split_backends: tuple[str, ...] = _backend.BACKENDS,
) -> dict[str, dict[str, Any]]:
    """Each path's report of the file: the three whole checks, and the three split ones on each
    of ``split_backends`` (the Rust ones with the fast path on or off at random)."""
    reports = {
        "rust-fast": whole(path, "rust", options, True),
        "rust-full": whole(path, "rust", options, False),
        "python": whole(path, "python", options),
    }
    for backend in split_backends:
        with fast_path(rng.random() < 0.5):
            reports[f"stream/{backend}"] = streamed(path, backend, options, rng)
            reports[f"state/{backend}"] = resumed(path, backend, options, rng, scratch)
            reports[f"chunks/{backend}"] = chunked(path, backend, options, rng)
    return reports


def disagreements(reports: dict[str, dict[str, Any]]) -> list[str]:
    """The paths whose report is not the Rust full path's (the reference), each with its first
    difference."""
    reference = reports["rust-full"]
    differing = []
    for name, report in reports.items():
        if report != reference:
            differing.append(f"{name}: {first_difference(reference, report)}")
    return differing


def first_difference(expected: Any, got: Any, where: str = "") -> str:
    """Where two reports first differ, and how, in a line."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in [*expected, *(k for k in got if k not in expected)]:
            if expected.get(key, "<absent>") != got.get(key, "<absent>"):
                return first_difference(
                    expected.get(key, "<absent>"), got.get(key, "<absent>"), f"{where}/{key}"
                )
    if isinstance(expected, list) and isinstance(got, list):
        for index, (a, b) in enumerate(zip(expected, got, strict=False)):
            if a != b:
                return first_difference(a, b, f"{where}/{index}")
        if len(expected) != len(got):
            return f"{where}: {len(expected)} items, not {len(got)}"
    return f"{where}: expected {expected!r:.300}, got {got!r:.300}"
