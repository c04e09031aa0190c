"""RFC 8785 canonical JSON and sha256 digests: the pure-Python twin of ``rust/canonical.rs``.

Members are sorted by the UTF-16 code units of their keys, strings are escaped minimally, numbers
are written as ECMAScript's ``Number.prototype.toString`` would, and an integer beyond ±(2^53-1)
is an error (PF005). As in the Rust core, where a Python value is first converted to the value
model: a value-model defect wins, named in document order; otherwise the first PF005 in canonical
(sorted) order is reported.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from json.encoder import encode_basestring
from typing import Any

from ..codes import INTEGER_OUT_OF_RANGE
from ..errors import CanonicalizationError
from .parse import MAX_DEPTH, Location, check_value, parse_json, pointer_of

__all__ = ["canonicalize", "canonicalize_json", "digest_hex", "digest_hex_many"]

_MAX_SAFE_INTEGER = 2**53 - 1
BEYOND_SAFE_INTEGER = "integer beyond ±(2^53-1) has no exact canonical form"


def canonicalize(value: Any) -> bytes:
    """The canonical UTF-8 bytes of a JSON-like Python value."""
    try:
        return _canonical_text(value).encode("utf-8")
    except (CanonicalizationError, _OutsideValueModel, UnicodeEncodeError) as failure:
        writer_failure = failure
    check_value(value)  # a value-model defect outranks the writer's PF005 (see module docstring)
    raise writer_failure


def canonicalize_json(data: bytes | str) -> bytes:
    """The canonical UTF-8 bytes of a strict JSON text."""
    return canonicalize(parse_json(data))


def digest_hex(value: Any) -> str:
    """Lowercase hex sha256 of the canonical bytes of ``value``."""
    return hashlib.sha256(canonicalize(value)).hexdigest()


def digest_hex_many(values: list[Any]) -> list[str]:
    """``digest_hex`` of each value, in order (the core spreads a large batch over the cores)."""
    return [digest_hex(value) for value in values]


class _OutsideValueModel(Exception):
    """Raised by the writer for what ``check_value`` reports properly (in document order)."""


class _Container:
    """A container being written: its remaining members and how to close it."""

    __slots__ = ("closer", "is_object", "members", "path", "started")

    def __init__(self, members: Iterator[tuple[Any, Any]], path: Location, is_object: bool) -> None:
        self.members = members
        self.path = path
        self.is_object = is_object
        self.closer = "}" if is_object else "]"
        self.started = False


def _canonical_text(root: Any) -> str:
    """Writes ``root`` iteratively (any depth is safe) and returns the canonical text."""
    parts: list[str] = []
    open_containers: list[_Container] = []
    value, path = root, None
    while True:
        if value is None:
            parts.append("null")
        elif isinstance(value, bool):
            parts.append("true" if value else "false")
        elif isinstance(value, str):
            parts.append(encode_basestring(value))
        elif isinstance(value, int):
            if not -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
                raise CanonicalizationError(
                    INTEGER_OUT_OF_RANGE, BEYOND_SAFE_INTEGER, pointer_of(path)
                )
            parts.append(int.__repr__(value))
        elif isinstance(value, float):
            parts.append(_ecmascript_number(value))
        elif isinstance(value, (dict, list, tuple)):
            if len(open_containers) >= MAX_DEPTH:
                raise _OutsideValueModel
            if isinstance(value, dict):
                members = iter(sorted(value.items(), key=_utf16_order))
                parts.append("{")
                open_containers.append(_Container(members, path, is_object=True))
            else:
                parts.append("[")
                open_containers.append(_Container(enumerate(value), path, is_object=False))
        else:
            raise _OutsideValueModel
        # Find the next value to write, closing the containers that are done.
        while open_containers:
            container = open_containers[-1]
            member = next(container.members, None)
            if member is None:
                parts.append(container.closer)
                open_containers.pop()
                continue
            token, value = member
            if container.started:
                parts.append(",")
            container.started = True
            if container.is_object:
                parts.append(encode_basestring(token))
                parts.append(":")
            path = (container.path, token)
            break
        else:
            return "".join(parts)


def _utf16_order(member: tuple[Any, Any]) -> bytes:
    """Sort key of an object member: its key's UTF-16 code units (big-endian bytes sort alike)."""
    key = member[0]
    if not isinstance(key, str):
        raise _OutsideValueModel
    # surrogatepass: a lone surrogate fails the final UTF-8 encoding; check_value then names it.
    return key.encode("utf-16-be", "surrogatepass")


def _ecmascript_number(value: float) -> str:
    """``Number.prototype.toString``: the shortest round-trip digits (``repr``), ES notation."""
    if not math.isfinite(value):
        raise _OutsideValueModel
    if value == 0:
        return "0"
    mantissa, _, exponent = float.__repr__(abs(value)).partition("e")
    integer_digits, _, fraction_digits = mantissa.partition(".")
    all_digits = integer_digits + fraction_digits
    digits = all_digits.lstrip("0")
    # The value is 0.<digits> * 10^point (ECMAScript's n).
    point = len(integer_digits) - (len(all_digits) - len(digits)) + int(exponent or "0")
    digits = digits.rstrip("0")
    count = len(digits)
    if count <= point <= 21:
        text = digits + "0" * (point - count)
    elif 0 < point <= 21:
        text = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        text = "0." + "0" * -point + digits
    else:
        exponent_value = point - 1
        sign = "+" if exponent_value > 0 else "-"
        fraction = "." + digits[1:] if count > 1 else ""
        text = f"{digits[0]}{fraction}e{sign}{abs(exponent_value)}"
    return "-" + text if value < 0 else text
