"""CAR journals on the pure-Python backend: the same rules as ``rust/journal.rs``, line by line.

Lines are read in bounded chunks (a line over ``max_line_length`` is counted and skipped, never
held), checked one after the other, and only the open runs / proposals / actions plus a fixed
window of recently closed ids are remembered. Findings and stats are identical to the core's.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

from .._tables import DEFAULT_MAX_FINDINGS, DEFAULT_MAX_LINE_LENGTH
from ..codes import (
    AFTER_ACTION_ENDED,
    AFTER_PROPOSAL_COMPLETED,
    BEGINS_MID_RUN,
    CANCELLATION_NOT_REQUESTED,
    CAR_ARRAY_EVENT,
    CAR_DUPLICATE_KEY,
    CAR_IGNORED_VALUE,
    CAR_NULL_MEMBER,
    CAR_REJECTS,
    CAR_SCHEMA_TOLERATED,
    CAR_TIMESTAMP,
    CAR_TOLERATED,
    CAR_TORN_TAIL,
    CAR_WIDE_INTEGER,
    CHAIN_GAP,
    CHAIN_REQUIRED,
    CHAINED_WITHOUT_TIMESTAMP,
    DIGEST_UNCOMPUTABLE,
    DUPLICATE_KEY,
    FORM_FEED_LINE,
    HASH_MISMATCH,
    INTEGER_OUT_OF_RANGE,
    LINE_TOO_LONG,
    LINK_MISMATCH,
    NOT_AN_OBJECT,
    PROPOSAL_NOT_RECEIVED,
    PROPOSAL_OPEN_AT_END,
    PROPOSALS_NEVER_COMPLETED,
    RUN_ALREADY_OPEN,
    RUN_NOT_OPEN,
    RUN_OPEN_AT_END,
    SCHEMA_VIOLATION,
    SUCCEEDED_WITHOUT_EXECUTING,
    TIMESTAMP_BACKWARDS,
    TRUNCATED_FINAL_LINE,
    severity,
)
from ..errors import CanonicalizationError
from ..report import RawFinding
from . import car_event, car_payloads, journal_state
from .parse import escape_pointer_token, parse_json, unescape_pointer_token
from .validate import (
    WireBundle,
    bundle_validator,
    default_wire_bundle,
    is_date_time,
    wire_bundle_named,
)

if TYPE_CHECKING:
    from ..journal import JournalOptions

__all__ = [
    "CLOSED_WINDOW",
    "DEFAULT_MAX_FINDINGS",
    "DEFAULT_MAX_LINE_LENGTH",
    "check_journal",
    "is_event_kind",
    "journal_chain_digest",
    "journal_event_kinds",
    "parse_timestamp",
]

SCHEMA_ID = "car.journal.event"
CLOSED_WINDOW = 65_536
READ_SIZE = 1 << 20


ACTION_TERMINAL = frozenset(
    {
        "action_succeeded",
        "action_failed",
        "action_rejected",
        "action_skipped",
        "action_deduplicated",
    }
)
CHAIN_MODES = ("auto", "require", "off")
PROFILES = ("strict", "car-compatible")

Instant = tuple[int, int]
"""(seconds since the epoch, nanoseconds)"""


@cache
def _event_schema(car_version: str | None = None) -> tuple[frozenset[str], frozenset[str]]:
    """The kind enum and the declared top-level members of ``journal.event`` in the bundle of CAR
    ``car_version`` (default: the default bundle)."""
    schema = _event_bundle(car_version).schema(EVENT_SCHEMA)
    kinds = frozenset(
        kind for branch in schema["definitions"]["EventKind"]["oneOf"] for kind in branch["enum"]
    )
    return kinds, frozenset(schema["properties"])


# The name of the event schema inside a wire bundle (``car.journal.event`` among bundled ids).
EVENT_SCHEMA = "journal.event"


@cache
def _payloads(car_version: str | None) -> car_payloads.Payloads:
    """CAR's payload contracts for the bundle of CAR ``car_version``, or its own payload schemas."""
    bundle = _event_bundle(car_version)
    return car_payloads.Payloads(bundle.version, bundle.document, journal_event_kinds(car_version))


