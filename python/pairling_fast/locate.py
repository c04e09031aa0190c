"""Lines of JSON Pointers in a JSON text, so findings without a line can still be shown in place
(code scanning puts a SARIF result on a line; editors jump to ``file:line``).

Only the containers on the way to a wanted pointer are walked here; every other value is skipped
by the C scanner of the standard library (``raw_decode``), so locating a few pointers in a large
document costs about one C-speed parse, not a Python loop over every token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

# RFC 6901 token rules once for the package: the fallback's JSON model (pure Python, always there).
from ._pointers import unescape_pointer_token
from .report import Finding

__all__ = ["pointer_lines", "with_lines"]

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_HERE = ""  # a trie key no member can collide with: member names are stored with a "/" prefix


def _trie(wanted: Collection[str]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for pointer in wanted:
        if pointer and not pointer.startswith("/"):
            continue
        node = root
        for token in pointer.split("/")[1:]:
            node = node.setdefault("/" + unescape_pointer_token(token), {})
        node[_HERE] = pointer
    return root


def _space(text: str, position: int) -> int:
    match = _WHITESPACE.match(text, position)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _skip(text: str, position: int) -> int:
    return _DECODER.raw_decode(text, position)[1]


def _visit(text: str, position: int, node: dict[str, Any], found: dict[str, int]) -> int:
    """Record the wanted pointers at and below the value at ``position``; returns its end."""
    if _HERE in node:
        found[node[_HERE]] = position
    has_children = len(node) > (1 if _HERE in node else 0)
    opening = text[position : position + 1]
    if not has_children or opening not in ("{", "["):
        return _skip(text, position)
    closing = "}" if opening == "{" else "]"
    position = _space(text, position + 1)
    if text[position : position + 1] == closing:
        return position + 1
    index = 0
    while True:
        if opening == "{":
            if text[position : position + 1] != '"':
                raise ValueError("expected a member name")
            name, position = _DECODER.raw_decode(text, position)
            position = _space(text, position)
            if text[position : position + 1] != ":":
                raise ValueError("expected ':'")
            position = _space(text, position + 1)
        else:
            name = str(index)
            index += 1
        child = node.get("/" + name)
        position = _visit(text, position, child, found) if child else _skip(text, position)
        position = _space(text, position)
        separator = text[position : position + 1]
        if separator == closing:
            return position + 1
        if separator != ",":
            raise ValueError("expected ',' or a closing bracket")
        position = _space(text, position + 1)


def pointer_lines(text: bytes, wanted: Collection[str]) -> dict[str, int]:
    """The 1-based line where the value at each pointer in ``wanted`` starts.

    Best effort on invalid text: pointers it cannot reach are absent from the result.
    """
    document = text.decode("utf-8", "replace")
    found: dict[str, int] = {}
    try:
        start = _space(document, 1 if document.startswith("\ufeff") else 0)
        _visit(document, start, _trie(wanted), found)
    except (ValueError, RecursionError):
        pass
    lines: dict[str, int] = {}
    line, counted_to = 1, 0
    for pointer, offset in sorted(found.items(), key=lambda item: item[1]):
        line += document.count("\n", counted_to, offset)
        counted_to = offset
        lines[pointer] = line
    return lines


def with_lines(text: bytes, findings: Sequence[Finding]) -> list[Finding]:
    """``findings`` of the JSON document ``text``: those with a pointer but no line get the line
    where the pointed value starts (when it can be found)."""
    wanted = {f.pointer for f in findings if f.pointer is not None and f.line is None}
    if not wanted:
        return list(findings)
    lines = pointer_lines(text, wanted)
    return [
        replace(f, line=lines[f.pointer]) if f.line is None and f.pointer in lines else f
        for f in findings
    ]
