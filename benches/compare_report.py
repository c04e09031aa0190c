"""benches/compare.py's report: the results table and every target met or missed, from the
outcomes of one run."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import cluster
from compare_model import (
    BASELINE_FLOOR,
    BASELINE_STRAIGHTFORWARD,
    CLUSTER_LOCAL,
    CLUSTER_ORDERED,
    CLUSTER_PER_LINE,
    CLUSTER_SINGLE,
    INCREMENTAL,
    OPENSSL_FLOOR,
    RUST,
    TINY_TARGET_LINES,
    TINY_TARGET_SECONDS,
    Outcome,
    Sizes,
    baseline,
    incremental_contenders,
    rss_contender,
    size_label,
    whole_check,
    whole_floor,
)

# --- report -------------------------------------------------------------------------------------


def reference_of(outcomes: list[Outcome]) -> Outcome | None:
    for outcome in outcomes:
        if outcome.contender.startswith(RUST) and outcome.ran:
            return outcome
    return None


def format_table(
    outcomes: list[Outcome], load_at_start: dict[str, tuple[float, float, float]]
) -> str:
    rows = [
        "| contender | MB/s | items/s | pairling_fast-rust is x faster | CPU s | peak RSS | note |"
    ]
    rows.append("|---|---:|---:|---:|---:|---:|---|")
    workload = None
    for outcome in outcomes:
        if outcome.workload != workload:
            workload = outcome.workload
            load = load_at_start.get(workload)
            at_start = f" (load at start {', '.join(f'{v:.2f}' for v in load)})" if load else ""
            rows.append(f"| **{workload}**{at_start} | | | | | | |")
            reference = reference_of([o for o in outcomes if o.workload == workload])
        if not outcome.ran:
            rows.append(f"| {outcome.contender} | — | — | — | — | — | {outcome.status} |")
            continue
        speed_up = ""
        if reference is not None and reference.items_per_second and outcome.items_per_second:
            speed_up = f"{reference.items_per_second / outcome.items_per_second:.2f}x"
        cpu = f"{outcome.cpu_seconds:.2f}" if outcome.cpu_seconds is not None else ""
        rss = f"{outcome.peak_rss_mb:.1f} MB" if outcome.peak_rss_mb is not None else "in process"
        rows.append(
            f"| {outcome.contender} | {outcome.megabytes_per_second:,.1f} |"
            f" {outcome.items_per_second:,.0f} | {speed_up} | {cpu} | {rss} | {outcome.note} |"
        )
    return "\n".join(rows)


def find(outcomes: list[Outcome], workload_prefix: str, contender: str) -> Outcome | None:
    """The outcome of ``contender`` in the workload numbered ``workload_prefix``, if it ran."""
    for outcome in outcomes:
        if (
            outcome.workload.startswith(workload_prefix)
            and outcome.contender == contender
            and outcome.ran
        ):
            return outcome
    return None


@dataclasses.dataclass
class Target:
    """One of issue #19's targets: ``measured`` against ``goal``, or (``goal`` None) a figure
    that is reported, not judged, such as the cluster's crossover."""

    text: str
    measured: float | None
    goal: float | None
    unit: str = "x"
    at_most: bool = False  # the goal is a ceiling (memory) rather than a floor (speed)
    detail: str = ""  # the figures behind ``measured``

    @property
    def verdict(self) -> str:
        if self.goal is None:
            return "measured" if self.detail else "not measured"
        if self.measured is None:
            return "not measured"
        within = self.measured <= self.goal if self.at_most else self.measured >= self.goal
        return "met" if within else "MISSED"

    def line(self) -> str:
        detail = f"; {self.detail}" if self.detail else ""
        if self.goal is None or self.measured is None:
            return f"- {self.text}: {self.verdict}{detail}"
        bound = "≤" if self.at_most else "≥"
        return (
            f"- {self.text}: {self.verdict} ({self.measured:.2f}{self.unit},"
            f" target {bound} {self.goal:g}{self.unit}){detail}"
        )


def ratio(top: float | None, bottom: float | None) -> float | None:
    return top / bottom if top and bottom else None


JOURNAL_RSS_CEILING_MB = 128.0
JOURNAL_RSS_FLAT_PERCENT = 10.0
MAP_RSS_PER_FILE_BYTE = 2.0
MAP_SPEED_UP_OVER_CHECK_JSONSCHEMA = 30.0


