"""CAR journals on the pure-Python backend: the same rules as ``rust/journal/mod.rs``, line by line.

Lines are read in bounded chunks (a line over ``max_line_length`` is counted and skipped, never
held), checked one after the other, and only the open runs / proposals / actions plus a fixed
window of recently closed ids are remembered. Findings and stats are identical to the core's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from ..._tables import DEFAULT_MAX_FINDINGS, DEFAULT_MAX_LINE_LENGTH
from ...codes import (
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
    DUPLICATE_KEY,
    FORM_FEED_LINE,
    INTEGER_OUT_OF_RANGE,
    LINE_TOO_LONG,
    NOT_AN_OBJECT,
    SCHEMA_VIOLATION,
    TRUNCATED_FINAL_LINE,
)
from ...errors import CanonicalizationError
from ...journal.stats import JournalStats
from ..findings import RawFinding
from ..parse import escape_pointer_token, parse_json, unescape_pointer_token
from ..validate import (
    bundle_validator,
    is_date_time,
)
from . import car_event, car_payloads
from . import state as journal_state
from .kinds import name_unknown_kind
from .ordered import (
    CLOSED_WINDOW,
    Instant,
    _Checker,
    _EventFacts,
    _finding,
    _quoted,
)
from .schema import (
    EVENT_SCHEMA,
    _event_bundle,
    _event_schema,
    is_event_kind,
    journal_event_kinds,
)

if TYPE_CHECKING:
    from ...journal.options import JournalOptions

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
READ_SIZE = 1 << 20


CHAIN_MODES = ("auto", "require", "off")
PROFILES = ("strict", "car-compatible")


@cache
def _payloads(release: str | None) -> car_payloads.Payloads:
    """CAR's payload contracts for the bundle of CAR ``release``, or its own payload schemas."""
    bundle = _event_bundle(release)
    return car_payloads.Payloads(
        bundle.version, bundle.document, journal_event_kinds(bundle.version)
    )


def journal_chain_digest(line: bytes) -> str:
    """CAR's chain digest of one journal line; ``ValueError`` with the reason CAR cannot."""
    try:
        return car_event.line_digest(line)
    except car_event.CarRejects as error:
        raise ValueError(str(error)) from None


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


# car-eventlog's loader skips every line of ASCII whitespace (Rust's `is_ascii_whitespace`: also
# form feed), though JSON's whitespace has no form feed; without its newline, such a last line is
# still a torn tail (`load_from_journal`).
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
    release: str | None,
    payloads: str,
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
        blank: list[RawFinding] = []
        if b"\x0c" in text:
            message = (
                "a line of whitespace with a form feed, which JSON does not count as whitespace: "
                "CAR's loader skips it as blank"
            )
            blank.append(_finding(FORM_FEED_LINE, message, number, ""))
        if car_compatible and not raw.terminated:
            blank.append(_torn_tail(number))
        return "blank", blank
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
            car = car_event.parse(text, release)
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
        findings.extend(_schema_findings(value, profile, number, release))
    elif not car_accepts:
        message = f"a journal line must be a JSON object (an event), not {_json_type(value)}"
        invalid = [_finding(NOT_AN_OBJECT, message, number, "")]
        if car_compatible and not raw.terminated:
            # CAR's loader reads an unterminated last line it cannot make an event of as a torn
            # tail, whatever JSON it is (`load_from_journal`; a differential found `0`).
            invalid.append(_torn_tail(number))
        return "invalid", invalid
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
            findings.extend(_payloads(release).findings(kind, data, payloads, number))
    if car_compatible and not raw.terminated:
        findings.append(_torn_tail(number))
        if not car_accepts:
            # CAR drops an unterminated last line it cannot parse (a torn tail): it is none of its
            # events, so not a link of its chain either.
            return "invalid", findings
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


def _torn_tail(number: int) -> RawFinding:
    """A last line without its newline under car-compatible: car-eventlog's ``load_from_journal``
    records it as ``torn_tail_line`` whatever it holds (an event, a line it cannot parse,
    whitespace), and ``load_read_only`` then refuses the journal."""
    message = (
        "the last line has no newline: CAR's read-only loader refuses the journal as a torn tail"
    )
    return _finding(CAR_TORN_TAIL, message, number, "")


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
    code, message, line = finding.code, finding.message, finding.line
    where = finding.pointer or ""
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
# What the schema allows an id member to be: a string, or null or absent (`get` answers None).
_ID_TYPES = (str, type(None))


