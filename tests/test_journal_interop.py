"""Interop with CAR's own event parser (``car-runtime``, the optional ``interop`` test extra).

``car_runtime.harness_metrics(jsonl)["parse_errors"]`` counts the lines CAR cannot read as an
event. Our ``car-compatible`` profile must agree with it line by line: a line it rejects (an
error finding) is one CAR rejects, a line it accepts (at most PF304 warnings) is one CAR reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pairling_fast as pf
from pairling_fast import _backend, schemas
from pairling_fast.generate.journal import DEFECTS, generate_journal
from pairling_fast.journal import event_kinds

car_runtime = pytest.importorskip("car_runtime")

# The installed car-runtime is a CAR release; journals are checked against the newest bundled
# wire schema, whose EventKind may name kinds that release does not know yet (0.60.0 adds three
# to 0.58.0's). Only events of kinds both know are compared.
_RUNTIME_BUNDLE = json.loads(Path(schemas.bundle_path(car_runtime.__version__)).read_bytes())
_RUNTIME_KINDS = {
    kind
    for branch in _RUNTIME_BUNDLE["schemas"]["journal.event"]["definitions"]["EventKind"]["oneOf"]
    for kind in branch.get("enum", [])
}


def known_to_runtime(line: bytes) -> bool:
    """False for a well-formed event of a kind newer than the installed car-runtime."""
    try:
        kind = json.loads(line).get("kind")
    except (ValueError, AttributeError):
        return True
    return not isinstance(kind, str) or kind in _RUNTIME_KINDS or kind not in event_kinds()


# Codes about a line on its own (not about its place in the journal).
LINE_CODES = {"PF001", "PF002", "PF003", "PF004", "PF005", "PF006", "PF008", "PF101", "PF301"}
EVENT = '{"kind":"state_changed","data":{},"timestamp":"2026-01-01T00:00:00Z"'


def car_rejects(line: bytes) -> bool:
    text = line.decode("utf-8").rstrip("\n") + "\n"
    metrics = json.loads(car_runtime.harness_metrics(text))
    return bool(metrics["parse_errors"])


def we_reject(line: bytes) -> bool:
    report = pf.check_journal(
        [line.rstrip(b"\n") + b"\n"], lifecycle=False, chain="off", profile="car-compatible"
    )
    return any(f.code in LINE_CODES and f.severity == "error" for f in report.findings)


def _is_utf8(line: bytes) -> bool:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("chain", [False, True])
def test_car_parses_every_generated_event(chain: bool) -> None:
    lines, _ = generate_journal(500, 21, chain=chain)
    lines = [line for line in lines if known_to_runtime(line)]
    metrics = json.loads(car_runtime.harness_metrics(b"".join(lines).decode("utf-8")))
    assert metrics["parse_errors"] == 0
    assert metrics["replayability"]["total_events"] == len(lines)


@pytest.mark.parametrize(
    "line",
    [
        EVENT + "}",
        EVENT + ',"unknown_member":1}',
        '{"kind":"state_changed","data":{}}',
        '{"kind":"state_changed","timestamp":"2026-01-01T00:00:00Z"}',
        '{"data":{},"timestamp":"2026-01-01T00:00:00Z"}',
        '{"kind":"no_such_kind","data":{},"timestamp":"2026-01-01T00:00:00Z"}',
        '{"kind":"state_changed","data":"text","timestamp":"2026-01-01T00:00:00Z"}',
        '{"kind":"state_changed","data":null,"timestamp":"2026-01-01T00:00:00Z"}',
        '{"kind":"state_changed","data":{},"timestamp":"yesterday"}',
        '{"kind":"state_changed","data":{},"timestamp":"2026-01-01T00:00:00"}',
        '{"kind":"state_changed","data":{},"timestamp":"2026-01-01t00:00:00z"}',
        '{"kind":"state_changed","data":{},"timestamp":"2016-12-31T23:59:60Z"}',
        '{"kind":"state_changed","data":{},"timestamp":5}',
        EVENT + ',"run_id":5}',
        EVENT + ',"run_id":null}',
        EVENT + ',"proposal_id":[]}',
        EVENT + ',"hash":5}',
        '{"kind":"state_changed","kind":"state_changed","data":{},"timestamp":"2026-01-01T00:00:00Z"}',
        "[1]",
        '{"kind"',
        '{"kind":"state_changed","data":{"n":1e400},"timestamp":"2026-01-01T00:00:00Z"}',
    ],
)
def test_car_compatible_agrees_with_car_on_each_line(backend: _backend.Engine, line: str) -> None:
    assert we_reject(line.encode()) == car_rejects(line.encode())


def test_car_compatible_agrees_with_car_on_a_defect_corpus(backend: _backend.Engine) -> None:
    lines, _ = generate_journal(400, 22, defects=len(DEFECTS) - 1)  # without the truncated tail
    # harness_metrics takes a str, so a line that is not UTF-8 (PF003) cannot be handed to it.
    comparable = [(n, line) for n, line in enumerate(lines, start=1) if _is_utf8(line)]
    assert len(comparable) == len(lines) - 1
    comparable = [(n, line) for n, line in comparable if known_to_runtime(line)]
    disagreements = [(n, line) for n, line in comparable if we_reject(line) != car_rejects(line)]
    assert disagreements == []
