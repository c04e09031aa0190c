"""The catalogue of finding codes: stable ids, default severities and what each one means.

This is the single source of ``docs/findings.md`` (regenerate with
``python -m pairling_fast explain --all --markdown > docs/findings.md``; a test keeps them in sync)
and of ``pairling-fast explain CODE``. Ranges: PF0xx JSON text and values, PF1xx schemas,
PF2xx capability maps, PF3xx CAR journals, PF4xx CAR wire (RPC results, transcripts, the bundle),
PF5xx files and the command line, PF9xx internal.
"""

from __future__ import annotations

from typing import NamedTuple

from .report import Severity

__all__ = ["CODES", "CodeInfo"]


class CodeInfo(NamedTuple):
    title: str
    severity: Severity
    description: str


CODES: dict[str, CodeInfo] = {
    # PF0xx — JSON text and the JSON value model (docs/architecture.md)
    "PF001": CodeInfo(
        "invalid JSON",
        "error",
        "The text is not JSON (RFC 8259): a syntax error, trailing content, a byte-order mark, or "
        "an empty document. The message gives line and column.",
    ),
    "PF002": CodeInfo(
        "duplicate object key",
        "error",
        "An object names the same key twice. Parsers disagree on which value wins (first or "
        "last), so a digest over such a document is ambiguous; it is always rejected.",
    ),
    "PF003": CodeInfo(
        "not UTF-8",
        "error",
        "The bytes are not valid UTF-8 (JSON text exchanged between systems must be UTF-8, RFC "
        "8259 §8.1). A Python str with lone surrogates has no UTF-8 form either.",
    ),
    "PF004": CodeInfo(
        "lone UTF-16 surrogate",
        "error",
        "A string contains an unpaired surrogate (an escape such as \\ud800, or a Python str with "
        "one). It has no UTF-8 encoding, so it has no canonical form (RFC 8785 §3.2.2.2).",
    ),
    "PF005": CodeInfo(
        "integer out of range",
        "error",
        "An integer outside the 64-bit range (-2^63 … 2^64-1) where JSON is parsed or a Python "
        "value converted; when canonicalizing, outside ±(2^53-1), the range IEEE-754 doubles hold "
        "exactly (RFC 8785 §3.2.2.3, I-JSON).",
    ),
    "PF006": CodeInfo(
        "number not finite",
        "error",
        "NaN, Infinity or -Infinity (as a literal or a Python float), or a number literal too "
        "large for a double (1e400). JSON has no such numbers.",
    ),
    "PF007": CodeInfo(
        "object key not a string",
        "error",
        "A Python dict with a key that is not a str. JSON object keys are strings; no key is "
        "silently converted.",
    ),
    "PF008": CodeInfo(
        "nesting too deep",
        "error",
        "Arrays and objects nested deeper than 512 levels. The limit keeps parsing, validation "
        "and canonicalization in bounded stack; real documents stay far below it.",
    ),
    "PF009": CodeInfo(
        "not a JSON value",
        "error",
        "A Python value of a type JSON has no counterpart for (set, bytes, an arbitrary object). "
        "Only dict, list, tuple, str, int, float, bool and None are accepted.",
    ),
    # PF1xx — JSON Schema
    "PF101": CodeInfo(
        "schema violation",
        "error",
        "The document does not satisfy its JSON Schema. `pointer` locates the value, "
        "`schema_pointer` the keyword that failed (after $ref resolution).",
    ),
    "PF102": CodeInfo(
        "invalid schema",
        "error",
        "A schema given to Validator is not valid against its draft's meta-schema.",
    ),
    "PF103": CodeInfo(
        "unresolvable $ref",
        "error",
        "A schema names a $ref that is neither inside the schema nor in the resources given to "
        "Validator. Nothing is ever fetched from the network or the file system.",
    ),
    # PF2xx — Pairling capability maps (docs/maps.md)
    "PF201": CodeInfo(
        "duplicate id in a collection",
        "error",
        "Two entries of one map collection share an id (evidence_sources[].source_id, "
        "providers[].provider_id, implementations[].implementation_id, transports[].transport_id, "
        "capabilities[].capability_id, operation_bindings[].implementation_operation_id, "
        "evidence_claims[].claim_id). References resolve to the first; the later one is reported.",
    ),
    "PF202": CodeInfo(
        "graph id reused across collections",
        "warning",
        "The same graph id names entries of two collections (implementations, transports, "
        "capabilities, operation bindings, evidence claims). References stay unambiguous because "
        "each field names its collection, but readers and tools are easily misled.",
    ),
    "PF203": CodeInfo(
        "unknown evidence source",
        "error",
        "A source_refs entry (of a provider, capability, operation binding, evidence claim or "
        "exclusion) names no evidence_sources[].source_id.",
    ),
    "PF204": CodeInfo(
        "unknown provider",
        "error",
        "implementations[].provider_id, transports[].provider_id or capabilities[].provider_id "
        "names no providers[].provider_id.",
    ),
    "PF205": CodeInfo(
        "unknown transport",
        "error",
        "An implementations[].transport_ids entry names no transports[].transport_id.",
    ),
    "PF206": CodeInfo(
        "transport of another provider",
        "error",
        "An implementations[].transport_ids entry names a transport whose provider_id is not the "
        "implementation's provider.",
    ),
    "PF207": CodeInfo(
        "unknown runtime provider",
        "error",
        "implementations[].release_membership.runtime_provider_id names no provider.",
    ),
    "PF208": CodeInfo(
        "runtime provider differs",
        "warning",
        "implementations[].release_membership.runtime_provider_id names a provider other than the "
        "implementation's own provider_id (legitimate for a wrapper, but worth a second look).",
    ),
    "PF209": CodeInfo(
        "unknown implementation of a capability",
        "error",
        "A capabilities[].implementation_ids entry names no implementations[].implementation_id.",
    ),
    "PF210": CodeInfo(
        "implementation of another provider",
        "error",
        "A capabilities[].implementation_ids entry names an implementation whose provider_id is "
        "not the capability's provider.",
    ),
    "PF211": CodeInfo(
        "unknown shared_semantics capability",
        "error",
        "capabilities[].shared_semantics is set but names no capabilities[].capability_id.",
    ),
    "PF212": CodeInfo(
        "unknown implementation of a binding",
        "error",
        "operation_bindings[].implementation_id names no implementations[].implementation_id.",
    ),
    "PF213": CodeInfo(
        "unknown capability of a binding",
        "error",
        "An operation_bindings[].capability_ids entry names no capabilities[].capability_id.",
    ),
    "PF214": CodeInfo(
        "capability not offered by the binding's implementation",
        "error",
        "An operation_bindings[].capability_ids entry names a capability whose implementation_ids "
        "do not include the binding's implementation_id.",
    ),
    "PF215": CodeInfo(
        "unknown evidence claim",
        "error",
        "An operation_bindings[].evidence_claim_ids entry names no evidence_claims[].claim_id.",
    ),
    "PF216": CodeInfo(
        "unresolved claim subject",
        "error",
        "evidence_claims[].subject_id does not resolve in the collection its subject_type names "
        "(implementation: implementations, capability: capabilities, operation_binding: "
        "operation_bindings by implementation_operation_id).",
    ),
    "PF217": CodeInfo(
        "provider_version not observed",
        "error",
        "implementations[].provider_version is not one of the implementation's observed_versions.",
    ),
    "PF218": CodeInfo(
        "provider_channel not observed",
        "error",
        "implementations[].provider_channel is not one of the implementation's observed_channels.",
    ),
    "PF219": CodeInfo(
        "release_pinned without release membership",
        "error",
        "An implementation with identity_status release_pinned has no release_membership (null): "
        "a release pin needs the release it is pinned to.",
    ),
    "PF220": CodeInfo(
        "released binding of an unreleased implementation",
        "error",
        "An operation binding with release_status released belongs to an implementation without a "
        "release_membership.",
    ),
    "PF221": CodeInfo(
        "semantic digest mismatch",
        "error",
        "operation_bindings[].semantic_digest is not the pairling.semantic-digest.v1 digest of the "
        "binding (sha256 of the RFC 8785 form of the binding without semantic_digest, see "
        "docs/digests.md). The message shows the expected and the recorded digest; `seal` "
        "recomputes them.",
    ),
    "PF222": CodeInfo(
        "do_not_expose capability released",
        "error",
        "An operation binding that is implemented and released binds a capability whose "
        "remote_safety is do_not_expose: the map would expose what must never be exposed.",
    ),
    "PF223": CodeInfo(
        "confirmation capability bound without confirmation",
        "warning",
        "An operation binding binds a capability whose remote_safety is confirmation, but its "
        "requires list has no confirmation requirement with a mode other than none.",
    ),
    "PF224": CodeInfo(
        "capability without evidence",
        "warning",
        "evidence_policy.missing_evidence_is_unsupported is true and no evidence claim has this "
        "capability as its subject, so by the map's own policy it counts as unsupported.",
    ),
    "PF225": CodeInfo(
        "orphan transport",
        "warning",
        "No implementation lists this transport in its transport_ids.",
    ),
    "PF226": CodeInfo(
        "orphan evidence source",
        "warning",
        "No source_refs entry anywhere in the map cites this evidence source.",
    ),
    "PF227": CodeInfo(
        "orphan capability",
        "warning",
        "No operation binding lists this capability in its capability_ids.",
    ),
    # PF3xx — CAR journals (a line that is not JSON keeps the parser's PF0xx code: PF001 syntax,
    # PF002 duplicate key, PF003 not UTF-8, …, located by its line)
    "PF301": CodeInfo(
        "journal line is not an object",
        "error",
        "A journal line is JSON but not an object (an array, string, number…). Every non-blank "
        "line of a journal must be one event object.",
    ),
    "PF302": CodeInfo(
        "truncated final line",
        "error",
        "The journal's last line has no newline and is not valid JSON: a write was cut off (a "
        "crash or a live tail read mid-write). A valid last line without a newline is accepted.",
    ),
    "PF303": CodeInfo(
        "journal line too long",
        "error",
        "A line is longer than the limit (64 MiB by default, `max_line_length`). It is counted "
        "and skipped without being held in memory.",
    ),
    "PF304": CodeInfo(
        "schema deviation CAR tolerates",
        "warning",
        "Profile `car-compatible` only: an unknown top-level member, or a missing `timestamp` or "
        "`data`. The wire schema forbids them (PF101 under the default `strict` profile), but "
        "CAR's own event parser (car-runtime 0.58.0) accepts them.",
    ),
    "PF310": CodeInfo(
        "journal hash mismatch",
        "error",
        "A chained event's `hash` is not the sha256 of the JCS form of the event without `hash` "
        "(`car.journal-chain.jcs-sha256.v1`, docs/digests.md): the event was edited after it was "
        "written, or the hash cannot be recomputed (e.g. an integer beyond ±(2^53-1)).",
    ),
    "PF311": CodeInfo(
        "journal chain link broken",
        "error",
        "A chained event's `prev_hash` is not the `hash` of the chained event before it: events "
        "were deleted, reordered or inserted.",
    ),
    "PF312": CodeInfo(
        "unchained event inside the chain",
        "error",
        "An event without `hash` after hash chaining started: once a journal is chained, every "
        "event must be.",
    ),
    "PF313": CodeInfo(
        "journal not chained",
        "error",
        'chain="require" and the journal starts with an event without `hash` (reported once, '
        "on that event).",
    ),
    "PF320": CodeInfo(
        "run started twice",
        "error",
        "A `run_started` event for a `run_id` that is already open (started and not completed).",
    ),
    "PF321": CodeInfo(
        "event for a run that is not open",
        "error",
        "An event stamped with a `run_id` that has no open `run_started` before it (never "
        "started, or already completed).",
    ),
    "PF322": CodeInfo(
        "cancellation result without a request",
        "error",
        "A `run_cancellation_result` for a run with no earlier `run_cancellation_requested`.",
    ),
    "PF323": CodeInfo(
        "proposal not received",
        "error",
        "A `proposal_completed` or `state_committed` event whose `proposal_id` has no earlier "
        "`proposal_received`.",
    ),
    "PF324": CodeInfo(
        "event after proposal completed",
        "error",
        "An event for a proposal after its `proposal_completed`. Completed proposals are "
        "remembered in a window of the last 65,536, so memory stays bounded.",
    ),
    "PF325": CodeInfo(
        "action event without action_id",
        "error",
        "An `action_*` event with no (or a null) `action_id`.",
    ),
    "PF326": CodeInfo(
        "event after action ended",
        "error",
        "An `action_*` event for an action that already ended (`action_succeeded`, "
        "`action_rejected`, `action_skipped`, `action_deduplicated`, or `action_failed` not "
        "followed by `action_retrying`). Actions are identified by (proposal_id, action_id).",
    ),
    "PF327": CodeInfo(
        "action succeeded without executing",
        "warning",
        "`action_succeeded` for an action whose previous event is not `action_executing`.",
    ),
    "PF328": CodeInfo(
        "timestamp goes backwards",
        "warning",
        "An event's `timestamp` is earlier than the previous event's (compared as instants, so "
        "offsets and fractions are handled).",
    ),
    "PF329": CodeInfo(
        "run open at end of journal",
        "warning",
        "A run started and not completed when the journal ends; normal for a live tail. Listed "
        "in `stats.open_runs`; the finding is on the `run_started` line.",
    ),
    "PF330": CodeInfo(
        "proposal open at end of journal",
        "warning",
        "A proposal received and not completed when the journal ends; normal for a live tail. "
        "Listed in `stats.open_proposals`; the finding is on the `proposal_received` line.",
    ),
    # PF4xx — CAR wire: RPC results, JSON-RPC transcripts, the wire-schema bundle
    "PF401": CodeInfo(
        "RPC result unchecked",
        "info",
        "The method is listed in the wire-schema bundle's coverage.rpc_results.uncovered: CAR "
        "answers it, but car.wire-schema.v1 has no schema for its result, so only the JSON value "
        "model was checked.",
    ),
    "PF402": CodeInfo(
        "unknown RPC method",
        "warning",
        "The method is in neither coverage.rpc_results.covered nor uncovered of the wire-schema "
        "bundle: a typo, or a method newer than car.wire-schema.v1. Its result was not checked.",
    ),
    "PF403": CodeInfo(
        "count does not match the list",
        "error",
        "A `tools.list` result's `count` differs from the number of `tools`, or a "
        "`capabilities.list` result's `count` from the number of `methods`.",
    ),
    "PF404": CodeInfo(
        "token usage does not add up",
        "warning",
        "An `infer` result's `usage.total_tokens` is not `prompt_tokens + completion_tokens`, "
        'as the TokenUsage schema describes it ("Total tokens (prompt + completion)").',
    ),
    "PF405": CodeInfo(
        "tool poll status without its payload",
        "error",
        "A `tools.poll` result with status `succeeded` has no `result`, one with status `failed` "
        "has no `error`, or `error` differs from the terminal error chunk's message.",
    ),
    "PF406": CodeInfo(
        "tool poll terminal chunk out of place",
        "error",
        "In a `tools.poll` result the last chunk must be the terminal chunk matching the status "
        "(`done` for succeeded, `error` for failed) when chunks were drained; no chunk may follow "
        "a terminal chunk, and a running invocation has none. An empty `chunks` list is accepted "
        "(the terminal chunk was drained by an earlier poll).",
    ),
    "PF407": CodeInfo(
        "catalog snapshot not sorted",
        "error",
        "The models of a `models.catalog_snapshot` result are not sorted by `model.id` (the schema "
        'describes the snapshot as "a sorted, content-addressed view").',
    ),
    "PF408": CodeInfo(
        "duplicate model id in catalog snapshot",
        "error",
        "Two rows of a `models.catalog_snapshot` result have the same `model.id`; ids address "
        "immutable rows, so each must be unique.",
    ),
    "PF409": CodeInfo(
        "catalog row digest mismatch",
        "warning",
        "A catalog row's `row_digest` is not the lowercase hex sha256 of the RFC 8785 canonical "
        "bytes of its `model` (CAR's JCS digest convention). The rule for rows is inferred from "
        "that convention and not yet confirmed against a CAR daemon, hence a warning; the message "
        "shows both values.",
    ),
    "PF410": CodeInfo(
        "infer catalog revision differs from the snapshot",
        "error",
        "An `infer` result's `catalog_revision` is not the `catalog_revision` of the catalog "
        "snapshot it was checked against (`check_rpc_result(..., catalog=...)`, or the latest "
        "snapshot earlier in a transcript).",
    ),
    "PF411": CodeInfo(
        "inferred model not in the snapshot",
        "error",
        "An `infer` result's `resolved_model_id` names no row of the catalog snapshot it was "
        "checked against.",
    ),
    "PF412": CodeInfo(
        "infer row digest differs from the snapshot",
        "error",
        "An `infer` result's `row_digest` differs from the `row_digest` of its resolved model's "
        "row in the catalog snapshot it was checked against.",
    ),
    "PF413": CodeInfo(
        "catalog is not a snapshot",
        "error",
        "The catalog given to cross-check an `infer` result is not a valid "
        "`models.catalog_snapshot` result, so no cross-check was made.",
    ),
    "PF414": CodeInfo(
        "server.schema digest mismatch",
        "error",
        "A `server.schema` result's `digest` is not the sha256 of the exact bytes of the "
        "wire-schema file it was checked against (the bundle's `digest.scope`).",
    ),
    "PF420": CodeInfo(
        "malformed JSON-RPC message",
        "error",
        "A transcript line is not a JSON-RPC 2.0 message: not an object, `jsonrpc` missing or not "
        '"2.0", a request whose `method` is not a string or whose `params` is neither array '
        "nor object, a response with both `result` and `error` or without an `id`, or an `id` "
        "that is not a string or an integer (null only in error responses).",
    ),
    "PF421": CodeInfo(
        "malformed JSON-RPC error object",
        "error",
        "A response's `error` is not an object with an integer `code`, a string `message` and "
        "optionally `data`, and nothing else (JSON-RPC 2.0 §5.1).",
    ),
    "PF422": CodeInfo(
        "response without request",
        "error",
        "A transcript response whose `id` matches no request anywhere in the transcript "
        "(requests may come before or after their responses).",
    ),
    "PF423": CodeInfo(
        "duplicate id in flight",
        "error",
        "A request reuses the `id` of a request still awaiting its response (or a response "
        "the `id` of a response still awaiting its request), so responses cannot be paired.",
    ),
    "PF424": CodeInfo(
        "request never answered",
        "warning",
        "A transcript request with an `id` that no response answers by the end of the "
        "transcript (it may have been cut short).",
    ),
    "PF430": CodeInfo(
        "invalid schema in the wire bundle",
        "error",
        "A schema in the bundle's `schemas` does not declare draft-07, is not valid against the "
        "draft-07 meta-schema, or does not compile (an unresolvable `$ref`).",
    ),
    "PF431": CodeInfo(
        "coverage.covered does not match schemas",
        "error",
        "`coverage.covered` must list exactly the keys of `schemas`: a schema not listed, or a "
        "listed name with no schema.",
    ),
    "PF432": CodeInfo(
        "coverage list not sorted",
        "error",
        "A coverage list (`covered`, `rpc_results.covered`/`uncovered`, "
        "`journal_event_payloads.covered`/`uncovered`) is not sorted.",
    ),
    "PF433": CodeInfo(
        "coverage total mismatch",
        "error",
        "`coverage.rpc_results.total` or `coverage.journal_event_payloads.total` is not the "
        "number of covered plus uncovered entries.",
    ),
    "PF434": CodeInfo(
        "coverage entry listed twice",
        "error",
        "A coverage entry appears twice in one list, or in both `covered` and `uncovered`.",
    ),
    "PF435": CodeInfo(
        "RPC coverage does not match the RPC schemas",
        "error",
        "A method in `coverage.rpc_results.covered` has no `rpc.<method>.result` schema, or an "
        "`rpc.<method>.result` schema's method is not in `coverage.rpc_results.covered`.",
    ),
    "PF436": CodeInfo(
        "event-kind coverage does not match EventKind",
        "error",
        "`coverage.journal_event_payloads.covered` and `uncovered` together must be exactly the "
        "EventKind enum of the `journal.event` schema: a kind in neither list, or a listed name "
        "that is no kind.",
    ),
    "PF437": CodeInfo(
        "malformed wire-schema bundle",
        "error",
        "The bundle's own structure is wrong: not an object, `format` not car.wire-schema.v1, "
        "`json_schema_draft` not draft-07, or `schemas`/`coverage` members missing or of the "
        "wrong type.",
    ),
    # PF5xx — files and the command line
    "PF501": CodeInfo(
        "file unreadable",
        "error",
        "A file could not be read (permission denied, an I/O error, or it vanished while being "
        "checked). The other files are still checked; `check` exits with 2.",
    ),
    "PF502": CodeInfo(
        "document too large",
        "error",
        "A capability map, RPC result or wire-schema bundle is larger than the document size "
        "limit (256 MiB unless set with `--max-document-bytes` or "
        "`$PAIRLING_FAST_MAX_DOCUMENT_BYTES`), so it was not read: a whole document is held in "
        "memory. Journals and transcripts are streamed and have no such limit (docs/limits.md).",
    ),
    # PF9xx — internal
    "PF901": CodeInfo(
        "internal error",
        "error",
        "pairling_fast failed on this input (a Rust panic caught at the boundary, or an "
        "unexpected exception). The input may be fine; please report it with `__build__`.",
    ),
}
