"""Strict JSON text to Python values, and the JSON value model check of Python values.

The pure-Python twin of ``rust/parse.rs`` (its module documentation states the rules and how
defects rank); both must agree on every code, pointer, message and position. ``json.loads`` does
the syntax, and the Rust parser reproduces its messages and positions. Where ``json.loads`` is more
lenient than the value model (duplicate keys, NaN, huge integers, lone surrogate escapes), its hooks
only note that something is suspicious; a walk over the result then names the first defect in
document order, so clean documents never pay for the walk.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterator
from itertools import accumulate, islice
from typing import Any

from .. import codes
from .._pointers import escape_pointer_token, unescape_pointer_token
from ..errors import CanonicalizationError

__all__ = [
    "MAX_DEPTH",
    "check_value",
    "escape_pointer_token",
    "parse_json",
    "unescape_pointer_token",
]

MAX_DEPTH = 512
"""The deepest nesting of arrays and objects accepted; the outermost container is depth 1."""

# Messages shared with the Rust core (rust/parse.rs, rust/python/pyvalue.rs), word for word.
TOO_DEEP = "nesting deeper than 512 arrays/objects"
LONE_SURROGATE = "string contains a lone UTF-16 surrogate"
NOT_FINITE = "NaN and Infinity are not JSON numbers"
OUTSIDE_64_BITS = "integer outside the 64-bit range"
DUPLICATE_KEY = "duplicate key"
NOT_UTF8 = "text is not valid UTF-8"
BOM = "BOM not allowed"
EXPECTING_VALUE = "Expecting value"
EXPECTING_NAME = "Expecting property name enclosed in double quotes"

_SMALLEST_INT = -(2**63)
_LARGEST_INT = 2**64 - 1
# No 64-bit integer literal is longer ("-9223372036854775808"); int() of a longer one could also
# hit Python's 4300-digit conversion limit.
_LONGEST_INT_LITERAL = 20

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# An escape that may decode to a surrogate (false positives only cost a walk).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_STRING_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_NESTING_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}

Location = tuple[Any, str | int] | None
"""Where a value is: ``None`` for the root, else ``(parent path, key or index)``."""


def parse_json(data: bytes | str) -> Any:
    """Parses one strict JSON text; raises CanonicalizationError where the Rust core does."""
    if isinstance(data, str):
        if not data.isascii() and _LONE_SURROGATE.search(data):
            # Such a str has no UTF-8 form: reject it as the bytes the Rust core is given.
            return parse_json(data.encode("utf-8", "surrogatepass"))
        text = data
    elif isinstance(data, bytes):
        raw = data
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise _bytes_error(codes.NOT_UTF8, NOT_UTF8, raw, error.start) from None
    else:
        # As the core refuses it (rust/python/mod.rs, `text_bytes`): `bytes(7)` would be seven
        # NUL bytes, and a list of ints or a bytearray is not JSON text either.
        raise TypeError(f"expected JSON text as bytes or str, got {type(data).__name__}")
    if text.startswith("\ufeff"):
        raise _text_error(codes.INVALID_JSON, BOM, text, 0)
    # Only a text with enough brackets can be too deep, and only then is it worth scanning.
    if text.count("[") + text.count("{") > MAX_DEPTH:
        too_deep_at = _too_deep_offset(text)
        if too_deep_at is not None:
            raise _too_deep_or_earlier_syntax_error(text, too_deep_at)
    suspicions = _suspicions()
    try:
        value = suspicions.loads(text)
    except json.JSONDecodeError as error:
        raise _syntax_error(error) from None
    if suspicions.found or _SURROGATE_ESCAPE.search(text):
        check_value(value)
    return value


def check_value(value: Any) -> None:
    """Raises CanonicalizationError for the first value, in document order, outside the JSON
    value model (rules and codes in docs/architecture.md). Iterative: any depth is safe."""
    # Depth first, without recursion: one iterator of (path, value) members per open container.
    frames: list[Iterator[tuple[Location, Any]]] = [iter([(None, value)])]
    while frames:
        member = next(frames[-1], None)
        if member is None:
            frames.pop()
            continue
        path, item = member
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, str):
            if not item.isascii() and _LONE_SURROGATE.search(item):
                raise CanonicalizationError(codes.LONE_SURROGATE, LONE_SURROGATE, pointer_of(path))
        elif isinstance(item, int):
            if not _SMALLEST_INT <= item <= _LARGEST_INT:
                raise CanonicalizationError(
                    codes.INTEGER_OUT_OF_RANGE, OUTSIDE_64_BITS, pointer_of(path)
                )
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise CanonicalizationError(codes.NOT_FINITE, NOT_FINITE, pointer_of(path))
        elif isinstance(item, (dict, list, tuple)):
            if len(frames) > MAX_DEPTH:
                raise CanonicalizationError(codes.TOO_DEEP, TOO_DEEP)
            frames.append(_members(item, path))
        else:
            message = f"a {type(item).__name__} is not a JSON value"
            raise CanonicalizationError(codes.NOT_A_JSON_VALUE, message, pointer_of(path))


def _members(container: Any, path: Location) -> Iterator[tuple[Location, Any]]:
    """The members of a container, checking each object key as its member comes up."""
    if not isinstance(container, dict):
        for index, item in enumerate(container):
            yield (path, index), item
        return
    duplicates_possible = isinstance(container, _DuplicateKeys)
    members = container.pairs if isinstance(container, _DuplicateKeys) else container.items()
    seen: set[str] = set()
    for key, item in members:
        if not isinstance(key, str):
            raise CanonicalizationError(
                codes.KEY_NOT_A_STRING, f"object key {key!r} is not a string", pointer_of(path)
            )
        member_path = (path, key)
        if not key.isascii() and _LONE_SURROGATE.search(key):
            raise CanonicalizationError(
                codes.LONE_SURROGATE, LONE_SURROGATE, pointer_of(member_path)
            )
        if duplicates_possible:
            if key in seen:
                raise CanonicalizationError(
                    codes.DUPLICATE_KEY, DUPLICATE_KEY, pointer_of(member_path)
                )
            seen.add(key)
        yield member_path, item


def pointer_of(path: Location) -> str:
    tokens: list[str] = []
    while path is not None:
        path, token = path
        if isinstance(token, str):
            # A lone surrogate has no UTF-8 form; the Rust core shows it as U+FFFD too.
            tokens.append(escape_pointer_token(_LONE_SURROGATE.sub("\ufffd", token)))
        else:
            tokens.append(str(token))
    return "".join("/" + token for token in reversed(tokens))


class _DuplicateKeys(dict[str, Any]):
    """An object with a repeated key; ``pairs`` keeps every member so the walk can name it."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


