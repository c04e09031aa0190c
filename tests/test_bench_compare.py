"""benches/compare.py's own logic: the journal heads its workloads check, the target verdicts and
the cluster's crossover (benches/cluster.py). The benchmark itself runs as ``compare.py --quick``
in CI; these hold the parts whose mistakes would print a wrong verdict without failing it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast.generate.journal import write_journal

# compare.py is a script beside cluster.py, which it imports: both load from benches/.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benches"))

import cluster
import compare
import compare_model
import compare_report


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("journals") / "generated.jsonl"
    with path.open("wb") as out, _backend.selected("rust"):
        write_journal(out, 3000, seed=1, chain=True)
    return path


def _cli_check(*paths: Path) -> compare.ProcessRun:
    """A real ``check --format json`` process, as workload 1e times it."""
    argv = [sys.executable, "-m", "pairling_fast", "check", *map(str, paths), "--format", "json"]
    return compare.run_process(argv)


def test_a_whole_check_row_is_timed_only_when_the_check_passed(
    generated: Path, tmp_path: Path
) -> None:
    compare.errorless(_cli_check(generated))
    # A broken chain link or a second file: neither check is the one 1e means to time.
    broken = tmp_path / "broken.jsonl"
    lines = generated.read_bytes().splitlines(keepends=True)
    broken.write_bytes(b"".join([*lines[:10], lines[11], *lines[12:]]))
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(generated.read_bytes())
    for run in (_cli_check(broken), _cli_check(generated, copy)):
        with pytest.raises(RuntimeError, match="the check did not pass"):
            compare.errorless(run)


@pytest.mark.parametrize("limit", [{"max_lines": 1000}, {"max_bytes": 200_000}, {}])
def test_a_head_of_whole_runs_is_a_clean_journal(
    backend: _backend.Engine, generated: Path, tmp_path: Path, limit: dict[str, int]
) -> None:
    head = tmp_path / "head.jsonl"
    lines = compare.whole_runs_head(generated, head, **limit)
    data = head.read_bytes()
    assert data.count(b"\n") == lines
    assert generated.read_bytes().startswith(data)
    assert lines <= limit.get("max_lines", lines) and len(data) <= limit.get("max_bytes", len(data))
    report = pf.check_journal(head)
    # No run left open, every link verified: what the agreement checks expect of a journal.
    assert report.findings == []
    assert report.stats["events"] == lines == report.stats["chain"]["verified"]


def test_a_head_with_no_completed_run_is_refused(generated: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no completed run"):
        compare.whole_runs_head(generated, tmp_path / "head.jsonl", max_lines=2)


def test_the_head_of_a_whole_journal_is_all_of_it(generated: Path, tmp_path: Path) -> None:
    head = tmp_path / "head.jsonl"
    compare.whole_runs_head(generated, head)
    assert head.read_bytes() == generated.read_bytes()


@pytest.mark.parametrize(
    ("measured", "goal", "at_most", "verdict"),
    [
        (0.6, 0.5, False, "met"),
        (0.5, 0.5, False, "met"),
        (0.4, 0.5, False, "MISSED"),
        (93.5, 128.0, True, "met"),
        (129.0, 128.0, True, "MISSED"),
        (None, 128.0, True, "not measured"),
    ],
)
def test_a_target_is_met_on_the_right_side_of_its_goal(
    measured: float | None, goal: float, at_most: bool, verdict: str
) -> None:
    target = compare_report.Target("t", measured, goal, at_most=at_most)
    assert target.verdict == verdict
    assert target.line().startswith(f"- t: {verdict}")


def test_a_measurement_has_no_verdict() -> None:
    assert compare_report.Target("crossover", None, None).verdict == "not measured"
    measured = compare_report.Target("crossover", None, None, detail="none up to 323 MB")
    assert measured.verdict == "measured"
    assert measured.line() == "- crossover: measured; none up to 323 MB"


def rss_outcome(size: int, peak_rss_mb: float) -> compare_model.Outcome:
    outcome = compare_model.Outcome(
        "1b. peak RSS vs journal size", compare_model.rss_contender(size), seconds=1.0
    )
    outcome.peak_rss_mb = peak_rss_mb
    return outcome


@pytest.mark.parametrize(
    ("small", "large", "flat"),
    [(66.5, 93.5, "MISSED"), (90.0, 80.0, "MISSED"), (90.0, 95.0, "met"), (95.0, 90.0, "met")],
)
def test_journal_memory_is_flat_within_ten_percent_either_way(
    small: float, large: float, flat: str
) -> None:
    sizes = compare_model.FULL
    outcomes = [
        rss_outcome(sizes.rss_journal_bytes[0], small),
        rss_outcome(sizes.rss_journal_bytes[1], large),
    ]
    ceiling, flatness = compare_report.journal_rss_targets(outcomes, sizes)
    assert ceiling.text == "journal peak RSS at 1 GB ≤ 128 MB"
    assert (ceiling.measured, ceiling.verdict) == (large, "met")
    assert flatness.measured == pytest.approx(abs(large / small - 1) * 100)
    assert flatness.verdict == flat


def test_map_targets_compare_whole_processes_on_the_same_map() -> None:
    def run(contender: str, megabytes: float, seconds: float, cpu: float, rss: float) -> Any:
        outcome = compare_model.Outcome("3b. map", contender, seconds=seconds, megabytes=megabytes)
        outcome.cpu_seconds, outcome.peak_rss_mb = cpu, rss
        return outcome

    ours = f"{compare_model.RUST} pairling-fast check MAP"
    outcomes = [
        run(f"{ours}, medium map", 24.5, 1.0, 0.8, 250.0),
        run("check-jsonschema --schemafile, medium map", 24.5, 40.0, 20.0, 170.0),
        run(f"{ours}, large map", 147.0, 4.0, 3.0, 280.0),
    ]
    rss, *speed = compare_report.map_targets(outcomes)
    assert rss.measured == pytest.approx(280.0 / 147.0)
    assert rss.verdict == "met"
    by_text = {target.text.split("(")[1]: target for target in speed}
    assert by_text["CPU, medium map)"].measured == pytest.approx(25.0)
    assert by_text["wall, medium map)"].measured == pytest.approx(40.0)
    assert by_text["wall, medium map)"].verdict == "met"
    assert by_text["CPU, large map)"].verdict == "not measured"  # check-jsonschema did not run


def test_linear_fit_goes_through_two_points_and_needs_them() -> None:
    assert cluster.linear_fit([(100.0, 3.0), (300.0, 7.0)]) == pytest.approx((1.0, 0.02))
    assert cluster.linear_fit([(100.0, 3.0), (100.0, 4.0)]) is None


def test_crossover_is_where_the_fitted_lines_meet() -> None:
    # One process: 0.5 s + 40 s/GB; the cluster: 2.5 s + 30 s/GB: they meet at 200 MB.
    points = [(mb, 0.5 + 0.04 * mb, 2.5 + 0.03 * mb) for mb in (100.0, 300.0)]
    text = cluster.crossover(points)
    assert text.startswith("cluster faster from 300 MB on;")
    assert "fitted: crossover at 200 MB (40.0 s/GB one process, 30.0 s/GB cluster)" in text


def test_no_crossover_when_the_cluster_costs_more_per_gigabyte() -> None:
    points = [(mb, 0.5 + 0.036 * mb, 1.0 + 0.048 * mb) for mb in (52.0, 210.0)]
    text = cluster.crossover(points)
    assert text.startswith("none up to 210 MB (cluster/one process 1.37x there)")
    assert "fitted: none, the cluster costs more per GB" in text
    assert cluster.crossover([]) == "not measured"
    assert cluster.crossover(points[:1]).startswith("none up to 52 MB")


def test_the_cluster_target_pairs_the_runs_of_each_size() -> None:
    def row(contender: str, megabytes: float, seconds: float, note: str = "") -> Any:
        name = f"{contender}, {megabytes:.0f} MB"
        return compare_model.Outcome(
            "5. Dask", name, seconds=seconds, megabytes=megabytes, note=note
        )

    outcomes = []
    for megabytes in (100.0, 300.0):
        outcomes += [
            row(compare_model.CLUSTER_SINGLE, megabytes, 0.5 + 0.04 * megabytes),
            row(
                compare_model.CLUSTER_LOCAL, megabytes, 2.5 + 0.03 * megabytes, "ships 187 B/event"
            ),
            row(compare_model.CLUSTER_PER_LINE, megabytes, megabytes / 25),
            row(compare_model.CLUSTER_ORDERED, megabytes, megabytes / 125),
        ]
    target = compare_report.cluster_target(outcomes)
    assert target.verdict == "measured"
    assert "fitted: crossover at 200 MB" in target.detail
    assert "at 300 MB: ships 187 B/event, ordered stage (the driver's ceiling) 125 MB/s" in (
        target.detail
    )
    assert target.detail.endswith("one driver keeps up with ~5 such workers")
    assert compare_report.cluster_target([]).verdict == "not measured"


def test_the_state_target_pairs_the_full_check_and_the_re_run_of_each_size() -> None:
    def run(contender: str, seconds: float, cpu: float) -> Any:
        outcome = compare_model.Outcome(
            compare_model.INCREMENTAL, contender, seconds=seconds, megabytes=100.0
        )
        outcome.cpu_seconds = cpu
        return outcome

    outcomes = []
    for size, full, re_run in (("323 MB", 4.0, 1.0), ("1 GB", 12.0, 1.0)):
        full_check, re_check = compare_model.incremental_contenders(size)
        outcomes += [run(full_check, full, full * 0.9), run(re_check, re_run, re_run * 0.5)]
    small, large = compare_report.incremental_targets(outcomes)
    assert small.text.endswith(", 323 MB") and large.text.endswith(", 1 GB")
    assert (small.measured, small.verdict) == (pytest.approx(4.0), "MISSED")
    assert (large.measured, large.verdict) == (pytest.approx(12.0), "met")
    assert large.detail == "CPU 21.6x"
    # A size whose re-run failed is not judged; with no size at all, the target says so.
    assert len(compare_report.incremental_targets(outcomes[:3])) == 1
    (missing,) = compare_report.incremental_targets([])
    assert missing.verdict == "not measured"
