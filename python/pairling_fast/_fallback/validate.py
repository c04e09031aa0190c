"""JSON Schema validation for the pure-Python backend; mirrors ``rust/validate/mod.rs``.

python-jsonschema does the validating. This module makes it report what jsonschema-rs reports:
the same draft detection, the same ``format`` checks (``docs/formats.md``), ``$ref``s resolved (and
refused when remote) at compile time, and errors as ``(pointer, schema_pointer, keyword, message)``
where the first three match the Rust backend exactly. The normalizations needed for that are listed
in ``docs/formats.md`` ("Error triples").
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from decimal import Decimal
from fractions import Fraction
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import jsonschema
import jsonschema.validators
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema.protocols import Validator
from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]
from referencing import Registry, Resource

from .._bundled import (
    WIRE_ID_PREFIX,
    WireBundle,
    bundled_schema,
    bundled_schema_ids,
    default_wire_bundle,
    wire_bundle,
    wire_bundle_named,
    wire_bundle_of_release,
    wire_bundle_with_digest,
    wire_bundles,
)
from ..codes import INVALID_SCHEMA, UNRESOLVABLE_REF
from ..errors import CanonicalizationError, SchemaCompileError
from .best_match import closest
from .ecma_regex import EcmaSyntaxError, compile_pattern, needs_backtracking
from .evaluation import Evaluator, KeywordCode, as_list
from .formats import BUILTIN_NAMES as _BUILTIN_NAMES
from .formats import builtin_check
from .keywords import UserKeywords
from .messages import message
from .parse import check_value, escape_pointer_token, parse_json

if TYPE_CHECKING:
    from referencing._core import Resolver

__all__ = [
    "CompiledSchema",
    "WireBundle",
    "bundle_validator",
    "bundled_schema",
    "bundled_schema_ids",
    "bundled_validator",
    "compile_schema",
    "default_wire_bundle",
    "format_accepts",
    "wire_bundle",
    "wire_bundle_named",
    "wire_bundle_of_release",
    "wire_bundle_with_digest",
    "wire_bundles",
]

Violation = tuple[str, str, str, str, tuple[str, str, str] | None]
"""(pointer, schema_pointer, keyword, message, best_match): ``_backend.RawViolation``."""
EvaluationOutput = tuple[bool, dict[str, Any], dict[str, Any], list[Any], list[Any]]
"""(valid, list output, hierarchical output, error entries, annotation entries):
``Validator.evaluate``'s parts."""

# The meta-schemas python-jsonschema knows (the same registry it uses itself).
METASCHEMAS: Registry[Any] = REGISTRY


# ---------------------------------------------------------------------------------------------
# Formats (docs/formats.md); the same rules as `FormatCheck` in rust/validate/mod.rs.

_INTEGER_FORMATS: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "uint": (0, 2**64 - 1),
}
_STRING_FORMATS = ("date-time", "date", "time")
_ASCII_DIGITS = frozenset("0123456789")


def _digits(text: str, start: int, count: int) -> int | None:
    """``count`` ASCII digits at ``text[start:]`` as a number (``str.isdigit`` takes too much)."""
    field = text[start : start + count]
    if len(field) != count or not _ASCII_DIGITS.issuperset(field):
        return None
    return int(field)


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def is_date(text: str) -> bool:
    """RFC 3339 ``full-date``: ``YYYY-MM-DD``, a real day of the (proleptic Gregorian) calendar."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return False
    year, month, day = _digits(text, 0, 4), _digits(text, 5, 2), _digits(text, 8, 2)
    if year is None or month is None or day is None:
        return False
    return 1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)


def _offset_minutes(offset: str) -> int | None:
    """``Z`` or ``±HH:MM`` as minutes east of UTC; ``None`` if malformed."""
    if offset in ("Z", "z"):
        return 0
    if len(offset) != 6 or offset[0] not in "+-" or offset[3] != ":":
        return None
    hours, minutes = _digits(offset, 1, 2), _digits(offset, 4, 2)
    if hours is None or minutes is None or hours > 23 or minutes > 59:
        return None
    magnitude = hours * 60 + minutes
    return magnitude if offset[0] == "+" else -magnitude


def is_time(text: str) -> bool:
    """RFC 3339 ``full-time``: ``HH:MM:SS(.frac)?(Z|±HH:MM)``.

    A leap second (``:60``) is accepted only where one can occur: at 23:59 UTC once the offset is
    applied.
    """
    if len(text) < 9 or text[2] != ":" or text[5] != ":":
        return False
    hour, minute, second = _digits(text, 0, 2), _digits(text, 3, 2), _digits(text, 6, 2)
    if hour is None or minute is None or second is None:
        return False
    rest = 8
    if text[rest] == ".":
        fraction = rest + 1
        while fraction < len(text) and text[fraction] in _ASCII_DIGITS:
            fraction += 1
        if fraction == rest + 1:
            return False
        rest = fraction
    offset = _offset_minutes(text[rest:])
    if offset is None or hour > 23 or minute > 59 or second > 60:
        return False
    utc_minute_of_day = (hour * 60 + minute - offset) % (24 * 60)
    return second < 60 or utc_minute_of_day == 23 * 60 + 59


def is_date_time(text: str) -> bool:
    """RFC 3339 ``date-time``: ``full-date "T" full-time``, ``T``/``Z`` in either case (§5.6)."""
    return len(text) > 11 and text[10] in "Tt" and is_date(text[:10]) and is_time(text[11:])


_STRING_CHECKS = {"date-time": is_date_time, "date": is_date, "time": is_time}


def _integral_value(number: float) -> int | None:
    """The exact integer a JSON number stands for (``5.0`` counts), or ``None`` for a fraction or
    for a magnitude beyond every supported integer format."""
    if isinstance(number, int):
        return number
    if not number.is_integer() or abs(number) >= 2**64:
        return None
    return int(number)


def format_accepts(name: str, instance: Any) -> bool:
    """Whether ``instance`` satisfies ``format: name``. A format constrains only its own instance
    type, and ``float``, ``double`` and unknown names constrain nothing."""
    string_check = _STRING_CHECKS.get(name)
    if string_check is not None:
        return not isinstance(instance, str) or string_check(instance)
    bounds = _INTEGER_FORMATS.get(name)
    if bounds is None or isinstance(instance, bool) or not isinstance(instance, (int, float)):
        return True
    value = _integral_value(instance)
    return value is not None and bounds[0] <= value <= bounds[1]


def _string_check(check: Callable[[str], bool]) -> Callable[[object], bool]:
    return lambda instance: not isinstance(instance, str) or check(instance)


@cache
def _format_checker(draft: str) -> jsonschema.FormatChecker:
    """Ours (above) where docs/formats.md defines the format, jsonschema-rs's (``formats.py``)
    for every other name it knows under ``draft``."""
    checker = jsonschema.FormatChecker(formats=())
    for name in _BUILTIN_NAMES:
        check = builtin_check(draft, name)
        if check is not None:
            checker.checks(name)(_string_check(check))
    for name in (*_STRING_FORMATS, *_INTEGER_FORMATS):
        checker.checks(name)(lambda instance, name=name: format_accepts(name, instance))
    return checker


def _with_user_formats(
    base: jsonschema.FormatChecker, formats: Mapping[str, Callable[[str], object]]
) -> jsonschema.FormatChecker:
    """``base`` with the caller's formats (``Validator(formats=...)``), which come first."""
    checker = jsonschema.FormatChecker(formats=())
    checker.checkers = dict(base.checkers)
    for name, check in formats.items():
        checker.checks(name)(_string_check(_reported(check)))
    return checker


