"""Adversarial journals and maps (issue 8) on both backends: cut-off and empty journals, and maps
whose capabilities refer to each other in a cycle, give located findings (or none) in bounded
time, identically."""

from __future__ import annotations

import copy
import io
import json
import time
from typing import Any

import pytest

from pairling_fast import _backend, check_journal, check_map
from pairling_fast.generate.journal import car_data
from pairling_fast.generate.map import generate_map
from pairling_fast.report import Report

EVENT = {
    "kind": "proposal_received",
    "data": car_data("proposal_received"),
    "timestamp": "2026-12-02T14:21:11Z",
}
LINE = json.dumps(EVENT).encode() + b"\n"


def located(report: Report) -> list[tuple[Any, ...]]:
    return [(f.code, f.severity, f.line, f.pointer) for f in report.findings]


def journal(data: bytes) -> Report:
    return check_journal(io.BytesIO(data), lifecycle=False)


def test_journal_truncated_mid_line(backend: _backend.Engine) -> None:
    report = journal(LINE * 2 + LINE[: len(LINE) // 2])
    assert [(f.code, f.line) for f in report.findings] == [("PF302", 3)]
    assert (report.stats["events"], report.stats["invalid_lines"]) == (2, 1)


@pytest.mark.parametrize("data", [b"", b"\n", b"\n\n\n", b" \t\r\n\r\n  "], ids=repr)
def test_journal_of_only_blank_lines_has_nothing_to_report(
    backend: _backend.Engine, data: bytes
) -> None:
    report = journal(data)
    assert report.findings == []
    assert report.stats["events"] == 0
    assert report.stats["lines"] == report.stats["blank_lines"]


def test_journal_cut_inside_a_multibyte_character(backend: _backend.Engine) -> None:
    cut = LINE + '{"kind": "caf\u00e9'.encode()[:-1]
    assert [(f.code, f.line) for f in journal(cut).findings] == [("PF302", 2)]


def cyclic_map(length: int) -> dict[str, Any]:
    document = generate_map(40, seed=1)  # ten capabilities
    capabilities = document["capabilities"][:length]
    assert len(capabilities) == length
    for index, capability in enumerate(capabilities):
        successor = capabilities[(index + 1) % length]
        capability["shared_semantics"] = successor["capability_id"]
    return document


@pytest.mark.parametrize("length", [1, 2, 7])
def test_map_with_a_shared_semantics_cycle(length: int) -> None:
    document = cyclic_map(length)
    reports = []
    for name in _backend.BACKENDS:
        with _backend.selected(name):
            started = time.monotonic()
            reports.append(check_map(copy.deepcopy(document)))
            assert time.monotonic() - started < 30
    assert located(reports[0]) == located(reports[1])
    assert not [f for f in reports[0].findings if f.code == "PF211"]
