"""Realistic CAR journals for tests and benchmarks, with planted defects whose findings are known.

``python -m pairling_fast generate journal --events N --seed S [--chain] [--defects K] -o OUT``

A journal is a sequence of runs; each run holds proposals, each proposal actions that go through
validated → executing → succeeded (or failed → retrying → executing → succeeded, rejected,
skipped, deduplicated), interleaved with the other event kinds, so every kind of
``car.journal.event`` appears in a journal of a few hundred events. Output is deterministic per
seed and streamed: ``write_journal`` holds one run at a time, never the journal.

With ``defects=K``, K known defects are planted (cycling through ``DEFECTS``) as extra lines or
extra events, so they never disturb each other or the chain; their expected findings (code, line,
pointer under the default ``strict`` profile) are returned and, from the CLI, written to
``OUT.expected.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol

from .. import codes, schemas
from ..journal import event_kinds
from ..journal.writers import chain_event, event_line

__all__ = [
    "DEFECTS",
    "ExpectedFinding",
    "Sink",
    "add_arguments",
    "generate_journal",
    "run",
    "write_journal",
]

ExpectedFinding = dict[str, Any]
"""{"code": …, "line": …, "pointer": …}"""

EPOCH_2026 = 1_767_225_600  # 2026-01-01T00:00:00Z
ACTION_KINDS = (
    "action_validated",
    "action_rejected",
    "action_executing",
    "action_succeeded",
    "action_failed",
    "action_skipped",
    "action_retrying",
    "action_deduplicated",
)
STRUCTURAL_KINDS = (
    *ACTION_KINDS,
    "run_started",
    "run_cancellation_requested",
    "run_cancellation_result",
    "run_completed",
    "proposal_received",
    "proposal_completed",
    "state_committed",
    "state_changed",
)
TOOLS = ("read_file", "write_file", "shell", "search", "http_get", "echo")
WORDS = ("alpha", "beta", "gamma", "delta", "ünïcödé", "€uro", "emoji 😀", 'quote " back \\ slash')

# Defect → where it can be planted. "run": inside an open run before any cancellation request;
# "proposal": inside an open proposal after one of its actions succeeded; "completed": inside a
# run after one of its proposals completed; "end": at the end of the journal (planted once).
DEFECTS: dict[str, str] = {
    "invalid_json": "run",
    "duplicate_key": "run",
    "invalid_utf8": "run",
    "not_an_object": "run",
    "schema_violation": "run",
    "run_not_open": "run",
    "proposal_not_received": "run",
    "timestamp_backwards": "run",
    "after_proposal_completed": "completed",
    "after_action_ended": "proposal",
    "succeeded_without_executing": "proposal",
    "open_at_end": "end",
    "truncated_final_line": "end",
}


class Sink(Protocol):
    """Where lines go: a binary file, or anything with ``write(bytes)``."""

    def write(self, data: bytes, /) -> int: ...


@dataclass
class _Due:
    name: str
    at_event: int


@dataclass
class _Writer:
    """Numbers lines, stamps timestamps, chains events and collects expected findings."""

    out: Sink
    chain: bool
    rng: random.Random
    line: int = 0
    events: int = 0
    nanos: int = 0
    previous_hash: str | None = None
    expected: list[ExpectedFinding] = field(default_factory=list)

    def timestamp(self, offset_seconds: int = 0) -> str:
        seconds, nanos = divmod(self.nanos, 1_000_000_000)
        utc = time.gmtime(seconds + EPOCH_2026 + offset_seconds)
        return f"{time.strftime('%Y-%m-%dT%H:%M:%S', utc)}.{nanos // 1000:06d}Z"

    def event(self, kind: str, data: dict[str, Any], **ids: str | None) -> int:
        self.nanos += self.rng.randrange(1_000_000, 250_000_000)
        event: dict[str, Any] = {"kind": kind, "data": data, "timestamp": self.timestamp()}
        event.update((name, value) for name, value in ids.items() if value is not None)
        return self.raw_event(event)

    def raw_event(self, event: dict[str, Any]) -> int:
        if self.chain:
            event = chain_event(event, self.previous_hash)
            self.previous_hash = event["hash"]
        self.events += 1
        return self.raw_line(event_line(event))

    def raw_line(self, data: bytes) -> int:
        self.out.write(data)
        self.line += 1
        return self.line

    def expect(self, code: str, line: int, pointer: str) -> None:
        self.expected.append({"code": code, "line": line, "pointer": pointer})


class _Journal:
    def __init__(
        self, out: Sink, events: int, seed: int, chain: bool, defects: int, car_version: str | None
    ) -> None:
        self.rng = random.Random(seed)
        self.w = _Writer(out, chain, self.rng)
        self.target = events
        self.misc_kinds = [k for k in event_kinds(car_version) if k not in STRUCTURAL_KINDS]
        self.misc_next = 0
        self.runs = 0
        self.proposals = 0
        self.due = self._schedule(defects)
        self.completed_proposal: str | None = None

    def _schedule(self, count: int) -> list[_Due]:
        names = [name for name, where in DEFECTS.items() if where != "end"]
        ends = [name for name, where in DEFECTS.items() if where == "end"]
        chosen: list[str] = []
        for index in range(count):
            cycle, position = divmod(index, len(DEFECTS))
            if position < len(names):
                chosen.append(names[position])
            elif cycle == 0:
                chosen.append(ends[position - len(names)])
            else:
                chosen.append(names[self.rng.randrange(len(names))])
        spacing = max(1, self.target // (count + 1))
        return [_Due(name, spacing * (i + 1)) for i, name in enumerate(chosen)]

    def text(self) -> str:
        return f"{self.rng.choice(WORDS)} {self.rng.randrange(10_000)}"

    def car_data(self, kind: str) -> dict[str, Any]:
        """``data`` as CAR writes it for ``kind`` (``car_data``), this journal's time and ids."""
        data = car_data(kind, self.rng.getrandbits(32))
        if kind == "run_started":
            data.update(intent=self.text(), started_at=self.w.timestamp())
        return data

    def misc_data(self, kind: str) -> dict[str, Any]:
        data = {"note": self.text(), "tokens": self.rng.randrange(1, 4000)}
        return {**self.car_data(kind), **data}

    def misc(self, run_id: str, **ids: str | None) -> None:
        kind = self.misc_kinds[self.misc_next % len(self.misc_kinds)]
        self.misc_next += 1
        self.w.event(kind, self.misc_data(kind), run_id=run_id, **ids)

    def plant(self, where: str, run_id: str, **context: str) -> None:
        """Plant every due defect that fits this place."""
        for due in list(self.due):
            if due.at_event <= self.w.events and DEFECTS[due.name] == where:
                self.due.remove(due)
                getattr(self, "_defect_" + due.name)(run_id, **context)

    def generate(self) -> list[ExpectedFinding]:
        while self.w.events < self.target or any(DEFECTS[d.name] != "end" for d in self.due):
            self.one_run()
        names = {d.name for d in self.due}
        if "open_at_end" in names:
            self._defect_open_at_end()
        if "truncated_final_line" in names:
            line = self.w.raw_line(b'{"kind":"state_changed","data":{"partial":tr')
            self.w.expect(codes.TRUNCATED_FINAL_LINE, line, "")
        return self.w.expected

    def one_run(self) -> None:
        self.runs += 1
        run_id = f"run-{self.runs:06d}"
        client = f"client-{self.rng.randrange(100):02d}"
        self.w.event("run_started", self.car_data("run_started"), run_id=run_id, client_id=client)
        for _ in range(self.rng.randrange(1, 3)):
            self.misc(run_id)
        self.plant("run", run_id)
        for _ in range(self.rng.randrange(1, 4)):
            self.one_proposal(run_id)
            self.plant("completed", run_id)
            self.misc(run_id)
        self.plant("run", run_id)
        if self.runs % 3 == 2:
            requested = {**self.car_data("run_cancellation_requested"), "run_id": run_id}
            self.w.event("run_cancellation_requested", requested, run_id=run_id)
            result = {**self.car_data("run_cancellation_result"), "run_id": run_id}
            self.w.event("run_cancellation_result", result, run_id=run_id)
        self.w.event("run_completed", self.car_data("run_completed"), run_id=run_id)

    def one_proposal(self, run_id: str) -> None:
        self.proposals += 1
        proposal_id = f"{self.rng.getrandbits(48):012x}"
        ids = {"run_id": run_id, "proposal_id": proposal_id}
        actions = self.rng.randrange(1, 5)
        received = {**self.car_data("proposal_received"), "action_count": actions}
        self.w.event("proposal_received", received, **ids)
        for number in range(actions):
            action_id = f"a{number}"
            succeeded = self.one_action(ids, action_id, first=number == 0)
            if succeeded:
                self.plant("proposal", run_id, proposal_id=proposal_id, action_id=action_id)
            if self.rng.random() < 0.5:
                self.misc(run_id, proposal_id=proposal_id)
        self.w.event("state_committed", self.car_data("state_committed"), **ids)
        completed = {**self.car_data("proposal_completed"), "action_count": actions}
        self.w.event("proposal_completed", completed, **ids)
        self.completed_proposal = proposal_id

    def one_action(self, ids: dict[str, str], action_id: str, first: bool) -> bool:
        """One action's events; True when it ended with action_succeeded."""
        tool = self.rng.choice(TOOLS)
        action = {**ids, "action_id": action_id}
        self.w.event("action_validated", {"tool": tool}, **action)
        outcome = (
            "succeeded"
            if first
            else self.rng.choice(
                ("succeeded", "succeeded", "retried", "rejected", "skipped", "deduplicated")
            )
        )
        if outcome in ("rejected", "skipped", "deduplicated"):
            reason = {"reason": self.text()}
            self.w.event(f"action_{outcome}", reason, **action)
            return False
        self.w.event("action_executing", {"tool": tool, "attempt": 1}, **action)
        if outcome == "retried":
            self.w.event("action_failed", {"error": "tool failed on purpose"}, **action)
            self.w.event("action_retrying", {"attempt": 2, "backoff_ms": 250}, **action)
            self.w.event("action_executing", {"tool": tool, "attempt": 2}, **action)
        output = {"echo": {"msg": self.text(), "payload": [0.1, 5e-324, self.rng.random()]}}
        self.w.event("action_succeeded", {"output": output, "duration_ms": 12}, **action)
        self.w.event("state_changed", {"key": self.text(), "value": 1}, **action)
        return True

    # --- the defects: each writes its lines and what check_journal must find on them

    def _defect_invalid_json(self, run_id: str) -> None:
        line = self.w.raw_line(
            b'{"kind":"state_changed","data":{},"run_id":"' + run_id.encode() + b'"\n'
        )
        self.w.expect(codes.INVALID_JSON, line, "")

    def _defect_duplicate_key(self, run_id: str) -> None:
        text = (
            f'{{"kind":"state_changed","kind":"state_changed","data":{{}},"run_id":"{run_id}"}}\n'
        )
        self.w.expect(codes.DUPLICATE_KEY, self.w.raw_line(text.encode()), "/kind")

    def _defect_invalid_utf8(self, run_id: str) -> None:
        line = self.w.raw_line(b'{"kind":"state_changed","data":{"note":"\xff\xfe"}}\n')
        self.w.expect(codes.NOT_UTF8, line, "")

    def _defect_not_an_object(self, run_id: str) -> None:
        self.w.expect(codes.NOT_AN_OBJECT, self.w.raw_line(b'["state_changed", {}]\n'), "")

    def _defect_schema_violation(self, run_id: str) -> None:
        self.w.nanos += 1_000_000
        # A space for the `T`: the schema's RFC 3339 forbids it, CAR's chrono reads it (so a
        # chained journal can still carry CAR's hash of this event).
        timestamp = self.w.timestamp().replace("T", " ")
        event = {"kind": "state_snapshot", "data": {}, "timestamp": timestamp}
        self.w.expect(
            codes.SCHEMA_VIOLATION, self.w.raw_event({**event, "run_id": run_id}), "/timestamp"
        )

    def _defect_run_not_open(self, run_id: str) -> None:
        # An event stamped with a run after its run_completed (a run never started in the journal
        # is the journal beginning mid-run: PF343, once).
        ghost = f"run-ghost-{self.w.line}"
        self.w.event("run_started", self.car_data("run_started"), run_id=ghost)
        self.w.event("run_completed", self.car_data("run_completed"), run_id=ghost)
        self.w.expect(
            codes.RUN_NOT_OPEN, self.w.event("state_snapshot", {}, run_id=ghost), "/run_id"
        )

    def _defect_proposal_not_received(self, run_id: str) -> None:
        ghost = f"proposal-ghost-{self.w.line}"
        committed = self.car_data("state_committed")
        line = self.w.event("state_committed", committed, run_id=run_id, proposal_id=ghost)
        self.w.expect(codes.PROPOSAL_NOT_RECEIVED, line, "/proposal_id")

    def _defect_timestamp_backwards(self, run_id: str) -> None:
        self.w.nanos += 1
        event = {"kind": "state_snapshot", "data": {}, "timestamp": self.w.timestamp(-3600)}
        self.w.expect(
            codes.TIMESTAMP_BACKWARDS, self.w.raw_event({**event, "run_id": run_id}), "/timestamp"
        )

    def _defect_after_proposal_completed(self, run_id: str) -> None:
        proposal_id = self.completed_proposal
        line = self.w.event("state_changed", {}, run_id=run_id, proposal_id=proposal_id)
        self.w.expect(codes.AFTER_PROPOSAL_COMPLETED, line, "/proposal_id")

    def _defect_after_action_ended(self, run_id: str, proposal_id: str, action_id: str) -> None:
        ids = {"run_id": run_id, "proposal_id": proposal_id, "action_id": action_id}
        self.w.expect(
            codes.AFTER_ACTION_ENDED, self.w.event("action_executing", {}, **ids), "/kind"
        )

    def _defect_succeeded_without_executing(
        self, run_id: str, proposal_id: str, action_id: str
    ) -> None:
        ids = {"run_id": run_id, "proposal_id": proposal_id, "action_id": f"x{self.w.line}"}
        self.w.expect(
            codes.SUCCEEDED_WITHOUT_EXECUTING, self.w.event("action_succeeded", {}, **ids), "/kind"
        )

    def _defect_open_at_end(self) -> None:
        self.runs += 1
        run_id = f"run-{self.runs:06d}"
        self.w.expect(
            codes.RUN_OPEN_AT_END,
            self.w.event("run_started", self.car_data("run_started"), run_id=run_id),
            "/run_id",
        )
        received = self.car_data("proposal_received")
        line = self.w.event("proposal_received", received, run_id=run_id, proposal_id="live-tail")
        self.w.expect(codes.PROPOSAL_OPEN_AT_END, line, "/proposal_id")


