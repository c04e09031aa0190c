"""CAR wire checks for the pure-Python backend; mirrors ``rust/wire.rs`` rule for rule.

RPC results (schema, then the invariants the schema descriptions state), catalog snapshots and
the cross-checks made against them, streaming JSON-RPC transcripts, and the wire-schema bundle's
own integrity. Codes, pointers, lines, messages and stats are the Rust backend's; keep them in
step (``docs/wire.md``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any, NamedTuple, Union

from ..codes import (
    BUNDLE_SCHEMA_INVALID,
    CATALOG_DUPLICATE_ID,
    CATALOG_NOT_A_SNAPSHOT,
    CATALOG_REVISION_MISMATCH,
    CATALOG_REVISION_WRONG,
    CATALOG_UNSORTED,
    COUNT_MISMATCH,
    COVERAGE_LISTED_TWICE,
    COVERAGE_TOTAL_MISMATCH,
    COVERAGE_UNSORTED,
    COVERED_SCHEMAS_MISMATCH,
    DUPLICATE_ID_IN_FLIGHT,
    EVENT_KIND_COVERAGE_MISMATCH,
    INFER_ROW_DIGEST_MISMATCH,
    MALFORMED_BUNDLE,
    MALFORMED_ERROR_OBJECT,
    MALFORMED_MESSAGE,
    MODEL_NOT_IN_CATALOG,
    NOTIFICATION_COVERAGE_MISMATCH,
    PARAMS_COVERAGE_MISMATCH,
    PARAMS_UNCHECKED,
    PARAMS_UNKNOWN_METHOD,
    POLL_PAYLOAD_MISSING,
    POLL_TERMINAL_CHUNK,
    REQUEST_UNANSWERED,
    RESPONSE_WITHOUT_REQUEST,
    ROW_DIGEST_MISMATCH,
    RPC_COVERAGE_MISMATCH,
    SCHEMA_DIGEST_MISMATCH,
    SCHEMA_DIGEST_OTHER_BUNDLE,
    SCHEMA_VIOLATION,
    UNCHECKED_METHOD,
    UNKNOWN_METHOD,
    UNKNOWN_SCHEMA_DIGEST,
    USAGE_TOTAL_MISMATCH,
    severity,
)
from ..errors import CanonicalizationError, SchemaCompileError
from ..report import RawFinding
from .canonical import digest_hex
from .parse import check_value, escape_pointer_token, parse_json
from .validate import (
    WireBundle,
    compile_schema,
    default_wire_bundle,
    wire_bundle_named,
    wire_bundle_of_release,
    wire_bundle_with_digest,
    wire_bundles,
)

__all__ = [
    "TranscriptChecker",
    "check_rpc_params",
    "check_rpc_result",
    "check_transcript_file",
    "check_wire_schema",
    "wire_bundles_listing",
    "wire_schema_digest",
]

WIRE_FORMAT = "car.wire-schema.v1"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"


SNAPSHOT_METHOD = "models.catalog_snapshot"
TERMINAL_CHUNK_OF_STATUS = {"succeeded": "done", "failed": "error"}
TERMINAL_CHUNKS = ("done", "error")
ERROR_OBJECT_MEMBERS = ("code", "message", "data")


def _finding(
    code: str,
    message: str,
    pointer: str | None,
    line: int | None = None,
    schema_pointer: str | None = None,
) -> RawFinding:
    return (code, severity(code), message, line, pointer, schema_pointer)


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
    return [
        _finding(SCHEMA_VIOLATION, message, pointer, None, schema_pointer)
        for pointer, schema_pointer, _keyword, message in bundle.validator(name).errors(value)
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
        if computed != row["row_digest"]:
            message = (
                f"row_digest {_quoted(row['row_digest'])} is not sha256(JCS(model)) "
                f"{_quoted(computed)}"
            )
            findings.append(_finding(ROW_DIGEST_MISMATCH, message, f"/models/{index}/row_digest"))
    # car-inference catalog_identity.rs: `catalog_revision(&rows)` is the canonical sha256 of
    # the rows as serialized, i.e. of the `models` array exactly as it is on the wire.
    try:
        computed = digest_hex(result["models"])
    except CanonicalizationError:
        return findings
    if computed != result["catalog_revision"]:
        message = (
            f"catalog_revision {_quoted(result['catalog_revision'])} is not sha256(JCS(models)) "
            f"{_quoted(computed)}"
        )
        findings.append(_finding(CATALOG_REVISION_WRONG, message, "/catalog_revision"))
    return findings


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
    _code, _severity, first_message, _line, first_pointer, _schema_pointer = violations[0]
    message = (
        f"catalog is not a valid models.catalog_snapshot result ({len(violations)} schema "
        f"violations; first at {_quoted(first_pointer or '')}: {first_message}); infer was not "
        "cross-checked"
    )
    return None, [_finding(CATALOG_NOT_A_SNAPSHOT, message, None)]


def _prefixed_value_error(what: str, value: Any) -> None:
    try:
        check_value(value)
    except CanonicalizationError as error:
        raise CanonicalizationError(error.code, f"{what}: {error.message}", error.pointer) from None


def _chosen_bundle(car_version: str | None) -> WireBundle | None:
    """The bundle a run chose (None: not chosen); an unknown version is a ValueError."""
    if car_version is None:
        return None
    bundle = wire_bundle_named(car_version)
    if bundle is None:
        known = ", ".join(bundle.version for bundle in wire_bundles())
        raise ValueError(
            f"no bundled wire schema for CAR version {json.dumps(car_version)} (bundled: {known})"
        )
    return bundle


def _bundle_or_default(car_version: str | None) -> WireBundle:
    return _chosen_bundle(car_version) or default_wire_bundle()


def wire_bundles_listing() -> list[tuple[str, str, str]]:
    """Every bundled wire schema, oldest first: ``(car_version, file, sha256)``."""
    return [(bundle.version, bundle.file, bundle.digest) for bundle in wire_bundles()]


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
        for code, severity, message, line, pointer, schema_pointer in _schema_findings(
            bundle, payload_type, params["payload"]
        ):
            findings.append(
                (code, severity, message, line, f"/payload{pointer or ''}", schema_pointer)
            )
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


# ---------------------------------------------------------------------------------------------
# JSON-RPC transcripts


class _Request(NamedTuple):
    method: str | None
    line: int
    rendered_id: str


class _Response(NamedTuple):
    line: int
    rendered_id: str
    has_result: bool
    result: Any


IdKey = tuple[str, Union[int, str]]


def _json_whitespace_only(line: bytes) -> bool:
    return not line.strip(b" \t\r\n")


class TranscriptChecker:
    """Checks a JSONL JSON-RPC 2.0 transcript fed line by line, against one wire-schema bundle:
    the one chosen, else the default until a ``server.schema`` result names another by its
    digest.

    Memory is bounded by the ids in flight (requests awaiting a response, responses awaiting
    their request) and the methods already reported unchecked, not by the transcript's length.
    """

    def __init__(
        self, wire_schema_digest: str | None = None, car_version: str | None = None
    ) -> None:
        chosen = _chosen_bundle(car_version)
        self._bundle = chosen or default_wire_bundle()
        # The bundle was chosen by the caller: a server.schema digest does not switch it.
        self._chosen = chosen is not None
        # Methods whose params were already reported unchecked or unknown (once per method).
        self._reported_params: set[str] = set()
        self._params_validated = 0
        self._wire_schema_digest = wire_schema_digest
        self._findings: list[RawFinding] = []
        self._pending: dict[IdKey, _Request] = {}
        self._orphans: dict[IdKey, _Response] = {}
        self._catalog: CatalogIndex | None = None
        self._line = 0
        self._counts = dict.fromkeys(
            (
                "blank_lines",
                "messages",
                "requests",
                "notifications",
                "responses",
                "error_responses",
                "max_in_flight",
            ),
            0,
        )

    def feed_lines(self, lines: Iterable[bytes]) -> None:
        for line in lines:
            self._feed(line)

    def finish(self) -> tuple[list[RawFinding], dict[str, Any]]:
        for request in self._pending.values():
            message = f"request {request.rendered_id} ({request.method}) was never answered"
            self._add(REQUEST_UNANSWERED, message, "/id", request.line)
        for response in self._orphans.values():
            message = f"response to id {response.rendered_id} has no request"
            self._add(RESPONSE_WITHOUT_REQUEST, message, "/id", response.line)
        findings = sorted(self._findings, key=lambda finding: finding[3] or 0)
        stats: dict[str, Any] = {"lines": self._line, **self._counts}
        stats["unanswered"] = len(self._pending)
        stats["unmatched_responses"] = len(self._orphans)
        stats["params_validated"] = self._params_validated
        stats["car_version"] = self._bundle.version
        self._pending.clear()
        self._orphans.clear()
        return findings, stats

    def _add(
        self,
        code: str,
        message: str,
        pointer: str | None,
        line: int | None = None,
        schema_pointer: str | None = None,
    ) -> None:
        self._findings.append(_finding(code, message, pointer, line or self._line, schema_pointer))

    def _malformed(self, message: str, pointer: str) -> None:
        self._add(MALFORMED_MESSAGE, message, pointer)

    def _feed(self, raw: bytes) -> None:
        self._line += 1
        text = raw[:-1] if raw.endswith(b"\n") else raw
        if text.endswith(b"\r"):
            text = text[:-1]
        if _json_whitespace_only(text):
            self._counts["blank_lines"] += 1
            return
        try:
            message = parse_json(text)
        except CanonicalizationError as error:
            self._findings.append(_json_error_finding(error, self._line))
            return
        self._counts["messages"] += 1
        if not isinstance(message, dict):
            self._malformed("a JSON-RPC message must be an object", "")
            return
        if "jsonrpc" not in message:
            self._malformed('missing "jsonrpc": "2.0"', "")
        elif message["jsonrpc"] != "2.0":
            self._malformed('jsonrpc must be "2.0"', "/jsonrpc")
        if "method" in message:
            self._request(message)
        elif "result" in message or "error" in message:
            self._response(message)
        else:
            self._malformed("neither a request (method) nor a response (result or error)", "")

    def _id_key(self, message: dict[str, Any]) -> tuple[IdKey, str] | None:
        value = message["id"]
        if isinstance(value, str):
            return ("s", value), _quoted(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return ("i", value), str(value)
        self._malformed("id must be a string or an integer", "/id")
        return None

    def _track_in_flight(self) -> None:
        in_flight = len(self._pending) + len(self._orphans)
        self._counts["max_in_flight"] = max(self._counts["max_in_flight"], in_flight)

    def _request(self, message: dict[str, Any]) -> None:
        method = message["method"]
        if not isinstance(method, str):
            self._malformed("method must be a string", "/method")
            method = None
        if "result" in message or "error" in message:
            self._malformed("a request must not carry result or error", "")
        if "params" in message:
            if not isinstance(message["params"], (list, dict)):
                self._malformed("params must be an array or an object", "/params")
            elif method is not None:
                self._check_params(method, message["params"], "id" not in message)
        if "id" not in message:
            self._counts["notifications"] += 1
            return
        self._counts["requests"] += 1
        identified = self._id_key(message)
        if identified is None:
            return
        key, rendered = identified
        in_flight = self._pending.get(key)
        if in_flight is not None:
            message_text = f"id {rendered} is already in flight (request on line {in_flight.line})"
            self._add(DUPLICATE_ID_IN_FLIGHT, message_text, "/id")
            return
        request = _Request(method, self._line, rendered)
        response = self._orphans.pop(key, None)
        if response is None:
            self._pending[key] = request
            self._track_in_flight()
        else:
            self._answer(request, response)

    def _response(self, message: dict[str, Any]) -> None:
        self._counts["responses"] += 1
        has_result = "result" in message
        has_error = "error" in message
        if has_result and has_error:
            self._malformed("a response must carry either result or error, not both", "")
        if has_error:
            self._counts["error_responses"] += 1
            self._check_error_object(message["error"])
        if "id" not in message:
            self._malformed("a response must carry an id", "")
            return
        if message["id"] is None and has_error and not has_result:
            return  # the answer to a request whose id could not be read (JSON-RPC 2.0 §5)
        identified = self._id_key(message)
        if identified is None:
            return
        key, rendered = identified
        carries_result = has_result and not has_error
        response = _Response(self._line, rendered, carries_result, message.get("result"))
        request = self._pending.pop(key, None)
        if request is not None:
            self._answer(request, response)
            return
        waiting = self._orphans.get(key)
        if waiting is not None:
            message_text = (
                f"id {rendered} is already awaiting its request (response on line {waiting.line})"
            )
            self._add(DUPLICATE_ID_IN_FLIGHT, message_text, "/id")
            return
        self._orphans[key] = response
        self._track_in_flight()

    def _check_params(self, method: str, params: Any, notification: bool) -> None:
        """A request's params against the bundle in effect; an unchecked or unknown method once."""
        coverage = params_coverage(self._bundle, method, notification)
        if coverage.category == "no_params_inventory":
            return  # before CAR 0.60.0: results are all a transcript's bundle describes
        if coverage.schema is not None:
            self._params_validated += 1
            found = _params_schema_findings(self._bundle, coverage.schema, params)
            for code, _severity, message, _line, pointer, schema_pointer in found:
                self._add(code, message, f"/params{pointer}", None, schema_pointer)
        elif method not in self._reported_params:
            unchecked = _params_unchecked_finding(self._bundle, method, coverage)
            if unchecked is not None:
                self._reported_params.add(method)
                code, _severity, message, _line, _pointer, _schema_pointer = unchecked
                self._add(code, message, "/method")

    def _select_bundle(self, result: Any, line: int) -> None:
        """A valid ``server.schema`` result names the wire schema the daemon speaks by its
        digest: the matching bundle applies from here on, unless the caller chose one."""
        digest = result["digest"]
        bundle = wire_bundle_with_digest(digest)
        if bundle is self._bundle:
            return
        if bundle is not None and self._chosen:
            message = (
                f"server.schema names {bundle.label()} (digest {_quoted(digest)}), but the "
                f"transcript is checked against {self._bundle.label()} as chosen"
            )
            self._add(SCHEMA_DIGEST_OTHER_BUNDLE, message, "/result/digest", line)
        elif bundle is not None:
            self._bundle = bundle
        else:
            known = ", ".join(f"{known.version} {known.digest}" for known in wire_bundles())
            message = (
                f"server.schema digest {_quoted(digest)} is no bundled wire schema (known: "
                f"{known}); checked against {self._bundle.label()}"
            )
            self._add(UNKNOWN_SCHEMA_DIGEST, message, "/result/digest", line)

    def _check_error_object(self, error: Any) -> None:
        if not isinstance(error, dict):
            self._add(MALFORMED_ERROR_OBJECT, "error must be an object", "/error")
            return
        if "code" not in error:
            self._add(MALFORMED_ERROR_OBJECT, "error has no code", "/error")
        elif isinstance(error["code"], bool) or not isinstance(error["code"], int):
            self._add(MALFORMED_ERROR_OBJECT, "error.code must be an integer", "/error/code")
        if "message" not in error:
            self._add(MALFORMED_ERROR_OBJECT, "error has no message", "/error")
        elif not isinstance(error["message"], str):
            message = "error.message must be a string"
            self._add(MALFORMED_ERROR_OBJECT, message, "/error/message")
        for member in error:
            if member not in ERROR_OBJECT_MEMBERS:
                message = f"unexpected member {_quoted(member)} in error"
                self._add(MALFORMED_ERROR_OBJECT, message, "/error" + _token(member))

    def _answer(self, request: _Request, response: _Response) -> None:
        if request.method is None or not response.has_result:
            return
        if request.method == "server.handshake" and not self._chosen:
            # car-server-core handler.rs answers with `server_version: CARGO_PKG_VERSION`: the
            # daemon's release, whose bundle then checks the session (the handshake included).
            version = (
                response.result.get("server_version") if isinstance(response.result, dict) else None
            )
            bundle = wire_bundle_of_release(version) if isinstance(version, str) else None
            if bundle is not None:
                self._bundle = bundle
        findings, valid = result_findings(
            self._bundle, request.method, response.result, self._catalog, self._wire_schema_digest
        )
        for code, _severity, message, _line, pointer, schema_pointer in findings:
            self._add(code, message, f"/result{pointer}", response.line, schema_pointer)
        if valid and request.method == SNAPSHOT_METHOD:
            self._catalog = _catalog_index(response.result)
        if valid and request.method == "server.schema":
            self._select_bundle(response.result, response.line)


