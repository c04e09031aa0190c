"""CAR's event as ``car-eventlog`` 0.58.0 reads and hashes it (``rust/journal/car_event.rs``).

The Rust core calls serde_json and chrono themselves; this module reproduces what they do for a
journal line (the interop tests compare both with CAR's own code, tests/test_journal_car_oracle.py):

- serde_json reading ``Event``: the ten fields in declaration order (a JSON array is read as
  them, by position), ``null`` ids are absent, a duplicate field is an error, ``data`` keeps the
  last of duplicate keys, integers beyond 64 bits become floats, a number beyond the f64 range,
  a lone surrogate or invalid UTF-8 in a string it reads, or nesting 128 deep is an error; members
  it does not know are skipped checking syntax only.
- chrono's ``DateTime<Utc>`` parser (relaxed RFC 3339) and ``to_rfc3339()``.
- serde_json's ``Display`` of a value in CAR's build: compact, object keys in byte order, floats
  as serde_json 1.0.154 writes them (shortest round-trip digits, ``1e+20``, ``1e-7``, ``0.00001``).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .schema import is_event_kind

__all__ = [
    "CHAIN_RULE",
    "CarEvent",
    "CarRejects",
    "civil_from_days",
    "display",
    "line_digest",
    "parse",
]

CHAIN_RULE = "car-eventlog-0.58.0.event_digest"

FIELDS = (
    "kind",
    "run_id",
    "client_id",
    "policy_session_id",
    "action_id",
    "proposal_id",
    "data",
    "timestamp",
    "prev_hash",
    "hash",
)
_OPTIONAL_STRINGS = frozenset(FIELDS) - {"kind", "data", "timestamp"}
# serde_json's recursion limit: 128 levels, the event's own object or array being the first.
_MAX_DEPTH = 127
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_COLON = re.compile(r"[ \t\n\r]*:")
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


class CarRejects(Exception):
    """CAR's event parser rejects the line; the message says why."""


@dataclass
class Timestamp:
    """A chrono ``DateTime<Utc>``: seconds since the epoch (a leap second counts as its :59) and
    nanoseconds (``>= 1e9`` in a leap second, as chrono keeps it)."""

    seconds: int
    nanos: int


@dataclass
class CarEvent:
    kind: str
    run_id: str | None
    client_id: str | None
    policy_session_id: str | None
    action_id: str | None
    proposal_id: str | None
    data: dict[str, Any]
    timestamp: Timestamp | None  # None: absent, CAR takes the time of loading
    prev_hash: str | None
    hash: str | None


class _OutOfRange:
    """A number serde_json cannot read as f64 (it errs where it reads it, skips it elsewhere)."""


_OUT_OF_RANGE = _OutOfRange()


class _Object(dict):  # type: ignore[type-arg]
    """An object with the last of duplicate keys (as serde_json's maps), keeping its key list and
    the values a later duplicate key replaced: serde_json reads every value before the next one
    replaces it, so where it reads the object those must pass its checks too."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.keys_in_order = [key for key, _ in pairs]
        self.replaced = [] if len(self) == len(pairs) else _replaced(pairs)


def _replaced(pairs: list[tuple[str, Any]]) -> list[Any]:
    """The values of ``pairs`` that a later pair with the same key replaces."""
    last = {key: index for index, (key, _) in enumerate(pairs)}
    return [value for index, (key, value) in enumerate(pairs) if last[key] != index]


def _number(text: str) -> Any:
    value = float(text)
    return _OUT_OF_RANGE if math.isinf(value) else value


def _integer(text: str) -> Any:
    if text == "-0":
        return -0.0  # serde_json reads a negative zero integer as the float -0.0
    if len(text) <= 20:
        value = int(text)
        if -(2**63) <= value < 2**64:
            return value
    return _number(text)  # beyond 64 bits: serde_json reads it as f64


def _constant(text: str) -> Any:
    raise CarRejects(f"expected value ({text} is not JSON)")


_DECODER = json.JSONDecoder(
    object_pairs_hook=_Object,
    parse_float=_number,
    parse_int=_integer,
    parse_constant=_constant,
)


def _too_deep_members(text: str) -> list[tuple[int, int, str | None]]:
    """(start, end, member name) of every member value of the event that nests deeper than
    serde_json's limit, in one pass (the name is None inside an array)."""
    spans: list[tuple[int, int, str | None]] = []
    depth = 0
    value_start = 0
    too_deep = False
    key: str | None = None
    for token in _STRING_OR_BRACKET.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth == 2:
                value_start, too_deep = token.start(), False
            too_deep = too_deep or depth > _MAX_DEPTH
        elif char in "]}":
            depth -= 1
            if depth == 1 and too_deep:
                spans.append((value_start, token.end(), key))
                too_deep = False
        elif depth == 1 and _COLON.match(text, token.end()):
            key = char
    if too_deep:  # unbalanced: the syntax error is found by the parser
        spans.append((value_start, len(text), key))
    return spans


