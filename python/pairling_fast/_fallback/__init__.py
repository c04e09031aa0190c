"""The pure-Python backend: the same engine API as the Rust core, module for module.

``parse.py`` ↔ ``rust/parse.rs``, ``canonical.py`` ↔ ``rust/canonical.rs``, ``validate.py`` ↔
``rust/validate/mod.rs``, the package ``graph/`` ↔ ``rust/graph/``, the package ``journal/`` ↔
``rust/journal/`` (the check, ``ordered``, ``state``, ``stream``, ``chunks``, ``car_event``,
``car_payloads``), and the package ``wire/`` ↔ ``rust/wire/`` (``rpc``, ``transcript``,
``bundle``, ``shared``): the CAR wire checks; ``findings.py`` ↔ ``rust/python/findings.rs``, the
record a finding crosses the boundary as. It is the reference the core is tested against,
and what runs where the extension cannot be built.
"""

from __future__ import annotations

from .canonical import canonicalize, canonicalize_json, digest_hex, digest_hex_many
from .findings import RawFinding
from .graph import check_map, check_map_json, diff_maps, seal_map, seal_map_json
from .journal import (
    check_journal,
    check_journal_resumable,
    journal_chain_digest,
    journal_event_kinds,
)
from .journal.chunks import JournalChecker, check_journal_chunk
from .journal.stream import JournalStream
from .parse import parse_json
from .validate import bundled_schema_ids, bundled_validator, compile_schema
from .wire.arguments import wire_bundles_listing as wire_bundles
from .wire.bundle import check_wire_schema, wire_schema_digest
from .wire.rpc import check_rpc_params, check_rpc_result
from .wire.transcript import TranscriptChecker, check_transcript_file

__all__ = [
    "JournalChecker",
    "JournalStream",
    "RawFinding",
    "TranscriptChecker",
    "bundled_schema_ids",
    "bundled_validator",
    "canonicalize",
    "canonicalize_json",
    "check_journal",
    "check_journal_chunk",
    "check_journal_resumable",
    "check_map",
    "check_map_json",
    "check_rpc_params",
    "check_rpc_result",
    "check_transcript_file",
    "check_wire_schema",
    "compile_schema",
    "diff_maps",
    "digest_hex",
    "digest_hex_many",
    "journal_chain_digest",
    "journal_event_kinds",
    "parse_json",
    "seal_map",
    "seal_map_json",
    "wire_bundles",
    "wire_schema_digest",
]
