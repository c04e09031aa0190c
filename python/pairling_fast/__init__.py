"""pairling_fast: fast, strict validation of Pairling capability maps and CAR wire documents.

Every function runs on the Rust core (``pairling_fast._core``) or, with
``PAIRLING_FAST_BACKEND=python`` or without the extension, on the pure-Python fallback; both give
the same verdicts, findings and digests. ``pairling_fast.backend`` says which one is active.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from . import _backend, meta, schemas
from ._load_core import import_core
from .canonical import (
    canonicalize,
    canonicalize_json,
    digest,
    digest_hex,
    digest_hex_many,
    parse_json,
)
from .errors import (
    CanonicalizationError,
    InternalError,
    MapInvalidError,
    PairlingError,
    SchemaCompileError,
    ValidationError,
)
from .journal import JournalStateError, JournalStates, check_journal
from .journal.options import JournalInterrupted
from .journal.stream import JournalStream
from .journal.writers import JournalWriter, chain_journal
from .map_diff import MapDiff, diff_maps
from .maps import check_map, seal_map, write_sealed
from .options import CheckOptions
from .paths import PathsReport, check_paths
from .report import REPORT_VERSION, BestMatch, Finding, Report
from .validator import (
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
    Evaluation,
    FancyRegexOptions,
    RegexOptions,
    Validator,
    schema_validator,
)
from .wire import (
    check_rpc_params,
    check_rpc_result,
    check_transcript,
    check_wire_schema,
    wire_schema_digest,
)


@cache
def _version() -> str:
    # The core carries its crate's version, which is the package's (pyproject.toml takes it from
    # Cargo.toml). importlib.metadata, with the email package it loads, was the largest share of
    # `import pairling_fast`, so it is read only when there is no core.
    try:
        core_version: str = import_core().__version__
    except ImportError:
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("pairling_fast")
        except PackageNotFoundError:  # a source tree without the extension, not installed
            return "0+unknown"
    return core_version


__all__ = [
    "REPORT_VERSION",
    "BestMatch",
    "CanonicalizationError",
    "CheckOptions",
    "Draft4Validator",
    "Draft6Validator",
    "Draft7Validator",
    "Draft201909Validator",
    "Draft202012Validator",
    "Evaluation",
    "FancyRegexOptions",
    "Finding",
    "InternalError",
    "JournalInterrupted",
    "JournalStateError",
    "JournalStates",
    "JournalStream",
    "JournalWriter",
    "MapDiff",
    "MapInvalidError",
    "PairlingError",
    "PathsReport",
    "RegexOptions",
    "Report",
    "SchemaCompileError",
    "ValidationError",
    "Validator",
    "__build__",
    "__version__",
    "backend",
    "canonicalize",
    "canonicalize_json",
    "chain_journal",
    "check_journal",
    "check_map",
    "check_paths",
    "check_rpc_params",
    "check_rpc_result",
    "check_transcript",
    "check_wire_schema",
    "diff_maps",
    "digest",
    "digest_hex",
    "digest_hex_many",
    "meta",
    "parse_json",
    "schema_validator",
    "schemas",
    "seal_map",
    "wire_schema_digest",
    "write_sealed",
]


def _build_info() -> dict[str, Any]:
    info: dict[str, Any] = {"version": _version(), "backend": _backend.active_name()}
    try:
        core = import_core()
    except ImportError:
        info["core"] = None
    else:
        info["core"] = core.build_info()
    return info


def __getattr__(name: str) -> Any:
    # Computed on access: the backend ones follow the active backend.
    if name == "__version__":
        return _version()
    if name == "backend":
        return _backend.active_name()
    if name == "__build__":
        return _build_info()
    raise AttributeError(f"module 'pairling_fast' has no attribute {name!r}")
