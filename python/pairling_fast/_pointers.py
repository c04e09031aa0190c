"""JSON Pointer reference tokens (RFC 6901), shared by the facade and the pure-Python fallback
(the Rust core has its own in ``rust/parse.rs``): kept out of ``_fallback`` so that the facade on
the Rust core does not load the fallback to read a pointer."""

from __future__ import annotations

__all__ = ["escape_pointer_token", "unescape_pointer_token"]


def unescape_pointer_token(token: str) -> str:
    """Unescapes one JSON Pointer reference token (RFC 6901 §4: ``~1`` to ``/``, then ``~0``)."""
    return token.replace("~1", "/").replace("~0", "~")


def escape_pointer_token(token: str) -> str:
    """Escapes one JSON Pointer reference token (RFC 6901: ``~`` as ``~0``, ``/`` as ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")