def check_transcript_file(
    path: str, wire_schema_digest: str | None = None, car_version: str | None = None
) -> tuple[list[RawFinding], dict[str, Any]]:
    checker = TranscriptChecker(wire_schema_digest, car_version)
    with open(path, "rb") as lines:
        checker.feed_lines(lines)
    return checker.finish()


# ---------------------------------------------------------------------------------------------
# The wire-schema bundle


def wire_schema_digest(path: str) -> str:
    """Lowercase hex sha256 of the file's exact bytes (the bundle's ``digest.scope``)."""
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        for block in iter(lambda: source.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def _string_list(
    container: dict[str, Any], member: str, pointer: str, findings: list[RawFinding]
) -> list[str] | None:
    value = container.get(member)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    findings.append(_finding(MALFORMED_BUNDLE, f"{member} must be an array of strings", pointer))
    return None


def _sorted_and_unique(items: list[str], pointer: str, findings: list[RawFinding]) -> None:
    seen: set[str] = set()
    previous: str | None = None
    for index, item in enumerate(items):
        if item in seen:
            message = f"{_quoted(item)} is listed twice"
            findings.append(_finding(COVERAGE_LISTED_TWICE, message, f"{pointer}/{index}"))
        elif previous is not None and item < previous:
            message = f"not sorted: {_quoted(item)} comes after {_quoted(previous)}"
            findings.append(_finding(COVERAGE_UNSORTED, message, f"{pointer}/{index}"))
        seen.add(item)
        previous = item


def _partition(
    coverage: dict[str, Any], member: str, findings: list[RawFinding]
) -> tuple[list[str], list[str]] | None:
    """A covered/uncovered/total partition: sorted, unique, disjoint, adding up to total."""
    pointer = f"/coverage/{member}"
    partition = coverage.get(member)
    if not isinstance(partition, dict):
        findings.append(_finding(MALFORMED_BUNDLE, f"coverage.{member} must be an object", pointer))
        return None
    covered = _string_list(partition, "covered", f"{pointer}/covered", findings)
    uncovered = _string_list(partition, "uncovered", f"{pointer}/uncovered", findings)
    total = _integer(partition.get("total"))
    if total is None or total < 0:
        message = f"coverage.{member}.total must be a non-negative integer"
        findings.append(_finding(MALFORMED_BUNDLE, message, f"{pointer}/total"))
    if covered is None or uncovered is None:
        return None
    _sorted_and_unique(covered, f"{pointer}/covered", findings)
    _sorted_and_unique(uncovered, f"{pointer}/uncovered", findings)
    covered_set = set(covered)
    for index, item in enumerate(uncovered):
        if item in covered_set:
            message = f"{_quoted(item)} is both covered and uncovered"
            findings.append(
                _finding(COVERAGE_LISTED_TWICE, message, f"{pointer}/uncovered/{index}")
            )
    listed = len(covered) + len(uncovered)
    if total is not None and total >= 0 and listed != total:
        message = (
            f"total is {total} but covered ({len(covered)}) + uncovered ({len(uncovered)}) "
            f"is {listed}"
        )
        findings.append(_finding(COVERAGE_TOTAL_MISMATCH, message, f"{pointer}/total"))
    return covered, uncovered


def _enum_strings(schema: Any, into: list[str]) -> list[str]:
    """Every string of every ``enum`` in ``schema`` and its ``oneOf``/``anyOf`` branches."""
    if isinstance(schema, dict):
        for value in schema.get("enum", []) if isinstance(schema.get("enum"), list) else []:
            if isinstance(value, str):
                into.append(value)
        for keyword in ("oneOf", "anyOf"):
            branches = schema.get(keyword)
            if isinstance(branches, list):
                for branch in branches:
                    _enum_strings(branch, into)
    return into


def _event_kinds(schemas: dict[str, Any]) -> list[str] | None:
    event = schemas.get("journal.event")
    definitions = event.get("definitions") if isinstance(event, dict) else None
    kind = definitions.get("EventKind") if isinstance(definitions, dict) else None
    kinds = _enum_strings(kind, [])
    return kinds or None


def _check_schemas(schemas: dict[str, Any], findings: list[RawFinding]) -> None:
    for name, schema in schemas.items():
        pointer = "/schemas" + _token(name)
        if not isinstance(schema, dict) or schema.get("$schema") != DRAFT_07:
            message = f"schema {_quoted(name)} does not declare $schema {_quoted(DRAFT_07)}"
            findings.append(_finding(BUNDLE_SCHEMA_INVALID, message, pointer))
            continue
        try:
            compile_schema(schema, True, None)
        except SchemaCompileError as error:
            message = f"schema {_quoted(name)} does not compile: {error.code} {error.message}"
            findings.append(
                _finding(BUNDLE_SCHEMA_INVALID, message, pointer + error.schema_pointer)
            )


def _check_covered_schemas(
    covered: list[str], schemas: dict[str, Any], findings: list[RawFinding]
) -> None:
    _sorted_and_unique(covered, "/coverage/covered", findings)
    for index, name in enumerate(covered):
        if name not in schemas:
            message = f"coverage.covered lists {_quoted(name)}, which is not in schemas"
            findings.append(
                _finding(COVERED_SCHEMAS_MISMATCH, message, f"/coverage/covered/{index}")
            )
    listed = set(covered)
    for name in schemas:
        if name not in listed:
            message = f"schema {_quoted(name)} is not listed in coverage.covered"
            findings.append(_finding(COVERED_SCHEMAS_MISMATCH, message, "/schemas" + _token(name)))


def _check_rpc_coverage(
    methods: list[str], schemas: dict[str, Any], findings: list[RawFinding]
) -> None:
    for index, method in enumerate(methods):
        if f"rpc.{method}.result" not in schemas:
            message = f"covered RPC method {_quoted(method)} has no rpc.{method}.result schema"
            pointer = f"/coverage/rpc_results/covered/{index}"
            findings.append(_finding(RPC_COVERAGE_MISMATCH, message, pointer))
    covered = set(methods)
    for name in schemas:
        if name.startswith("rpc.") and name.endswith(".result"):
            method = name[len("rpc.") : -len(".result")]
            if method not in covered:
                message = f"schema {_quoted(name)} is not in coverage.rpc_results.covered"
                findings.append(_finding(RPC_COVERAGE_MISMATCH, message, "/schemas" + _token(name)))


def _check_event_coverage(
    partition: tuple[list[str], list[str]], kinds: list[str], findings: list[RawFinding]
) -> None:
    pointer = "/coverage/journal_event_payloads"
    listed = set(partition[0]) | set(partition[1])
    for kind in kinds:
        if kind not in listed:
            message = f"event kind {_quoted(kind)} is in neither covered nor uncovered"
            findings.append(_finding(EVENT_KIND_COVERAGE_MISMATCH, message, pointer))
    known = set(kinds)
    for member, items in zip(("covered", "uncovered"), partition):
        for index, item in enumerate(items):
            if item not in known:
                message = f"{_quoted(item)} is not an EventKind of journal.event"
                item_pointer = f"{pointer}/{member}/{index}"
                findings.append(_finding(EVENT_KIND_COVERAGE_MISMATCH, message, item_pointer))


def _check_params_coverage(
    params: dict[str, Any],
    rpc_methods: set[str],
    schemas: dict[str, Any],
    findings: list[RawFinding],
) -> None:
    """``coverage.rpc_params`` (CAR 0.60.0 on), as CAR's own test
    ``every_daemon_method_has_a_params_entry`` (car-server-core wire_schema.rs) holds it: four
    sorted, disjoint buckets that together are exactly the RPC inventory of ``rpc_results`` and
    add up to ``total``; a covered method has its ``rpc.<method>.params`` schema and every such
    schema's method is covered."""
    pointer = "/coverage/rpc_params"
    covered = _string_list(params, "covered", f"{pointer}/covered", findings)
    not_read = _string_list(params, "not_read", f"{pointer}/not_read", findings)
    uncovered = params.get("uncovered")
    uncovered = uncovered if isinstance(uncovered, dict) else {}
    typed = uncovered.get("typed_without_schema")
    if not isinstance(typed, dict) or not all(isinstance(name, str) for name in typed.values()):
        message = "uncovered.typed_without_schema must be an object of Rust type names"
        findings.append(
            _finding(MALFORMED_BUNDLE, message, f"{pointer}/uncovered/typed_without_schema")
        )
        typed = None
    unresolved = _string_list(uncovered, "unresolved", f"{pointer}/uncovered/unresolved", findings)
    total = _integer(params.get("total"))
    if total is None:
        message = "coverage.rpc_params.total must be a non-negative integer"
        findings.append(_finding(MALFORMED_BUNDLE, message, f"{pointer}/total"))
    if covered is None or not_read is None or typed is None or unresolved is None:
        return
    typed_methods = list(typed)
    buckets = (
        ("covered", covered),
        ("not_read", not_read),
        ("uncovered/typed_without_schema", typed_methods),
        ("uncovered/unresolved", unresolved),
    )
    bucket_of: dict[str, str] = {}
    for bucket, items in buckets:
        at = f"{pointer}/{bucket}"
        _sorted_and_unique(items, at, findings)
        for index, item in enumerate(items):
            other = bucket_of.get(item)
            if other is None:
                bucket_of[item] = bucket
            elif other != bucket:
                message = f"{_quoted(item)} is in both {other} and {bucket}"
                findings.append(_finding(COVERAGE_LISTED_TWICE, message, f"{at}/{index}"))
            if item not in rpc_methods:
                message = f"{_quoted(item)} is not in the RPC inventory of coverage.rpc_results"
                findings.append(_finding(PARAMS_COVERAGE_MISMATCH, message, f"{at}/{index}"))
    for method in sorted(rpc_methods - set(bucket_of)):
        message = f"RPC method {_quoted(method)} is in no rpc_params bucket"
        findings.append(_finding(PARAMS_COVERAGE_MISMATCH, message, pointer))
    listed = len(covered) + len(not_read) + len(typed_methods) + len(unresolved)
    if total is not None and total != listed:
        message = f"total is {total} but the four buckets list {listed}"
        findings.append(_finding(COVERAGE_TOTAL_MISMATCH, message, f"{pointer}/total"))
    for index, method in enumerate(covered):
        if f"rpc.{method}.params" not in schemas:
            message = f"covered params of {_quoted(method)} have no rpc.{method}.params schema"
            findings.append(
                _finding(PARAMS_COVERAGE_MISMATCH, message, f"{pointer}/covered/{index}")
            )
    covered_set = set(covered)
    for name in schemas:
        if name.startswith("rpc.") and name.endswith(".params"):
            if name[len("rpc.") : -len(".params")] not in covered_set:
                message = f"schema {_quoted(name)} is not in coverage.rpc_params.covered"
                findings.append(
                    _finding(PARAMS_COVERAGE_MISMATCH, message, "/schemas" + _token(name))
                )


def _check_notification_coverage(
    notifications: dict[str, Any], schemas: dict[str, Any], findings: list[RawFinding]
) -> None:
    """``coverage.notifications`` (CAR 0.60.0 on): each covered notification and each host-event
    payload type names a schema of the bundle, every ``notification.*`` schema is covered, and
    ``inventoried`` is a boolean."""
    pointer = "/coverage/notifications"
    if not isinstance(notifications.get("inventoried"), bool):
        message = "coverage.notifications.inventoried must be true or false"
        findings.append(_finding(MALFORMED_BUNDLE, message, f"{pointer}/inventoried"))
    at = f"{pointer}/covered"
    covered = _string_list(notifications, "covered", at, findings)
    if covered is not None:
        _sorted_and_unique(covered, at, findings)
        for index, name in enumerate(covered):
            if name not in schemas:
                message = f"covered notification {_quoted(name)} has no schema"
                findings.append(_finding(NOTIFICATION_COVERAGE_MISMATCH, message, f"{at}/{index}"))
        for name in schemas:
            if name.startswith("notification.") and name not in covered:
                message = f"schema {_quoted(name)} is not in coverage.notifications.covered"
                findings.append(
                    _finding(NOTIFICATION_COVERAGE_MISMATCH, message, "/schemas" + _token(name))
                )
    payloads = notifications.get("host_event_payloads")
    if not isinstance(payloads, dict):
        message = "coverage.notifications.host_event_payloads must be an object"
        findings.append(_finding(MALFORMED_BUNDLE, message, f"{pointer}/host_event_payloads"))
        return
    for kind, name in payloads.items():
        if not (isinstance(name, str) and name in schemas):
            message = (
                f"host event kind {_quoted(kind)} names {json.dumps(name, ensure_ascii=False)}, "
                "which is not a schema of the bundle"
            )
            findings.append(
                _finding(
                    NOTIFICATION_COVERAGE_MISMATCH,
                    message,
                    f"{pointer}/host_event_payloads{_token(kind)}",
                )
            )


def bundle_findings(bundle: Any) -> list[RawFinding]:
    findings: list[RawFinding] = []
    if not isinstance(bundle, dict):
        return [_finding(MALFORMED_BUNDLE, "the wire-schema bundle must be an object", "")]
    if bundle.get("format") != WIRE_FORMAT:
        message = f"format must be {_quoted(WIRE_FORMAT)}"
        findings.append(
            _finding(MALFORMED_BUNDLE, message, "/format" if "format" in bundle else "")
        )
    if bundle.get("json_schema_draft") != DRAFT_07:
        message = f"json_schema_draft must be {_quoted(DRAFT_07)}"
        pointer = "/json_schema_draft" if "json_schema_draft" in bundle else ""
        findings.append(_finding(MALFORMED_BUNDLE, message, pointer))
    schemas = bundle.get("schemas")
    if not isinstance(schemas, dict):
        findings.append(_finding(MALFORMED_BUNDLE, "schemas must be an object", "/schemas"))
        schemas = {}
    _check_schemas(schemas, findings)
    coverage = bundle.get("coverage")
    if not isinstance(coverage, dict):
        findings.append(_finding(MALFORMED_BUNDLE, "coverage must be an object", "/coverage"))
        return findings
    covered = _string_list(coverage, "covered", "/coverage/covered", findings)
    if covered is not None:
        _check_covered_schemas(covered, schemas, findings)
    rpc = _partition(coverage, "rpc_results", findings)
    if rpc is not None:
        _check_rpc_coverage(rpc[0], schemas, findings)
        if "rpc_params" in coverage:
            params = coverage["rpc_params"]
            if isinstance(params, dict):
                _check_params_coverage(params, set(rpc[0]) | set(rpc[1]), schemas, findings)
            else:
                message = "coverage.rpc_params must be an object"
                findings.append(_finding(MALFORMED_BUNDLE, message, "/coverage/rpc_params"))
    if "notifications" in coverage:
        notifications = coverage["notifications"]
        if isinstance(notifications, dict):
            _check_notification_coverage(notifications, schemas, findings)
        else:
            message = "coverage.notifications must be an object"
            findings.append(_finding(MALFORMED_BUNDLE, message, "/coverage/notifications"))
    events = _partition(coverage, "journal_event_payloads", findings)
    kinds = _event_kinds(schemas)
    if kinds is None:
        message = "journal.event has no EventKind enum (definitions.EventKind)"
        findings.append(_finding(EVENT_KIND_COVERAGE_MISMATCH, message, "/schemas/journal.event"))
    elif events is not None:
        _check_event_coverage(events, kinds, findings)
    return findings


def check_wire_schema(path: str) -> tuple[list[RawFinding], dict[str, Any]]:
    with open(path, "rb") as source:
        data = source.read()
    digest = hashlib.sha256(data).hexdigest()
    bundled = wire_bundle_with_digest(digest)
    stats: dict[str, Any] = {
        "digest": digest,
        "schemas": 0,
        "car_version": bundled.version if bundled is not None else None,
    }
    try:
        bundle = parse_json(data)
    except CanonicalizationError as error:
        return [_json_error_finding(error, None)], stats
    if isinstance(bundle, dict) and isinstance(bundle.get("schemas"), dict):
        stats["schemas"] = len(bundle["schemas"])
    return bundle_findings(bundle), stats