def _event_bundle(car_version: str | None) -> WireBundle:
    """The wire bundle of CAR ``car_version`` (``ValueError`` for one not bundled)."""
    if car_version is None:
        return default_wire_bundle()
    bundle = wire_bundle_named(car_version)
    if bundle is None:
        raise ValueError(f"no bundled wire schema for CAR version {car_version!r}")
    return bundle


def journal_event_kinds(car_version: str | None = None) -> list[str]:
    """The event kinds of the bundle of CAR ``car_version`` (default: the default bundle), sorted;
    ``ValueError`` for a release not bundled."""
    return sorted(_event_schema(car_version)[0])


def is_event_kind(name: str) -> bool:
    """Whether ``name`` is an event kind of the wire schema (CAR 0.58.0's ``EventKind``)."""
    return name in _event_schema()[0]


def journal_chain_digest(line: bytes) -> str:
    """CAR's chain digest of one journal line; ``ValueError`` with the reason CAR cannot."""
    try:
        return car_event.line_digest(line)
    except car_event.CarRejects as error:
        raise ValueError(str(error)) from None


def _finding(
    code: str,
    message: str,
    line: int | None,
    pointer: str | None,
    schema_pointer: str | None = None,
) -> RawFinding:
    return (code, severity(code), message, line, pointer, schema_pointer)


# -------------------------------------------------------------------------------------------------
# Reading lines, bounded


@dataclass
class _RawLine:
    number: int
    data: bytes | None  # None: over the length limit, skipped
    length: int
    terminated: bool


class _LineSplitter:
    """Splits bytes fed in pieces (cut anywhere) into lines numbered on from ``number``, keeping
    the partial line after the last newline for the next piece: its bytes while it is within
    ``max_line_length``, only its length past it."""

    def __init__(self, max_line_length: int, number: int = 0) -> None:
        self.max_line_length = max_line_length
        self.number = number
        self._parts: list[bytes] = []
        self.pending = 0  # the partial line's length so far
        self._too_long = False

    def feed(self, chunk: bytes) -> Iterator[_RawLine]:
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            end = len(chunk) if newline < 0 else newline
            self.pending += end - start
            if self.pending > self.max_line_length:
                self._too_long, self._parts = True, []
            elif end > start:
                self._parts.append(chunk[start:end])
            if newline < 0:
                return
            yield self._line(True)
            start = newline + 1

    def end(self) -> _RawLine | None:
        """The partial line as the last line, without a newline (None if there is none)."""
        return self._line(False) if self.pending else None

    def _line(self, terminated: bool) -> _RawLine:
        self.number += 1
        data = None if self._too_long else b"".join(self._parts)
        line = _RawLine(self.number, data, self.pending, terminated)
        self._parts, self.pending, self._too_long = [], 0, False
        return line


def _read_lines(
    read: Callable[[int], bytes], max_line_length: int, number: int = 0
) -> Iterator[_RawLine]:
    """The lines of ``read``, numbered on from ``number``."""
    lines = _LineSplitter(max_line_length, number)
    while chunk := read(READ_SIZE):
        yield from lines.feed(chunk)
    last = lines.end()
    if last is not None:
        yield last


# -------------------------------------------------------------------------------------------------
# Per-line work: parse, validate, hash, extract what the ordered checks need


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


# car-eventlog's loader skips every line of ASCII whitespace (Rust's `is_ascii_whitespace`: also
# form feed), though JSON's whitespace has no form feed.
_BLANK = re.compile(rb"[ \t\n\x0c\r]*")