def targets(outcomes: list[Outcome], sizes: Sizes) -> list[Target]:
    """Issue #19's targets (and the digest targets before it), from this run's outcomes."""

    def rate(prefix: str, contender: str) -> float | None:
        outcome = find(outcomes, prefix, contender)
        return outcome.megabytes_per_second if outcome else None

    one = rate("1.", f"{RUST} check_journal, 1 thread")
    two = rate("1.", f"{RUST} check_journal, 2 threads")
    pipelines = [
        rate("1.", name)
        for name in ("orjson + jsonschema_rs + hashlib", "orjson + fastjsonschema + hashlib")
    ]
    fastest_pipeline = max((p for p in pipelines if p), default=None)
    tiny = next((o for o in outcomes if o.workload.startswith("1d.") and o.seconds), None)
    # As a ratio like the others: the time allowed over the extrapolated time.
    tiny_margin = (
        TINY_TARGET_SECONDS / (tiny.seconds * TINY_TARGET_LINES / tiny.items) if tiny else None
    )
    # The floor is hashing the same bytes.
    return [
        Target(
            "journal (2 threads) ≥ 0.5x openssl dgst -sha256",
            ratio(two, rate("1.", OPENSSL_FLOOR)),
            0.5,
        ),
        *(
            Target(
                f"journal, {label}, whole process ≥ 0.5x openssl dgst -sha256",
                ratio(rate("1e.", whole_check(label)), rate("1e.", whole_floor(label))),
                0.5,
            )
            for label in ("CAR-shaped", "generated")
        ),
        *baseline_targets(rate),
        Target("journal 1 → 2 threads ≥ 1.8x", ratio(two, one), 1.8),
        Target(
            "journal ≥ 10x the fastest per-line Python pipeline", ratio(two, fastest_pipeline), 10
        ),
        *journal_rss_targets(outcomes, sizes),
        *map_targets(outcomes),
        Target(
            "fallback: 10 M tiny lines within 600 s (600 s / extrapolated time)", tiny_margin, 1
        ),
        # Work proportional to new data: a 1 % append should cost far less than a full check.
        *incremental_targets(outcomes),
        Target("digest ≥ 20x rfc8785", ratio(rate("2.", RUST), rate("2.", "rfc8785")), 20),
        Target(
            "digest no slower than orjson sort_keys + hashlib",
            ratio(rate("2.", RUST), rate("2.", "orjson sort_keys + hashlib")),
            1,
        ),
        cluster_target(outcomes),
    ]


FLOOR_MULTIPLE = 2.0


def baseline_targets(rate: Callable[[str, str], float | None]) -> list[Target]:
    """Issue #47: the whole-process check within ``FLOOR_MULTIPLE`` of the floor's time
    (benches/baselines) and faster than the straightforward design, on each journal of 1e."""
    found = []
    for label in ("CAR-shaped", "generated"):
        ours = rate("1e.", whole_check(label))
        floor = rate("1e.", baseline(BASELINE_FLOOR, label))
        straightforward = rate("1e.", baseline(BASELINE_STRAIGHTFORWARD, label))
        found += [
            Target(
                f"journal, {label}, whole process ≤ {FLOOR_MULTIPLE:g}x the floor's time",
                ratio(floor, ours),
                FLOOR_MULTIPLE,
                at_most=True,
            ),
            Target(
                f"journal, {label}, whole process faster than the straightforward design",
                ratio(ours, straightforward),
                1,
            ),
        ]
    return found


def incremental_targets(outcomes: list[Outcome]) -> list[Target]:
    """Work proportional to new data: after a 1 % append, ``--state`` against a full check, at
    each size workload 1c ran (wall time judged; CPU in the detail)."""
    text = "journal re-check after a 1% append (--state) ≥ 10x the full check"
    full_prefix = incremental_contenders("")[0]
    sizes = [
        o.contender.removeprefix(full_prefix)
        for o in outcomes
        if o.workload == INCREMENTAL and o.contender.startswith(full_prefix)
    ]
    found = []
    for size in sizes:
        full_check, re_run = (find(outcomes, "1c.", c) for c in incremental_contenders(size))
        if full_check is None or re_run is None:
            continue
        cpu = ratio(full_check.cpu_seconds, re_run.cpu_seconds)
        found.append(
            Target(
                f"{text}, {size}",
                ratio(re_run.megabytes_per_second, full_check.megabytes_per_second),
                10,
                detail=f"CPU {cpu:.1f}x" if cpu else "",
            )
        )
    return found or [Target(text, None, 10)]


def journal_rss_targets(outcomes: list[Outcome], sizes: Sizes) -> list[Target]:
    """Peak RSS of the 2-thread check: a ceiling at the larger journal, and flat between the
    two sizes (the change in percent, either way)."""
    small, large = sizes.rss_journal_bytes
    small_run, large_run = (find(outcomes, "1b.", rss_contender(size)) for size in (small, large))
    small_rss = small_run.peak_rss_mb if small_run else None
    large_rss = large_run.peak_rss_mb if large_run else None
    change = ratio(large_rss, small_rss)
    ceiling = Target(
        f"journal peak RSS at {size_label(large)} ≤ {JOURNAL_RSS_CEILING_MB:g} MB",
        large_rss,
        JOURNAL_RSS_CEILING_MB,
        unit=" MB",
        at_most=True,
    )
    flat = Target(
        f"journal peak RSS flat (±{JOURNAL_RSS_FLAT_PERCENT:g} %)"
        f" from {size_label(small)} to {size_label(large)}",
        None if change is None else abs(change - 1) * 100,
        JOURNAL_RSS_FLAT_PERCENT,
        unit=" %",
        at_most=True,
    )
    if change is not None:
        flat.detail = f"{small_rss:.1f} → {large_rss:.1f} MB ({(change - 1) * 100:+.1f} %)"
    return [ceiling, flat]


