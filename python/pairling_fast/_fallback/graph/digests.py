"""``pairling.semantic-digest.v1``: each binding's digest computed, verified and sealed
(↔ ``rust/graph/digests.rs``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...codes import (
    DIGEST_MISMATCH,
)
from ...errors import CanonicalizationError
from ..canonical import digest_hex
from ..findings import RawFinding
from ..parse import check_value, parse_json
from .index import DIGEST_FIELD, _finding, _is_array, _Map, _text

DIGEST_PREFIX = "sha256:"


def semantic_digest(binding: dict[str, Any]) -> str:
    """``pairling.semantic-digest.v1``: sha256 of JCS(binding without ``semantic_digest``)."""
    content = {key: value for key, value in binding.items() if key != DIGEST_FIELD}
    return DIGEST_PREFIX + digest_hex(content)


def _digests(graph: _Map, counts: dict[str, int]) -> Iterator[RawFinding]:
    for i, binding in graph.entries["operation_bindings"]:
        recorded = _text(binding, DIGEST_FIELD)
        if recorded is None:
            continue
        try:
            expected = semantic_digest(binding)
        except CanonicalizationError as error:
            yield _finding(error.code, error.message, f"/operation_bindings/{i}{error.pointer}")
            continue
        if expected == recorded:
            counts["verified"] += 1
        else:
            counts["mismatched"] += 1
            yield _finding(
                DIGEST_MISMATCH,
                f"semantic_digest mismatch: expected {expected}, found {recorded}",
                f"/operation_bindings/{i}/{DIGEST_FIELD}",
            )
    bindings = graph.document.get("operation_bindings")
    total = len(bindings) if _is_array(bindings) else 0
    counts["unchecked"] = total - counts["verified"] - counts["mismatched"]


def seal_map(document: Any) -> Any:
    """A copy of the map with every binding's semantic_digest recomputed (no other check)."""
    check_value(document)
    if not isinstance(document, dict) or not _is_array(document.get("operation_bindings")):
        return document
    bindings = []
    for i, binding in enumerate(document["operation_bindings"]):
        if isinstance(binding, dict):
            try:
                binding = {**binding, DIGEST_FIELD: semantic_digest(binding)}
            except CanonicalizationError as error:
                pointer = f"/operation_bindings/{i}{error.pointer}"
                raise CanonicalizationError(error.code, error.message, pointer) from None
        bindings.append(binding)
    return {**document, "operation_bindings": bindings}


def seal_map_json(data: bytes | str) -> Any:
    """Parse JSON text strictly, then seal it (see ``seal_map``)."""
    return seal_map(parse_json(data))