def _reported(check: Callable[[str], object]) -> Callable[[str], bool]:
    """``check`` as the Rust core calls it: one that raises does not match, and its exception
    goes to ``sys.unraisablehook`` (no caller can receive it)."""

    def called(text: str) -> bool:
        try:
            return bool(check(text))
        except Exception as error:
            _Unraisable(error)  # dropped at once: CPython reports what its __del__ raises
            return False

    return called


class _Unraisable:
    """Hands an exception to ``sys.unraisablehook`` the one way Python code can: raised from
    ``__del__``, as the Rust core's ``PyErr::write_unraisable`` does."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __del__(self) -> None:
        raise self.error


def _first_member(
    schema: Any,
    found: Callable[[str, Any, str], tuple[str, str] | None],
    pointer: str = "",
) -> tuple[str, str] | None:
    """The first answer of ``found(key, value, pointer)`` over every member of the schema's
    objects, in document order, not looking inside values that are data (``_VALUE_KEYWORDS``)."""
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            answer = _first_member(item, found, f"{pointer}/{index}")
            if answer is not None:
                return answer
        return None
    if not isinstance(schema, dict):
        return None
    for key, value in schema.items():
        at = f"{pointer}/{escape_pointer_token(key)}"
        answer = found(key, value, at)
        if answer is None and key not in _VALUE_KEYWORDS:
            answer = _first_member(value, found, at)
        if answer is not None:
            return answer
    return None


def _unknown_format(
    schema: Any, draft: str, formats: Mapping[str, object]
) -> tuple[str, str] | None:
    """The first ``format`` (name, pointer) no check knows under ``draft``, in document order."""

    def unknown(key: str, value: Any, at: str) -> tuple[str, str] | None:
        if key != "format" or not isinstance(value, str):
            return None
        known = value in formats or value in _STRING_FORMATS or value in _INTEGER_FORMATS
        return None if known or builtin_check(draft, value) is not None else (value, at)

    return _first_member(schema, unknown)


def _backtracking_pattern(schema: Any) -> tuple[str, str] | None:
    """The first ``pattern`` or ``patternProperties`` name (pattern, pointer) that needs a
    backtracking engine (lookaround, backreferences), in document order: what the linear-time
    engine of jsonschema-rs's ``RegexOptions`` refuses."""

    def backtracking(key: str, value: Any, at: str) -> tuple[str, str] | None:
        if key == "pattern" and isinstance(value, str) and _backtracks(value):
            return value, at
        if key == "patternProperties" and isinstance(value, dict):
            for name in value:
                if _backtracks(name):
                    return name, f"{at}/{escape_pointer_token(name)}"
        return None

    return _first_member(schema, backtracking)


def _backtracks(pattern: str) -> bool:
    try:
        return needs_backtracking(pattern)
    except EcmaSyntaxError:
        return False  # an invalid pattern is the meta-schema check's to report


# Keywords whose value is data, not a schema: a "format" member inside is not a format.
_VALUE_KEYWORDS = frozenset({"enum", "const", "default", "examples"})


# ---------------------------------------------------------------------------------------------
# Regular expressions with a time limit (docs/limits.md)
#
# Patterns are ECMA-262 (`ecma_regex` translates them for the `regex` module). A backtracking
# engine can take exponential time: `^(a+)+$` against "aaa…a!". The Rust core cannot hang there
# (the `regex` crate is linear; fancy-regex, for lookaround and backreferences, stops after
# 1,000,000 backtracking steps and jsonschema-rs reports that as a violation). Here every match
# (`pattern`, `patternProperties`, and the names `additionalProperties` and
# `unevaluatedProperties` check) runs with a time limit, and a match it cannot finish is reported
# as jsonschema-rs does.

PATTERN_TIME_LIMIT = 1.0
"""Seconds one regular-expression match may take before it counts as undecided."""

# Messages quote the offending value: a long one keeps its start and says its size, as
# rust/validate/mod.rs `bounded_message` does.
MESSAGE_MAX_CHARS = 512
MESSAGE_KEPT_CHARS = 256


def bounded_message(message: str) -> str:
    if len(message) <= MESSAGE_MAX_CHARS:
        return message
    size = len(message.encode("utf-8", "surrogatepass"))
    return f"{message[:MESSAGE_KEPT_CHARS]} … [message truncated: {size} bytes]"


# jsonschema-rs's message for a match its engine gave up on, word for word.
UNDECIDED_MATCH = "Error executing regex: Max limit for backtracking count exceeded"


class _UndecidedMatch(Exception):
    """A match that did not finish within PATTERN_TIME_LIMIT."""


