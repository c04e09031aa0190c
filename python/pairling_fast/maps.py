"""Pairling capability maps: check, seal, and write sealed maps atomically.

``check_map`` runs, in one pass on the active backend, strict parsing, validation against the
bundled ``pairling.capability-map.2.0.0`` schema (widened where Pairling's own validator accepts
more), every rule of Pairling's map validator and pairling_fast's lints (``docs/maps.md``) and the
``pairling.semantic-digest.v1`` check of each operation binding (``docs/digests.md``); with a
``manifest`` (Pairling's reviewed operation manifest) also the release join. ``seal_map``
recomputes the digests of a map that is otherwise free of errors; ``write_sealed`` is what
``python -m pairling_fast seal`` writes with.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Union

from . import _backend, _json_text
from ._atomic import write_atomically
from ._files import read_document
from .canonical import parse_json
from .codes import DIGEST_MISMATCH
from .errors import MapInvalidError
from .locate import with_lines
from .report import Finding, Report

__all__ = [
    "DIGEST_MISMATCH",
    "SEMANTIC_DIGEST_VERSION",
    "ManifestSource",
    "MapSource",
    "check_map",
    "dump_map",
    "load_manifest",
    "seal_map",
    "write_sealed",
]

SEMANTIC_DIGEST_VERSION = "pairling.semantic-digest.v1"

MapSource = Union[str, "os.PathLike[str]", bytes, bytearray, "dict[str, Any]"]
"""A map to check: a file path, JSON text as bytes, or an already parsed dict."""

ManifestSource = Union[str, "os.PathLike[str]", bytes, bytearray, "dict[str, Any]", Any]
"""Pairling's reviewed operation manifest: a file path, JSON text as bytes, or parsed JSON."""


def load_manifest(manifest: ManifestSource) -> Any:
    """The manifest as a JSON value: bytes or a file's text parsed strictly
    (``CanonicalizationError``, a ``ValueError``, when it is not JSON; ``OSError`` when the file
    cannot be read); any other value is taken as already parsed (one that is not an object is
    the PF260 finding)."""
    if isinstance(manifest, (bytes, bytearray)):
        return parse_json(bytes(manifest))
    if isinstance(manifest, (str, os.PathLike)):
        return parse_json(read_document(manifest))
    return manifest


def _check(
    engine: _backend.Engine,
    source: MapSource,
    manifest: ManifestSource | None = None,
    limit: int | None = None,
) -> tuple[Report, bytes | None, str | None]:
    """The report, the JSON text (None for a dict) and the path (None unless one was given)."""
    reviewed = load_manifest(manifest) if manifest is not None else None
    if isinstance(source, dict):
        raw, stats = engine.check_map(source, reviewed)
        return Report([Finding.from_raw(f) for f in raw], stats), None, None
    if isinstance(source, (bytes, bytearray)):
        text, path = bytes(source), None
    elif isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        text = read_document(path, limit)
    else:
        raise TypeError(
            f"a map is a path, bytes or a parsed dict, not {type(source).__name__}; "
            "JSON text given as str must be encoded first (a str is taken as a path)"
        )
    raw, stats = engine.check_map_json(text, reviewed)
    findings = with_lines(text, [Finding.from_raw(f, path) for f in raw])
    return Report(findings, stats), text, path


def check_map(
    source: MapSource,
    manifest: ManifestSource | None = None,
    *,
    max_document_bytes: int | None = None,
) -> Report:
    """Check a capability map; findings are in document order and carry JSON Pointers.

    ``manifest`` is Pairling's reviewed operation manifest (``operations`` and
    ``release_memberships``); with it the release-join rules PF254 to PF260 run too.

    A ``str`` or ``PathLike`` is a file to read (its findings get ``path``; a missing file raises
    ``OSError``), ``bytes`` are JSON text, a ``dict`` is an already parsed map. Findings on a text
    (path or bytes) carry the line of the value their pointer names, as ``check`` shows them.
    ``stats`` counts the entries of each collection, the schema violations and the digests
    verified, mismatched and unchecked (bindings too broken to have one). A file is read only if
    it is a regular file of at most ``max_document_bytes`` (``_files.read_document``; else
    ``OSError``).
    """
    return check_map_on(_backend.active(), source, manifest, max_document_bytes=max_document_bytes)


def check_map_on(
    engine: _backend.Engine,
    source: MapSource,
    manifest: ManifestSource | None = None,
    *,
    max_document_bytes: int | None = None,
) -> Report:
    """``check_map`` on ``engine`` (``check_paths`` hands down the one it resolved)."""
    return _check(engine, source, manifest, max_document_bytes)[0]


def seal_map(source: MapSource, *, max_document_bytes: int | None = None) -> dict[str, Any]:
    """The map with every ``operation_bindings[*].semantic_digest`` recomputed.

    Only digests are repaired: a map with any other error finding (parse, schema, integrity) is
    refused with ``MapInvalidError`` (a ``ValidationError``) carrying every finding, because a
    digest sealed over a broken binding would vouch for it. Warnings do not block sealing.
    """
    engine = _backend.active()
    report, text, path = _check(engine, source, limit=max_document_bytes)
    blocking = [f for f in report.errors if f.code != DIGEST_MISMATCH]
    if blocking:
        raise MapInvalidError(report.findings, path)
    sealed: dict[str, Any] = engine.seal_map(source) if text is None else engine.seal_map_json(text)
    return sealed


def dump_map(document: dict[str, Any]) -> str:
    """The JSON text a sealed map is written as: 2-space indent, UTF-8, final newline."""
    return _json_text.dumps(document) + "\n"


def write_sealed(
    source_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str] | None = None,
    *,
    in_place: bool = False,
    notes: list[str] | None = None,
    max_document_bytes: int | None = None,
) -> Path:
    """Seal the map at ``source_path`` and write it to ``out_path`` (or over itself).

    The text goes to a temporary file in the destination's directory, is fsynced, then renamed
    over the destination, so a reader sees the old file or the new one, never half of either, and
    the input is read completely before anything is written. An invalid map raises
    ``MapInvalidError`` and nothing is written. A symbolic link is written through to its target,
    a character device or FIFO is written into (not atomically), other non-regular files are
    refused; what the user should know about the destination is appended to ``notes``
    (``_atomic.atomic_write``). Returns the path written.
    """
    if in_place == (out_path is not None):
        raise ValueError("give exactly one of out_path and in_place=True")
    destination = Path(source_path if in_place else out_path)  # type: ignore[arg-type]
    sealed = seal_map(source_path, max_document_bytes=max_document_bytes)
    # A new file gets the permissions of its input; a replaced one keeps its own.
    mode = None if destination.exists() else _mode_of(Path(source_path))
    write_atomically(destination, dump_map(sealed).encode("utf-8"), mode=mode, notes=notes)
    return destination


def _mode_of(path: Path) -> int:
    # Not the setuid/setgid bits: a copy is not the program the input may be.
    return path.stat().st_mode & 0o1777