def map_targets(outcomes: list[Outcome]) -> list[Target]:
    """Whole processes on the same maps: peak RSS against the large map's size, and the speed-up
    over check-jsonschema in CPU and in wall time on both maps."""
    checks = {
        label: (
            find(outcomes, "3b.", f"{RUST} pairling-fast check MAP, {label}"),
            find(outcomes, "3b.", f"check-jsonschema --schemafile, {label}"),
        )
        for label in ("medium map", "large map")
    }
    ours, _ = checks["large map"]
    rss = Target(
        f"map peak RSS ≤ {MAP_RSS_PER_FILE_BYTE:g}x the file (large map, whole process)",
        ratio(ours.peak_rss_mb, ours.megabytes) if ours else None,
        MAP_RSS_PER_FILE_BYTE,
        at_most=True,
    )
    if ours and ours.peak_rss_mb is not None:
        rss.detail = f"{ours.peak_rss_mb:.1f} MB for {ours.megabytes:.1f} MB"
    speed = []
    for label, (ours, theirs) in checks.items():
        for measure in ("cpu_seconds", "seconds"):
            mine = getattr(ours, measure) if ours else None
            peer = getattr(theirs, measure) if theirs else None
            target = Target(
                f"map ≥ {MAP_SPEED_UP_OVER_CHECK_JSONSCHEMA:g}x check-jsonschema"
                f" ({'CPU' if measure == 'cpu_seconds' else 'wall'}, {label})",
                ratio(peer, mine),
                MAP_SPEED_UP_OVER_CHECK_JSONSCHEMA,
            )
            if ours and mine and peer:
                target.detail = f"{peer:.2f} s / {mine:.2f} s on {ours.megabytes:.1f} MB"
            speed.append(target)
    return [rss, *speed]


def cluster_target(outcomes: list[Outcome]) -> Target:
    """Where a 2-worker LocalCluster overtakes one process (a measurement, not a goal), with the
    bytes shipped per event and the driver's ceiling on the largest journal."""
    rows = [o for o in outcomes if o.workload.startswith("5.") and o.ran]

    def seconds_by_size(contender: str) -> dict[float, float]:
        return {o.megabytes: o.seconds for o in rows if o.contender.startswith(contender + ",")}

    single, on_cluster = seconds_by_size(CLUSTER_SINGLE), seconds_by_size(CLUSTER_LOCAL)
    points = [(mb, single[mb], on_cluster[mb]) for mb in single if mb in on_cluster]
    target = Target("Dask: where LocalCluster(2x1) overtakes one process", None, None)
    if points:
        largest = max(mb for mb, _, _ in points)
        facts = {o.contender.split(",")[0]: o for o in rows if o.megabytes == largest}
        ordered, shipped = facts.get(CLUSTER_ORDERED), facts.get(CLUSTER_LOCAL)
        per_line = facts.get(CLUSTER_PER_LINE)
        target.detail = cluster.crossover(points)
        if ordered and shipped and per_line:
            ceiling, worker = ordered.megabytes_per_second, per_line.megabytes_per_second
            # docs/cluster.md: N machines scale until the driver's ordered stage is saturated.
            target.detail += (
                f"; at {cluster.megabytes_label(largest)}: {shipped.note},"
                f" ordered stage (the driver's ceiling) {ceiling:.0f} MB/s,"
                f" per-line stage {worker:.0f} MB/s a worker:"
                f" one driver keeps up with ~{ceiling / worker:.0f} such workers"
            )
    return target


def disagreements(outcomes: list[Outcome]) -> list[str]:
    """Where contenders that must agree did not; notes (not failures) for the non-JCS ones."""
    problems = []
    by_workload: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_workload.setdefault(outcome.workload, []).append(outcome)
    for workload, group in by_workload.items():
        ran = [o for o in group if o.ran and o.answer is not None]
        reference = reference_of(ran)
        if reference is None:
            continue
        for outcome in ran:
            # The floor hashes the file: nothing to agree on.
            if (
                outcome is reference
                or "thread" in outcome.contender
                or "floor" in outcome.contender
            ):
                continue
            mine, theirs = reference.answer, outcome.answer
            if isinstance(theirs, list):
                mine = mine[: len(theirs)]
                differing = sum(a != b for a, b in zip(mine, theirs, strict=False))
                if not outcome.jcs_exact:
                    outcome.note += f"{differing} of {len(theirs)} digests differ"
                elif differing:
                    problems.append(f"{workload}: {outcome.contender}: {differing} answers differ")
            elif workload.startswith("1.") and isinstance(theirs, tuple):
                if theirs[1:] != (theirs[0], theirs[0]):
                    problems.append(f"{workload}: {outcome.contender}: {theirs} is not all valid")
            elif mine != theirs:
                problems.append(f"{workload}: {outcome.contender}: {theirs!r} != {mine!r}")
        for outcome in group:
            if "thread" in outcome.contender and outcome.ran:
                chain = outcome.answer.get("chain") or {}
                if chain.get("verified") != outcome.items:
                    problems.append(f"{workload}: {outcome.contender}: chain {chain}")
    return problems
