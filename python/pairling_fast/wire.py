"""CAR wire documents: RPC results, JSON-RPC transcripts and the wire-schema bundle itself.

Every check returns a ``Report``; the rules and codes (PF4xx) are in ``docs/wire.md``. Nothing is
fetched: messages are checked against a bundled wire schema, CAR's own file per release
(``pairling-fast schemas``): the one ``car_version=`` names, else the newest; a transcript without
``car_version=`` switches to the bundle its ``server.handshake`` release or ``server.schema`` digest
names.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import IO, Any

from . import _backend
from .errors import CanonicalizationError
from .report import Finding, RawFinding, Report
from .validator import json_error_finding

__all__ = [
    "check_rpc_params",
    "check_rpc_result",
    "check_transcript",
    "check_wire_schema",
    "wire_schema_digest",
]

PathLike = str | os.PathLike[str]
TranscriptSource = PathLike | IO[bytes] | IO[str] | Iterable[bytes | str]

# Lines handed to the engine per call: few enough to keep memory flat, enough to amortize the call.
BATCH_LINES = 1024


def _report(outcome: tuple[Sequence[RawFinding], dict[str, Any]], path: str | None) -> Report:
    raw, stats = outcome
    return Report(findings=[Finding.from_raw(finding, path) for finding in raw], stats=stats)


def wire_schema_digest(path: PathLike) -> str:
    """Lowercase hex sha256 of the file's exact bytes: the wire-schema bundle's ``digest.scope``,
    what a ``server.schema`` result's ``digest`` must equal."""
    return _backend.active().wire_schema_digest(os.fspath(path))


def check_rpc_result(
    method: str,
    result: Any,
    *,
    catalog: Any = None,
    wire_schema: PathLike | None = None,
    car_version: str | None = None,
) -> Report:
    """Check the result of JSON-RPC ``method`` against ``rpc.<method>.result`` and the invariants
    its schema describes.

    ``catalog`` (a ``models.catalog_snapshot`` result) cross-checks an ``infer`` result's
    ``catalog_revision`` and ``row_digest``; ``wire_schema`` (a path) verifies a ``server.schema``
    result's ``digest`` against the file's exact bytes; ``car_version`` (``0.58.0``, ``0.58`` or
    ``seed``) picks the bundled wire schema, the newest by default (``ValueError`` for one not
    bundled). A method without a schema in the bundle gives an info (PF401, listed as uncovered)
    or a warning (PF402, unknown), not an error.
    """
    return check_rpc_result_on(
        _backend.active(), method, result, catalog, wire_schema=wire_schema, car_version=car_version
    )


def check_rpc_result_on(
    engine: _backend.Engine,
    method: str,
    result: Any,
    catalog: Any = None,
    *,
    wire_schema: PathLike | None = None,
    car_version: str | None = None,
) -> Report:
    """``check_rpc_result`` on ``engine`` (``check_paths`` hands down the one it resolved)."""
    digest = engine.wire_schema_digest(os.fspath(wire_schema)) if wire_schema is not None else None
    try:
        outcome = engine.check_rpc_result(method, result, catalog, digest, car_version)
    except CanonicalizationError as error:
        return Report(findings=[json_error_finding(error)])
    return _report(outcome, None)


def check_rpc_params(method: str, params: Any, *, car_version: str | None = None) -> Report:
    """Check the params of a JSON-RPC request for ``method`` against ``rpc.<method>.params`` (or,
    for a notification the daemon sends such as ``host.event``, ``notification.<method>.params``
    and the payload type its kind names) of the chosen bundle, the newest by default.

    A method the bundle's ``coverage.rpc_params`` lists without a schema gives an info (PF440)
    naming its category (``typed_without_schema``, ``unresolved``), one it does not list a
    warning (PF441); ``not_read`` methods are not checked (the daemon ignores their params).
    """
    return check_rpc_params_on(_backend.active(), method, params, car_version=car_version)


def check_rpc_params_on(
    engine: _backend.Engine, method: str, params: Any, *, car_version: str | None = None
) -> Report:
    """``check_rpc_params`` on ``engine`` (``check_paths`` hands down the one it resolved)."""
    try:
        outcome = engine.check_rpc_params(method, params, car_version)
    except CanonicalizationError as error:
        return Report(findings=[json_error_finding(error)])
    return _report(outcome, None)


def _as_bytes(line: bytes | str) -> bytes:
    if isinstance(line, str):
        # Lone surrogates stay as they are so the parser reports them (PF003) on their line.
        return line.encode("utf-8", "surrogatepass")
    if isinstance(line, (bytes, bytearray, memoryview)):
        return bytes(line)
    raise TypeError(f"transcript lines must be bytes or str, not {type(line).__name__}")


def _batches(lines: Iterable[bytes | str]) -> Iterator[list[bytes]]:
    iterator = iter(lines)
    while True:
        batch = [_as_bytes(line) for line in islice(iterator, BATCH_LINES)]
        if not batch:
            return
        yield batch


def check_transcript(
    source: TranscriptSource,
    *,
    wire_schema: PathLike | None = None,
    car_version: str | None = None,
) -> Report:
    """Check a JSONL transcript of JSON-RPC 2.0 messages, streaming.

    ``source`` is a path, a file object (binary or text) or an iterable of lines. Responses are
    paired with their requests by ``id`` in either order, each ``result`` is checked like
    ``check_rpc_result`` (an ``infer`` result against the latest catalog snapshot before it, a
    ``server.schema`` digest against ``wire_schema`` when given), and each request's params
    like ``check_rpc_params``; findings carry the line. ``car_version`` fixes the bundle; without
    it the newest applies until a ``server.handshake`` result's ``server_version`` or a
    ``server.schema`` result's ``digest`` names another. Memory is bounded by the ids in flight,
    not by the transcript's length.
    """
    return check_transcript_on(
        _backend.active(), source, wire_schema=wire_schema, car_version=car_version
    )


def check_transcript_on(
    engine: _backend.Engine,
    source: TranscriptSource,
    *,
    wire_schema: PathLike | None = None,
    car_version: str | None = None,
) -> Report:
    """``check_transcript`` on ``engine`` (``check_paths`` hands down the one it resolved)."""
    digest = engine.wire_schema_digest(os.fspath(wire_schema)) if wire_schema is not None else None
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        return _report(engine.check_transcript_file(path, digest, car_version), path)
    if isinstance(source, (bytes, bytearray)):
        raise TypeError(
            "check_transcript takes a path, a file object or an iterable of lines, not bytes; "
            "pass data.splitlines(keepends=True)"
        )
    checker = engine.TranscriptChecker(digest, car_version)
    for batch in _batches(source):
        checker.feed_lines(batch)
    name = getattr(source, "name", None)
    return _report(checker.finish(), name if isinstance(name, str) else None)


def check_wire_schema(path: PathLike) -> Report:
    """Check a ``car.wire-schema.v1`` bundle's own integrity: every schema is valid draft-07 and
    compiles, and the coverage lists agree with the schemas and the EventKind enum. The stats
    carry the file's exact-bytes ``digest``."""
    return check_wire_schema_on(_backend.active(), path)


def check_wire_schema_on(engine: _backend.Engine, path: PathLike) -> Report:
    """``check_wire_schema`` on ``engine`` (``check_paths`` hands down the one it resolved)."""
    path = os.fspath(path)
    return _report(engine.check_wire_schema(path), path)