def _member_name(token: str | None) -> str | None:
    if token is None:
        return None
    try:
        name = json.loads(token)
    except ValueError:
        return None
    return name if isinstance(name, str) else None


# One token of a skipped value, after optional JSON whitespace: a string (escapes checked, no raw
# control character), a number, a literal, or punctuation.
_SKIPPED_TOKEN = re.compile(
    r'[ \t\n\r]*(?:("(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*")'
    r"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)|(true|false|null)|([\[\]{},:]))"
)


def _skipped_syntax(text: str, start: int, end: int) -> None:
    """What serde_json's ``ignore_value`` checks in a member CAR skips, here one nested too deep
    for Python's parser: its syntax, at any depth (no number range, no UTF-8 or surrogate check,
    as ``ignore_value``); iterative. Raises ``CarRejects`` at the first error."""
    stack: list[str] = []  # the open containers' closing brackets
    expect = "value"  # or "key", "colon", "next" (a comma or the close), "key-or-close", ...
    position = start
    while True:
        token = _SKIPPED_TOKEN.match(text, position, end)
        if token is None:
            raise CarRejects(f"syntax error in a skipped member at column {position + 1}")
        position = token.end()
        string, number, literal, punctuation = token.groups()
        if expect in ("value", "value-or-close"):
            if punctuation in ("[", "{"):
                stack.append("]" if punctuation == "[" else "}")
                expect = "value-or-close" if punctuation == "[" else "key-or-close"
                continue
            if punctuation == "]" and expect == "value-or-close":
                stack.pop()
            elif string is None and number is None and literal is None:
                raise CarRejects(f"expected value in a skipped member at column {position}")
        elif expect in ("key", "key-or-close"):
            if punctuation == "}" and expect == "key-or-close":
                stack.pop()
            elif string is None:
                raise CarRejects(f"key must be a string in a skipped member at column {position}")
            else:
                expect = "colon"
                continue
        elif expect == "colon":
            if punctuation != ":":
                raise CarRejects(f"expected `:` in a skipped member at column {position}")
            expect = "value"
            continue
        elif punctuation == ",":  # expect == "next"
            expect = "value" if stack[-1] == "]" else "key"
            continue
        elif punctuation == stack[-1]:
            stack.pop()
        else:
            expected = f"`,` or `{stack[-1]}`"
            raise CarRejects(f"expected {expected} in a skipped member at column {position}")
        # A value has ended: the span ends with the outermost one.
        if not stack:
            if text[position:end].strip(" \t\n\r"):
                raise CarRejects(f"syntax error in a skipped member at column {position + 1}")
            return
        expect = "next"


def _load(text: str) -> Any:
    """``text`` as Python values. A member CAR skips that nests too deep for serde_json (and for
    Python's parser) is replaced by null: serde_json's ``ignore_value`` has no depth limit."""
    spans = _too_deep_members(text)
    if spans:
        if text.lstrip(" \t\n\r").startswith("["):
            raise CarRejects("recursion limit exceeded")
        parts = []
        position = 0
        for start, end, token in spans:
            if _member_name(token) in FIELDS:
                raise CarRejects("recursion limit exceeded")
            _skipped_syntax(text, start, end)
            parts.append(text[position:start])
            parts.append("null")
            position = end
        parts.append(text[position:])
        text = "".join(parts)
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as error:
        raise CarRejects(f"{error.msg} at column {error.colno}") from None
    except RecursionError:
        raise CarRejects("recursion limit exceeded") from None


def _check_read(value: Any, where: str) -> None:
    """What serde_json checks in a value it reads: f64 range, strings and keys without lone
    surrogates (escaped, or invalid UTF-8 bytes, which arrive here as surrogates)."""
    if value is _OUT_OF_RANGE:
        raise CarRejects(f"number out of range in {where}")
    if isinstance(value, str):
        if _LONE_SURROGATE.search(value):
            raise CarRejects(f"lone surrogate or invalid UTF-8 in {where}")
    elif isinstance(value, list):
        for item in value:
            _check_read(item, where)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_read(key, where)
            _check_read(item, where)
        for item in value.replaced if isinstance(value, _Object) else ():
            _check_read(item, where)


