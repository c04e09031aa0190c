"""CAR RPC results and params for the pure-Python backend; mirrors ``rust/wire/rpc.rs`` rule for
rule.

RPC results (schema, then the invariants the schema descriptions state), catalog snapshots and the
cross-checks made against them, and the params of RPC requests and notifications under the
bundle's params inventory. Codes, pointers, messages and stats are the Rust backend's; keep them in
step (``docs/wire.md``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ...codes import (
    CATALOG_DUPLICATE_ID,
    CATALOG_NOT_A_SNAPSHOT,
    CATALOG_REVISION_MISMATCH,
    CATALOG_REVISION_WRONG,
    CATALOG_UNSORTED,
    COUNT_MISMATCH,
    INFER_ROW_DIGEST_MISMATCH,
    MODEL_NOT_IN_CATALOG,
    PARAMS_UNCHECKED,
    PARAMS_UNKNOWN_METHOD,
    POLL_PAYLOAD_MISSING,
    POLL_TERMINAL_CHUNK,
    ROW_DIGEST_MISMATCH,
    SCHEMA_DIGEST_MISMATCH,
    SCHEMA_VIOLATION,
    UNCHECKED_METHOD,
    UNKNOWN_METHOD,
    USAGE_TOTAL_MISMATCH,
)
from ...errors import CanonicalizationError
from ..canonical import digest_hex
from ..findings import RawFinding
from ..validate import WireBundle, bundle_validator
from .arguments import _bundle_or_default, _prefixed_value_error
from .shared import _finding, _integer, _quoted

__all__ = ["check_rpc_params", "check_rpc_result"]

SNAPSHOT_METHOD = "models.catalog_snapshot"
TERMINAL_CHUNK_OF_STATUS = {"succeeded": "done", "failed": "error"}
TERMINAL_CHUNKS = ("done", "error")


# ---------------------------------------------------------------------------------------------
# RPC results


class CatalogIndex(NamedTuple):
    """What an `infer` result is cross-checked against: a valid snapshot's revision and rows."""

    revision: str
    row_digests: dict[str, str]


def _catalog_index(snapshot: Any) -> CatalogIndex:
    row_digests: dict[str, str] = {}
    for row in snapshot["models"]:
        row_digests.setdefault(row["model"]["id"], row["row_digest"])
    return CatalogIndex(snapshot["catalog_revision"], row_digests)


def _rpc_coverage(bundle: WireBundle, method: str) -> str:
    coverage = bundle.document["coverage"]["rpc_results"]
    if method in coverage["covered"]:
        return "covered"
    if method in coverage["uncovered"]:
        return "uncovered"
    return "unknown"


def _result_schema(method: str) -> str:
    return f"rpc.{method}.result"


def _schema_findings(bundle: WireBundle, name: str, value: Any) -> list[RawFinding]:
    violations = bundle_validator(bundle, name).errors(value)
    return [
        _finding(SCHEMA_VIOLATION, message, pointer, None, schema_pointer, best)
        for pointer, schema_pointer, _keyword, message, best in violations
    ]


def result_findings(
    bundle: WireBundle,
    method: str,
    result: Any,
    catalog: CatalogIndex | None,
    wire_schema_digest: str | None,
) -> tuple[list[RawFinding], bool]:
    """The findings on one result (pointers relative to it) and whether it matched its schema.

    The semantic checks run only on schema-valid results: they rely on the shapes it guarantees.
    """
    if not bundle.has_schema(_result_schema(method)):
        if _rpc_coverage(bundle, method) == "uncovered":
            message = f"unchecked: no schema in {bundle.label()} for {method} results"
            return [_finding(UNCHECKED_METHOD, message, "")], False
        message = f"unknown method {_quoted(method)}: not in the coverage of {bundle.label()}"
        return [_finding(UNKNOWN_METHOD, message, "")], False
    findings = _schema_findings(bundle, _result_schema(method), result)
    if findings:
        return findings, False
    semantic = _SEMANTIC_CHECKS.get(method)
    if semantic is not None:
        findings.extend(semantic(result, catalog, wire_schema_digest))
    return findings, True


def _count_matches(result: Any, list_member: str) -> list[RawFinding]:
    count = _integer(result["count"])
    entries = len(result[list_member])
    if count == entries:
        return []
    message = f"count is {count} but {list_member} has {entries} entries"
    return [_finding(COUNT_MISMATCH, message, "/count")]


