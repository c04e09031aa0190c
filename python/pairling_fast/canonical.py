"""RFC 8785 (JCS) canonical JSON and the sha256 digests built on it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import _backend

__all__ = [
    "canonicalize",
    "canonicalize_json",
    "digest",
    "digest_hex",
    "digest_hex_many",
    "parse_json",
]

DIGEST_PREFIX = "sha256:"


def parse_json(data: bytes | str) -> Any:
    """Parse strict JSON: duplicate keys, lone surrogates, NaN/Infinity, integers beyond 64 bits
    and nesting deeper than 512 raise ``CanonicalizationError`` with the code and a JSON Pointer."""
    return _backend.active().parse_json(data)


def canonicalize(value: Any) -> bytes:
    """RFC 8785 canonical bytes of a JSON-like Python value (dict/list/str/int/float/bool/None)."""
    return _backend.active().canonicalize(value)


def canonicalize_json(data: bytes | str) -> bytes:
    """Parse JSON text strictly (see ``parse_json``), then canonicalize it."""
    return _backend.active().canonicalize_json(data)


def digest_hex(value: Any) -> str:
    """Lowercase hex sha256 of the canonical bytes: the digest format CAR uses."""
    return _backend.active().digest_hex(value)


def digest(value: Any) -> str:
    """``sha256:<64 hex>`` of the canonical bytes: the Pairling ``digest`` format."""
    return DIGEST_PREFIX + _backend.active().digest_hex(value)


def digest_hex_many(values: Iterable[Any]) -> list[str]:
    """``digest_hex`` of each value, in order. On the Rust core the hashing of a large batch runs
    without the GIL, on every core; a value outside the JSON model raises as ``digest_hex`` does."""
    values = values if type(values) is list else list(values)
    return _backend.active().digest_hex_many(values)