class _Suspicions:
    """``json.loads`` hooks: accept what the value model forbids, but note that it was seen.

    One per thread (``_suspicions``), its decoder reused from text to text: ``json.loads`` with
    hooks builds a decoder and its scanner on every call, which was more than half of its time on
    a small journal line."""

    def __init__(self) -> None:
        self.found = False
        self._decoder = json.JSONDecoder(
            object_pairs_hook=self.on_object,
            parse_int=self.on_integer,
            parse_float=self.on_float,
            parse_constant=self.on_constant,
        )

    def loads(self, text: str) -> Any:
        """``json.loads(text)`` with the hooks, for a str without a BOM (``parse_json`` refuses
        one first); ``found`` then says whether this text had anything the hooks noted."""
        self.found = False
        return self._decoder.decode(text)

    def on_object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        members = dict(pairs)
        if len(members) == len(pairs):
            return members
        self.found = True
        return _DuplicateKeys(pairs)

    def on_integer(self, literal: str) -> int:
        if len(literal) > _LONGEST_INT_LITERAL:
            self.found = True
            return _LARGEST_INT + 1
        value = int(literal)
        if not _SMALLEST_INT <= value <= _LARGEST_INT:
            self.found = True
        return value

    def on_float(self, literal: str) -> float:
        value = float(literal)
        if math.isinf(value):
            self.found = True
        return value

    def on_constant(self, literal: str) -> float:
        self.found = True
        return float(literal)


_PER_THREAD = threading.local()


def _suspicions() -> _Suspicions:
    """This thread's ``_Suspicions``: the hooks note what they saw on the instance, so threads
    parsing at once each need their own."""
    try:
        suspicions: _Suspicions = _PER_THREAD.suspicions
    except AttributeError:
        suspicions = _PER_THREAD.suspicions = _Suspicions()
    return suspicions


def _too_deep_offset(text: str) -> int | None:
    """Offset of the first ``[``/``{`` nested deeper than MAX_DEPTH outside strings, if any.

    Strings are found by a regular expression, which agrees with ``json.loads`` on any prefix it
    accepts; past a syntax error the answer may be off, but then that error is reported instead.
    """
    brackets = _NOT_BRACKET.sub("", _STRING_TOKEN.sub("", text))
    depths = list(accumulate(map(_NESTING_STEP.__getitem__, brackets)))
    if not depths or max(depths) <= MAX_DEPTH:
        return None
    too_deep_index = next(index for index, depth in enumerate(depths) if depth > MAX_DEPTH)
    bracket_tokens = (m for m in _STRING_OR_BRACKET.finditer(text) if m.end() - m.start() == 1)
    return next(islice(bracket_tokens, too_deep_index, None)).start()


def _too_deep_or_earlier_syntax_error(text: str, too_deep_at: int) -> CanonicalizationError:
    """PF008 at ``too_deep_at``, unless a syntax error comes first in document order."""
    try:
        _suspicions().loads(text[:too_deep_at])
    except json.JSONDecodeError as error:
        # The cut text ends where a value is expected; any other complaint is a real one.
        if error.pos < too_deep_at or error.msg != EXPECTING_VALUE:
            return _syntax_error(error)
    return _text_error(codes.TOO_DEEP, TOO_DEEP, text, too_deep_at)


def _syntax_error(error: json.JSONDecodeError) -> CanonicalizationError:
    message, position = error.msg, error.pos
    if message.startswith("Illegal trailing comma before end of "):
        # Python 3.13+ names the comma; earlier versions and the Rust core report what follows it.
        after_comma = error.doc[position + 1 :]
        position += 1 + len(after_comma) - len(after_comma.lstrip(" \t\n\r"))
        message = EXPECTING_VALUE if message.endswith("array") else EXPECTING_NAME
    return _text_error(codes.INVALID_JSON, message, error.doc, position)


def _text_error(code: str, message: str, text: str, position: int) -> CanonicalizationError:
    """An error at a character offset, with the line and column ``JSONDecodeError`` would give."""
    line = text.count("\n", 0, position) + 1
    column = position - text.rfind("\n", 0, position)
    return CanonicalizationError(code, message, "", line, column)


def _bytes_error(code: str, message: str, raw: bytes, offset: int) -> CanonicalizationError:
    """An error at a byte offset; the bytes before it are valid UTF-8."""
    line_start = raw.rfind(b"\n", 0, offset) + 1
    line = raw.count(b"\n", 0, offset) + 1
    column = len(raw[line_start:offset].decode("utf-8")) + 1
    return CanonicalizationError(code, message, "", line, column)