@cache
def _car_examples() -> dict[str, dict[str, Any]]:
    """The other kinds' ``data`` as CAR writes it, one example each (shared with the CAR oracle);
    read when first needed, as the CLI imports this module for ``generate``'s options."""
    from importlib import resources

    text = resources.files("pairling_fast").joinpath("car_payload_examples.json").read_text("utf-8")
    examples: dict[str, dict[str, Any]] = json.loads(text)["examples"]
    return examples


def car_data(kind: str, index: int = 0) -> dict[str, Any]:
    """Representative ``data`` of an event of ``kind`` as CAR's emit sites write it: the members
    CAR's payload contracts name (``pairling_fast/car_payloads.toml`` cites the emit sites),
    deterministic in ``index``; ``{}`` for a kind CAR's code gives no fixed shape. Tests and the
    generator build events CAR could have written from it."""
    digest = hashlib.sha256(f"{kind}/{index}".encode()).hexdigest()
    proposal = {"id": f"proposal-{index}", "source": "unknown", "actions": [], "context": {}}
    cancellation: dict[str, Any] = {
        "receipt_version": 1,
        "run_id": f"run-{index}",
        "idempotency_key": f"cancel-{index}",
        "reason_digest": digest,
        "principal": "operator",
        "action_id": None,
        "request_id": None,
    }
    examples: dict[str, dict[str, Any]] = {
        "run_started": {
            "agent_id": "agent-generated",
            "intent": "generated",
            "started_at": "2026-01-01T00:00:00Z",
        },
        "run_completed": {
            "termination_kind": "outcome",
            "completion_digest": digest,
            "termination": {"kind": "outcome", "status": "succeeded", "outcome": {}},
        },
        "run_cancellation_requested": cancellation,
        "run_cancellation_result": {
            **cancellation,
            "status": "cancelled_confirmed",
            "terminal_digest": digest,
            "receipt_digest": digest,
        },
        "proposal_received": {
            "source": "unknown",
            "action_count": 1,
            "proposal": proposal,
            "proposal_digest": digest,
        },
        "proposal_completed": {
            "original_submission_id": proposal["id"],
            "final_proposal_id": proposal["id"],
            "original_proposal": proposal,
            "final_proposal": proposal,
            "original_submission": {"proposal": proposal},
            "replan_lineage": [],
            "all_succeeded": True,
            "action_count": 1,
            "proposal_result": {"proposal_id": proposal["id"], "results": []},
            "result_digest": digest,
        },
        "transaction_conflict": {
            "kind": "write_write",
            "key": "counter",
            "actions": ["a0", "a1"],
            "explanation": "both actions write counter",
            "resolution": "serialize",
        },
        "worker_started": {
            "handle": f"worker-{index}",
            "at": "2026-01-01T00:00:00+00:00",
            "seq": index,
            "network_fence": "none",
            "warning": "no network fence on this platform",
        },
        "worker_starts_omitted": {
            "handle": f"worker-{index}",
            "omitted": 3,
            "path": f"workers/worker-{index}/starts.jsonl",
        },
        "inference_metered": {
            "tokens_in": 100 + index % 1000,
            "tokens_out": 40,
            "cost_usd": 0.0125,
            "agent": "agent-generated",
        },
    }
    return dict(examples.get(kind) or _car_examples().get(kind, {}))


