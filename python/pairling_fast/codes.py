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
    # PF3xx — CAR journals
    # PF4xx — CAR wire: RPC results, JSON-RPC transcripts, the wire-schema bundle
    # PF5xx — files and the command line
    # PF9xx — internal
    "PF901": CodeInfo(
        "internal error",
        "error",
        "pairling_fast failed on this input (a Rust panic caught at the boundary, or an "
        "unexpected exception). The input may be fine; please report it with `__build__`.",
    ),
}