def _pattern_found(pattern: str, text: str) -> bool:
    """Whether the ECMA-262 ``pattern`` matches somewhere in ``text``, in bounded time; raises
    ``_UndecidedMatch`` past the limit. The pattern compiled when the schema was checked."""
    try:
        return compile_pattern(pattern).search(text, timeout=PATTERN_TIME_LIMIT) is not None
    except TimeoutError:
        raise _UndecidedMatch from None


def _pattern_keyword(
    validator: Any, pattern: str, instance: Any, _schema: Any
) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    try:
        found = _pattern_found(pattern, instance)
    except _UndecidedMatch:
        yield jsonschema.ValidationError(UNDECIDED_MATCH)
        return
    if not found:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties_keyword(
    validator: Any, pattern_properties: Mapping[str, Any], instance: Any, _schema: Any
) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for name, value in instance.items():
            try:
                found = _pattern_found(pattern, name)
            except _UndecidedMatch:
                yield jsonschema.ValidationError(UNDECIDED_MATCH)
                continue
            if found:
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _matches_any(patterns: Iterable[str], name: str) -> bool:
    """Whether a name matches one of ``patterns``; an undecided match does not (fail closed)."""
    for pattern in patterns:
        try:
            if _pattern_found(pattern, name):
                return True
        except _UndecidedMatch:
            continue
    return False


