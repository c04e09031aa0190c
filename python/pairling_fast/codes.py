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
        "each field names its collection, but readers and tools are easily misled. "
        "A lint of pairling_fast's own, not a rule of Pairling's: it never fails a run by "
        "default.",
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
        "warning",
        "An implementations[].transport_ids entry names a transport whose provider_id is not the "
        "implementation's provider. "
        "Pairling's validator does not compare transport providers. A lint of pairling_fast's "
        "own, not a rule of Pairling's: it never fails a run by default.",
    ),
    "PF208": CodeInfo(
        "runtime provider differs",
        "info",
        "implementations[].release_membership.runtime_provider_id names a provider other than the "
        "implementation's own provider_id (legitimate for a wrapper, but worth a second look). "
        "Pairling's real map does this by design (runtime key claude for the map provider "
        "claude_code). A lint of pairling_fast's own, not a rule of Pairling's: it never fails a "
        "run by default.",
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
        "warning",
        "An operation binding that is implemented and released binds a capability whose "
        "remote_safety is do_not_expose: the map would expose what must never be exposed. "
        "Pairling's validator allows it, and its real map has such bindings. A lint of "
        "pairling_fast's own, not a rule of Pairling's: it never fails a run by default.",
    ),
    "PF223": CodeInfo(
        "confirmation capability bound without confirmation",
        "warning",
        "An operation binding binds a capability whose remote_safety is confirmation, but its "
        "requires list has no confirmation requirement with a mode other than none. "
        "A lint of pairling_fast's own, not a rule of Pairling's: it never fails a run by "
        "default.",
    ),
    "PF224": CodeInfo(
        "capability without evidence",
        "warning",
        "evidence_policy.missing_evidence_is_unsupported is true and no evidence claim has this "
        "capability as its subject, so by the map's own policy it counts as unsupported. "
        "A lint of pairling_fast's own, not a rule of Pairling's: it never fails a run by "
        "default.",
    ),
    "PF225": CodeInfo(
        "orphan transport",
        "warning",
        "No implementation lists this transport in its transport_ids. "
        "A lint of pairling_fast's own, not a rule of Pairling's: it never fails a run by "
        "default.",
    ),
    "PF226": CodeInfo(
        "orphan evidence source",
        "warning",
        "No source_refs entry anywhere in the map cites this evidence source. "
        "A lint of pairling_fast's own, not a rule of Pairling's: it never fails a run by "
        "default.",
    ),
    "PF227": CodeInfo(
        "orphan capability",
        "warning",
        "No operation binding lists this capability in its capability_ids. "
        "A lint of pairling_fast's own, not a rule of Pairling's: it never fails a run by "
        "default.",
    ),
    "PF228": CodeInfo(
        "schema allows what Pairling rejects",
        "error",
        "The bundled schema allows this value but Pairling's map validator rejects it: transport "
        "kind manager, claim classification behavioral_evidence, a one-character provider id, an "
        "empty exclusions array. Reported under its own code, not as PF101 (docs/maps.md, 'Schema "
        "and validator').",
    ),
    "PF229": CodeInfo(
        "Pairling accepts what the schema rejects",
        "warning",
        "Pairling's map validator accepts this value but the bundled schema does not: "
        "identity_status unversioned, claim classification runtime_behavior or exclusion, "
        "provider and source ids outside the schema's narrower patterns, a runtime_provider_id or "
        "shared_semantics that is not an id, an effect target over 128 characters. A warning, not "
        "PF101: a map Pairling loads gets no error (docs/maps.md).",
    ),
    "PF230": CodeInfo(
        "whitespace-only text",
        "error",
        "A text Pairling requires to be explicit (display_name, reasons, descriptions, versions "
        "and channels, behavior, version_constraints, assertion, exclusion item and reason, the "
        "evidence policy's texts, an effect target, shared_semantics, exact_exposure and observed "
        "values) holds only whitespace.",
    ),
    "PF231": CodeInfo(
        "evidence source URI not direct",
        "error",
        "evidence_sources[].uri is neither a direct https:// URL with a host and no user info "
        "nor, for kind checked_in_source, a relative repository path without empty, . or .. "
        "segments (no scheme, not starting with / or ~).",
    ),
    "PF232": CodeInfo(
        "observed_at not a UTC timestamp Pairling reads",
        "error",
        "observed_at does not end in Z (Pairling requires an RFC 3339 timestamp in UTC), or has "
        "second 60: RFC 3339 allows a leap second, Python's datetime, which Pairling parses it "
        "with, does not.",
    ),
    "PF233": CodeInfo(
        "max_age_seconds not an integer literal",
        "error",
        "A fresh_snapshot's max_age_seconds is written as a float (30.0). JSON Schema counts it "
        "as an integer, Pairling's validator does not, and Pairling's own digest of the binding "
        "(Python json.dumps) differs from the canonical one.",
    ),
    "PF234": CodeInfo(
        "mandatory requirement kinds missing",
        "error",
        "An operation binding's requires lacks some of the six kinds every binding must carry: "
        "release_membership, fresh_snapshot, exact_identity, device_scope, resource_proof, "
        "confirmation. The message lists the missing ones.",
    ),
    "PF235": CodeInfo(
        "requirement kind repeated",
        "error",
        "Two entries of an operation binding's requires have the same kind.",
    ),
    "PF236": CodeInfo(
        "exact identity incomplete",
        "error",
        "An exact_identity requirement's dimensions lack provider, implementation or binding: the "
        "identity of an exact implementation needs all three.",
    ),
    "PF237": CodeInfo(
        "session without generation",
        "error",
        "An exact_identity requirement names session without generation, or generation without "
        "session; they bind together.",
    ),
    "PF238": CodeInfo(
        "mutating binding replay-safe",
        "error",
        "retry.replay is safe but the binding's effects are not exactly one return_data: only a "
        "read may be replayed blindly.",
    ),
    "PF239": CodeInfo(
        "recovery unavailable for recover_only",
        "error",
        "retry.replay is recover_only but retry.recovery is unavailable.",
    ),
    "PF240": CodeInfo(
        "uncorrelated ambiguity",
        "error",
        "retry.ambiguity is outcome_unknown but retry.correlation is none: an unknown outcome "
        "could never be matched to its action.",
    ),
    "PF241": CodeInfo(
        "not-released binding without reason",
        "error",
        "An operation binding with release_status not_released has no explicit "
        "required_pairling_addition saying why.",
    ),
    "PF242": CodeInfo(
        "local-only capability without reason",
        "error",
        "A capability whose remote_safety is required_local_only or do_not_expose has no explicit "
        "required_pairling_addition explaining the exclusion.",
    ),
    "PF243": CodeInfo(
        "released binding not implemented",
        "error",
        "An operation binding is released but its implementation_status is not implemented.",
    ),
    "PF244": CodeInfo(
        "released binding of a non-releasable provider",
        "error",
        "An operation binding is released but its implementation's provider has an "
        "implementation_eligibility.status other than implementation_candidate.",
    ),
    "PF245": CodeInfo(
        "released implementation not release_pinned",
        "error",
        "An implementation has a release_membership but its identity_status is not release_pinned.",
    ),
    "PF246": CodeInfo(
        "version differs from release membership",
        "error",
        "implementations[].provider_version differs from its release_membership.provider_version.",
    ),
    "PF247": CodeInfo(
        "channel differs from release membership",
        "error",
        "implementations[].provider_channel differs from its release_membership.provider_channel.",
    ),
    "PF248": CodeInfo(
        "ambiguous runtime identity",
        "error",
        "Two implementations have release memberships with the same runtime_provider_id, "
        "provider_version and provider_channel, so the runtime cannot tell which one it runs.",
    ),
    "PF249": CodeInfo(
        "binding cites unrelated evidence",
        "error",
        "An operation binding's evidence_claim_ids names a claim whose subject_id is neither the "
        "binding itself nor one of its capability_ids.",
    ),
    "PF250": CodeInfo(
        "duplicate exclusion item",
        "error",
        "Two exclusions have the same item.",
    ),
    "PF251": CodeInfo(
        "forbidden action repeated",
        "error",
        "Two entries of an operation binding's forbids have the same kind.",
    ),
    "PF252": CodeInfo(
        "duplicate exact_exposure entry",
        "error",
        "A capability's exact_exposure lists the same string twice.",
    ),
    "PF253": CodeInfo(
        "unsupported map schema_version",
        "error",
        "The capability map declares a schema_version other than 2.0.0 (Pairling's earlier maps "
        "are 1.0.0). It is reported by its version, not checked against the 2.0.0 rules.",
    ),
    "PF254": CodeInfo(
        "operation not reviewed",
        "error",
        "With a manifest (--manifest): an operation binding's operation_id is not an operation of "
        "Pairling's reviewed operation manifest.",
    ),
    "PF255": CodeInfo(
        "requirement differs from the reviewed operation",
        "error",
        "With a manifest: a binding's device_scope scope, resource_proof proof_kind or "
        "confirmation mode differs from the reviewed operation's required_device_scope, "
        "resource_proof_kind or confirmation_requirement, or the requirement is missing.",
    ),
    "PF256": CodeInfo(
        "reviewed operation without binding",
        "error",
        "With a manifest: operations of the manifest that no operation binding binds.",
    ),
    "PF257": CodeInfo(
        "release membership of an unknown provider",
        "error",
        "With a manifest: a release membership's map_provider_id names no provider of the map.",
    ),
    "PF258": CodeInfo(
        "released bindings differ from the manifest",
        "error",
        "With a manifest: the operations a provider's released bindings bind are not exactly "
        "those its release membership in the manifest lists.",
    ),
    "PF259": CodeInfo(
        "release identity differs from the manifest",
        "error",
        "With a manifest: a field of the provider's release_membership (runtime_provider_id, "
        "provider_version, provider_channel, launch_config_digest, physical_device_required) "
        "differs from the manifest's release membership.",
    ),
    "PF260": CodeInfo(
        "malformed operation manifest",
        "error",
        "The operation manifest (--manifest) is not an object, or its operations or "
        "release_memberships is not an array.",
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
        "CAR's own event parser (car-eventlog 0.58.0 `Event`) ignores the member or defaults the "
        "field.",
    ),
    "PF310": CodeInfo(
        "journal hash mismatch",
        "error",
        "A chained event's `hash` is not CAR's `event_digest` of the event "
        "(`car-eventlog-0.58.0.event_digest`, docs/digests.md): the event was edited after it "
        "was written. CAR's `verify_chain` fails at the same event.",
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
        "warning",
        "A `run_started` event for a `run_id` that is already open (started and not completed). "
        "pairling_fast's own lint, not a CAR rule: CAR's startup reconciliation appends a run's "
        "`run_started` from its run store to a journal it loads (car-server-core 0.58.0 "
        "session.rs, `reconcile_durable_run_journals`), so after a crash it can repeat one.",
    ),
    "PF321": CodeInfo(
        "event for a run that is not open",
        "error",
        "An event stamped with a `run_id` after that run's `run_completed`, other than its "
        "`run_cancellation_result`: CAR writes the terminal, then a cancelled run's receipt, and "
        "then clears the run binding, so nothing else is stamped with the run (car-server-core "
        "0.58.0 session.rs, `reconcile_durable_run_journals`). Reported once per run; later "
        "events of the run are counted in the message. A run never started in the journal is "
        "PF343.",
    ),
    "PF322": CodeInfo(
        "cancellation result without a request",
        "warning",
        "A `run_cancellation_result` for an open run with no earlier "
        "`run_cancellation_requested`. pairling_fast's own lint, not a CAR rule: CAR's startup "
        "reconciliation writes a recovered result whether or not the request is in the journal "
        "(car-server-core 0.58.0 session.rs, `append_recovered_cancellation_result_journal`).",
    ),
    "PF323": CodeInfo(
        "proposal not received",
        "error",
        "A `proposal_completed` or `state_committed` event, in a run whose `run_started` is in "
        "the journal, for a `proposal_id` with no earlier `proposal_received`. Once per proposal, "
        "later events counted in the message. Outside such a run the proposal began before the "
        "journal did (PF343).",
    ),
    "PF324": CodeInfo(
        "event after proposal completed",
        "warning",
        "pairling_fast's lint: an event for a proposal after its `proposal_completed`. CAR does "
        "not make proposal ids unique (a proposal submitted again runs again), so this is a "
        "warning. Once per proposal, later events counted in the message. Completed proposals "
        "are remembered in a window of the last 65,536, so memory stays bounded.",
    ),
    "PF326": CodeInfo(
        "event after action ended",
        "warning",
        "pairling_fast's lint: an `action_*` event of a proposal's action after it ended "
        "(`action_succeeded`, `action_rejected`, `action_skipped`, `action_deduplicated`, or "
        "`action_failed` followed by anything but `action_retrying` or `action_skipped`, the two "
        "ways car-engine's executor continues a failed action). A warning: a proposal id used "
        "again runs its actions again. Only events with a `proposal_id` (coder sessions use tool "
        "names as action ids). Once per action, later events counted in the message.",
    ),
    "PF327": CodeInfo(
        "action succeeded without executing",
        "warning",
        "`action_succeeded` for a proposal's action whose previous event is not "
        "`action_executing` (car-engine's executor journals `action_executing` before every "
        "attempt). Events without a `proposal_id` are not checked.",
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
    "PF331": CodeInfo(
        "chain digest not computable as CAR computes it",
        "error",
        "A chained event CAR's event parser rejects (its reason is in the message): CAR cannot "
        "compute its `event_digest`, and `EventLog::load` refuses the journal at this line. Not "
        "reported as an edit (PF310).",
    ),
    "PF332": CodeInfo(
        "chained event without timestamp",
        "error",
        "A chained event with no `timestamp`: CAR's parser defaults it to the time of loading "
        "(`Utc::now`), so its hash can never verify.",
    ),
    "PF333": CodeInfo(
        "duplicate key CAR tolerates",
        "warning",
        "Profile `car-compatible`: a duplicate key inside `data` or inside a member CAR ignores "
        "(PF002 under `strict`). serde_json keeps the last value; CAR reads the line.",
    ),
    "PF334": CodeInfo(
        "integer beyond 64 bits CAR tolerates",
        "warning",
        "Profile `car-compatible`: an integer outside the 64-bit range (PF005 under `strict`). "
        "CAR's serde_json reads it as the nearest f64 inside `data` and skips it elsewhere.",
    ),
    "PF335": CodeInfo(
        "invalid value in a member CAR ignores",
        "warning",
        "Profile `car-compatible`: a defect of the value model (number beyond f64, lone "
        "surrogate, invalid UTF-8, nesting) inside a member CAR's parser skips; serde_json's "
        "`ignore_value` checks syntax only, so CAR reads the line.",
    ),
    "PF336": CodeInfo(
        "timestamp CAR reads but the schema forbids",
        "warning",
        "Profile `car-compatible`: a `timestamp` that is not an RFC 3339 date-time but that "
        "chrono's relaxed parser (CAR's `DateTime<Utc>`) reads: a space for `T`, `+0530`, `UTC`, "
        "unpadded fields, surrounding whitespace.",
    ),
    "PF337": CodeInfo(
        "event CAR reads from an array",
        "warning",
        "Profile `car-compatible`: the line is a JSON array; serde reads a struct from an "
        "array's items in field order (kind, run_id, client_id, policy_session_id, action_id, "
        "proposal_id, data, timestamp, prev_hash, hash). PF301 under `strict`.",
    ),
    "PF338": CodeInfo(
        "null member CAR reads as absent",
        "warning",
        "Profile `car-compatible`: `null` for a member the schema wants a string (`run_id`, "
        "`action_id`, `prev_hash`, ...); CAR's `Option<String>` reads it as absent.",
    ),
    "PF339": CodeInfo(
        "schema violation CAR tolerates",
        "warning",
        "Profile `car-compatible`: any other schema violation (PF101 under `strict`) in a line "
        'CAR\'s event parser reads, e.g. the kind written as `{"name": null}`.',
    ),
    "PF340": CodeInfo(
        "line CAR's event parser rejects",
        "error",
        "Profile `car-compatible`: CAR's parser (serde_json into car-eventlog 0.58.0's `Event`) "
        "rejects a line the schema checks found nothing against (e.g. nesting 128 deep, a "
        "timestamp chrono cannot read). CAR's reason is in the message.",
    ),
    "PF341": CodeInfo(
        "whitespace line with a form feed",
        "warning",
        "A line of only whitespace that includes a form feed (not JSON whitespace). CAR's "
        "loader skips every line of ASCII whitespace, so it counts as blank.",
    ),
    "PF342": CodeInfo(
        "last line without newline (CAR refuses)",
        "error",
        "Profile `car-compatible`: the last line is not newline-terminated. CAR's "
        "`EventLog::load_read_only` refuses such a journal as a torn tail (its live `load` "
        "rewrites it). A truncated last line that is not JSON is PF302.",
    ),
    "PF343": CodeInfo(
        "journal begins mid-run",
        "warning",
        "Runs or proposals have events but their `run_started` / `proposal_received` is not in "
        "the journal: it begins mid-run, as after CAR's retention compaction "
        "(`EventLog::compact_journal` keeps the newest events) or a rotation. Reported once per "
        "journal with the counts, on the first such event, instead of one finding per event.",
    ),
    # PF4xx — CAR wire: RPC results, JSON-RPC transcripts, the wire-schema bundle
    "PF401": CodeInfo(
        "RPC result unchecked",
        "info",
        "The method is listed in the chosen wire-schema bundle's coverage.rpc_results.uncovered: "
        "CAR answers it, but that bundle has no schema for its result, so only the JSON value "
        "model was checked.",
    ),
    "PF402": CodeInfo(
        "unknown RPC method",
        "warning",
        "The method is in neither coverage.rpc_results.covered nor uncovered of the chosen "
        "wire-schema bundle: a typo, or a method newer than that bundle. Its result was not "
        "checked.",
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
        "error",
        "A catalog row's `row_digest` is not the lowercase hex sha256 of the RFC 8785 canonical "
        "bytes of its `model`: CAR's rule (car-inference 0.58.0 `catalog_identity::row_digest`, "
        "pinned by its `catalog_identity_jcs_vectors.json`). The message shows both values.",
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
    "PF438": CodeInfo(
        "server.schema names an unknown wire schema",
        "warning",
        "A transcript's `server.schema` result reports a `digest` that is no bundled wire-schema "
        "file's sha256, so the daemon speaks a wire schema pairling_fast does not ship. The "
        "transcript is checked against the bundle in effect; the message lists the bundled CAR "
        "versions and digests (`pairling-fast schemas`).",
    ),
    "PF439": CodeInfo(
        "catalog revision is not the digest of the rows",
        "error",
        "A `models.catalog_snapshot` result's `catalog_revision` is not sha256(JCS(models)): the "
        "lowercase hex sha256 of the RFC 8785 bytes of its rows, as serialized and sorted by id in "
        "UTF-16 order (car-inference 0.58.0 `catalog_identity::catalog_revision`, pinned by its "
        "`catalog_identity_jcs_vectors.json`).",
    ),
    "PF440": CodeInfo(
        "RPC params unchecked",
        "info",
        "The chosen wire schema has no schema for this method's params: its coverage inventory "
        "lists them as `typed_without_schema` (with the Rust type) or `unresolved`, the method is "
        "a notification CAR does not inventory yet, or the bundle has no params inventory at all "
        "(before CAR 0.60.0; `check_rpc_params` only). Reported once per method in a transcript.",
    ),
    "PF441": CodeInfo(
        "unknown RPC method in a request",
        "warning",
        "A request names a method that is in no bucket of the chosen wire schema's "
        "`coverage.rpc_params` inventory (CAR 0.60.0 on): a typo, or a method newer than the "
        "bundle. Its params were not checked. Reported once per method in a transcript.",
    ),
    "PF442": CodeInfo(
        "params coverage does not match the RPC inventory",
        "error",
        "`coverage.rpc_params` must sort every RPC method of `coverage.rpc_results` into exactly "
        "one of `covered`, `not_read`, `uncovered.typed_without_schema` and "
        "`uncovered.unresolved`; each covered method needs its `rpc.<method>.params` schema and "
        "every such schema's method must be covered (CAR's own test "
        "`every_daemon_method_has_a_params_entry`).",
    ),
    "PF443": CodeInfo(
        "notification coverage does not match the schemas",
        "error",
        "`coverage.notifications.covered` must name exactly the bundle's `notification.*` "
        "schemas, and each type `host_event_payloads` names for an event kind must be a schema "
        "of the bundle.",
    ),
    "PF444": CodeInfo(
        "server.schema names another bundled wire schema",
        "warning",
        "A transcript's `server.schema` digest is that of a bundled wire schema other than the "
        "one chosen with `--car-version` / `car_version=`; the transcript is still checked "
        "against the chosen one.",
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
