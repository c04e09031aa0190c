"""Which branch of a failing ``oneOf``/``anyOf`` came closest: python-jsonschema's ``best_match``
(``jsonschema/exceptions.py``, ``best_match`` and ``by_relevance``) over the errors of the
composite's ``context``, ranked on what both backends report (a violation's pointer, schema pointer
and keyword), so the Rust core's choice and this one are the same. Mirrors
``rust/validate/best_match.rs``.

From the composite, descend into its branch errors while one of them is strictly the most
relevant: the deepest in the instance, then the first in instance order, then a nested
``oneOf``/``anyOf`` (to descend further), then one whose schema's ``type`` the instance has. Two
branch errors equally relevant stop the descent: nothing says which branch was meant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jsonschema

from .parse import unescape_pointer_token

__all__ = ["closest"]

Located = tuple[str, str, str]
"""(pointer, schema_pointer, keyword) of an error, as the backend reports it."""
Locate = Callable[[jsonschema.ValidationError], Located]


def closest(
    error: jsonschema.ValidationError,
    locate: Callable[[jsonschema.ValidationError], Located],
    schema: Any,
) -> jsonschema.ValidationError | None:
    """The branch error of ``error`` (a ``oneOf`` none of whose branches matched, or a failing
    ``anyOf``) that came closest, ``None`` for any other error or where no branch error stands out.
    A branch error's ``type`` is read beside its keyword in ``schema``, the validated document."""
    if error.validator not in _WEAK:
        return None
    best = None
    context: Iterable[jsonschema.ValidationError] = error.context or ()
    while True:
        ranked = sorted(((_relevance(each, locate, schema), each) for each in context), key=_first)
        if not ranked or (len(ranked) > 1 and ranked[0][0] == ranked[1][0]):
            return best
        best = ranked[0][1]
        if best.validator not in _WEAK or not best.context:
            return best
        context = best.context


_WEAK = frozenset({"anyOf", "oneOf"})


def _first(pair: tuple[Any, Any]) -> Any:
    return pair[0]


def _relevance(
    error: jsonschema.ValidationError,
    locate: Callable[[jsonschema.ValidationError], Located],
    schema: Any,
) -> tuple[int, _Path, bool, bool]:
    pointer, schema_pointer, keyword = locate(error)
    tokens = pointer.split("/")[1:]
    type_matches = keyword != "falseSchema" and _has_type(
        error.instance, _declared_type(schema, schema_pointer)
    )
    return (-len(tokens), _Path(tokens), keyword not in _WEAK, not type_matches)


class _Path:
    """An instance location's tokens (escaped), ordered as python-jsonschema orders its paths:
    array indices as numbers, names as strings."""

    __slots__ = ("tokens",)

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens

    def _compare(self, other: _Path) -> int:
        for a, b in zip(self.tokens, other.tokens, strict=False):
            left, right = _index(a), _index(b)
            if left is not None and right is not None:
                a_key: Any = left
                b_key: Any = right
            else:
                a_key, b_key = a, b
            if a_key != b_key:
                return -1 if a_key < b_key else 1
        return (len(self.tokens) > len(other.tokens)) - (len(self.tokens) < len(other.tokens))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Path) and self._compare(other) == 0

    def __lt__(self, other: _Path) -> bool:
        return self._compare(other) < 0

    __hash__ = None  # type: ignore[assignment]


def _index(token: str) -> tuple[int, str] | None:
    """A token written as an array index (``0``, ``17``; no sign or leading zero), as (digits,
    token) so that any length compares as the number."""
    canonical = token.isascii() and token.isdigit() and (token == "0" or not token.startswith("0"))
    return (len(token), token) if canonical else None


def _declared_type(schema: Any, schema_pointer: str) -> Any:
    """The ``type`` of the schema object holding the keyword at ``schema_pointer``."""
    if "/" not in schema_pointer:
        return None
    node = schema
    for token in schema_pointer.rsplit("/", 1)[0].split("/")[1:]:
        token = unescape_pointer_token(token)
        if isinstance(node, dict):
            if token not in node:
                return None
            node = node[token]
        elif isinstance(node, list):
            if not (token.isascii() and token.isdigit()) or int(token) >= len(node):
                return None
            node = node[int(token)]
        else:
            return None
    return node.get("type") if isinstance(node, dict) else None


def _has_type(instance: Any, declared: Any) -> bool:
    """Whether ``instance`` has one of the JSON Schema types ``declared`` names (a name or a
    list)."""
    if isinstance(declared, str):
        return _is_type(instance, declared)
    if isinstance(declared, list):
        return any(isinstance(name, str) and _is_type(instance, name) for name in declared)
    return False


def _is_type(instance: Any, name: str) -> bool:
    if isinstance(instance, bool):
        return name == "boolean"
    if instance is None:
        return name == "null"
    if isinstance(instance, int):
        return name in ("integer", "number")
    if isinstance(instance, float):
        return name == "number" or (name == "integer" and instance.is_integer())
    if isinstance(instance, str):
        return name == "string"
    if isinstance(instance, (list, tuple)):
        return name == "array"
    return isinstance(instance, dict) and name == "object"
