"""How the wire checks read JSON values and word their findings; mirrors ``rust/wire/shared.rs``.

The one raw-finding shape, quoting of a name, pointer token and reading of an integral number that
RPC results, transcripts and the bundle check share, so a message or pointer reads the same
whichever part emits it; and a strict-JSON error as a finding (on a transcript line, or in a whole
file).
"""

from __future__ import annotations

import json
from typing import Any

from ...codes import severity
from ...errors import CanonicalizationError
from ..findings import RawFinding
from ..parse import escape_pointer_token


def _finding(
    code: str,
    message: str,
    pointer: str | None,
    line: int | None = None,
    schema_pointer: str | None = None,
    best_match: tuple[str, str, str] | None = None,
) -> RawFinding:
    return RawFinding(code, severity(code), message, line, pointer, schema_pointer, best_match)


def _token(key: str | int) -> str:
    return "/" + escape_pointer_token(str(key))


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _integer(value: Any) -> int | None:
    """An integral JSON number (``3`` or ``3.0``) as an int; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _json_error_finding(error: CanonicalizationError, line: int | None) -> RawFinding:
    """A strict-JSON error; on a JSONL line the column goes in the message, the line is the line."""
    if line is None:
        message = error.message
        if error.line is not None:
            message += f" (line {error.line}, column {error.column})"
        return _finding(error.code, message, error.pointer, error.line)
    message = error.message
    if error.column is not None:
        message += f" (column {error.column})"
    return _finding(error.code, message, error.pointer, line)