def _string_member(event: dict[str, Any], name: str) -> str | None:
    value = event.get(name)
    return value if isinstance(value, str) else None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _check_line(
    raw: _RawLine,
    chain: str,
    profile: str,
    max_line_length: int,
    car_version: str | None = None,
    payloads: str = "warn",
) -> tuple[str | _EventFacts, list[RawFinding]]:
    """("blank" | "invalid" | the event's facts, findings) of one line."""
    number = raw.number
    if raw.data is None:
        message = (
            f"line is {raw.length} bytes long, over the limit of {max_line_length} bytes; skipped"
        )
        return "invalid", [_finding(LINE_TOO_LONG, message, number, "")]
    text = raw.data[:-1] if raw.data.endswith(b"\r") else raw.data
    car_compatible = profile == "car-compatible"
    if _BLANK.fullmatch(text):
        if b"\x0c" not in text:
            return "blank", []
        message = (
            "a line of whitespace with a form feed, which JSON does not count as whitespace: "
            "CAR's loader skips it as blank"
        )
        return "blank", [_finding(FORM_FEED_LINE, message, number, "")]
    value: Any = None
    parsed = True
    strict_error: CanonicalizationError | None = None
    try:
        value = parse_json(text)
    except CanonicalizationError as error:
        parsed, strict_error = False, error
    carries_hash = parsed and isinstance(value, dict) and isinstance(value.get("hash"), str)
    car: car_event.CarEvent | str | None = None  # CAR's reading, or why CAR rejects the line
    if car_compatible or (carries_hash and chain != "off"):
        try:
            car = car_event.parse(text)
        except car_event.CarRejects as rejection:
            car = str(rejection)
    car_accepts = isinstance(car, car_event.CarEvent)
    findings: list[RawFinding] = []
    if strict_error is not None:
        if not raw.terminated and not car_accepts:
            message = (
                "the last line has no newline and is not valid JSON (truncated?): "
                + _with_column(strict_error)
            )
            return "invalid", [_finding(TRUNCATED_FINAL_LINE, message, number, "")]
        if not (car_compatible and car_accepts):
            # The parser's own code (PF001 syntax, PF002 duplicate key, PF003 not UTF-8, …).
            message = _with_column(strict_error)
            return "invalid", [_finding(strict_error.code, message, number, strict_error.pointer)]
        # CAR reads it: the defect is in a member CAR ignores or inside `data`, where serde_json
        # keeps the last duplicate and reads a wide integer as a float.
        code = {DUPLICATE_KEY: CAR_DUPLICATE_KEY, INTEGER_OUT_OF_RANGE: CAR_WIDE_INTEGER}.get(
            strict_error.code, CAR_IGNORED_VALUE
        )
        message = (
            f"{_with_column(strict_error)} ({strict_error.code}); "
            "CAR's event parser accepts the line"
        )
        findings.append(_finding(code, message, number, strict_error.pointer))
    elif isinstance(value, dict):
        findings.extend(_schema_findings(value, profile, number, car_version))
    elif not car_accepts:
        message = f"a journal line must be a JSON object (an event), not {_json_type(value)}"
        return "invalid", [_finding(NOT_AN_OBJECT, message, number, "")]
    else:
        message = (
            f"the event is {_json_type(value)}, not an object: CAR's parser reads an array's "
            "items as the event's fields in declaration order"
        )
        findings.append(_finding(CAR_ARRAY_EVENT, message, number, ""))
    if car_compatible and car_accepts:
        # Whatever the schema forbids and CAR reads anyway is a warning under its own code.
        findings = [
            _car_tolerated(finding, value) if finding[1] == "error" else finding
            for finding in findings
        ]
    elif car_compatible and isinstance(car, str) and not any(f[1] == "error" for f in findings):
        message = (
            "CAR's event parser (serde_json into car-eventlog 0.58.0's Event) rejects the line"
        )
        findings.append(_finding(CAR_REJECTS, message, number, ""))
    if isinstance(value, dict) and payloads != "off":
        kind, data = value.get("kind"), value.get("data")
        if isinstance(kind, str) and isinstance(data, dict):
            findings.extend(_payloads(car_version).findings(kind, data, payloads, number))
    if car_compatible and not raw.terminated:
        message = (
            "the last line has no newline: CAR's read-only loader refuses the journal as a "
            "torn tail"
        )
        findings.append(_finding(CAR_TORN_TAIL, message, number, ""))
    if car_compatible and isinstance(car, car_event.CarEvent):
        facts = _car_facts(car)
    elif isinstance(value, dict):
        timestamp = _string_member(value, "timestamp")
        facts = _EventFacts(
            kind=_string_member(value, "kind"),
            run_id=_string_member(value, "run_id"),
            proposal_id=_string_member(value, "proposal_id"),
            action_id=_string_member(value, "action_id"),
            hash=_string_member(value, "hash"),
            prev_hash=_string_member(value, "prev_hash"),
            recomputed=None,
            timestamp=None if timestamp is None else parse_timestamp(timestamp),
        )
    else:
        facts = _EventFacts(None, None, None, None, None, None, None, None)
    if facts.hash is not None and chain != "off":
        if isinstance(car, car_event.CarEvent):
            digest = car_event.digest(car)
            facts.recomputed = ("ok", digest) if digest is not None else ("no-timestamp", "")
        elif isinstance(car, str):
            facts.recomputed = ("rejects", car)
    return facts, findings