def parse(line: bytes, release: str | None = None) -> CarEvent:
    """Reads one journal line as CAR ``release`` (default: the default release) does; raises
    ``CarRejects`` where CAR's parser errs."""
    # Invalid UTF-8 becomes lone surrogates: serde_json skips such bytes inside strings it ignores
    # and rejects them everywhere else, which the checks below reproduce.
    text = bytes(line).decode("utf-8", "surrogateescape")
    value = _load(text)
    fields: dict[str, Any]
    if isinstance(value, _Object):
        for key in value.keys_in_order:
            _check_read(key, "a member name")
        seen: set[str] = set()
        for key in value.keys_in_order:
            if key in FIELDS:
                if key in seen:
                    raise CarRejects(f"duplicate field `{key}`")
                seen.add(key)
        fields = {key: value[key] for key in FIELDS if key in value}
    elif isinstance(value, list):
        if not value:
            raise CarRejects("invalid length 0, expected struct Event")
        if len(value) > len(FIELDS):
            raise CarRejects("trailing characters")
        fields = dict(zip(FIELDS, value, strict=False))
    else:
        raise CarRejects("invalid type, expected struct Event")
    if "kind" not in fields:
        raise CarRejects("missing field `kind`")
    kind = _kind(fields["kind"], release)
    strings: dict[str, str | None] = {}
    for name in _OPTIONAL_STRINGS:
        member = fields.get(name)
        if member is not None:
            if not isinstance(member, str):
                raise CarRejects(f"invalid type for `{name}`, expected a string")
            _check_read(member, f"`{name}`")
        strings[name] = member
    data = fields.get("data", {})
    if not isinstance(data, dict):
        raise CarRejects("invalid type for `data`, expected a map")
    _check_read(data, "`data`")
    timestamp: Timestamp | None = None
    if "timestamp" in fields:
        stamp = fields["timestamp"]
        if not isinstance(stamp, str):
            raise CarRejects("invalid type for `timestamp`, expected a string")
        timestamp = parse_timestamp(stamp)
        if timestamp is None:
            raise CarRejects(f"`timestamp` is not a date-time chrono reads: {stamp!r}")
    return CarEvent(
        kind=kind,
        run_id=strings["run_id"],
        client_id=strings["client_id"],
        policy_session_id=strings["policy_session_id"],
        action_id=strings["action_id"],
        proposal_id=strings["proposal_id"],
        data=dict(data),
        timestamp=timestamp,
        prev_hash=strings["prev_hash"],
        hash=strings["hash"],
    )


def _kind(member: Any, release: str | None) -> str:
    """An ``EventKind`` of CAR ``release`` through serde's enum protocol: a name, or
    ``{"name": null}`` (one member as written: serde_json expects the object's end after the
    variant, so a repeated key is refused too)."""
    if isinstance(member, _Object) and len(member.keys_in_order) == 1:
        ((name, unit),) = member.items()
        if isinstance(name, str) and is_event_kind(name, release):
            if unit is not None:
                raise CarRejects(f"invalid type for unit variant `{name}`, expected null")
            return name
        raise CarRejects(f"unknown variant `{name}` of enum EventKind")
    if isinstance(member, str) and is_event_kind(member, release):
        return member
    if isinstance(member, str):
        raise CarRejects(f"unknown variant `{member}` of enum EventKind")
    raise CarRejects("invalid type for `kind`, expected enum EventKind")


# -------------------------------------------------------------------------------------------------
# chrono: DateTime<Utc> from its relaxed RFC 3339 (`parse_rfc3339_relaxed`), and to_rfc3339()

# Rust's `char::is_whitespace` (Unicode White_Space); Python's isspace also counts \x1c-\x1f.
_RUST_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_MIN_YEAR = -262_144  # chrono 0.4's NaiveDate range: i32::MIN >> 13 ..= i32::MAX >> 13
_MAX_YEAR = 262_143


class _Invalid(Exception):
    pass


def _trim(text: str) -> str:
    index = 0
    while index < len(text) and text[index] in _RUST_WHITESPACE:
        index += 1
    return text[index:]


