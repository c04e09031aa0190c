"""Mutated windows of real CAR journals, for the differentials (tests/journal_differential.py), and
the minimiser that shrinks a failing case to a reproducer.

Sources: CAR's own journals (the fixtures under tests/data/car, with their events unwrapped; the
journals interop/car-oracle writes through CAR's ``EventLog`` when it is built), the bundled
examples and ``generate`` output for each release, chained and not. A case is a window of 1-12
of a source's lines with 1-3 mutations, some of them re-chained afterwards so that the chain
itself is valid and only the mutation is judged."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from pairling_fast.generate.journal import generate_journal
from pairling_fast.journal import event_kinds
from pairling_fast.journal.writers import chain_event, event_line

ROOT = Path(__file__).resolve().parent.parent
IDS = ("run_id", "proposal_id", "action_id", "client_id", "policy_session_id")

# The seven disagreements of issue 45 (tests/test_journal_agreement.py), run first by both
# differentials: (journal bytes, options).
_LEAP = (
    b'{"kind":"state_changed","data":{},"timestamp":"2026-12-31T23:59:60Z","prev_hash":"",'
    b'"hash":"8796ac0e61b61d0ebf036fbb02130c1136c5a6094614b5f05606598e5312d4cd"}\n'
)
_EVENT = b'{"kind":"state_changed","data":%s,"timestamp":"2026-01-01T00:00:00Z"%s}'
_ACTION = (
    b'{"kind":"%s","run_id":"r","proposal_id":"p"%s,"data":{},"timestamp":"2026-01-01T00:00:00Z"}\n'
)
REGRESSION_SEEDS: list[tuple[bytes, dict[str, Any]]] = [
    (_LEAP, {}),
    (_LEAP.replace(b"23:59:60Z", b"18:59:60-05:00"), {}),
    (_EVENT.replace(b"state_changed", b"model_call_refused") % (b"{}", b"") + b"\n",
     {"car_version": "0.58.0"}),
    (_EVENT % (b"{}", b"") + b"\n ", {}),
    (_LEAP + _EVENT % (b'{"x":1e400}', b""), {}),
    (_EVENT % (b'{"x":1e400,"x":1}', b"") + b"\n", {}),
    (_EVENT % (b"{}", b',"skip":' + b"[" * 200 + b'{"a" 1}' + b"]" * 200) + b"\n", {}),
    (_ACTION % (b"proposal_received", b"") + _ACTION % (b"action_succeeded", b',"action_id":""'),
     {"lifecycle": True}),
    # Found by the paths differential (seed 45): the kind's map form with a repeated key.
    (b'{"kind":{"proposal_received":[],"proposal_received":null},"data":{}}', {}),
]  # fmt: skip

NUMBERS = [
    "1e400", "-1e400", "1e-400", "-0", "-0.0", "0.0", "18446744073709551615",
    "18446744073709551616", "-9223372036854775809", "123456789012345678901234567890",
    "5e-324", "1.7976931348623157e308", "1E+2", "0.30000000000000004", "1e16", "1e-7",
]  # fmt: skip
TIMESTAMPS = [
    "2026-01-01T00:00:00+05:30", "2026-01-01T00:00:00-00:00", "2026-01-01t00:00:00z",
    "2026-01-01T00:00:00.123456789012Z", "2026-12-31T23:59:60Z", "2026-12-31T23:59:60.5Z",
    "2026-06-30T18:59:60-05:00", "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z",
    "2026-01-01 00:00:00Z", "2026-01-01T00:00:00", "2026-01-01T24:00:00Z", "0000-01-01T00:00:00Z",
    "2024-02-29T12:00:00.5+00:00", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00UTC", "",
]  # fmt: skip
ESCAPES = [
    "\\ud800",
    "\\udc00",
    "\\ud83d\\ude00",
    "\\u0041",
    "\\n",
    "\\/",
    "\\\\",
    '\\"',
    "\\u0000",
]


@cache
def sources() -> list[list[bytes]]:
    """The real journals, each as its lines (with their newlines)."""
    journals: list[list[bytes]] = []
    for path in sorted((ROOT / "tests" / "data" / "car").glob("*.jsonl")) + sorted(
        (ROOT / "examples" / "journals").glob("*.jsonl")
    ):
        lines = path.read_bytes().splitlines(keepends=True)
        events = []
        for line in lines:
            wrapped = json.loads(line)
            # The CAR self-heal fixtures wrap each event as {"event": ..., "path": ...}.
            if isinstance(wrapped.get("event"), dict):
                events.append(event_line(wrapped["event"]))
        journals.append(events or lines)
    for car_version in ("0.58", "0.60"):
        for chain in (False, True):
            journals.append(generate_journal(120, 7, chain=chain, car_version=car_version)[0])
    return journals


def add_sources(paths: list[Path]) -> None:
    """Adds journals CAR itself wrote (interop/car-oracle ``write``) to the sources."""
    sources().extend(p.read_bytes().splitlines(keepends=True) for p in paths)


def _dumps(value: Any, duplicate: list[int] | None = None) -> str:
    """Compact JSON of ``value``; ``duplicate`` (a one-item countdown) repeats the first member
    of the object it reaches zero at, with another value: duplicate keys at any depth."""
    if isinstance(value, dict):
        members = [
            f"{json.dumps(k, ensure_ascii=False)}:{_dumps(v, duplicate)}" for k, v in value.items()
        ]
        if duplicate is not None and value:
            duplicate[0] -= 1
            if duplicate[0] == 0:
                key = json.dumps(next(iter(value)), ensure_ascii=False)
                members.insert(0, f"{key}:{json.dumps(duplicate[1:] or 1)}")
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dumps(v, duplicate) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _objects(value: Any) -> int:
    if isinstance(value, dict):
        return bool(value) + sum(_objects(v) for v in value.values())
    if isinstance(value, list):
        return sum(_objects(v) for v in value)
    return 0


def _event_edit(event: dict[str, Any], rng: random.Random) -> str:
    """One edit of a parsed event, as its new JSON text."""
    how = rng.randrange(11)
    data = event.get("data") if isinstance(event.get("data"), dict) else None
    if how == 0:  # duplicate keys at any depth, inside data too
        count = _objects(event)
        return _dumps(event, [rng.randint(1, max(count, 1)), rng.choice([1, "x", None, 1e400])])
    if how == 1:  # deep nesting in data or in a member CAR skips
        depth = rng.choice([100, 126, 127, 128, 129, 200, 511, 513, 700])
        deep = "[" * depth + rng.choice(["1", "", '{"a" 1}', '{"a":1}']) + "]" * depth
        text = _dumps(event)
        if rng.random() < 0.5:
            return _replace_member(text, "data", "deep", deep)
        return _added(text, "skip", deep)
    if how == 2:  # big, tiny, negative-zero and wide numbers
        number = rng.choice(NUMBERS)
        text = _dumps(event)
        if rng.random() < 0.7:
            key = rng.choice([*(data or {}), "n", "tokens_in", "cost_usd"])
            return _replace_member(text, "data", key, number)
        return _added(text, "n", number)
    if how == 3:
        event["timestamp"] = rng.choice(TIMESTAMPS)
    elif how == 4:  # a kind of another release, an unknown one, the enum's map form
        kinds = sorted(set(event_kinds("0.60")) ^ set(event_kinds("0.58")))
        choice = rng.randrange(4)
        if choice == 0 and kinds:
            event["kind"] = rng.choice(kinds)
        elif choice == 1:
            event["kind"] = rng.choice(["no_such_kind", "", "Run_started"])
        elif choice == 2:
            event["kind"] = {str(event.get("kind")): None}
        else:
            event["kind"] = rng.choice(event_kinds())
    elif how == 5 and data:  # data members dropped or retyped
        key = rng.choice(sorted(data))
        if rng.random() < 0.5:
            del data[key]
        else:
            data[key] = rng.choice([None, 1, "1", [], {}, True, -1, 1.5])
    elif how == 6:  # empty and null ids
        event[rng.choice(IDS)] = rng.choice(["", None, "r1", 0])
    elif how == 7:  # escapes in a string
        text = _dumps(event)
        quotes = [i for i, c in enumerate(text) if c == '"']
        if quotes:
            at = rng.choice(quotes) + 1
            return text[:at] + rng.choice(ESCAPES) + text[at:]
    elif how == 8:  # a very long line
        event["long"] = "x" * rng.choice([1000, 5000, 70000])
    elif how == 9:  # drop or null a top-level member
        key = rng.choice(sorted(event))
        if rng.random() < 0.5:
            del event[key]
        else:
            event[key] = None
    else:  # the event as an array of its fields, as serde's visit_seq reads it
        fields = ["kind", "run_id", "client_id", "policy_session_id", "action_id", "proposal_id",
                  "data", "timestamp", "prev_hash", "hash"]  # fmt: skip
        return json.dumps([event.get(f) for f in fields[: rng.randint(1, 10)]])
    return _dumps(event)


def _added(text: str, key: str, raw: str) -> str:
    """The object ``text`` with member ``key`` (its JSON text ``raw``) added last."""
    return text[:-1] + ("," if text != "{}" else "") + f"{json.dumps(key)}:{raw}}}"


def _replace_member(text: str, parent: str, key: str, raw: str) -> str:
    """``text`` with ``raw`` as member ``key`` of its object member ``parent``, first (a key it
    has already is then a duplicate, the later one winning)."""
    marker = f'"{parent}":{{'
    at = text.find(marker)
    if at < 0:
        return _added(text, parent, "{" + f"{json.dumps(key)}:{raw}" + "}")
    at += len(marker)
    return text[:at] + f"{json.dumps(key)}:{raw}" + ("," if text[at] != "}" else "") + text[at:]


def _byte_edit(data: bytes, rng: random.Random) -> bytes:
    """One edit of the window's bytes."""
    how = rng.randrange(8)
    at = rng.randint(0, len(data))
    if how == 0 and data:  # a flipped byte
        at = min(at, len(data) - 1)
        return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]
    if how == 1:  # CRLF on some lines or all
        if rng.random() < 0.5:
            return data.replace(b"\n", b"\r\n")
        return data.replace(b"\n", b"\r\n", rng.randint(1, 3))
    if how == 2:  # a BOM at the start or at a line's start
        if rng.random() < 0.5:
            return b"\xef\xbb\xbf" + data
        at = data.find(b"\n", at) + 1
        return data[:at] + b"\xef\xbb\xbf" + data[at:]
    if how == 3:
        return data[:at] + b"\x00" + data[at:]
    if how == 4:  # invalid UTF-8
        bad = rng.choice([b"\xff", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"])
        return data[:at] + bad + data[at:]
    if how == 5:  # cut anywhere inside a UTF-8 character or line: a torn tail
        return data[:at]
    if how == 6:  # a whitespace-only last line without newline
        return data.rstrip(b"\n") + b"\n" + rng.choice([b" ", b"\t", b"\r", b"\x0c", b"  "])
    # a whitespace line somewhere
    at = data.find(b"\n", at) + 1
    return data[:at] + rng.choice([b"\n", b" \n", b"\x0c\n", b"\r\n", b"\t \n"]) + data[at:]


def _rechained(lines: list[bytes]) -> list[bytes]:
    """The lines with every event that parses re-linked, so the chain itself holds."""
    out, previous = [], None
    for line in lines:
        try:
            event = json.loads(line)
            if not isinstance(event, dict):
                raise ValueError
            event = {k: v for k, v in event.items() if k not in ("prev_hash", "hash")}
            linked = chain_event(event, previous)
        except Exception:  # a line CAR cannot hash stays as it is
            out.append(line)
            continue
        previous = linked["hash"]
        out.append(event_line(linked))
    return out


def mutated_case(rng: random.Random) -> bytes:
    """A window of a real journal with 1-3 mutations, re-chained one time in four."""
    journal = rng.choice(sources())
    start = rng.randrange(len(journal))
    lines = list(journal[start : start + rng.randint(1, 12)])
    for _ in range(rng.randint(1, 3)):
        how = rng.randrange(10)
        index = rng.randrange(len(lines)) if lines else 0
        if how < 4 and lines:  # a structured edit of one event
            try:
                event = json.loads(lines[index])
                if isinstance(event, dict):
                    edited = _event_edit(event, rng)
                    lines[index] = edited.encode("utf-8", "surrogatepass") + b"\n"
            except (ValueError, RecursionError):  # not JSON, or nested too deep to edit
                continue
        elif how == 4 and lines:
            del lines[index]
        elif how == 5 and lines:
            lines.insert(index, lines[rng.randrange(len(lines))])
        elif how == 6 and len(lines) > 1:
            other = rng.randrange(len(lines))
            lines[index], lines[other] = lines[other], lines[index]
        else:
            data = _byte_edit(b"".join(lines), rng)
            lines = data.splitlines(keepends=True)
    if rng.random() < 0.25:
        lines = _rechained(lines)
    return b"".join(lines)


def minimised(data: bytes, fails: Callable[[bytes], bool]) -> bytes:
    """A smaller input that still ``fails``: ddmin over lines, then over bytes."""
    lines = _ddmin(data.splitlines(keepends=True), lambda parts: fails(b"".join(parts)))
    return b"".join(
        _ddmin([bytes([b]) for b in b"".join(lines)], lambda parts: fails(b"".join(parts)))
    )


def _ddmin(parts: list[bytes], fails: Callable[[list[bytes]], bool]) -> list[bytes]:
    """Zeller's ddmin: removes complements of ever smaller chunks while the input still fails
    (capped at a few thousand tries: a reproducer, not a proof)."""
    granularity, tries = 2, 0
    while len(parts) >= 2 and tries < 3000:
        size = max(1, len(parts) // granularity)
        reduced = False
        for start in range(0, len(parts), size):
            complement = parts[:start] + parts[start + size :]
            tries += 1
            if complement and fails(complement):
                parts, granularity, reduced = complement, max(granularity - 1, 2), True
                break
        if not reduced:
            if size == 1:
                break
            granularity = min(len(parts), granularity * 2)
    return parts