def _car_facts(event: car_event.CarEvent) -> _EventFacts:
    """The facts of an event as CAR read it (car-compatible: ``null`` ids are absent, the kind
    may be in its ``{"name": null}`` form, the event may be an array)."""
    return _EventFacts(
        kind=event.kind,
        run_id=event.run_id,
        proposal_id=event.proposal_id,
        action_id=event.action_id,
        hash=event.hash,
        prev_hash=event.prev_hash,
        recomputed=None,
        timestamp=None
        if event.timestamp is None
        else (event.timestamp.seconds, event.timestamp.nanos),
    )


_MISSING = object()


def _pointed(value: Any, pointer: str) -> Any:
    """The value at an RFC 6901 pointer, or ``_MISSING``."""
    if not pointer:
        return value
    for token in pointer[1:].split("/"):
        token = unescape_pointer_token(token)
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return _MISSING
    return value


def _car_tolerated(finding: RawFinding, event: Any) -> RawFinding:
    """A schema error CAR's parser does not make: the same message, as a warning under the code
    of what CAR tolerates."""
    code, _severity, message, line, pointer, _schema_pointer = finding
    where = pointer or ""
    if where == "/timestamp":
        tolerated = CAR_TIMESTAMP
    elif _pointed(event, where) is None:
        tolerated = CAR_NULL_MEMBER
    else:
        tolerated = CAR_SCHEMA_TOLERATED
    return _finding(tolerated, f"{message} ({code}); CAR's event parser accepts it", line, where)


def _with_column(error: CanonicalizationError) -> str:
    """The parser's message with its column; its line is always 1 within one journal line."""
    if error.column is None:
        return error.message
    return f"{error.message} (column {error.column})"


# Required members CAR's event parser defaults when they are missing (checked against car-runtime
# 0.58.0), with the stand-in used to validate the rest of the event.
CAR_DEFAULTED: tuple[tuple[str, Any], ...] = (("data", {}), ("timestamp", "1970-01-01T00:00:00Z"))

_ID_MEMBERS = (
    "run_id",
    "client_id",
    "policy_session_id",
    "action_id",
    "proposal_id",
    "prev_hash",
    "hash",
)