def _check_tools_list(result: Any, _catalog: Any, _digest: Any) -> list[RawFinding]:
    return _count_matches(result, "tools")


def _check_capabilities_list(result: Any, _catalog: Any, _digest: Any) -> list[RawFinding]:
    return _count_matches(result, "methods")


def _check_infer(result: Any, catalog: CatalogIndex | None, _digest: Any) -> list[RawFinding]:
    findings: list[RawFinding] = []
    usage = result.get("usage")
    if usage is not None:
        prompt = _integer(usage["prompt_tokens"]) or 0
        completion = _integer(usage["completion_tokens"]) or 0
        total = _integer(usage["total_tokens"])
        if total != prompt + completion:
            message = (
                f"usage.total_tokens is {total} but prompt_tokens + completion_tokens is "
                f"{prompt + completion}"
            )
            findings.append(_finding(USAGE_TOTAL_MISMATCH, message, "/usage/total_tokens"))
    if catalog is None:
        return findings
    revision = result["catalog_revision"]
    if revision != catalog.revision:
        message = (
            f"catalog_revision {_quoted(revision)} differs from the snapshot's "
            f"{_quoted(catalog.revision)}"
        )
        findings.append(_finding(CATALOG_REVISION_MISMATCH, message, "/catalog_revision"))
    model_id = result["resolved_model_id"]
    expected = catalog.row_digests.get(model_id)
    if expected is None:
        message = f"resolved_model_id {_quoted(model_id)} is not in the catalog snapshot"
        findings.append(_finding(MODEL_NOT_IN_CATALOG, message, "/resolved_model_id"))
    elif result["row_digest"] != expected:
        message = (
            f"row_digest {_quoted(result['row_digest'])} differs from the snapshot row of "
            f"{_quoted(model_id)}: {_quoted(expected)}"
        )
        findings.append(_finding(INFER_ROW_DIGEST_MISMATCH, message, "/row_digest"))
    return findings


def _check_tools_poll(result: Any, _catalog: Any, _digest: Any) -> list[RawFinding]:
    if result is None:
        return []
    findings: list[RawFinding] = []
    status = result["status"]
    chunks = result["chunks"]
    if status == "succeeded" and "result" not in result:
        findings.append(
            _finding(POLL_PAYLOAD_MISSING, "status is succeeded but result is missing", "")
        )
    if status == "failed" and result.get("error") is None:
        pointer = "/error" if "error" in result else ""
        findings.append(
            _finding(POLL_PAYLOAD_MISSING, "status is failed but error is not set", pointer)
        )
    for index, chunk in enumerate(chunks[:-1]):
        if chunk["kind"] in TERMINAL_CHUNKS:
            message = f"chunk {index} is a terminal {chunk['kind']} chunk but more chunks follow it"
            findings.append(_finding(POLL_TERMINAL_CHUNK, message, f"/chunks/{index}"))
    if not chunks:
        return findings
    last_index = len(chunks) - 1
    last = chunks[-1]
    expected = TERMINAL_CHUNK_OF_STATUS.get(status)
    if expected is not None and last["kind"] != expected:
        message = f"status is {status} but the last chunk is {last['kind']}, not {expected}"
        findings.append(_finding(POLL_TERMINAL_CHUNK, message, f"/chunks/{last_index}"))
    elif status == "running" and last["kind"] in TERMINAL_CHUNKS:
        message = f"status is running but the last chunk is the terminal {last['kind']} chunk"
        findings.append(_finding(POLL_TERMINAL_CHUNK, message, f"/chunks/{last_index}"))
    error = result.get("error")
    if status == "failed" and last["kind"] == "error" and error is not None:
        if error != last["message"]:
            message = (
                f"error {_quoted(error)} differs from the error chunk's message "
                f"{_quoted(last['message'])}"
            )
            findings.append(_finding(POLL_PAYLOAD_MISSING, message, "/error"))
    return findings


