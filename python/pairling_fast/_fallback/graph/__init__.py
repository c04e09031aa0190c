"""Capability maps: schema, Pairling's own rules and semantic digests (↔ ``rust/graph/``).

One pass over a ``pairling.capability-map.2.0.0`` document: strict parse, schema validation, then
every rule of ``docs/maps.md``, which run even when the schema found errors: an entry or field of
the wrong type is skipped, never trusted. The error rules are those of Pairling's own map
validator (``validate_capability_graph`` in Pairling's companion); the schema is the bundled one,
widened where that validator accepts more (PF229 names each such value), and the rules add what
the validator rejects beyond the schema. pairling_fast's own extra rules are lints (warning or
info). Findings come out in document order (see ``_document_position``), so both backends list
them identically.

This package's ``__init__`` is the check as a whole; the rules live by concern in ``schema``,
``index``, ``references``, ``entries``, ``bindings``, ``releases`` and ``digests``, the same
modules as the Rust core's.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ...codes import (
    UNSUPPORTED_MAP_VERSION,
    severity,
)
from ...errors import CanonicalizationError
from ...locate import pointer_lines
from ..findings import RawFinding
from ..parse import check_value, parse_json, unescape_pointer_token
from .bindings import _bindings
from .diff import diff_maps as _diff_maps
from .digests import _digests, seal_map, seal_map_json
from .entries import (
    _capabilities,
    _claims,
    _document,
    _exclusions,
    _implementations,
    _provider_entries,
    _sources,
    _transports,
)
from .index import COLLECTIONS, MAP_SCHEMA_VERSION, _finding, _is_array, _Map, _text
from .references import _orphans, _providers, _source_refs, _uniqueness
from .releases import _release_join
from .schema import schema_findings

if TYPE_CHECKING:
    from ...report import RawDifferingBinding, RawMapChange

__all__ = ["check_map", "check_map_json", "diff_maps", "seal_map", "seal_map_json"]


def _document_position(document: Any, pointer: str | None) -> list[tuple[int, str]]:
    """Where ``pointer`` is in the document: member and item positions, token by token.

    Object members count in their order in the document, array items by index; a token that does
    not resolve (a missing member) sorts after everything that does, by its text.
    """
    position: list[tuple[int, str]] = []
    node: Any = document
    resolved = True
    for raw_token in (pointer or "").split("/")[1:]:
        token = unescape_pointer_token(raw_token)
        if resolved and isinstance(node, dict) and token in node:
            position.append((list(node).index(token), ""))
            node = node[token]
        elif (
            resolved
            and _is_array(node)
            and token.isascii()
            and token.isdigit()
            and int(token) < len(node)
        ):
            position.append((int(token), ""))
            node = node[int(token)]
        else:
            resolved = False
            position.append((sys.maxsize, token))
    return position


def _in_document_order(document: Any, findings: list[RawFinding]) -> list[RawFinding]:
    return sorted(
        findings,
        key=lambda f: (_document_position(document, f[4]), f[0], f[5] or ""),
    )


def _empty_stats() -> dict[str, Any]:
    return {
        "collections": dict.fromkeys(COLLECTIONS, 0),
        "schema_violations": 0,
        "digests": {"verified": 0, "mismatched": 0, "unchecked": 0},
    }


def _other_version(document: Any) -> RawFinding | None:
    """A map of another schema_version is reported as such, not checked against 2.0.0 rules."""
    version = _text(document, "schema_version")
    if version is None or version == MAP_SCHEMA_VERSION:
        return None
    return _finding(
        UNSUPPORTED_MAP_VERSION,
        f"capability map schema_version '{version}': pairling_fast checks schema_version "
        f"{MAP_SCHEMA_VERSION} only (Pairling's validator rejects other versions too)",
        "/schema_version",
    )


def _check_document(document: Any, manifest: Any = None) -> tuple[list[RawFinding], dict[str, Any]]:
    stats = _empty_stats()
    other_version = _other_version(document)
    if other_version is not None:
        return [other_version], stats
    findings = schema_findings(document)
    stats["schema_violations"] = len(findings)
    if not isinstance(document, dict):
        return _in_document_order(document, findings), stats
    for collection in COLLECTIONS:
        items = document.get(collection)
        stats["collections"][collection] = len(items) if _is_array(items) else 0
    graph = _Map(document)
    for rule in (
        _document,
        _uniqueness,
        _source_refs,
        _sources,
        _provider_entries,
        _providers,
        _implementations,
        _transports,
        _capabilities,
        _bindings,
        _claims,
        _exclusions,
    ):
        findings.extend(rule(graph))
    findings.extend(_digests(graph, stats["digests"]))
    findings.extend(_orphans(graph))
    if manifest is not None:
        findings.extend(_release_join(graph, manifest))
    return _in_document_order(document, findings), stats


_MapCheck = tuple[list[RawFinding], dict[str, Any]]


def _checked_value(document: Any, manifest: Any) -> tuple[_MapCheck, Any]:
    """The check of a parsed map and the map (None when it is outside the JSON model)."""
    try:
        check_value(document)
    except CanonicalizationError as error:
        return ([_finding(error.code, error.message, error.pointer)], _empty_stats()), None
    return _check_document(document, manifest), document


def _checked_json(data: bytes | str, manifest: Any) -> tuple[_MapCheck, Any]:
    """The check of a JSON text and its parsed map (None when it does not parse)."""
    try:
        document = parse_json(data)
    except CanonicalizationError as error:
        message = error.message
        if error.line is not None and error.column is not None:
            message += f" (line {error.line}, column {error.column})"
        finding = RawFinding(
            error.code,
            severity(error.code),
            message,
            error.line,
            error.pointer,
            None,
        )
        return ([finding], _empty_stats()), None
    return _check_document(document, manifest), document


def check_map(document: Any, manifest: Any = None) -> _MapCheck:
    """Check a parsed map (Python values); a value outside the JSON model is one finding.

    ``manifest``, when given, is Pairling's reviewed operation manifest (parsed JSON; a value
    outside the JSON model raises ``CanonicalizationError``): the release-join rules PF254 to PF260
    then run too."""
    if manifest is not None:
        check_value(manifest)
    return _checked_value(document, manifest)[0]


def check_map_json(data: bytes | str, manifest: Any = None) -> _MapCheck:
    """Parse JSON text strictly, then check it; a parse error is the one finding."""
    if manifest is not None:
        check_value(manifest)
    return _checked_json(data, manifest)[0]


def _lines_of(text: Any, pointers: Iterable[str | None]) -> dict[str, int]:
    """The lines of ``pointers`` in ``text`` (none unless it is JSON text)."""
    if not isinstance(text, (bytes, bytearray)):
        return {}
    return pointer_lines(bytes(text), {p for p in pointers if p is not None})


def diff_maps(
    old: Any, new: Any, manifest: Any = None
) -> tuple[_MapCheck, _MapCheck, tuple[list[RawMapChange], list[RawDifferingBinding]] | None]:
    """Both maps checked (as ``check_map`` / ``check_map_json`` check them; bytes are JSON text,
    anything else a parsed map) and, when both are JSON objects, diffed: the changes in the order
    found, each with its lines in OLD and NEW where the side was text, and the bindings that
    differ with their digests (``rust/python/map_diff.rs``)."""
    if manifest is not None:
        check_value(manifest)
    sides = [
        _checked_json(bytes(side), manifest)
        if isinstance(side, (bytes, bytearray))
        else _checked_value(side, manifest)
        for side in (old, new)
    ]
    diff = _diff_maps(sides[0][1], sides[1][1])
    if diff is None:
        return sides[0][0], sides[1][0], None
    changes, bindings = diff
    old_lines = _lines_of(old, (c[4] for c in changes))
    new_lines = _lines_of(new, (c[5] for c in changes))
    located: list[RawMapChange] = [
        (*c[:8], old_lines.get(c[4] or ""), new_lines.get(c[5] or "")) for c in changes
    ]
    return sides[0][0], sides[1][0], (located, bindings)
