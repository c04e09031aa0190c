"""CAR 0.60.0's own journal code as an oracle (``interop/car-oracle-0.60``: the car-oracle program
built on car-eventlog =0.60.0), beside 0.58.0's (tests/test_journal_car_oracle.py): journals we
write for the default release load in 0.60.0's ``EventLog``, and journals 0.60.0 writes verify
with us, on both backends, with no finding (payload contracts included)."""

from __future__ import annotations

import json
from pathlib import Path

import car_oracle
import pytest

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast.generate.journal import generate_journal
from pairling_fast.journal import event_kinds

RELEASE = "0.60.0"  # interop/car-oracle-0.60/Cargo.toml: car-eventlog =0.60.0


@pytest.fixture(scope="module")
def car_journals(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return car_oracle.write(tmp_path_factory.mktemp("car-0.60-written"), release=RELEASE)


def test_car_writes_every_kind_of_the_default_release(car_journals: list[Path]) -> None:
    plain = next(p for p in car_journals if p.name == "plain.jsonl")
    kinds = {json.loads(line)["kind"] for line in plain.read_bytes().splitlines()}
    assert kinds == set(event_kinds(RELEASE)) == set(event_kinds())


def test_every_journal_car_060_writes_verifies_clean(
    backend: _backend.Engine, car_journals: list[Path]
) -> None:
    verdicts = car_oracle.load(car_journals, release=RELEASE)
    assert len(car_journals) >= 6
    for path, verdict in zip(car_journals, verdicts, strict=True):
        assert verdict["ok"], verdict
        for profile in ("strict", "car-compatible"):
            report = pf.check_journal(path, lifecycle=False, profile=profile, max_findings=None)
            assert report.findings == [], (path.name, profile, report.findings[:3])
            assert report.stats["chain"] == verdict["chain"], path.name
            assert report.stats["events"] == verdict["events"], path.name


def test_every_journal_we_write_by_default_loads_in_car_060(
    backend: _backend.Engine, tmp_path: Path
) -> None:
    paths = []
    for seed in (1, 2):
        lines, _ = generate_journal(400, seed, chain=True)  # the default release: 0.60.0's kinds
        path = tmp_path / f"generated-{seed}.jsonl"
        path.write_bytes(b"".join(lines))
        paths.append(path)
    plain_lines, _ = generate_journal(200, 3, chain=False)
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(b"".join(plain_lines))
    chained = tmp_path / "chain-journal.jsonl"
    pf.chain_journal(plain, chained)
    paths.append(chained)
    for path, verdict in zip(paths, car_oracle.load(paths, release=RELEASE), strict=True):
        assert verdict["ok"], verdict
        report = pf.check_journal(path, max_findings=None)
        assert report.stats["chain"] == verdict["chain"], path.name
        assert verdict["chain"]["verified"] == verdict["events"], path.name