def _check_catalog_snapshot(result: Any, _catalog: Any, _digest: Any) -> list[RawFinding]:
    findings: list[RawFinding] = []
    seen: set[str] = set()
    previous: str | None = None
    for index, row in enumerate(result["models"]):
        model_id = row["model"]["id"]
        id_pointer = f"/models/{index}/model/id"
        if model_id in seen:
            message = f"model id {_quoted(model_id)} appears more than once"
            findings.append(_finding(CATALOG_DUPLICATE_ID, message, id_pointer))
        elif previous is not None and _utf16(model_id) < _utf16(previous):
            message = (
                f"models are not sorted by id: {_quoted(model_id)} comes after {_quoted(previous)}"
            )
            findings.append(_finding(CATALOG_UNSORTED, message, id_pointer))
        seen.add(model_id)
        previous = model_id
        try:
            computed = digest_hex(row["model"])
        except CanonicalizationError as error:
            pointer = f"/models/{index}/model{error.pointer}"
            findings.append(_finding(error.code, error.message, pointer))
            continue
        mismatch = _digest_mismatch("row_digest", row["row_digest"], "model", computed)
        if mismatch is not None:
            findings.append(_finding(ROW_DIGEST_MISMATCH, mismatch, f"/models/{index}/row_digest"))
    # car-inference catalog_identity.rs: `catalog_revision(&rows)` is the canonical sha256 of
    # the rows as serialized, i.e. of the `models` array exactly as it is on the wire.
    try:
        computed = digest_hex(result["models"])
    except CanonicalizationError:
        return findings
    mismatch = _digest_mismatch("catalog_revision", result["catalog_revision"], "models", computed)
    if mismatch is not None:
        findings.append(_finding(CATALOG_REVISION_WRONG, mismatch, "/catalog_revision"))
    return findings


def _digest_mismatch(field: str, given: str, of: str, computed: str) -> str | None:
    """The message when ``field``'s ``given`` digest is not the ``computed`` sha256(JCS(``of``)):
    a row's digest and the catalog revision are the same check on different parts of the
    snapshot."""
    if given == computed:
        return None
    return f"{field} {_quoted(given)} is not sha256(JCS({of})) {_quoted(computed)}"


def _utf16(text: str) -> bytes:
    """Sort key: the UTF-16 code units (big-endian bytes sort alike), CAR's catalog order."""
    return text.encode("utf-16-be", "surrogatepass")


def _check_server_schema(
    result: Any, _catalog: Any, wire_schema_digest: str | None
) -> list[RawFinding]:
    if wire_schema_digest is None or result["digest"] == wire_schema_digest:
        return []
    message = (
        f"digest {_quoted(result['digest'])} is not the sha256 of the wire-schema file's exact "
        f"bytes {_quoted(wire_schema_digest)}"
    )
    return [_finding(SCHEMA_DIGEST_MISMATCH, message, "/digest")]


_SEMANTIC_CHECKS = {
    "tools.list": _check_tools_list,
    "capabilities.list": _check_capabilities_list,
    "infer": _check_infer,
    "tools.poll": _check_tools_poll,
    SNAPSHOT_METHOD: _check_catalog_snapshot,
    "server.schema": _check_server_schema,
}


def _catalog_argument(
    bundle: WireBundle, catalog: Any
) -> tuple[CatalogIndex | None, list[RawFinding]]:
    violations = _schema_findings(bundle, _result_schema(SNAPSHOT_METHOD), catalog)
    if not violations:
        return _catalog_index(catalog), []
    first = violations[0]
    message = (
        f"catalog is not a valid models.catalog_snapshot result ({len(violations)} schema "
        f"violations; first at {_quoted(first.pointer or '')}: {first.message}); infer was not "
        "cross-checked"
    )
    return None, [_finding(CATALOG_NOT_A_SNAPSHOT, message, None)]


def check_rpc_result(
    method: str,
    result: Any,
    catalog: Any = None,
    wire_schema_digest: str | None = None,
    car_version: str | None = None,
) -> tuple[list[RawFinding], dict[str, Any]]:
    """Findings on one RPC result; raises ``CanonicalizationError`` for a non-JSON value."""
    bundle = _bundle_or_default(car_version)
    _prefixed_value_error("result", result)
    findings: list[RawFinding] = []
    index: CatalogIndex | None = None
    if catalog is not None:
        _prefixed_value_error("catalog", catalog)
        if method == "infer":
            index, findings = _catalog_argument(bundle, catalog)
    found, _valid = result_findings(bundle, method, result, index, wire_schema_digest)
    findings.extend(found)
    stats = {
        "method": method,
        "coverage": _rpc_coverage(bundle, method),
        "car_version": bundle.version,
    }
    return findings, stats


