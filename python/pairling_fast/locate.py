"""Lines of JSON Pointers in a JSON text, so findings without a line can still be shown in place
(code scanning puts a SARIF result on a line; editors jump to ``file:line``)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Union

__all__ = ["pointer_lines"]

# Strings, structural characters and bare literals; whitespace between them is skipped.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[-0-9A-Za-z.+]+', re.DOTALL)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class _Frame:
    __slots__ = ("index", "is_object", "key", "pointer")

    def __init__(self, pointer: str, is_object: bool) -> None:
        self.pointer = pointer
        self.is_object = is_object
        self.key: Union[str, None] = None
        self.index = 0

    def child(self) -> str:
        token = _escape(self.key or "") if self.is_object else str(self.index)
        return f"{self.pointer}/{token}"


def pointer_lines(text: bytes, wanted: Collection[str]) -> dict[str, int]:
    """The 1-based line where the value at each pointer in ``wanted`` starts.

    Best effort on invalid text: pointers it cannot reach are absent from the result.
    """
    remaining = set(wanted)
    found: dict[str, int] = {}
    stack: list[_Frame] = []
    expecting_key = False
    line, counted_to = 1, 0

    def value_at(offset: int) -> str:
        nonlocal line, counted_to
        pointer = stack[-1].child() if stack else ""
        if pointer in remaining:
            line += text.count(b"\n", counted_to, offset)
            counted_to = offset
            found[pointer] = line
            remaining.discard(pointer)
        return pointer

    for match in _TOKEN.finditer(text):
        if not remaining:
            break
        token = match.group()
        if token in (b"{", b"["):
            stack.append(_Frame(value_at(match.start()), token == b"{"))
            expecting_key = token == b"{"
        elif token in (b"}", b"]"):
            if stack:
                stack.pop()
            expecting_key = False
        elif token == b",":
            if stack and stack[-1].is_object:
                expecting_key = True
            elif stack:
                stack[-1].index += 1
        elif token == b":":
            expecting_key = False
        elif expecting_key and stack:
            try:
                stack[-1].key = json.loads(token)
            except ValueError:
                stack[-1].key = token.decode("utf-8", "replace").strip('"')
        else:
            value_at(match.start())
    return found
