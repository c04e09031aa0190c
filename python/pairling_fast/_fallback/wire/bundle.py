"""The wire-schema bundle's own integrity for the pure-Python backend; mirrors
``rust/wire/bundle.rs`` rule for rule.

Format, draft, every schema compiles, the coverage inventories sorted, disjoint and complete; and
the digest that names a bundle file. Codes, pointers and messages are the Rust backend's
(``docs/wire.md``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ...codes import (
    BUNDLE_SCHEMA_INVALID,
    COVERAGE_LISTED_TWICE,
    COVERAGE_TOTAL_MISMATCH,
    COVERAGE_UNSORTED,
    COVERED_SCHEMAS_MISMATCH,
    EVENT_KIND_COVERAGE_MISMATCH,
    MALFORMED_BUNDLE,
    NOTIFICATION_COVERAGE_MISMATCH,
    PARAMS_COVERAGE_MISMATCH,
    RPC_COVERAGE_MISMATCH,
)
from ...errors import CanonicalizationError, SchemaCompileError
from ..findings import RawFinding
from ..parse import parse_json
from ..validate import compile_schema, wire_bundle_with_digest
from .shared import _finding, _integer, _json_error_finding, _quoted, _token

__all__ = ["check_wire_schema", "wire_schema_digest"]

WIRE_FORMAT = "car.wire-schema.v1"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"


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
    code = RPC_COVERAGE_MISMATCH
    _check_rpc_schemas_listed(schemas, "result", set(methods), "rpc_results", code, findings)


def _check_rpc_schemas_listed(
    schemas: dict[str, Any],
    part: str,
    covered: set[str],
    listing: str,
    code: str,
    findings: list[RawFinding],
) -> None:
    """A finding for each ``rpc.<method>.<part>`` schema (``part``: ``result`` or ``params``) whose
    method ``coverage.<listing>.covered`` does not list."""
    suffix = f".{part}"
    for name in schemas:
        rest = name[len("rpc.") :] if name.startswith("rpc.") else ""
        if rest.endswith(suffix) and rest[: -len(suffix)] not in covered:
            message = f"schema {_quoted(name)} is not in coverage.{listing}.covered"
            findings.append(_finding(code, message, "/schemas" + _token(name)))


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
    for member, items in zip(("covered", "uncovered"), partition, strict=True):
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
    code = PARAMS_COVERAGE_MISMATCH
    _check_rpc_schemas_listed(schemas, "params", set(covered), "rpc_params", code, findings)


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