# ---------------------------------------------------------------------------------------------
# RPC params and notifications


class ParamsCoverage(NamedTuple):
    """Where a bundle puts a method's params: ``category`` (``covered`` with the ``schema``
    that describes them, or the inventory category that says why none does)."""

    category: str
    schema: str | None = None
    rust_type: str | None = None


def params_coverage(bundle: WireBundle, method: str, notification: bool) -> ParamsCoverage:
    """How ``bundle`` covers the params of ``method`` (``notification``: sent without an id)."""
    coverage = bundle.document["coverage"]
    notification_schema = f"notification.{method}.params"
    if notification_schema in coverage.get("notifications", {}).get("covered", []):
        return ParamsCoverage("covered", notification_schema)
    params = coverage.get("rpc_params")
    if not isinstance(params, dict):
        return ParamsCoverage("no_params_inventory")
    if method in params["covered"]:
        return ParamsCoverage("covered", f"rpc.{method}.params")
    if method in params["not_read"]:
        return ParamsCoverage("not_read")
    uncovered = params["uncovered"]
    if method in uncovered["typed_without_schema"]:
        rust_type = uncovered["typed_without_schema"][method]
        return ParamsCoverage("typed_without_schema", rust_type=rust_type)
    if method in uncovered["unresolved"]:
        return ParamsCoverage("unresolved")
    if notification and coverage.get("notifications", {}).get("inventoried") is False:
        return ParamsCoverage("notification_not_inventoried")
    return ParamsCoverage("unknown")


def _params_unchecked_finding(
    bundle: WireBundle, method: str, coverage: ParamsCoverage
) -> RawFinding | None:
    """The finding that says a method's params were not checked, if the coverage calls for one
    (reported once per method in a transcript)."""
    label = bundle.label()
    category = coverage.category
    if category in ("covered", "not_read"):
        return None
    if category in ("typed_without_schema", "unresolved"):
        typed = f" (Rust type {coverage.rust_type})" if coverage.rust_type is not None else ""
        message = (
            f"unchecked: {label} lists the params of {method} as {category}{typed}, with no schema"
        )
        return _finding(PARAMS_UNCHECKED, message, "")
    if category == "notification_not_inventoried":
        message = (
            f"unchecked: notification {method} has no schema in {label}, which does not "
            "inventory server-to-client notifications yet (coverage.notifications.inventoried "
            "is false)"
        )
        return _finding(PARAMS_UNCHECKED, message, "")
    if category == "no_params_inventory":
        message = f"unchecked: {label} has no params schemas (no coverage.rpc_params)"
        return _finding(PARAMS_UNCHECKED, message, "")
    message = f"unknown method {_quoted(method)}: not in the rpc_params inventory of {label}"
    return _finding(PARAMS_UNKNOWN_METHOD, message, "")


def _params_schema_findings(bundle: WireBundle, schema: str, params: Any) -> list[RawFinding]:
    """Schema findings on params (pointers relative to them); a ``host.event`` payload is checked
    against the type ``coverage.notifications.host_event_payloads`` names for its kind."""
    if not bundle.has_schema(schema):
        return []
    findings = _schema_findings(bundle, schema, params)
    if findings or not schema.startswith("notification."):
        return findings
    payloads = bundle.document["coverage"]["notifications"].get("host_event_payloads", {})
    kind = params.get("kind")
    payload_type = payloads.get(kind) if isinstance(kind, str) else None
    if isinstance(payload_type, str) and bundle.has_schema(payload_type):
        for finding in _schema_findings(bundle, payload_type, params["payload"]):
            findings.append(finding.within("/payload"))
    return findings


def check_rpc_params(
    method: str, params: Any, car_version: str | None = None
) -> tuple[list[RawFinding], dict[str, Any]]:
    """Findings on the params of one request; raises ``CanonicalizationError`` for a non-JSON
    value."""
    bundle = _bundle_or_default(car_version)
    _prefixed_value_error("params", params)
    coverage = params_coverage(bundle, method, False)
    if coverage.schema is not None:
        findings = _params_schema_findings(bundle, coverage.schema, params)
    else:
        unchecked = _params_unchecked_finding(bundle, method, coverage)
        findings = [unchecked] if unchecked is not None else []
    stats = {"method": method, "coverage": coverage.category, "car_version": bundle.version}
    return findings, stats
