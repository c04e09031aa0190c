"""Content sniffing: tell a file's document kind (``KINDS``) from its first bytes and its name.

``classify`` is what ``check_paths`` asks before it checks a file; nothing here reads more than
the head it is given, and nothing here checks a document.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from . import schemas

__all__ = [
    "KINDS",
    "SNIFF_BYTES",
    "SNIFF_LINES",
    "Classification",
    "classify",
    "params_methods",
    "result_method",
    "rpc_methods",
]


KINDS = ("map", "journal", "transcript", "rpc-result", "wire-schema", "rpc-params")
"""The document kinds ``check`` knows; ``--type`` takes one of them."""

# Enough to see the top-level markers of a document and the first line of a JSONL file.
SNIFF_BYTES = 1 << 20
_MAP_SCHEMA_FILE = "coding-agent-remote-control-capability-map.schema.json"
_WIRE_FORMAT = "car.wire-schema.v1"
_MAP_SCHEMA_MARK = re.compile(
    rb'"\$schema"\s*:\s*"[^"]*coding-agent-remote-control-capability-map\.schema\.json"'
)
_MAP_VERSION_MARK = re.compile(rb'"schema_version"\s*:\s*"2\.0\.0"')
_MAP_PROVIDERS_MARK = re.compile(rb'"providers"\s*:')
_MAP_ANY_VERSION_MARK = re.compile(rb'"schema_version"\s*:\s*"')
_MAP_POLICY_MARK = re.compile(rb'"evidence_policy"\s*:')
_WIRE_SCHEMA_MARK = re.compile(rb'"format"\s*:\s*"car\.wire-schema\.v1"')
_KIND_REASONS = {
    "map": "capability map ($schema / schema_version)",
    "wire-schema": f'format "{_WIRE_FORMAT}"',
}
_RESULT_SUFFIX = ".result.json"
_RPC_ID_PREFIX = "car.rpc."
_RPC_ID_SUFFIX = ".result"
_PARAMS_SUFFIX = ".params.json"
_PARAMS_ID_PREFIXES = ("car.rpc.", "car.notification.")
_PARAMS_ID_SUFFIX = ".params"
_JSON_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Classification:
    """What a file is: ``kind`` (one of ``KINDS``) or None with the ``reason`` it is skipped."""

    kind: str | None
    reason: str
    method: str | None = None


def rpc_methods() -> frozenset[str]:
    """The JSON-RPC methods whose result schema is bundled (``car.rpc.<method>.result``)."""
    return frozenset(
        schema_id[len(_RPC_ID_PREFIX) : -len(_RPC_ID_SUFFIX)]
        for schema_id in schemas.ids()
        if schema_id.startswith(_RPC_ID_PREFIX) and schema_id.endswith(_RPC_ID_SUFFIX)
    )


def params_methods() -> frozenset[str]:
    """The methods whose params schema the default wire bundle has (``car.rpc.<method>.params``,
    or ``car.notification.<method>.params`` for a notification the daemon sends)."""
    return frozenset(
        schema_id[len(prefix) : -len(_PARAMS_ID_SUFFIX)]
        for schema_id in schemas.ids()
        for prefix in _PARAMS_ID_PREFIXES
        if schema_id.startswith(prefix) and schema_id.endswith(_PARAMS_ID_SUFFIX)
    )


def result_method(name: str, methods: Iterable[str], suffix: str = _RESULT_SUFFIX) -> str | None:
    """The method a ``*.<method>.result.json`` file name (or another ``suffix``, such as
    ``.params.json``) names (the longest known one)."""
    if not name.endswith(suffix):
        return None
    parts = name[: -len(suffix)].split(".")
    known = set(methods)
    for start in range(len(parts)):
        candidate = ".".join(parts[start:])
        if candidate in known:
            return candidate
    return None


class _FirstLine(NamedTuple):
    value: Any
    complete: bool  # the line is one whole JSON value (a JSON Lines record, or a one-line file)


# How many lines of the head are looked at for a journal or transcript record: a junk, broken or
# over-long first line must not hide the records after it (and so their findings).
SNIFF_LINES = 64
_JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")
_EVENT_MARKS = (re.compile(rb'"kind"\s*:'), re.compile(rb'"timestamp"\s*:'))


def _head_lines(head: bytes, complete_head: bool) -> list[_FirstLine]:
    """The first non-blank lines of ``head``, each parsed if it is whole. The last line is whole
    only if the head is the whole file or the line ends with a newline."""
    lines: list[_FirstLine] = []
    pieces = head.split(b"\n")
    for index, line in enumerate(pieces):
        if len(lines) == SNIFF_LINES:
            break
        if not line.strip(_JSON_WHITESPACE):
            continue
        if index == len(pieces) - 1 and not complete_head:
            lines.append(_FirstLine(line, False))  # cut by the head's end: the raw bytes
            break
        try:
            lines.append(_FirstLine(json.loads(line), True))
        except (ValueError, RecursionError):  # too deep for json: not a record
            lines.append(_FirstLine(line, False))
    return lines


def _first_line(head: bytes) -> _FirstLine:
    for line in head.splitlines():
        if line.strip(_JSON_WHITESPACE):
            try:
                return _FirstLine(json.loads(line), True)
            except (ValueError, RecursionError):
                return _FirstLine(None, False)
    return _FirstLine(None, False)


def _one_document(text: bytes) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _json_lines_kind(name: str, text: bytes, complete_head: bool) -> Classification | None:
    """A journal or transcript whose first line does not say so: a later line of the head is a
    record, the first line is cut off but marked as an event, or the name says JSON Lines."""
    if not text or (complete_head and _one_document(text)):
        return None  # empty, or one (pretty-printed) document: not JSON Lines
    lines = _head_lines(text, complete_head)
    for line in lines[1:]:
        if line.complete and _is_event(line.value):
            return Classification("journal", "a CAR journal event among the first lines")
        if line.complete and _is_rpc_message(line.value):
            return Classification("transcript", "a JSON-RPC 2.0 message among the first lines")
    first = lines[0] if lines else None
    if (
        first is not None
        and not first.complete
        and isinstance(first.value, bytes)
        and first.value.lstrip(_JSON_WHITESPACE).startswith(b"{")
        and all(mark.search(first.value) for mark in _EVENT_MARKS)
    ):
        return Classification("journal", "first line is cut off but marked as a CAR event")
    if name.endswith(_JSON_LINES_SUFFIXES):
        # Only when no line of the head reads as JSON: other JSON Lines (say, of test vectors) are
        # not journals, and a journal broken from its first line is still checked.
        if any(line.complete for line in lines):
            return Classification(
                None, "JSON Lines, but none of the first lines is a CAR event or JSON-RPC message"
            )
        return Classification("journal", "named *.jsonl / *.ndjson: checked as a CAR journal")
    return None


def _document_kind(value: Any) -> str | None:
    """The kind a whole parsed document has by its top-level members, if any."""
    if not isinstance(value, dict):
        return None
    schema = value.get("$schema")
    if (isinstance(schema, str) and schema.endswith(_MAP_SCHEMA_FILE)) or (
        value.get("schema_version") == "2.0.0" and "providers" in value
    ):
        return "map"
    # Pairling's maps of another schema_version (1.0.0 has agents, no providers): checked as
    # maps so that the version is reported (PF253), not skipped.
    if isinstance(value.get("schema_version"), str) and "evidence_policy" in value:
        return "map"
    if value.get("format") == _WIRE_FORMAT:
        return "wire-schema"
    return None


def _is_rpc_message(value: Any) -> bool:
    if isinstance(value, list):
        # A batch is one level of messages (JSON-RPC 2.0 §6); nested arrays are not (and may be
        # nested hundreds deep).
        return bool(value) and all(
            isinstance(item, dict) and _is_rpc_message(item) for item in value
        )
    if not isinstance(value, dict):
        return False
    if value.get("jsonrpc") == "2.0":
        return True
    # Transcripts may wrap each message with its direction or time: {"dir": …, "message": {…}}.
    return any(isinstance(v, dict) and v.get("jsonrpc") == "2.0" for v in value.values())


def _is_event(value: Any) -> bool:
    return isinstance(value, dict) and "kind" in value and "timestamp" in value


def classify(
    name: str,
    head: bytes,
    methods: Iterable[str],
    params: Iterable[str] = (),
    *,
    complete: bool | None = None,
) -> Classification:
    """Tell a file's kind from its first bytes (``head``) and, for RPC results, its name.

    JSON Lines whose first record is a CAR journal event or a JSON-RPC 2.0 message are a journal
    or a transcript; a document is a capability map (``$schema`` naming the map schema, or
    ``schema_version`` 2.0.0 with ``providers``) or a CAR wire-schema bundle (``format``
    ``car.wire-schema.v1``) by its top-level members. A broken or junk first line does not hide
    a journal or transcript: any of the first ``SNIFF_LINES`` lines being a record, a first line
    cut off by the head but marked as an event, or a ``*.jsonl``/``*.ndjson`` name when none of
    those lines reads as JSON makes one (its broken lines are then findings). Else the name
    ``*.<method>.result.json`` makes an RPC result and ``*.<method>.params.json`` (a method of
    ``params``) a request's params. ``complete`` says whether ``head`` is the whole file
    (default: it is shorter than ``SNIFF_BYTES``).
    """
    if complete is None:
        complete = len(head) < SNIFF_BYTES
    text = head[len(_BOM) :] if head.startswith(_BOM) else head
    stripped = text.lstrip(_JSON_WHITESPACE)
    first = _first_line(stripped)
    if first.complete:
        if _is_event(first.value):
            return Classification("journal", "first line is a CAR journal event")
        if _is_rpc_message(first.value):
            return Classification("transcript", "first line is a JSON-RPC 2.0 message")
        kind = _document_kind(first.value)
    elif stripped.startswith(b"{"):
        # A document over several lines: its top-level markers, found in the text.
        kind = _marked_kind(text)
    else:
        kind = None
    if kind is not None:
        return Classification(kind, _KIND_REASONS[kind])
    json_lines = _json_lines_kind(name, stripped, complete)
    if json_lines is not None:
        return json_lines
    if name.endswith(_RESULT_SUFFIX):
        method = result_method(name, methods)
        if method is not None:
            return Classification("rpc-result", f"named after RPC method {method}", method)
        return Classification(
            None, "named *.result.json, but no known RPC method in the name (see `schemas`)"
        )
    if name.endswith(_PARAMS_SUFFIX):
        method = result_method(name, params, _PARAMS_SUFFIX)
        if method is not None:
            return Classification("rpc-params", f"named after RPC method {method}", method)
        return Classification(
            None, "named *.params.json, but no method with a params schema in the name"
        )
    if not stripped:
        return Classification(None, "empty file")
    if b"\x00" in text[:8192]:
        return Classification(None, "binary file")
    if not stripped.startswith((b"{", b"[")):
        return Classification(None, "not JSON")
    return Classification(None, "JSON, but not a document kind pairling_fast checks")


def _marked_kind(text: bytes) -> str | None:
    if _MAP_SCHEMA_MARK.search(text) or (
        _MAP_VERSION_MARK.search(text) and _MAP_PROVIDERS_MARK.search(text)
    ):
        return "map"
    if _MAP_ANY_VERSION_MARK.search(text) and _MAP_POLICY_MARK.search(text):
        return "map"
    if _WIRE_SCHEMA_MARK.search(text):
        return "wire-schema"
    return None
