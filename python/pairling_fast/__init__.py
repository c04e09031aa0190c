"""pairling_fast: fast, strict validation of Pairling capability maps and CAR wire documents.

Every function runs on the Rust core (``pairling_fast._core``) or, with
``PAIRLING_FAST_BACKEND=python`` or without the extension, on the pure-Python fallback; both give
the same verdicts, findings and digests. ``pairling_fast.backend`` says which one is active.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any

from ._load_core import import_core

if TYPE_CHECKING:
    from . import meta, schemas
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
        validator_cls_for,
    )
    from .wire import (
        check_rpc_params,
        check_rpc_result,
        check_transcript,
        check_wire_schema,
        wire_schema_digest,
    )

# Where each public name lives. The facade imports a module when one of its names is first used
# (PEP 562), not with the package: a journal check never needs the map, diff or validator modules,
# and importing them all was most of a `check --state` re-run's start-up (benches/RESULTS.md).
# The names above, under TYPE_CHECKING, are what type checkers and readers see.
_HOMES: dict[str, tuple[str, ...]] = {
    "canonical": (
        "canonicalize",
        "canonicalize_json",
        "digest",
        "digest_hex",
        "digest_hex_many",
        "parse_json",
    ),
    "errors": (
        "CanonicalizationError",
        "InternalError",
        "MapInvalidError",
        "PairlingError",
        "SchemaCompileError",
        "ValidationError",
    ),
    "journal": ("JournalStateError", "JournalStates", "check_journal"),
    "journal.options": ("JournalInterrupted",),
    "journal.stream": ("JournalStream",),
    "journal.writers": ("JournalWriter", "chain_journal"),
    "map_diff": ("MapDiff", "diff_maps"),
    "maps": ("check_map", "seal_map", "write_sealed"),
    "options": ("CheckOptions",),
    "paths": ("PathsReport", "check_paths"),
    "report": ("REPORT_VERSION", "BestMatch", "Finding", "Report"),
    "validator": (
        "Draft4Validator",
        "Draft6Validator",
        "Draft7Validator",
        "Draft201909Validator",
        "Draft202012Validator",
        "Evaluation",
        "FancyRegexOptions",
        "RegexOptions",
        "Validator",
        "schema_validator",
        "validator_cls_for",
    ),
    "wire": (
        "check_rpc_params",
        "check_rpc_result",
        "check_transcript",
        "check_wire_schema",
        "wire_schema_digest",
    ),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}
_SUBMODULES = ("meta", "schemas")


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
    "validator_cls_for",
    "wire_schema_digest",
    "write_sealed",
]


def _build_info() -> dict[str, Any]:
    info: dict[str, Any] = {"version": _version(), "backend": _active_backend()}
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
        return _active_backend()
    if name == "__build__":
        return _build_info()
    home = _HOME_OF.get(name)
    if home is None and name not in _SUBMODULES:
        raise AttributeError(f"module 'pairling_fast' has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{home or name}")
    value = getattr(module, name) if home else module
    globals()[name] = value  # later uses find it without coming here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _active_backend() -> str:
    from . import _backend

    return _backend.active_name()