@cache
def _shape_is_known(release: str | None) -> bool:
    """Whether the bundle's ``journal.event`` is the shape ``_plainly_valid`` checks by hand: an
    object of string-or-null ids, an object ``data``, a ``date-time`` string ``timestamp``, a
    ``kind`` from string enums, nothing else (descriptions aside)."""
    schema = _event_bundle(release).schema(EVENT_SCHEMA)
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


def _plainly_valid(event: dict[str, Any], release: str | None) -> bool:
    """True for the common valid event, decided without jsonschema (whose ``oneOf`` over the
    event kinds is most of the fallback's time on small lines); False means "ask the validator".
    Only for a bundle whose event schema is the shape checked here (``_shape_is_known``)."""
    kinds, members = _event_schema(release)
    if not _shape_is_known(release):
        return False
    kind, data, stamp = event.get("kind"), event.get("data"), event.get("timestamp")
    return (
        type(kind) is str
        and kind in kinds
        and type(data) is dict
        and type(stamp) is str
        and is_date_time(stamp)
        and members.issuperset(event)
        and all(type(event.get(name)) in _ID_TYPES for name in _ID_MEMBERS)
    )


def _schema_findings(
    event: dict[str, Any], profile: str, number: int, release: str | None
) -> list[RawFinding]:
    """Schema findings of one event. Under ``car-compatible``, unknown members (which CAR's parser
    ignores) and missing ``data`` / ``timestamp`` (which it defaults) are PF304 warnings, and the
    rest of the event is validated as if they were absent / present."""
    bundle = _event_bundle(release)
    validator = bundle_validator(bundle, EVENT_SCHEMA)
    unknown: list[str] = []
    missing: list[str] = []
    instance = event
    if profile == "car-compatible":
        members = _event_schema(release)[1]
        unknown = [key for key in event if key not in members]
        instance = {key: value for key, value in event.items() if key in members}
        for name, stand_in in CAR_DEFAULTED:
            if name not in event:
                missing.append(name)
                instance[name] = stand_in
    # Valid events are the rule: the quick yes/no check spares collecting (and sorting) errors.
    valid = _plainly_valid(instance, release) or validator.is_valid(instance)
    violations = [] if valid else validator.errors(instance)
    # A kind the release does not know is named as such (kinds.py).
    kinds = _event_schema(release)[0]
    findings = [
        name_unknown_kind(
            _finding(SCHEMA_VIOLATION, message, number, pointer, schema_pointer, best),
            event,
            kinds,
            bundle.version,
        )
        for pointer, schema_pointer, _keyword, message, best in violations
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


def parse_timestamp(text: str) -> Instant | None:
    """A timestamp as the instant CAR reads (chrono's relaxed RFC 3339, as ``DateTime<Utc>``);
    None if chrono does not read it (the schema check reports that)."""
    time = car_event.parse_timestamp(text)
    return None if time is None else (time.seconds, time.nanos)


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
    _event_bundle(options.release)  # a release the core has no bundle for


def check_journal(
    source: Any, options: JournalOptions, progress: Callable[[int], object] | None = None
) -> tuple[list[RawFinding], JournalStats]:
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
) -> tuple[list[RawFinding], JournalStats, str | None]:
    """``check_journal`` going on from ``state`` (the JSON text of the ordered stage's state a
    previous run returned; ``source`` then starts where its lines end), returning with the
    report the state where this run's last complete line ends (None when interrupted).
    ``ValueError`` saying what is wrong for a malformed ``state``."""
    return _check(source, state, True, options, progress)


def new_checker(options: JournalOptions, state: str | None) -> _Checker:
    """The ordered stage for ``options``, going on from ``state`` (the JSON text of a saved
    state) when given; ``ValueError`` for options the core refuses or a malformed state."""
    check_options(options)
    checker = _Checker(options.chain, options.lifecycle, options.max_findings, options.release)
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
) -> tuple[list[RawFinding], JournalStats, str | None]:
    checker = new_checker(options, state)
    chain, profile, release = options.chain, options.profile, options.release
    run = _Run(
        checker, chain, profile, options.max_line_length, release, snapshot, options.payloads
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
    release: str | None
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
                    self.release,
                    self.payloads,
                )
                checker.take(raw.number, outcome, findings)
        except KeyboardInterrupt:
            self.interrupted = True
            self.saved = None
            return
        if self.snapshot and self.saved is None:
            self.saved = journal_state.snapshot(checker)