def _digits(text: str, least: int, most: int) -> tuple[str, int]:
    """chrono's ``scan::number``: ``least`` to ``most`` ASCII digits."""
    count = 0
    while count < min(most, len(text)) and "0" <= text[count] <= "9":
        count += 1
    if count < least:
        raise _Invalid
    value = int(text[:count])
    if value >= 2**63:
        raise _Invalid
    return text[count:], value


def _literal(text: str, literal: str) -> str:
    text = _trim(text)  # the `Item::Space("")` before each literal
    if not text.startswith(literal):
        raise _Invalid
    return text[len(literal) :]


def _offset(text: str) -> tuple[str, int]:
    """chrono's ``timezone_offset`` with colon_or_space, Z allowed, minutes required, U+2212."""
    if text[:1] in ("Z", "z"):
        return text[1:], 0
    if not text:
        raise _Invalid
    sign = text[0]
    if sign not in ("+", "-", "\u2212"):
        raise _Invalid
    text = text[1:]
    if len(text) < 2 or not (text[:2].isascii() and text[:2].isdigit()):
        raise _Invalid
    hours = int(text[:2])
    text = text[2:]
    while text and (text[0] == ":" or text[0] in _RUST_WHITESPACE):
        text = text[1:]
    if len(text) < 2 or not ("0" <= text[0] <= "5" and "0" <= text[1] <= "9"):
        raise _Invalid
    minutes = int(text[:2])
    seconds = hours * 3600 + minutes * 60
    return text[2:], -seconds if sign != "+" else seconds


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm)."""
    if month <= 2:
        year -= 1
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


def civil_from_days(days: int) -> tuple[int, int, int]:
    """The Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm)."""
    days += 719_468
    era = days // 146_097
    day_of_era = days - era * 146_097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146_096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    month = month_index + 3 if month_index < 10 else month_index - 9
    return year_of_era + era * 400 + (month <= 2), month, day


# The common form, `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, read by one regular expression: the general
# reader below costs most of a small line's time in the fallback.
_COMMON_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?Z"
)


def parse_timestamp(text: str) -> Timestamp | None:
    """``text.parse::<DateTime<Utc>>()`` as chrono 0.4.45 does it; None where chrono errs."""
    common = _COMMON_TIMESTAMP.fullmatch(text)
    if common is not None:
        year, month, day, hour, minute, second = (int(part) for part in common.groups()[:6])
        if (
            1 <= month <= 12
            and 1 <= day <= _days_in_month(year, month)
            and hour <= 23
            and minute <= 59
            and second <= 59
        ):
            nanos = int((common.group(7) or "").ljust(9, "0"))
            local = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60
            return Timestamp(local + second, nanos)
    try:
        return _parse_timestamp(text)
    except _Invalid:
        return None


def _parse_timestamp(text: str) -> Timestamp:
    rest = _trim(text)
    if rest.startswith("-"):
        rest, year = _digits(rest[1:], 1, 64)
        year = -year
    elif rest.startswith("+"):
        rest, year = _digits(rest[1:], 1, 64)
    else:
        rest, year = _digits(rest, 1, 4)
    rest, month = _digits(_trim(_literal(rest, "-")), 1, 2)
    rest, day = _digits(_trim(_literal(rest, "-")), 1, 2)
    if rest[:1] not in ("T", "t", " "):
        raise _Invalid
    rest, hour = _digits(_trim(rest[1:]), 1, 2)
    rest, minute = _digits(_trim(_literal(rest, ":")), 1, 2)
    rest, second = _digits(_trim(_literal(rest, ":")), 1, 2)
    nanos = 0
    if rest.startswith("."):
        fraction = rest[1:]
        count = 0
        while count < len(fraction) and "0" <= fraction[count] <= "9":
            count += 1
        if count == 0:
            raise _Invalid
        nanos = int(fraction[: min(count, 9)].ljust(9, "0"))
        rest = fraction[count:]
    rest = _trim(rest)
    if len(rest) >= 3 and rest[:3].isascii() and rest[:3].upper() == "UTC":
        rest, offset = rest[3:], 0
    else:
        rest, offset = _offset(rest)
    if _trim(rest):
        raise _Invalid
    if not (
        1 <= month <= 12
        and 1 <= day <= 31
        and hour <= 23
        and minute <= 59
        and second <= 60
        and -(2**31) <= year < 2**31
    ):
        raise _Invalid
    if not (_MIN_YEAR <= year <= _MAX_YEAR) or day > _days_in_month(year, month):
        raise _Invalid
    if offset <= -86_400 or offset >= 86_400:
        raise _Invalid
    if second == 60:
        second, nanos = 59, nanos + 1_000_000_000
    local = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
    seconds = local - offset
    lowest = days_from_civil(_MIN_YEAR, 1, 1) * 86_400
    highest = days_from_civil(_MAX_YEAR, 12, 31) * 86_400 + 86_399
    if not lowest <= seconds <= highest:
        raise _Invalid
    return Timestamp(seconds, nanos)


def timestamp_text(time: Timestamp) -> str:
    """chrono's ``to_rfc3339()`` of a ``DateTime<Utc>``."""
    days, second_of_day = divmod(time.seconds, 86_400)
    year, month, day = civil_from_days(days)
    hour, remainder = divmod(second_of_day, 3600)
    minute, second = divmod(remainder, 60)
    nanos = time.nanos
    if nanos >= 1_000_000_000:
        second, nanos = second + 1, nanos - 1_000_000_000
    year_text = f"{year:04d}" if 0 <= year <= 9999 else f"{year:+05d}"
    if nanos == 0:
        fraction = ""
    elif nanos % 1_000_000 == 0:
        fraction = f".{nanos // 1_000_000:03d}"
    elif nanos % 1000 == 0:
        fraction = f".{nanos // 1000:06d}"
    else:
        fraction = f".{nanos:09d}"
    return f"{year_text}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}{fraction}+00:00"


