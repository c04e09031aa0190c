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
    # PF2xx — Pairling capability maps
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
    # PF5xx — files and the command line
    # PF9xx — internal
    "PF901": CodeInfo(
        "internal error",
        "error",
        "pairling_fast failed on this input (a Rust panic caught at the boundary, or an "
        "unexpected exception). The input may be fine; please report it with `__build__`.",
    ),
}