def _additional_property_names(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> set[str]:
    """The members neither ``properties`` nor ``patternProperties`` cover."""
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    return {
        name for name in instance if name not in properties and not _matches_any(patterns, name)
    }


def _evaluated_property_names(validator: Any, instance: Mapping[str, Any], schema: Any) -> set[str]:
    """The members some keyword of ``schema`` evaluated: python-jsonschema's
    ``find_evaluated_property_keys_by_schema``, matching names in bounded time, and, as the
    jsonschema crate (``unevaluated_properties.rs``), counting a ``oneOf`` only where exactly one
    branch holds."""
    if not isinstance(schema, dict):
        return set()
    evaluated: set[str] = set()
    for keyword in ("$ref", "$dynamicRef", "$recursiveRef"):
        reference = schema.get(keyword)
        if not isinstance(reference, str):
            continue
        if keyword == "$recursiveRef":
            resolved = referencing.jsonschema.lookup_recursive_ref(validator._resolver)
        else:
            resolved = validator._resolver.lookup(reference)
        target = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
        evaluated |= _evaluated_property_names(target, instance, resolved.contents)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        evaluated |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        subschema = schema.get(keyword)
        if subschema is not None:
            evaluated |= {
                name
                for name, value in instance.items()
                if next(validator.descend(value, subschema), None) is None
            }
    patterns = schema.get("patternProperties", {})
    evaluated |= {name for name in instance if _matches_any(patterns, name)}
    for name, subschema in schema.get("dependentSchemas", {}).items():
        if name in instance:
            evaluated |= _evaluated_property_names(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        valid = [
            subschema
            for subschema in schema.get(keyword, [])
            if next(validator.descend(instance, subschema), None) is None
        ]
        if keyword == "oneOf" and len(valid) != 1:
            continue  # a failing `oneOf` evaluated nothing, as in the jsonschema crate
        for subschema in valid:
            evaluated |= _evaluated_property_names(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            evaluated |= _evaluated_property_names(validator, instance, schema["if"])
            evaluated |= _evaluated_property_names(validator, instance, schema.get("then"))
        else:
            evaluated |= _evaluated_property_names(validator, instance, schema.get("else"))
    return evaluated


def _unevaluated_properties_keyword(
    validator: Any, unevaluated: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    """python-jsonschema's ``unevaluatedProperties``, matching names in bounded time."""
    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_property_names(validator, instance, schema)
    failed = [
        name
        for name in instance
        if name not in evaluated
        and next(validator.descend(instance[name], unevaluated, path=name, schema_path=name), None)
        is not None
    ]
    if not failed:
        return
    verb = "was" if len(failed) == 1 else "were"
    if unevaluated is False:
        joined = ", ".join(repr(name) for name in sorted(failed))
        yield jsonschema.ValidationError(
            f"Unevaluated properties are not allowed ({joined} {verb} unexpected)"
        )
    else:
        joined = ", ".join(repr(name) for name in failed)
        yield jsonschema.ValidationError(
            "Unevaluated properties are not valid under the given schema "
            f"({joined} {verb} unevaluated and invalid)"
        )


def _additional_properties_keyword(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    """python-jsonschema's ``additionalProperties``, matching names in bounded time."""
    if not validator.is_type(instance, "object"):
        return
    extras = _additional_property_names(instance, schema)
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield jsonschema.ValidationError(
                f"{joined} {verb} not match any of the regexes: {patterns}"
            )
        else:
            verb = "was" if len(extras) == 1 else "were"
            joined = ", ".join(repr(extra) for extra in sorted(extras))
            yield jsonschema.ValidationError(
                f"Additional properties are not allowed ({joined} {verb} unexpected)"
            )


# ---------------------------------------------------------------------------------------------
# Keywords jsonschema-rs asserts where python-jsonschema does not


# `contentEncoding` decoders (jsonschema-rs: the `data_encoding` crate's strict, canonical codecs);
# `None` for text that does not decode.
def _decoder(
    decode: Callable[[bytes], bytes],
    encode: Callable[[bytes], bytes],
    normalize: Callable[[bytes], bytes] = lambda raw: raw,
) -> Callable[[str], bytes | None]:
    def strict(text: str) -> bytes | None:
        try:
            raw = normalize(text.encode("ascii"))
            decoded = decode(raw)
        except (ValueError, binascii.Error):
            return None
        # Canonical only: no stray padding bits, as `data_encoding` checks.
        return decoded if encode(decoded) == raw else None

    return strict


# RFC 4648 §7 in terms of §6 (`base64.b32hexdecode` needs Python 3.10).
_BASE32HEX_TO_BASE32 = bytes.maketrans(
    b"0123456789ABCDEFGHIJKLMNOPQRSTUV", b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
)
_BASE32_TO_BASE32HEX = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", b"0123456789ABCDEFGHIJKLMNOPQRSTUV"
)
_CONTENT_DECODERS: dict[str, Callable[[str], bytes | None]] = {
    "base64": _decoder(lambda raw: base64.b64decode(raw, validate=True), base64.b64encode),
    "base64url": _decoder(
        lambda raw: base64.b64decode(raw, altchars=b"-_", validate=True), base64.urlsafe_b64encode
    ),
    "base32": _decoder(base64.b32decode, base64.b32encode),
    "base32hex": _decoder(
        lambda raw: base64.b32decode(raw.translate(_BASE32HEX_TO_BASE32)),
        lambda data: base64.b32encode(data).translate(_BASE32_TO_BASE32HEX),
    ),
    "base16": _decoder(base64.b16decode, base64.b16encode, bytes.upper),
}


def _is_json_text(text: str) -> bool:
    try:
        parse_json(text)
    except CanonicalizationError:
        return False
    return True


_MEDIA_TYPE_CHECKS: dict[str, Callable[[str], bool]] = {"application/json": _is_json_text}


def _decoded_text(encoding: str, text: str) -> str | None:
    decoded = _CONTENT_DECODERS[encoding](text)
    if decoded is None:
        return None
    try:
        return decoded.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _content_encoding_keyword(
    validator: Any, encoding: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    """Draft 6 and 7 (jsonschema-rs asserts them there): the string must decode. With a
    ``contentMediaType`` the decoded bytes must be UTF-8 too, and nothing is checked unless
    jsonschema-rs knows both."""
    if not isinstance(instance, str) or encoding not in _CONTENT_DECODERS:
        return
    media_type = schema.get("contentMediaType")
    if media_type is None:
        failed = _CONTENT_DECODERS[encoding](instance) is None
    elif media_type in _MEDIA_TYPE_CHECKS:
        failed = _decoded_text(encoding, instance) is None
    else:
        return
    if failed:
        yield jsonschema.ValidationError(f"{instance!r} is not compliant with {encoding!r}")


def _content_media_type_keyword(
    validator: Any, media_type: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    """Draft 6 and 7: the string (decoded first, if ``contentEncoding`` says how) must be a
    document of that media type; a string that does not decode is ``contentEncoding``'s error."""
    check = _MEDIA_TYPE_CHECKS.get(media_type)
    if not isinstance(instance, str) or check is None:
        return
    encoding = schema.get("contentEncoding")
    if encoding is None:
        text: str | None = instance
    elif encoding in _CONTENT_DECODERS:
        text = _decoded_text(encoding, instance)
    else:
        return
    if text is not None and not check(text):
        yield jsonschema.ValidationError(f"{instance!r} is not compliant with {media_type!r}")


def _decimal(number: float) -> Fraction:
    """The exact value of a JSON number as written: an int as itself, a float as its shortest
    round-trip decimal (``repr``), as ``decimal_parts`` in rust/validate/mod.rs reads it."""
    if isinstance(number, int):
        return Fraction(number)
    return Fraction(Decimal(repr(number)))


def is_multiple_of(value: float, multiple: float) -> bool:
    """Whether ``value / multiple`` is an integer in exact decimal arithmetic on the numbers as
    written (docs/formats.md, "Numbers"): ``0.07`` is a multiple of ``0.01``."""
    divisor = _decimal(multiple)
    return divisor != 0 and (_decimal(value) / divisor).denominator == 1


def _multiple_of_keyword(
    validator: Any, multiple: Any, instance: Any, _schema: Any
) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "number") or not validator.is_type(multiple, "number"):
        return
    if not is_multiple_of(instance, multiple):
        yield jsonschema.ValidationError(f"{instance!r} is not a multiple of {multiple!r}")


_CONTENT_KEYWORDS = {
    "contentEncoding": _content_encoding_keyword,
    "contentMediaType": _content_media_type_keyword,
}


def _added_keywords(validator_class: type[Validator]) -> dict[str, Any]:
    """Keywords that differ from python-jsonschema's: ``multipleOf`` in exact decimal arithmetic
    (as in the Rust core), and what jsonschema-rs has in a draft where python-jsonschema has not:
    content assertions in drafts 6 and 7, ``dependencies`` kept in 2019-09 and 2020-12."""
    added: dict[str, Any] = {"multipleOf": _multiple_of_keyword}
    if validator_class in (jsonschema.Draft6Validator, jsonschema.Draft7Validator):
        added.update(_CONTENT_KEYWORDS)
    if validator_class in (jsonschema.Draft201909Validator, jsonschema.Draft202012Validator):
        added["dependencies"] = jsonschema.Draft7Validator.VALIDATORS["dependencies"]
    return added


def _compiles(pattern: object) -> bool:
    try:
        compile_pattern(pattern) if isinstance(pattern, str) else None
    except EcmaSyntaxError:
        return False
    return True


# Checking a schema against its meta-schema, the one format asserted is `regex` (of `pattern` and
# the `patternProperties` names): the pattern must compile, as in the Rust core.
_SCHEMA_FORMAT_CHECKER = jsonschema.FormatChecker(formats=())
_SCHEMA_FORMAT_CHECKER.checks("regex")(_compiles)

_TIME_LIMITED_KEYWORDS = {
    "pattern": _pattern_keyword,
    "patternProperties": _pattern_properties_keyword,
    "additionalProperties": _additional_properties_keyword,
    "unevaluatedProperties": _unevaluated_properties_keyword,
}

# ---------------------------------------------------------------------------------------------
# Schema documents: pointers, false subschemas

_DRAFT_NAMES: dict[type[Validator], str] = {
    jsonschema.Draft4Validator: "draft4",
    jsonschema.Draft6Validator: "draft6",
    jsonschema.Draft7Validator: "draft7",
    jsonschema.Draft201909Validator: "draft2019-09",
    jsonschema.Draft202012Validator: "draft2020-12",
}

# Drafts before 2019-09: they assert `format` by default and have no `minContains`/`maxContains`.
_LEGACY_DRAFTS = (
    jsonschema.Draft4Validator,
    jsonschema.Draft6Validator,
    jsonschema.Draft7Validator,
)

# Where a keyword's value is a schema, a map of schemas or a list of schemas.
_SCHEMA_KEYWORDS = frozenset(
    {
        "additionalItems",
        "additionalProperties",
        "contains",
        "contentSchema",
        "else",
        "if",
        "items",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_SCHEMA_MAP_KEYWORDS = frozenset(
    {"$defs", "definitions", "dependencies", "dependentSchemas", "patternProperties", "properties"}
)
_SCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
# python-jsonschema reports a `false` value of these keywords itself, as jsonschema-rs does.
_FALSE_AWARE_KEYWORDS = frozenset(
    {"additionalItems", "additionalProperties", "unevaluatedItems", "unevaluatedProperties"}
)


def _pointer(tokens: Iterable[object]) -> str:
    return "".join(f"/{escape_pointer_token(str(token))}" for token in tokens)


def _fresh_copy(value: Any) -> Any:
    """A copy sharing no containers, so every schema object has exactly one location (tuples become
    lists: both are JSON arrays, but python-jsonschema only treats lists as such)."""
    if isinstance(value, dict):
        return {key: _fresh_copy(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_fresh_copy(item) for item in value]
    return value


class _SchemaLocations:
    """Where every object of the schema documents is: its JSON pointer (as tokens) in its document,
    and the pointers of the schema resources enclosing it (subschemas with their own ``$id``)."""

    def __init__(self) -> None:
        self.tokens: dict[int, tuple[str, ...]] = {}
        self.resources: dict[int, tuple[tuple[str, ...], ...]] = {}

    def add(
        self,
        document: Any,
        specification: referencing.Specification[Any],
        tokens: tuple[str, ...] = (),
        resources: tuple[tuple[str, ...], ...] = ((),),
    ) -> None:
        if isinstance(document, dict):
            if tokens and isinstance(specification.id_of(document), str):
                resources = (*resources, tokens)
            items: Iterator[tuple[Any, Any]] = iter(document.items())
        elif isinstance(document, list):
            items = enumerate(document)
        else:
            return
        self.tokens.setdefault(id(document), tokens)
        self.resources.setdefault(id(document), resources)
        for key, item in items:
            self.add(item, specification, (*tokens, str(key)), resources)

    def located(self, schema: Any, schema_path: Sequence[str | int]) -> str:
        """jsonschema-rs's ``schema_path`` for an error from ``schema``, given python-jsonschema's
        ``absolute_schema_path`` up to ``schema`` (every keyword crossed, except ``$ref`` hops).

        Its location is the path walked since the last ``$ref`` hop, starting from where the
        hop's target is inside its schema resource; without a hop, the path from the document root.
        The tokens ``schema_path`` and the object's own location share since the hop locate the
        target; the deepest resource enclosing the target is where the pointer starts.
        """
        tokens = self.tokens.get(id(schema), ())
        shared = 0
        for token, walked in zip(reversed(tokens), reversed(schema_path), strict=False):
            if str(walked) != token:
                break
            shared += 1
        target = tokens[: len(tokens) - shared]
        start = max(
            (root for root in self.resources.get(id(schema), ((),)) if target[: len(root)] == root),
            key=len,
        )
        return _pointer(tokens[len(start) :])


@cache
def _metaschema_locations() -> _SchemaLocations:
    """Locations in the meta-schemas, which live (and keep their ids) for the whole process."""
    locations = _SchemaLocations()
    for uri in METASCHEMAS:
        locations.add(METASCHEMAS.contents(uri), referencing.jsonschema.DRAFT202012)
    return locations


class _FalseSchemas:
    """Replaces ``false`` subschemas by ``{"not": {}}`` markers and remembers them.

    python-jsonschema drops the instance path of an error from a ``false`` subschema (its
    ``descend`` returns before adding it) and gives it no schema object to locate; a marker object
    fails the same instances, keeps the path, and is reported as jsonschema-rs's ``falseSchema``.
    """

    def __init__(self) -> None:
        self.markers: set[int] = set()

    def replace(self, schema: Any) -> Any:
        if schema is False:
            marker: dict[str, Any] = {"not": {}}
            self.markers.add(id(marker))
            return marker
        if not isinstance(schema, dict):
            return schema
        for keyword, value in schema.items():
            if keyword in _SCHEMA_LIST_KEYWORDS and isinstance(value, list):
                schema[keyword] = [self.replace(item) for item in value]
            elif keyword in _SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
                for name, item in value.items():
                    value[name] = self.replace(item)
            elif keyword in _SCHEMA_KEYWORDS and not (
                value is False and keyword in _FALSE_AWARE_KEYWORDS
            ):
                schema[keyword] = self.replace(value)
        return schema


def _without_empty_fragment(uri: str) -> str:
    return uri[:-1] if uri.endswith("#") else uri


class _RemoteRefRefused(Exception):
    """Raised by the registry's retriever: nothing is ever fetched."""


def _resource_registry(
    documents: Mapping[str, Any], specification: referencing.Specification[Any]
) -> Registry[Any]:
    """The caller's ``resources`` (URI -> document), served when a ``$ref`` names one, as the Rust
    core's retriever does (registering them all up front would crawl documents of other drafts);
    any other URI is refused."""
    by_uri = {_without_empty_fragment(uri): document for uri, document in documents.items()}

    def retrieve(uri: str) -> Resource[Any]:
        document = by_uri.get(_without_empty_fragment(uri), _REFUSED)
        if document is _REFUSED:
            raise _RemoteRefRefused(f"remote $ref refused (no network): {uri}")
        return Resource.from_contents(document, default_specification=specification)

    # `retrieve` is the documented alias of an attrs field mypy's plugin does not see.
    return Registry(retrieve=retrieve)  # type: ignore[call-arg]


_REFUSED: Any = object()


def _root_resolver(
    registry: Registry[Any], root: Resource[Any], base_uri: str | None
) -> referencing._core.Resolver[Any]:
    """The resolver of ``root``, at ``base_uri`` (jsonschema-rs's option) joined with the root's
    own id: its ``$ref``s resolve against that."""
    uri = urljoin(base_uri or "", root.id() or "")
    resolver: referencing._core.Resolver[Any] = registry.with_resource(uri, root).resolver(uri)
    return resolver


def _unresolvable_reason(error: BaseException) -> str:
    """Our refusal when it is behind ``error`` (referencing wraps it twice), else ``error``."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, _RemoteRefRefused):
            return str(cause)
        cause = cause.__cause__ or cause.__context__
    return f"unresolvable $ref: {error}"


# `validator_for` returns its `default` for a `$schema` it does not know; this tells that apart.
_UNKNOWN_DIALECT: Any = object()


def _is_array(_checker: object, instance: object) -> bool:
    return isinstance(instance, (list, tuple))


def _dialect(schema: Any, resources: Mapping[str, Any]) -> tuple[type[Validator], Any]:
    """The draft of ``schema`` (2020-12 without ``$schema``) and, when ``$schema`` names a
    meta-schema supplied in ``resources``, that meta-schema (else ``None``); the draft of such a
    meta-schema is its own ``$schema``'s, followed a few levels deep. Anything else unknown is
    PF103, as in Rust."""
    metaschema = None
    current = schema
    for _ in range(8):
        if not isinstance(current, dict) or "$schema" not in current:
            return jsonschema.Draft202012Validator, metaschema
        known: type[Validator] = jsonschema.validators.validator_for(
            current, default=_UNKNOWN_DIALECT
        )
        if known is not _UNKNOWN_DIALECT:
            return known, metaschema
        supplied = resources.get(_without_empty_fragment(str(current["$schema"])))
        if supplied is None:
            break
        if metaschema is None:
            metaschema = supplied
        current = supplied
    raise SchemaCompileError(UNRESOLVABLE_REF, f"unknown meta-schema: {schema['$schema']!r}")


# Keywords by vocabulary (2019-09 and 2020-12), for a meta-schema whose `$vocabulary` leaves some
# out: their keywords are then ignored, as jsonschema-rs does.
_VOCABULARY_KEYWORDS = {
    "applicator": (
        "prefixItems", "items", "contains", "additionalProperties", "properties",
        "patternProperties", "dependentSchemas", "propertyNames", "if", "then", "else", "allOf",
        "anyOf", "oneOf", "not", "additionalItems", "unevaluatedItems", "unevaluatedProperties",
    ),
    "unevaluated": ("unevaluatedItems", "unevaluatedProperties"),
    "validation": (
        "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
        "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
        "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required",
        "dependentRequired",
    ),
}  # fmt: skip


def _listed_vocabularies(metaschema: Any) -> set[str] | None:
    """The vocabulary names (``…/vocab/<name>``) a meta-schema lists, or ``None`` if it does not
    say (all of its draft's)."""
    vocabularies = metaschema.get("$vocabulary") if isinstance(metaschema, dict) else None
    if not isinstance(vocabularies, dict):
        return None
    return {uri.rsplit("/vocab/", 1)[-1] for uri in vocabularies}


def _ignored(*_args: Any) -> Iterator[jsonschema.ValidationError]:
    return iter(())


def _vocabulary_keywords(listed: set[str] | None) -> dict[str, Any]:
    """No-op implementations for the keywords of vocabularies a meta-schema leaves out."""
    if listed is None:
        return {}
    kept = {keyword for name in listed for keyword in _VOCABULARY_KEYWORDS.get(name, ())}
    return {
        keyword: _ignored
        for name, keywords in _VOCABULARY_KEYWORDS.items()
        if name not in listed
        for keyword in keywords
        if keyword not in kept
    }


def _specification(validator_class: type[Validator]) -> referencing.Specification[Any]:
    return referencing.jsonschema.specification_with(validator_class.META_SCHEMA["$schema"])


_REFERENCE_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


def _resolve_every_ref(
    resource: Resource[Any],
    resolver: Resolver[Any],
    specification: referencing.Specification[Any],
    seen: set[int],
) -> None:
    """Resolve each reference reachable from ``resource`` now, as jsonschema-rs does when it
    compiles, instead of when python-jsonschema first meets it while validating."""
    contents = resource.contents
    if id(contents) in seen:
        return
    seen.add(id(contents))
    if isinstance(contents, dict):
        for keyword in _REFERENCE_KEYWORDS:
            reference = contents.get(keyword)
            if not isinstance(reference, str):
                continue
            try:
                resolved = resolver.lookup(reference)
            except referencing.exceptions.Unresolvable as error:
                raise SchemaCompileError(UNRESOLVABLE_REF, _unresolvable_reason(error)) from None
            target = Resource.from_contents(resolved.contents, default_specification=specification)
            _resolve_every_ref(target, resolved.resolver, specification, seen)
    for subresource in resource.subresources():
        # referencing lists a draft 4-7 `dependencies` array (property names) among the
        # subresources; only an object or a boolean is a schema.
        if not isinstance(subresource.contents, (dict, bool)):
            continue
        subresolver = resolver.in_subresource(subresource)
        _resolve_every_ref(subresource, subresolver, specification, seen)


# python-jsonschema recurses about ten frames per level of the instance, so a document at the
# nesting limit (512) needs more than Python's default limit of 1000. Far higher would overflow the
# C stack (a segfault, measured at 40 000 on CPython 3.11 with an 8 MB stack) on a schema that
# refers to itself forever.
_VALIDATION_RECURSION_LIMIT = 12_000

ENDLESS_REFERENCE = (
    "the schema refers to itself without ever descending into the instance (a $ref cycle such "
    'as {"$ref": "#"}); JSON Schema leaves its meaning undefined'
)


@contextmanager
def _deep_recursion(code: str = INVALID_SCHEMA, message: str = ENDLESS_REFERENCE) -> Iterator[None]:
    """Room for python-jsonschema's recursion over any instance or schema within the nesting
    limit; endless recursion (only a schema can cause it) becomes ``SchemaCompileError``."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, _VALIDATION_RECURSION_LIMIT))
    try:
        yield
    except RecursionError:
        raise SchemaCompileError(code, message) from None
    finally:
        sys.setrecursionlimit(previous)


def _check_against(
    metaschema: Any, schema: Any, validator_class: type[Validator], resources: Mapping[str, Any]
) -> None:
    """Raise ``SchemaError`` unless ``schema`` is valid under ``metaschema`` (python-jsonschema's
    ``check_schema``, with our ``regex`` format and the caller's meta-schemas available)."""
    registry = _resource_registry(resources, _specification(validator_class))
    checker = validator_class(
        metaschema, registry=METASCHEMAS.combine(registry), format_checker=_SCHEMA_FORMAT_CHECKER
    )
    for error in checker.iter_errors(schema):
        raise jsonschema.SchemaError.create_from(error)


class CompiledSchema:
    """A schema compiled by the fallback backend; the same contract as Rust's `SchemaValidator`."""

    def __init__(
        self,
        schema: Any,
        validate_formats: bool | None,
        resources: Mapping[str, Any],
        formats: Mapping[str, Callable[[str], object]] | None = None,
        ignore_unknown_formats: bool = True,
        base_uri: str | None = None,
        pattern_options: tuple[str, int | None, int | None, int | None] | None = None,
        keywords: Mapping[str, Callable[[Any, Any, list[str | int]], Any]] | None = None,
    ) -> None:
        self._keywords = dict(keywords or {})
        # The schema is a JSON value like any other: too deep or beyond 64-bit integers is
        # `CanonicalizationError`, as in the Rust core, which converts it first.
        check_value(schema)
        for document in resources.values():
            check_value(document)
        self._formats = dict(formats or {})
        self._ignore_unknown_formats = ignore_unknown_formats
        self._base_uri = base_uri
        if pattern_options is not None and pattern_options[0] == "regex":
            backtracking = _backtracking_pattern(schema)
            if backtracking is not None:
                pattern, pointer = backtracking
                quoted = json.dumps(pattern, ensure_ascii=False)
                raise SchemaCompileError(INVALID_SCHEMA, f'{quoted} is not a "regex"', pointer)
        with _deep_recursion(INVALID_SCHEMA, "the schema is nested too deeply to compile"):
            self._compile(schema, validate_formats, resources)

    def _compile(
        self, schema: Any, validate_formats: bool | None, resources: Mapping[str, Any]
    ) -> None:
        validator_class, metaschema = _dialect(schema, resources)
        if metaschema is None:
            metaschema_document = validator_class.META_SCHEMA
        else:
            metaschema_document = metaschema
        try:
            _check_against(metaschema_document, schema, validator_class, resources)
        except jsonschema.SchemaError as error:
            pointer = _pointer(error.absolute_path)
            raise SchemaCompileError(INVALID_SCHEMA, error.message, pointer) from None
        vocabularies = _listed_vocabularies(metaschema)
        self._legacy_draft = validator_class in _LEGACY_DRAFTS
        if validate_formats is None:
            # A meta-schema listing the format-assertion vocabulary makes formats assertions.
            validate_formats = self._legacy_draft or "format-assertion" in (vocabularies or ())
        specification = _specification(validator_class)
        false_schemas = _FalseSchemas()
        # Kept alive with `self`, so the `id()`s in the maps below stay valid.
        self._documents = [false_schemas.replace(_fresh_copy(schema))]
        prepared = {}
        for uri, document in resources.items():
            prepared[uri] = false_schemas.replace(_fresh_copy(document))
            self._documents.append(prepared[uri])
        registry = _resource_registry(prepared, specification)
        root = Resource.from_contents(self._documents[0], default_specification=specification)
        resolver = _root_resolver(METASCHEMAS.combine(registry), root, self._base_uri)
        _resolve_every_ref(root, resolver, specification, set())
        self._false_schemas = false_schemas.markers
        self._locations = _SchemaLocations()
        for document in self._documents:
            self._locations.add(document, specification)
        metaschemas = _metaschema_locations()
        self._locations.tokens = {**metaschemas.tokens, **self._locations.tokens}
        self._locations.resources = {**metaschemas.resources, **self._locations.resources}
        # Tuples are JSON arrays here (the value model of docs/architecture.md), as in Rust.
        tuple_aware = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
            validator_class,
            validators={
                **_added_keywords(validator_class),
                **_vocabulary_keywords(vocabularies),
                **{
                    keyword: implementation
                    for keyword, implementation in _TIME_LIMITED_KEYWORDS.items()
                    if keyword in validator_class.VALIDATORS
                },
            },
            type_checker=validator_class.TYPE_CHECKER.redefine("array", _is_array),
        )
        draft = _DRAFT_NAMES[validator_class]
        self._resource_uris = list(prepared)
        checker = None
        if validate_formats:
            checker = _format_checker(draft)
            if self._formats:
                checker = _with_user_formats(checker, self._formats)
            unknown = (
                None
                if self._ignore_unknown_formats
                else _unknown_format(schema, draft, self._formats)
            )
            if unknown is not None:
                name, pointer = unknown
                raise SchemaCompileError(
                    INVALID_SCHEMA,
                    f"Unknown format: '{name}'. "
                    "Adjust configuration to ignore unrecognized formats",
                    pointer,
                )
        custom = UserKeywords(self._keywords, self._documents, self._locations, specification)
        tuple_aware = custom.extend(tuple_aware)
        # python-jsonschema resolves from the root's own id; at `base_uri`, from the resolver
        # above, the one every `$ref` was checked with.
        based = {} if self._base_uri is None else {"_resolver": resolver}
        self._validator = tuple_aware(
            self._documents[0], registry=registry, format_checker=checker, **based
        )

    def is_valid(self, instance: Any) -> bool:
        """Raises ``CanonicalizationError`` for a value outside the JSON model, as Rust does."""
        check_value(instance)
        with _deep_recursion():
            return bool(self._validator.is_valid(instance))

    def accepts(self, instance: Any) -> bool:
        """``is_valid``, with a value outside the JSON model answered ``False``."""
        try:
            return self.is_valid(instance)
        except CanonicalizationError:
            return False

    def accepts_many(self, instances: list[Any]) -> list[bool]:
        return [self.accepts(instance) for instance in instances]

    def errors_many(
        self, instances: list[Any]
    ) -> list[list[Violation] | CanonicalizationError | None]:
        """``errors`` of each instance (``None`` for a valid one), or the
        ``CanonicalizationError`` it raises."""
        outcomes: list[list[Violation] | CanonicalizationError | None] = []
        for instance in instances:
            try:
                outcomes.append(self.errors(instance) or None)
            except CanonicalizationError as error:
                outcomes.append(error)
        return outcomes

    def errors(self, instance: Any) -> list[Violation]:
        """Every violation as (pointer, schema_pointer, keyword, message, best_match), sorted by
        (pointer, schema_pointer, message)."""
        check_value(instance)
        return self._sorted_violations(instance)

    def _sorted_violations(self, instance: Any) -> list[Violation]:
        with _deep_recursion():
            errors = list(self._validator.iter_errors(instance))
        violations = [self._violation(error) for error in errors]
        return sorted(violations, key=lambda violation: (violation[0], violation[1], violation[3]))

    def evaluate(self, instance: Any) -> EvaluationOutput:
        """The output formats and annotations of ``instance``'s evaluation, walked as the
        jsonschema crate walks it (``evaluation.Evaluator``)."""
        check_value(instance)
        with _deep_recursion():
            tree, errors, annotations = self._evaluator.evaluate(instance)
        return tree["valid"], as_list(tree), tree, errors, annotations

    @cached_property
    def _evaluator(self) -> Evaluator:
        code = KeywordCode(
            describe=self._described,
            matches=lambda pattern, name: _matches_any((pattern,), name),
            evaluated_names=_evaluated_property_names,
            is_false=lambda schema: schema is False or id(schema) in self._false_schemas,
            custom=frozenset(self._keywords),
        )
        resources = list(zip(self._resource_uris, self._documents[1:], strict=True))
        return Evaluator(self._validator, self._base_uri, resources, code)

    def _described(self, error: jsonschema.ValidationError) -> tuple[str, str]:
        keyword = self._place(error)[2]
        return keyword, self._message(error, keyword, bounded=False)

    def accepts_json(self, data: bytes | str) -> bool:
        """``data`` parsed strictly and validated; text that is not strict JSON is not valid."""
        try:
            return self.is_valid(parse_json(data))
        except CanonicalizationError:
            return False

    def errors_json(self, data: bytes | str) -> list[Violation]:
        """Parse ``data`` strictly (``CanonicalizationError`` if it is not JSON), then validate."""
        return self._sorted_violations(parse_json(data))

    def _violation(self, error: jsonschema.ValidationError) -> Violation:
        pointer, schema_pointer, keyword = self._place(error)
        best = closest(error, self._place, self._documents[0])
        best_match = None
        if best is not None:
            best_pointer, best_schema_pointer, best_keyword = self._place(best)
            best_match = (best_pointer, best_schema_pointer, self._message(best, best_keyword))
        return (pointer, schema_pointer, keyword, self._message(error, keyword), best_match)

    def _place(self, error: jsonschema.ValidationError) -> tuple[str, str, str]:
        """(pointer, schema_pointer, keyword) of an error, as jsonschema-rs reports them."""
        pointer = _pointer(error.absolute_path)
        # The path up to the failing schema object: without the keyword it adds at the end.
        schema_path = list(error.absolute_schema_path)[:-1]
        location = self._locations.located(error.schema, schema_path)
        if id(error.schema) in self._false_schemas:
            return pointer, location, "falseSchema"
        keyword = self._keyword(error)
        return pointer, f"{location}/{escape_pointer_token(keyword)}", keyword

    def _message(
        self, error: jsonschema.ValidationError, keyword: str, bounded: bool = True
    ) -> str:
        # An undecided match already has jsonschema-rs's words, the caller's keyword its own (the
        # text of what it raised); the rest are rebuilt. `evaluate` quotes in full, as the crate.
        own_words = keyword in self._keywords or error.message == UNDECIDED_MATCH
        text = error.message if own_words and keyword != "falseSchema" else message(keyword, error)
        return bounded_message(text) if bounded else text

    def _keyword(self, error: jsonschema.ValidationError) -> str:
        """python-jsonschema reports an array with no match at all under ``contains`` even when
        ``minContains``/``maxContains`` is present, and draft 4's exclusive bounds at
        ``maximum``/``minimum``; jsonschema-rs reports them at ``minContains``/``maxContains`` and
        ``exclusiveMaximum``/``exclusiveMinimum``."""
        keyword = str(error.validator)
        if not isinstance(error.schema, dict):
            return keyword
        if keyword == "contains" and not self._legacy_draft:
            for bound in ("minContains", "maxContains"):
                if bound in error.schema:
                    return bound
        if keyword in ("maximum", "minimum"):
            exclusive = f"exclusive{keyword[0].upper()}{keyword[1:]}"
            if error.schema.get(exclusive) is True:
                return exclusive
        return keyword


def compile_schema(
    schema: Any,
    validate_formats: bool | None = None,
    resources: Mapping[str, Any] | None = None,
    formats: Mapping[str, Callable[[str], object]] | None = None,
    ignore_unknown_formats: bool = True,
    base_uri: str | None = None,
    pattern_options: tuple[str, int | None, int | None, int | None] | None = None,
    keywords: Mapping[str, Callable[[Any, Any, list[str | int]], Any]] | None = None,
) -> CompiledSchema:
    """Compile ``schema``; raises ``SchemaCompileError`` (PF102 invalid, PF103 unresolvable ref).
    ``formats`` are the caller's checks by name; ``ignore_unknown_formats=False`` makes a format
    no check knows PF102, where formats are asserted (both as jsonschema-rs's options);
    ``keywords`` the caller's keyword classes (``keywords.UserKeywords``)."""
    return CompiledSchema(
        schema,
        validate_formats,
        resources or {},
        formats,
        ignore_unknown_formats,
        base_uri,
        pattern_options,
        keywords,
    )


# ---------------------------------------------------------------------------------------------
# Bundled schemas: the files and documents are shared with the facade (``pairling_fast._bundled``);
# compiling them is this backend's.


@cache
def bundle_validator(bundle: WireBundle, name: str) -> CompiledSchema:
    """The compiled schema ``name`` of ``bundle`` (``KeyError`` if the bundle has none), formats
    asserted; compiled on first use."""
    return compile_schema(bundle.schema(name), validate_formats=True)


@cache
def bundled_validator(schema_id: str) -> CompiledSchema:
    """The compiled bundled schema (compiled on first use), formats always asserted. A
    ``car.<name>`` id is a schema of the default wire bundle."""
    if schema_id.startswith(WIRE_ID_PREFIX):
        return bundle_validator(default_wire_bundle(), schema_id[len(WIRE_ID_PREFIX) :])
    return compile_schema(bundled_schema(schema_id), validate_formats=True)