# -------------------------------------------------------------------------------------------------
# serde_json's Display in CAR's build, and the digest


def _float_text(value: float) -> str:
    """serde_json 1.0.154's f64 text (zmij): the shortest round-trip digits, fixed notation for
    decimal exponents -5..=15 (``1e15`` is ``1000000000000000.0``), else ``d.ddde+N``."""
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    mantissa, _, exponent_text = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    all_digits = whole + fraction
    significant = all_digits.lstrip("0")
    leading_zeros = len(all_digits) - len(significant)
    exponent = len(whole) + int(exponent_text or 0) - leading_zeros - 1
    digits = significant.rstrip("0")
    sign = "-" if value < 0 else ""
    count = len(digits)
    if -5 <= exponent <= 15:
        if count - 1 <= exponent:
            return f"{sign}{digits}{'0' * (exponent - count + 1)}.0"
        if exponent >= 0:
            return f"{sign}{digits[: exponent + 1]}.{digits[exponent + 1 :]}"
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    point = f"{digits[0]}.{digits[1:]}" if count > 1 else digits
    return f"{sign}{point}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"


def display(value: Any) -> str:
    """``format!("{}", value)`` of a serde_json ``Value`` in CAR's build."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, str):
        # json.dumps escapes exactly as serde_json does: \" \\ \b \f \n \r \t, other controls
        # as \u00xx (lowercase), nothing else.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(display(item) for item in value) + "]"
    # Code point order is UTF-8 byte order, the order of serde_json's BTreeMap keys.
    members = sorted(value.items())
    return "{" + ",".join(f"{display(key)}:{display(item)}" for key, item in members) + "}"


def digest(event: CarEvent) -> str | None:
    """CAR's ``event_digest`` with the event's recorded ``prev_hash``; None without a timestamp
    (CAR hashes the time of loading then)."""
    if event.timestamp is None:
        return None
    data = "\x1f".join(f"{key}={display(event.data[key])}" for key in sorted(event.data))
    hasher = hashlib.sha256()
    update: Callable[[str], None] = lambda text: hasher.update(text.encode("utf-8"))  # noqa: E731
    update(event.prev_hash or "")
    update("\x1e")
    update(json.dumps(event.kind))
    if (
        event.run_id is not None
        or event.client_id is not None
        or event.policy_session_id is not None
    ):
        update("\x1d")
        update(event.run_id or "")
        update("\x1f")
        update(event.client_id or "")
        update("\x1f")
        update(event.policy_session_id or "")
    update("\x1e")
    update(event.action_id or "")
    update("\x1e")
    update(event.proposal_id or "")
    update("\x1e")
    update(data)
    update("\x1e")
    update(timestamp_text(event.timestamp))
    return hasher.hexdigest()


def line_digest(line: bytes) -> str:
    """CAR's digest of one journal line; raises ``CarRejects`` if CAR cannot compute it."""
    result = digest(parse(line))
    if result is None:
        raise CarRejects('no "timestamp": CAR would hash the time it loads the journal')
    return result