@cache
def _shape_is_known(car_version: str | None) -> bool:
    """Whether the bundle's ``journal.event`` is the shape ``_plainly_valid`` checks by hand: an
    object of string-or-null ids, an object ``data``, a ``date-time`` string ``timestamp``, a
    ``kind`` from string enums, nothing else (descriptions aside)."""
    schema = _event_bundle(car_version).schema(EVENT_SCHEMA)
    expected: dict[str, Any] = {name: {"type": ["string", "null"]} for name in _ID_MEMBERS}
    expected["kind"] = {"$ref": "#/definitions/EventKind"}
    expected["data"] = {"additionalProperties": True, "type": "object"}
    expected["timestamp"] = {"format": "date-time", "type": "string"}
    properties = {
        name: {key: value for key, value in member.items() if key != "description"}
        for name, member in schema.get("properties", {}).items()
    }
    branches = schema["definitions"]["EventKind"]["oneOf"]
    kinds_are_string_enums = all(
        branch.get("type") == "string"
        and isinstance(branch.get("enum"), list)
        and set(branch) <= {"type", "enum", "description"}
        for branch in branches
    )
    rest = {
        key: value
        for key, value in schema.items()
        if key not in ("$schema", "definitions", "description", "properties", "title")
    }
    return (
        properties == expected
        and kinds_are_string_enums
        and rest
        == {
            "additionalProperties": False,
            "required": ["kind", "data", "timestamp"],
            "type": "object",
        }
    )


def _plainly_valid(event: dict[str, Any], car_version: str | None) -> bool:
    """True for the common valid event, decided without jsonschema (whose ``oneOf`` over the
    event kinds is most of the fallback's time on small lines); False means "ask the validator".
    Only for a bundle whose event schema is the shape checked here (``_shape_is_known``)."""
    kinds, members = _event_schema(car_version)
    if not _shape_is_known(car_version):
        return False
    kind, data, stamp = event.get("kind"), event.get("data"), event.get("timestamp")
    return (
        type(kind) is str
        and kind in kinds
        and type(data) is dict
        and type(stamp) is str
        and is_date_time(stamp)
        and all(key in members for key in event)
        and all(type(event.get(name)) in (str, type(None)) for name in _ID_MEMBERS)
    )


def _schema_findings(
    event: dict[str, Any], profile: str, number: int, car_version: str | None
) -> list[RawFinding]:
    """Schema findings of one event. Under ``car-compatible``, unknown members (which CAR's parser
    ignores) and missing ``data`` / ``timestamp`` (which it defaults) are PF304 warnings, and the
    rest of the event is validated as if they were absent / present."""
    validator = bundle_validator(_event_bundle(car_version), EVENT_SCHEMA)
    unknown: list[str] = []
    missing: list[str] = []
    instance = event
    if profile == "car-compatible":
        members = _event_schema(car_version)[1]
        unknown = [key for key in event if key not in members]
        instance = {key: value for key, value in event.items() if key in members}
        for name, stand_in in CAR_DEFAULTED:
            if name not in event:
                missing.append(name)
                instance[name] = stand_in
    # Valid events are the rule: the quick yes/no check spares collecting (and sorting) errors.
    valid = _plainly_valid(instance, car_version) or validator.is_valid(instance)
    violations = [] if valid else validator.errors(instance)
    findings = [
        _finding(SCHEMA_VIOLATION, message, number, pointer, schema_pointer)
        for pointer, schema_pointer, _keyword, message in violations
    ]
    for key in unknown:
        message = (
            f"unknown member {_quoted(key)}: the schema forbids it, CAR's event parser ignores it"
        )
        findings.append(_finding(CAR_TOLERATED, message, number, "/" + escape_pointer_token(key)))
    for name in missing:
        message = f"no {_quoted(name)}: the schema requires it, CAR's event parser defaults it"
        findings.append(_finding(CAR_TOLERATED, message, number, ""))
    return findings


def _quoted(text: str) -> str:
    return f'"{text}"'


