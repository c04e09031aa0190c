"""JSON text as reports and written maps give it: exactly the text of
``json.dumps(value, indent=N, ensure_ascii=False)``.

``json`` has no C code for ``indent``: it falls back to its pure-Python encoder, which took 28 ms
for a report of 1,000 findings. Where the Rust core is installed the value is encoded by json's C
encoder, compactly, and the core lays the text out (``rust/json_indent.rs``), in a quarter of the
time. The text is the same either way (tests/test_json_text.py), so this is no backend choice:
like ``_tables``, it uses the core whenever it is there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

from ._load_core import import_core

__all__ = ["dumps"]


@cache
def _core_indent() -> Callable[[str, int], str] | None:
    try:
        indent: Callable[[str, int], str] = import_core().indent_json
    except ImportError:
        return None
    return indent


# Wider indents take json's own route: the core's text is allocated outside Python, where running
# out of memory ends the process instead of raising MemoryError.
_CORE_WIDTHS = range(0, 65)


def dumps(value: Any, indent: int | str | None = 2) -> str:
    """``json.dumps(value, indent=indent, ensure_ascii=False)``, its text exactly: compact for
    None; laid out by the core for 0 to 64 spaces; any other indent json takes (a string, a
    negative or wider number) goes json's own way."""
    indent_json = _core_indent()
    if indent_json is not None and type(indent) is int and indent in _CORE_WIDTHS:
        compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        try:
            return indent_json(compact, indent)
        except UnicodeEncodeError:
            pass  # a lone surrogate in a string: not UTF-8, so not text the core can take
    return json.dumps(value, indent=indent, ensure_ascii=False)
