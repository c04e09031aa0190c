"""The journal checker's ordered stage: chain links, lifecycle state, counts and the findings cap
(↔ ``Checker`` in ``rust/journal/ordered.rs``), fed one line's facts at a time in file order."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from ...codes import (
    AFTER_ACTION_ENDED,
    AFTER_PROPOSAL_COMPLETED,
    BEGINS_MID_RUN,
    CHAIN_GAP,
    CHAIN_REQUIRED,
    CHAINED_WITHOUT_TIMESTAMP,
    DIGEST_UNCOMPUTABLE,
    HASH_MISMATCH,
    LINK_MISMATCH,
    PROPOSAL_NOT_RECEIVED,
    PROPOSAL_OPEN_AT_END,
    PROPOSALS_NEVER_COMPLETED,
    RUN_NOT_OPEN,
    RUN_OPEN_AT_END,
    SUCCEEDED_WITHOUT_EXECUTING,
    TIMESTAMP_BACKWARDS,
    Severity,
    severity,
)
from ...journal.stats import ChainStats, JournalStats, LineCounts
from ..findings import RawFinding

if TYPE_CHECKING:
    pass
from .schema import _event_schema

CLOSED_WINDOW = 65_536


ACTION_TERMINAL = frozenset(
    {
        "action_succeeded",
        "action_failed",
        "action_rejected",
        "action_skipped",
        "action_deduplicated",
    }
)


Instant = tuple[int, int]
"""(seconds since the epoch, nanoseconds)"""


def _finding(
    code: str,
    message: str,
    line: int | None,
    pointer: str | None,
    schema_pointer: str | None = None,
    best_match: tuple[str, str, str] | None = None,
) -> RawFinding:
    return RawFinding(code, severity(code), message, line, pointer, schema_pointer, best_match)


@dataclass
class _EventFacts:
    kind: str | None
    run_id: str | None
    proposal_id: str | None
    action_id: str | None
    hash: str | None
    prev_hash: str | None
    # CAR's digest, or why it cannot be computed: ("rejects", CAR's reason) or ("no-timestamp", "")
    recomputed: tuple[str, str] | None
    timestamp: Instant | None


def _quoted(text: str) -> str:
    return f'"{text}"'


# -------------------------------------------------------------------------------------------------
# Ordered checks: chain links and lifecycle state

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _ClosedWindow(Generic[K, V]):
    """A bounded memory of recently closed ids: the oldest is forgotten when the window is full."""

    def __init__(self) -> None:
        self._entries: dict[K, tuple[V, int]] = {}
        self._order: deque[tuple[K, int]] = deque()
        self._generation = 0

    def get(self, key: K) -> V | None:
        entry = self._entries.get(key)
        return None if entry is None else entry[0]

    def __contains__(self, key: K) -> bool:
        return key in self._entries

    def insert(self, key: K, value: V) -> None:
        self._generation += 1
        self._entries[key] = (value, self._generation)
        self._order.append((key, self._generation))
        while len(self._order) > CLOSED_WINDOW:
            oldest, generation = self._order.popleft()
            current = self._entries.get(oldest)
            if current is not None and current[1] == generation:
                del self._entries[oldest]

    def remove(self, key: K) -> None:
        self._entries.pop(key, None)


@dataclass
class _MidRun:
    """Events of runs and proposals whose start is not in the journal: it begins mid-run (CAR's
    retention compaction keeps only the newest events; a rotated journal starts where the last
    one ended). Reported once, at the end, on the first such event."""

    first_line: int | None = None
    # Lines before the first such event that are not events: one may have held the start.
    unreadable_before: int = 0
    last_line: int | None = None
    runs: int = 0
    proposals: int = 0
    events: int = 0
    examples: list[str] = field(default_factory=list)


@dataclass
class _Checker:
    chain: str
    lifecycle: bool
    max_findings: int | None
    release: str | None = None
    findings: list[RawFinding] = field(default_factory=list)
    suppressed: int = 0
    # The suppressed findings by code and severity: true totals, severity overrides still apply.
    suppressed_codes: dict[str, dict[Severity, int]] = field(default_factory=dict)
    errors: int = 0  # every error found, listed or suppressed: validity survives the cap
    lines: int = 0
    events: int = 0
    blank_lines: int = 0
    invalid_lines: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    last_hash: tuple[str, int] | None = None
    chained: int = 0
    unchained: int = 0
    verified: int = 0
    tampered_at: int | None = None
    require_reported: bool = False
    # One root cause, one finding: (code, id) -> (index of the first finding if listed, later
    # events), counted into the first finding's message at the end.
    repeats: dict[tuple[str, str], tuple[int | None, int]] = field(default_factory=dict)
    mid_run: _MidRun = field(default_factory=_MidRun)
    # Open runs: the line of each one's `run_started`.
    runs: dict[str, int] = field(default_factory=dict)
    completed_runs: _ClosedWindow[str, bool] = field(default_factory=_ClosedWindow)
    orphans: _ClosedWindow[str, bool] = field(default_factory=_ClosedWindow)
    proposals: dict[str, int] = field(default_factory=dict)
    completed_proposals: _ClosedWindow[str, bool] = field(default_factory=_ClosedWindow)
    actions: dict[tuple[str, str], str] = field(default_factory=dict)
    ended_actions: _ClosedWindow[tuple[str, str], str] = field(default_factory=_ClosedWindow)
    last_timestamp: Instant | None = None

    def push(self, finding: RawFinding) -> None:
        self.errors += finding[1] == "error"
        if self.max_findings is not None and len(self.findings) >= self.max_findings:
            self.suppressed += 1
            by_severity = self.suppressed_codes.setdefault(finding[0], {})
            by_severity[finding[1]] = by_severity.get(finding[1], 0) + 1
        else:
            self.findings.append(finding)

    def push_once(self, key: str, finding: RawFinding) -> None:
        """Lists the first finding of a root cause (its code for ``key``); counts the later ones."""
        cause = (finding[0], key)
        seen = self.repeats.get(cause)
        if seen is not None:
            self.repeats[cause] = (seen[0], seen[1] + 1)
            return
        listed, before = len(self.findings), self.suppressed
        self.push(finding)
        if len(self.repeats) < CLOSED_WINDOW:  # bounded: past it, every cause is listed alone
            self.repeats[cause] = (listed if self.suppressed == before else None, 0)

    def mid_run_event(self, number: int, key: str, is_run: bool) -> None:
        """An event of a run or proposal whose start is not in the journal."""
        if self.mid_run.last_line != number:  # an event naming an orphan run and proposal
            self.mid_run.events += 1
            self.mid_run.last_line = number
        if self.mid_run.first_line is None:
            self.mid_run.first_line = number
            self.mid_run.unreadable_before = self.invalid_lines
        orphan = ("r:" if is_run else "p:") + key
        if orphan not in self.orphans:
            self.orphans.insert(orphan, True)
            if is_run:
                self.mid_run.runs += 1
            else:
                self.mid_run.proposals += 1
            if len(self.mid_run.examples) < 3:
                self.mid_run.examples.append(_quoted(key))

    def take(self, number: int, outcome: str | _EventFacts, findings: list[RawFinding]) -> None:
        self.lines += 1
        for finding in findings:
            self.push(finding)
        if outcome == "blank":
            self.blank_lines += 1
        elif isinstance(outcome, str):
            self.invalid_lines += 1
        else:
            index = self.events
            self.events += 1
            kind = outcome.kind
            if kind is not None and kind in _event_schema(self.release)[0]:
                self.kinds[kind] = self.kinds.get(kind, 0) + 1
            self.check_chain(number, index, outcome)
            if self.lifecycle:
                self.check_lifecycle(number, outcome)

    def tampered(self, index: int) -> None:
        if self.tampered_at is None:
            self.tampered_at = index

    def check_chain(self, number: int, index: int, facts: _EventFacts) -> None:
        event_hash = facts.hash
        if event_hash is None:
            if self.chain == "off":
                return
            if self.last_hash is not None:
                message = (
                    'event has no "hash" inside the hash chain (the previous chained event is on '
                    f"line {self.last_hash[1]}): an unchained event was inserted"
                )
                self.push(_finding(CHAIN_GAP, message, number, ""))
                self.tampered(index)
            else:
                self.unchained += 1
                if self.chain == "require" and not self.require_reported:
                    self.require_reported = True
                    message = 'chain="require" but the journal starts with an event without "hash"'
                    self.push(_finding(CHAIN_REQUIRED, message, number, ""))
                    self.tampered(index)
            return
        self.chained += 1
        if self.chain == "off":
            return
        intact = True
        if facts.recomputed is not None:
            outcome, recomputed = facts.recomputed
            if outcome == "rejects":
                intact = False
                message = (
                    "the hash cannot be computed as CAR computes it: CAR's event parser rejects "
                    "the event, so car-eventlog refuses the journal here"
                )
                self.push(_finding(DIGEST_UNCOMPUTABLE, message, number, "/hash"))
            elif outcome == "no-timestamp":
                intact = False
                message = (
                    'a chained event without "timestamp": CAR hashes the time it loads the '
                    "journal instead, so this hash can never verify"
                )
                self.push(_finding(CHAINED_WITHOUT_TIMESTAMP, message, number, ""))
            elif recomputed != event_hash:
                intact = False
                message = (
                    f'"hash" does not match the event\'s content (recomputed {recomputed}): the '
                    "event was edited"
                )
                self.push(_finding(HASH_MISMATCH, message, number, "/hash"))
        if self.last_hash is not None:
            previous, previous_line = self.last_hash
            if facts.prev_hash != previous:
                intact = False
                found = "none" if facts.prev_hash is None else _quoted(facts.prev_hash)
                message = (
                    f'"prev_hash" {found} does not link to the previous chained event (line '
                    f"{previous_line}, hash {_quoted(previous)}): events were deleted or "
                    "reordered"
                )
                self.push(_finding(LINK_MISMATCH, message, number, "/prev_hash"))
        self.last_hash = (event_hash, number)
        if intact:
            self.verified += 1
        else:
            self.tampered(index)

    def check_lifecycle(self, number: int, facts: _EventFacts) -> None:
        kind = facts.kind or ""
        if facts.timestamp is not None:
            if self.last_timestamp is not None and facts.timestamp < self.last_timestamp:
                message = "timestamp is earlier than the previous event's"
                self.push(_finding(TIMESTAMP_BACKWARDS, message, number, "/timestamp"))
            self.last_timestamp = facts.timestamp
        if facts.run_id is not None:
            self.check_run(number, kind, facts.run_id)
        if facts.proposal_id is not None and not self.check_proposal(
            number, kind, facts.proposal_id, facts.run_id
        ):
            return
        # Action rules hold for actions of a proposal only: CAR's coder sessions journal tool
        # calls with the tool's name as `action_id` and no proposal (car-server-core's fixture
        # native-car-doctor.events.jsonl), and the executor journals proposal-level failures as
        # `action_failed` without an `action_id` (car-engine executor.rs, persist_trajectory).
        if (
            kind.startswith("action_")
            and facts.proposal_id is not None
            and facts.action_id is not None
        ):
            self.check_action(number, kind, (facts.proposal_id, facts.action_id))

    def check_run(self, number: int, kind: str, run_id: str) -> None:
        if kind == "run_started":
            # A run started again while open is not reported: CAR's startup reconciliation
            # appends every stored run's `run_started` to the journal it loads, whether or not
            # the journal has it (car-server-core 0.58.0 session.rs,
            # reconcile_durable_run_journals). The run stays open from its first start.
            self.runs.setdefault(run_id, number)
        elif run_id in self.runs:
            # A cancellation result without its request in the journal is not reported either:
            # CAR writes a recovered result whether or not the request is there (car-server-core
            # 0.58.0 session.rs, append_recovered_cancellation_result_journal).
            if kind == "run_completed":
                del self.runs[run_id]
                self.completed_runs.insert(run_id, True)
        elif run_id in self.completed_runs:
            if kind == "run_cancellation_result":
                # CAR writes a cancellation's receipt after the run's terminal, still bound to
                # the run (car-server-core 0.58.0 session.rs, reconcile_durable_run_journals).
                return
            message = f"{kind} event for run {_quoted(run_id)} after its run_completed"
            self.push_once(run_id, _finding(RUN_NOT_OPEN, message, number, "/run_id"))
        else:
            self.mid_run_event(number, run_id, True)

    def check_proposal(self, number: int, kind: str, proposal_id: str, run_id: str | None) -> bool:
        """False when the proposal has already completed (reported here, nothing more to check)."""
        quoted = _quoted(proposal_id)
        if proposal_id in self.completed_proposals:
            message = f"{kind} event for proposal {quoted} after its proposal_completed"
            self.push_once(
                proposal_id,
                _finding(AFTER_PROPOSAL_COMPLETED, message, number, "/proposal_id"),
            )
            return False
        if kind == "proposal_received":
            self.proposals.setdefault(proposal_id, number)
        elif (
            kind in ("proposal_completed", "state_committed") and proposal_id not in self.proposals
        ):
            # Inside a run this journal saw start, the proposal's start is missing; else the
            # journal begins after it (compaction, rotation).
            if run_id is not None and run_id in self.runs:
                message = f"{kind} for proposal {quoted} without an earlier proposal_received"
                self.push_once(
                    proposal_id,
                    _finding(PROPOSAL_NOT_RECEIVED, message, number, "/proposal_id"),
                )
            else:
                self.mid_run_event(number, proposal_id, False)
            if kind == "proposal_completed":
                self.completed_proposals.insert(proposal_id, True)
        elif kind == "proposal_completed":
            del self.proposals[proposal_id]
            self.completed_proposals.insert(proposal_id, True)
        return True

    def check_action(self, number: int, kind: str, key: tuple[str, str]) -> None:
        quoted = _quoted(key[1])
        ended = self.ended_actions.get(key)
        if ended is not None:
            # car-engine's executor: a failed attempt is followed by `action_retrying` (retry)
            # or, once attempts are exhausted under `failure_behavior: skip`, `action_skipped`.
            if ended == "action_failed" and kind == "action_retrying":
                self.ended_actions.remove(key)
                self.actions[key] = kind
            elif ended == "action_failed" and kind == "action_skipped":
                self.ended_actions.insert(key, kind)
            else:
                message = f"{kind} for action {quoted} after it ended with {ended}"
                self.push_once(
                    f"{key[0]}\x1f{key[1]}",
                    _finding(AFTER_ACTION_ENDED, message, number, "/kind"),
                )
            return
        if kind == "action_succeeded" and self.actions.get(key) != "action_executing":
            message = f"action {quoted} succeeded without an action_executing before it"
            self.push(_finding(SUCCEEDED_WITHOUT_EXECUTING, message, number, "/kind"))
        if kind in ACTION_TERMINAL:
            self.actions.pop(key, None)
            self.ended_actions.insert(key, kind)
        else:
            self.actions[key] = kind

    def counts(self) -> LineCounts:
        """The line counts that open both the report's stats (``finish``) and the checker's state
        (``journal_state.snapshot``), in that order."""
        return {
            "lines": self.lines,
            "events": self.events,
            "blank_lines": self.blank_lines,
            "invalid_lines": self.invalid_lines,
            "kinds": dict(sorted(self.kinds.items())),
        }

    def sorted_suppressed_codes(self) -> dict[str, dict[Severity, int]]:
        """``suppressed_codes`` in the order the stats and the state give it: by code, then
        severity."""
        return {
            code: dict(sorted(counts.items()))
            for code, counts in sorted(self.suppressed_codes.items())
        }

    def finish(self, interrupted: bool) -> JournalStats:
        open_runs = sorted((line, run_id) for run_id, line in self.runs.items())
        open_proposals = sorted((line, proposal_id) for proposal_id, line in self.proposals.items())
        for index, later in self.repeats.values():
            if index is not None and later:
                first = self.findings[index]
                plural = "" if later == 1 else "s"
                message = f"{first.message} (and {later} later event{plural} with the same cause)"
                self.findings[index] = first._replace(message=message)
        if self.lifecycle and not interrupted:
            mid_run = self.mid_run
            if mid_run.first_line is not None:
                cause = (
                    "an unreadable line before them may have held it"
                    if mid_run.unreadable_before
                    else "as after CAR's retention compaction or a rotation"
                )
                message = (
                    f"the journal begins mid-run: {mid_run.runs} run(s) and {mid_run.proposals} "
                    f"proposal(s) (e.g. {', '.join(mid_run.examples)}) have {mid_run.events} "
                    "event(s) here but their run_started / proposal_received is not in the "
                    f"journal; {cause}"
                )
                self.push(_finding(BEGINS_MID_RUN, message, mid_run.first_line, ""))
            for line, run_id in open_runs:
                message = f"run {_quoted(run_id)} is still open at the end of the journal"
                self.push(_finding(RUN_OPEN_AT_END, message, line, "/run_id"))
            # Only the CAR server writes proposal_completed (car-eventlog ``EventKind`` docs;
            # car-server-core finish_pending_proposal): without any, car-engine wrote the journal
            # alone and leaves every proposal open, which is said once.
            if open_proposals and "proposal_completed" not in self.kinds:
                line, proposal_id = open_proposals[0]
                message = (
                    f"no proposal_completed in the journal: {len(open_proposals)} proposal(s) "
                    f"(e.g. {_quoted(proposal_id)}) received and never completed, as car-engine "
                    "writes a journal without a CAR server (only the server completes proposals)"
                )
                self.push(_finding(PROPOSALS_NEVER_COMPLETED, message, line, "/proposal_id"))
            else:
                for line, proposal_id in open_proposals:
                    message = (
                        f"proposal {_quoted(proposal_id)} is still open at the end of the journal"
                    )
                    self.push(_finding(PROPOSAL_OPEN_AT_END, message, line, "/proposal_id"))
        chain: ChainStats | None
        if self.chain == "off":
            chain = None
        elif self.tampered_at is not None:
            chain = {"tampered_at": self.tampered_at}
        else:
            chain = {"verified": self.verified}
        return {
            **self.counts(),
            "chained": self.chained,
            "unchained": self.unchained,
            "verified": self.verified,
            "chain": chain,
            "suppressed_findings": self.suppressed,
            "suppressed_codes": self.sorted_suppressed_codes(),
            "errors": self.errors,
            "open_runs": [run_id for _, run_id in open_runs],
            "open_proposals": [proposal_id for _, proposal_id in open_proposals],
            "interrupted": interrupted,
        }