def write_journal(
    out: Sink,
    events: int,
    seed: int,
    chain: bool = False,
    defects: int = 0,
    car_version: str | None = None,
) -> list[ExpectedFinding]:
    """Stream a journal of about ``events`` events (the last run is completed) to ``out``; returns
    the expected findings of the planted defects, sorted by line. The events are of the kinds CAR
    ``car_version`` knows (``event_kinds``; default: the newest bundled release), so that
    release's ``EventLog`` loads the journal."""
    expected = _Journal(out, events, seed, chain, defects, car_version).generate()
    return sorted(expected, key=lambda f: (f["line"], f["code"]))


class _Lines:
    """Collects the lines written (the generator writes one line per call)."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def write(self, data: bytes, /) -> int:
        self.lines.append(data)
        return len(data)


def generate_journal(
    events: int, seed: int, chain: bool = False, defects: int = 0, car_version: str | None = None
) -> tuple[list[bytes], list[ExpectedFinding]]:
    """(the journal's lines, the expected findings of its planted defects), in memory; for large
    journals stream with ``write_journal`` instead."""
    lines = _Lines()
    expected = write_journal(lines, events, seed, chain, defects, car_version)
    return lines.lines, expected


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--events", type=int, default=1000, help="about how many events")
    parser.add_argument("--seed", type=int, default=0, help="random seed (same seed, same file)")
    parser.add_argument("--chain", action="store_true", help="add prev_hash/hash to every event")
    parser.add_argument(
        "--defects",
        type=int,
        default=0,
        help="plant K known defects; their findings go to OUT.expected.json",
    )
    parser.add_argument(
        "--car-version",
        type=schemas.car_version_argument,
        metavar="VERSION",
        help="only event kinds this bundled CAR release knows (default: the newest; see `schemas`)",
    )
    parser.add_argument("-o", "--output", default="-", help="output file (default: stdout)")


def run(args: argparse.Namespace) -> int:
    if args.defects and args.output == "-":
        print(
            "generate journal: --defects needs -o OUT (findings go to OUT.expected.json)",
            file=sys.stderr,
        )
        return 2
    if args.output == "-":
        write_journal(
            sys.stdout.buffer, args.events, args.seed, args.chain, args.defects, args.car_version
        )
        return 0
    with open(args.output, "wb", buffering=1 << 20) as out:
        expected = write_journal(
            out, args.events, args.seed, args.chain, args.defects, args.car_version
        )
    if args.defects:
        with open(args.output + ".expected.json", "w", encoding="utf-8") as out_expected:
            parameters = {
                "events": args.events,
                "seed": args.seed,
                "chain": args.chain,
                "defects": args.defects,
                "car_version": args.car_version,
                "profile": "strict",
            }
            json.dump({"generator": parameters, "findings": expected}, out_expected, indent=1)
            out_expected.write("\n")
    return 0
