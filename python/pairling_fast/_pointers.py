"""JSON Pointer reference tokens (RFC 6901), shared by the facade and the pure-Python fallback
(the Rust core has its own in ``rust/parse.rs``): kept out of ``_fallback`` so that the facade on
the Rust core does not load the fallback to read a pointer."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["escape_pointer_token", "path_of", "unescape_pointer_token", "value_at"]

# jsonschema-rs's lists read a token as an index where Rust's usize would parse it (ASCII digits
# with an optional "+", below 2**64), whether it names an array item or an object's member.
_INDEX = re.compile(r"\+?[0-9]+", re.ASCII)
_USIZE_END = 2**64


def unescape_pointer_token(token: str) -> str:
    """Unescapes one JSON Pointer reference token (RFC 6901 §4: ``~1`` to ``/``, then ``~0``)."""
    return token.replace("~1", "/").replace("~0", "~")


def escape_pointer_token(token: str) -> str:
    """Escapes one JSON Pointer reference token (RFC 6901: ``~`` as ``~0``, ``/`` as ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def path_of(pointer: str) -> list[str | int]:
    """A pointer as jsonschema-rs's ``instance_path`` / ``schema_path`` list: its tokens
    unescaped, each an ``int`` where it reads as an index (``_INDEX``)."""
    if not pointer:
        return []
    path: list[str | int] = []
    for raw in pointer[1:].split("/"):
        token = unescape_pointer_token(raw)
        index = int(token) if _INDEX.fullmatch(token) else _USIZE_END
        path.append(index if index < _USIZE_END else token)
    return path


def value_at(document: Any, pointer: str) -> Any:
    """The value a validator's finding points at in ``document`` (the pointer is one the
    validator made, so it is there)."""
    value = document
    for raw in pointer[1:].split("/") if pointer else ():
        token = unescape_pointer_token(raw)
        value = value[token] if isinstance(value, dict) else value[int(token)]
    return value