def parse_timestamp(text: str) -> Instant | None:
    """A timestamp as the instant CAR reads (chrono's relaxed RFC 3339, as ``DateTime<Utc>``);
    None if chrono does not read it (the schema check reports that)."""
    time = car_event.parse_timestamp(text)
    return None if time is None else (time.seconds, time.nanos)


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
class _OpenRun:
    line: int
    cancellation_requested: bool = False


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
    car_version: str | None = None
    findings: list[RawFinding] = field(default_factory=list)
    suppressed: int = 0
    # The suppressed findings by code and severity: true totals, severity overrides still apply.
    suppressed_codes: dict[str, dict[str, int]] = field(default_factory=dict)
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
    runs: dict[str, _OpenRun] = field(default_factory=dict)
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
            if kind is not None and kind in _event_schema(self.car_version)[0]:
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
        if kind.startswith("action_") and facts.proposal_id is not None and facts.action_id:
            self.check_action(number, kind, (facts.proposal_id, facts.action_id))

    def check_run(self, number: int, kind: str, run_id: str) -> None:
        quoted = _quoted(run_id)
        if kind == "run_started":
            started = self.runs.get(run_id)
            if started is not None:
                message = (
                    f"run {quoted} is started again while open (started on line {started.line})"
                )
                self.push(_finding(RUN_ALREADY_OPEN, message, number, "/run_id"))
            else:
                self.runs[run_id] = _OpenRun(number)
            return
        run = self.runs.get(run_id)
        if run is None:
            if kind == "run_cancellation_result" and run_id in self.completed_runs:
                # CAR writes a cancellation's receipt after the run's terminal, still bound to
                # the run (car-server-core 0.58.0 session.rs, reconcile_durable_run_journals).
                return
            if run_id in self.completed_runs:
                message = f"{kind} event for run {quoted} after its run_completed"
                self.push_once(run_id, _finding(RUN_NOT_OPEN, message, number, "/run_id"))
            else:
                self.mid_run_event(number, run_id, True)
        elif kind == "run_cancellation_requested":
            run.cancellation_requested = True
        elif kind == "run_cancellation_result" and not run.cancellation_requested:
            message = (
                f"run_cancellation_result for run {quoted} without a run_cancellation_requested"
            )
            self.push(_finding(CANCELLATION_NOT_REQUESTED, message, number, "/run_id"))
        elif kind == "run_completed":
            del self.runs[run_id]
            self.completed_runs.insert(run_id, True)

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

    def finish(self, interrupted: bool) -> dict[str, Any]:
        open_runs = sorted((run.line, run_id) for run_id, run in self.runs.items())
        open_proposals = sorted((line, proposal_id) for proposal_id, line in self.proposals.items())
        for index, later in self.repeats.values():
            if index is not None and later:
                code, severity, message, line, pointer, schema_pointer = self.findings[index]
                plural = "" if later == 1 else "s"
                message = f"{message} (and {later} later event{plural} with the same cause)"
                self.findings[index] = (code, severity, message, line, pointer, schema_pointer)
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
        chain: dict[str, int] | None
        if self.chain == "off":
            chain = None
        elif self.tampered_at is not None:
            chain = {"tampered_at": self.tampered_at}
        else:
            chain = {"verified": self.verified}
        return {
            "lines": self.lines,
            "events": self.events,
            "blank_lines": self.blank_lines,
            "invalid_lines": self.invalid_lines,
            "kinds": dict(sorted(self.kinds.items())),
            "chained": self.chained,
            "unchained": self.unchained,
            "verified": self.verified,
            "chain": chain,
            "suppressed_findings": self.suppressed,
            "suppressed_codes": {
                code: dict(sorted(counts.items()))
                for code, counts in sorted(self.suppressed_codes.items())
            },
            "errors": self.errors,
            "open_runs": [run_id for _, run_id in open_runs],
            "open_proposals": [proposal_id for _, proposal_id in open_proposals],
            "interrupted": interrupted,
        }


def check_options(options: JournalOptions) -> None:
    """``ValueError`` for options the core refuses too (``journal_options`` in
    ``rust/python/journal_checks.rs``), before any line is read."""
    if options.chain not in CHAIN_MODES:
        raise ValueError(f"chain must be one of {', '.join(CHAIN_MODES)}, not {options.chain!r}")
    if options.profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, not {options.profile!r}")
    if options.payloads not in car_payloads.MODES:
        modes = ", ".join(car_payloads.MODES)
        raise ValueError(f"payloads must be one of {modes}, not {options.payloads!r}")
    _event_bundle(options.car_version)  # a release not bundled


