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
    # PF3xx — CAR journals
    # PF4xx — CAR wire: RPC results, JSON-RPC transcripts, the wire-schema bundle
    # PF5xx — files and the command line
    "PF501": CodeInfo(
        "file unreadable",
        "error",
        "A file could not be read (permission denied, an I/O error, or it vanished while being "
        "checked). The other files are still checked; `check` exits with 2.",
    ),
    "PF502": CodeInfo(
        "document check unavailable",
        "info",
        "This build has no document check for the file's kind (its module is missing), so only "
        "the checks that exist ran: whole-document schema validation for maps and RPC results, "
        "each line against the journal event schema for journals, strict JSON for the others.",
    ),
    # PF9xx — internal
    "PF901": CodeInfo(
        "internal error",
        "error",
        "pairling_fast failed on this input (a Rust panic caught at the boundary, or an "
        "unexpected exception). The input may be fine; please report it with `__build__`.",
    ),
}
