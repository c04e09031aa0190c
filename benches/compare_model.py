"""benches/compare.py's data model: the contenders' names, the workload sizes of a full and a
quick run, and one measured outcome."""

from __future__ import annotations

import dataclasses
from typing import Any

EVENT_SCHEMA_ID = "car.journal.event"
RUST = "pairling_fast rust"
FALLBACK = "pairling_fast fallback"
OPENSSL_FLOOR = "openssl dgst -sha256 FILE (floor)"
HASHLIB_FLOOR = "hashlib.sha256 of FILE (floor)"
# benches/baselines/: the two Rust programs every journal row is measured beside (issue #47).
BASELINE_FLOOR = "floor: read, split, SHA-256 of each line, 2 workers"
BASELINE_STRAIGHTFORWARD = "straightforward: simd-json, check, render, SHA-256, links, 2 workers"


@dataclasses.dataclass(frozen=True)
class Sizes:
    digest_objects: int
    event_lines: int
    journal_events: int
    map_bindings: int
    # Slices for the contenders that would take minutes on the whole workload.
    slow_digest_objects: int
    slow_event_lines: int
    slow_journal_events: int
    whole_process_events: int
    # Tiny event lines for the fallback (issue #19: 10 M of them must take minutes, not hours).
    tiny_lines: int
    # Workload 1b: the journal sizes whose peak RSS must be the same (issue #19: 100 MB, 1 GB).
    rss_journal_bytes: tuple[int, int]
    # Workload 3b: the large map for peak RSS and check-jsonschema (~150 MB in the full run).
    large_map_bindings: int
    # Workload 5: the chunks the cluster's workers check.
    cluster_chunk_bytes: int
    repeat: int


FULL = Sizes(
    digest_objects=100_000,
    event_lines=20_000,
    journal_events=1_000_000,
    map_bindings=10_000,
    slow_digest_objects=20_000,
    slow_event_lines=5_000,
    slow_journal_events=10_000,
    whole_process_events=10_000,
    tiny_lines=1_000_000,
    rss_journal_bytes=(100_000_000, 1_000_000_000),
    large_map_bindings=60_000,
    cluster_chunk_bytes=32 << 20,
    repeat=3,
)
QUICK = Sizes(
    digest_objects=2_000,
    event_lines=500,
    journal_events=2_000,
    map_bindings=200,
    slow_digest_objects=500,
    slow_event_lines=200,
    slow_journal_events=300,
    whole_process_events=200,
    tiny_lines=2_000,
    rss_journal_bytes=(200_000, 2_000_000),
    large_map_bindings=600,
    cluster_chunk_bytes=64 << 10,
    repeat=1,
)


@dataclasses.dataclass
class Outcome:
    workload: str
    contender: str
    status: str = "ok"  # "ok", "not installed (<package>)", "failed: …", "skipped: …"
    seconds: float | None = None
    cpu_seconds: float | None = None  # whole processes only
    megabytes: float = 0.0
    items: int = 0
    peak_rss_mb: float | None = None
    note: str = ""
    # What the contender computed, for the agreement checks (not printed).
    answer: Any = dataclasses.field(default=None, repr=False)
    jcs_exact: bool = True

    @property
    def ran(self) -> bool:
        return self.status == "ok"

    @property
    def megabytes_per_second(self) -> float | None:
        return self.megabytes / self.seconds if self.ran and self.seconds else None

    @property
    def items_per_second(self) -> float | None:
        return self.items / self.seconds if self.ran and self.seconds else None


def incremental_contenders(size: str) -> tuple[str, str]:
    """(the full check, the re-run) of workload 1c on a journal of ``size``."""
    return f"{RUST} check, full, {size}", f"{RUST} check --state, re-run, {size}"


def size_label(size: int) -> str:
    return f"{size / 1e9:g} GB" if size >= 1e9 else f"{size / 1e6:g} MB"


def rss_contender(size: int) -> str:
    return f"{RUST} check_journal, 2 threads, {size_label(size)} journal"


INCREMENTAL = "1c. journal re-check after a 1% append (check --state)"
WHOLE_JOURNAL = "1e. journal check, whole process, CAR-shaped and generated"


def whole_check(label: str) -> str:
    """Workload 1e's contenders on the journal called ``label``: ours, and the floor."""
    return f"{RUST} pairling-fast check, {label}"


def whole_floor(label: str) -> str:
    return f"{OPENSSL_FLOOR}, {label}"


def baseline(contender: str, label: str | None = None) -> str:
    """A baseline's row (``BASELINE_FLOOR`` or ``BASELINE_STRAIGHTFORWARD``), in workload 1e on
    the journal called ``label``."""
    return contender if label is None else f"{contender}, {label}"


TINY_TARGET_LINES = 10_000_000
TINY_TARGET_SECONDS = 600.0
CLUSTER_SINGLE = f"{RUST} one process"
CLUSTER_LOCAL = f"{RUST} LocalCluster"
CLUSTER_PER_LINE = f"{RUST} per-line stage in process"
CLUSTER_ORDERED = f"{RUST} ordered stage in process"