def check_journal(
    source: Any, options: JournalOptions, progress: Callable[[int], object] | None = None
) -> tuple[list[RawFinding], dict[str, Any]]:
    """Check a journal read from ``source``: a path (str) or a binary file object (``read(n)``).

    Ctrl-C during the check returns the report so far with ``stats["interrupted"]`` true.
    ``progress(bytes_read)`` is called after every read and once at the end.
    """
    findings, stats, _ = _check(source, None, False, options, progress)
    return findings, stats


def check_journal_resumable(
    source: Any,
    state: str | None,
    options: JournalOptions,
    progress: Callable[[int], object] | None = None,
) -> tuple[list[RawFinding], dict[str, Any], str | None]:
    """``check_journal`` going on from ``state`` (the JSON text of the ordered stage's state a
    previous run returned; ``source`` then starts where its lines end), returning with the
    report the state where this run's last complete line ends (None when interrupted).
    ``ValueError`` saying what is wrong for a malformed ``state``."""
    return _check(source, state, True, options, progress)


def new_checker(options: JournalOptions, state: str | None) -> _Checker:
    """The ordered stage for ``options``, going on from ``state`` (the JSON text of a saved
    state) when given; ``ValueError`` for options the core refuses or a malformed state."""
    check_options(options)
    checker = _Checker(options.chain, options.lifecycle, options.max_findings, options.car_version)
    if state is not None:
        try:
            parsed = json.loads(state)
        except ValueError as error:
            raise ValueError(f"not JSON: {error}") from None
        journal_state.restore(checker, parsed)
    return checker


def _check(
    source: Any,
    state: str | None,
    snapshot: bool,
    options: JournalOptions,
    progress: Callable[[int], object] | None,
) -> tuple[list[RawFinding], dict[str, Any], str | None]:
    checker = new_checker(options, state)
    chain, profile, car_version = options.chain, options.profile, options.car_version
    run = _Run(
        checker, chain, profile, options.max_line_length, car_version, snapshot, options.payloads
    )
    if isinstance(source, str):
        with open(source, "rb") as stream:
            run.feed(_counted(stream.read, progress))
    else:
        run.feed(_counted(source.read, progress))
    stats = checker.finish(run.interrupted)
    saved = None
    if run.saved is not None:
        saved = json.dumps(run.saved, ensure_ascii=False, separators=(",", ":"))
    return checker.findings, stats, saved


def _counted(
    read: Callable[[int], bytes], progress: Callable[[int], object] | None
) -> Callable[[int], bytes]:
    """``read`` telling ``progress`` the bytes read so far after each call (as the core does
    between batches; the last call, at the end of the input, gives the total)."""
    if progress is None:
        return read
    done = 0

    def counted(size: int) -> bytes:
        nonlocal done
        chunk = read(size)
        done += len(chunk)
        progress(done)
        return chunk

    return counted


@dataclass
class _Run:
    """Every line fed to the checker; with ``snapshot``, the checker's state is ``saved`` where
    the last line with a newline ends (a last line without one is checked and reported, but read
    again next time). ``interrupted`` by Ctrl-C: nothing is saved."""

    checker: _Checker
    chain: str
    profile: str
    max_line_length: int
    car_version: str | None
    snapshot: bool
    payloads: str
    interrupted: bool = False
    saved: dict[str, Any] | None = None

    def feed(self, read: Callable[[int], bytes]) -> None:
        checker = self.checker
        try:
            for raw in _read_lines(read, self.max_line_length, checker.lines):
                if self.snapshot and not raw.terminated:
                    self.saved = journal_state.snapshot(checker)
                outcome, findings = _check_line(
                    raw,
                    self.chain,
                    self.profile,
                    self.max_line_length,
                    self.car_version,
                    self.payloads,
                )
                checker.take(raw.number, outcome, findings)
        except KeyboardInterrupt:
            self.interrupted = True
            self.saved = None
            return
        if self.snapshot and self.saved is None:
            self.saved = journal_state.snapshot(checker)
