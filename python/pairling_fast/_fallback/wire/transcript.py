"""Streaming JSON-RPC 2.0 transcripts for the pure-Python backend; mirrors
``rust/wire/transcript.rs`` rule for rule.

JSONL fed line by line: message shape, request and response pairing by id, and each answered
result and request's params checked by the RPC rules under the wire-schema bundle in effect.
Codes, pointers, lines, messages and stats are the Rust backend's (``docs/wire.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from ...codes import (
    DUPLICATE_ID_IN_FLIGHT,
    MALFORMED_ERROR_OBJECT,
    MALFORMED_MESSAGE,
    REQUEST_UNANSWERED,
    RESPONSE_WITHOUT_REQUEST,
    SCHEMA_DIGEST_OTHER_BUNDLE,
    UNKNOWN_SCHEMA_DIGEST,
)
from ...errors import CanonicalizationError
from ..findings import RawFinding
from ..parse import parse_json
from ..validate import (
    default_wire_bundle,
    wire_bundle_of_release,
    wire_bundle_with_digest,
    wire_bundles,
)
from .arguments import _chosen_bundle
from .rpc import (
    SNAPSHOT_METHOD,
    CatalogIndex,
    _catalog_index,
    _params_schema_findings,
    _params_unchecked_finding,
    params_coverage,
    result_findings,
)
from .shared import _finding, _json_error_finding, _quoted, _token

__all__ = ["TranscriptChecker", "check_transcript_file"]

ERROR_OBJECT_MEMBERS = ("code", "message", "data")


class _Request(NamedTuple):
    method: str | None
    line: int
    rendered_id: str


class _Response(NamedTuple):
    line: int
    rendered_id: str
    has_result: bool
    result: Any


IdKey = tuple[str, int | str]


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

    def _take(self, finding: RawFinding, line: int | None = None) -> None:
        """A finding a check of one message's part gave, its pointer already in the message."""
        self._findings.append(finding._replace(line=line or self._line))

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
            for finding in found:
                self._take(finding.within("/params"))
        elif method not in self._reported_params:
            unchecked = _params_unchecked_finding(self._bundle, method, coverage)
            if unchecked is not None:
                self._reported_params.add(method)
                self._take(unchecked._replace(pointer="/method"))

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
        for finding in findings:
            self._take(finding.within("/result"), response.line)
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
