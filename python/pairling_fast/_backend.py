"""Backend selection: the Rust core (``pairling_fast._core``) or the pure-Python fallback.

Both export the same engine API (``docs/architecture.md``). ``PAIRLING_FAST_BACKEND=python``
selects the fallback; so does a missing or broken extension, with a one-line warning.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from .report import RawFinding

__all__ = [
    "BACKENDS",
    "CompiledSchema",
    "Engine",
    "JournalChecker",
    "active",
    "active_name",
    "engine",
    "use",
]

BACKENDS = ("rust", "python")
BACKEND_ENV = "PAIRLING_FAST_BACKEND"

RawViolation = tuple[str, str, str, str]
"""(pointer, schema_pointer, keyword, message)"""
WireOutcome = tuple[list[RawFinding], dict[str, Any]]
"""The findings of a wire check and its stats."""


class CompiledSchema(Protocol):
    def is_valid(self, instance: Any) -> bool: ...
    def errors(self, instance: Any) -> list[RawViolation]: ...
    def errors_json(self, data: bytes | str) -> list[RawViolation]: ...


class JournalChecker(Protocol):
    """The ordered stage of ``check_journal`` fed byte-range chunks in file order
    (``docs/cluster.md``)."""

    def feed(self, chunk: bytes) -> None: ...
    def finish(self, interrupted: bool = False) -> tuple[list[RawFinding], dict[str, Any]]: ...


class TranscriptChecker(Protocol):
    def feed_lines(self, lines: list[bytes]) -> None: ...
    def finish(self) -> WireOutcome: ...


class Engine(Protocol):
    def parse_json(self, data: bytes | str) -> Any: ...
    def canonicalize(self, value: Any) -> bytes: ...
    def canonicalize_json(self, data: bytes | str) -> bytes: ...
    def digest_hex(self, value: Any) -> str: ...
    def compile_schema(
        self, schema: Any, validate_formats: bool | None, resources: dict[str, Any] | None
    ) -> CompiledSchema: ...
    def bundled_schema_ids(self) -> list[str]: ...
    def bundled_validator(self, schema_id: str) -> CompiledSchema: ...
    def check_journal(
        self,
        source: Any,
        chain: str,
        lifecycle: bool,
        max_findings: int | None,
        profile: str,
        max_line_length: int,
        progress: Callable[[int], object] | None = None,
        car_version: str | None = None,
    ) -> tuple[list[RawFinding], dict[str, Any]]: ...
    def check_journal_resumable(
        self,
        source: Any,
        state: str | None,
        chain: str,
        lifecycle: bool,
        max_findings: int | None,
        profile: str,
        max_line_length: int,
        progress: Callable[[int], object] | None = None,
        car_version: str | None = None,
    ) -> tuple[list[RawFinding], dict[str, Any], str | None]: ...
    def journal_event_kinds(self, car_version: str | None = None) -> list[str]: ...
    def journal_chain_digest(self, line: bytes) -> str: ...
    def check_journal_chunk(
        self,
        path: str,
        start: int,
        end: int,
        chain: str,
        profile: str,
        max_line_length: int,
        car_version: str | None = None,
    ) -> bytes: ...
    def JournalChecker(  # the engine's class, called as a constructor
        self,
        chain: str,
        lifecycle: bool,
        max_findings: int | None,
        profile: str,
        max_line_length: int,
        car_version: str | None = None,
    ) -> JournalChecker: ...
    def check_rpc_result(
        self,
        method: str,
        result: Any,
        catalog: Any,
        wire_schema_digest: str | None,
        car_version: str | None,
    ) -> WireOutcome: ...
    def check_rpc_params(
        self, method: str, params: Any, car_version: str | None
    ) -> WireOutcome: ...
    def check_transcript_file(
        self, path: str, wire_schema_digest: str | None, car_version: str | None
    ) -> WireOutcome: ...
    def TranscriptChecker(
        self, wire_schema_digest: str | None, car_version: str | None
    ) -> TranscriptChecker: ...
    def wire_bundles(self) -> list[tuple[str, str, str]]: ...
    def check_wire_schema(self, path: str) -> WireOutcome: ...
    def wire_schema_digest(self, path: str) -> str: ...
    def check_map(
        self, document: Any, manifest: Any = None
    ) -> tuple[list[RawFinding], dict[str, Any]]: ...
    def check_map_json(
        self, data: bytes | str, manifest: Any = None
    ) -> tuple[list[RawFinding], dict[str, Any]]: ...
    def seal_map(self, document: Any) -> Any: ...
    def seal_map_json(self, data: bytes | str) -> Any: ...


if TYPE_CHECKING:
    from . import _core, _fallback

    # The engine API is written out in _core.pyi (checked against the extension by stubtest), in
    # _fallback and in Engine: mypy holds both backends' modules to this one protocol.
    _RUST_ENGINE: Engine = _core
    _PYTHON_ENGINE: Engine = _fallback


# mimalloc, the Rust core's allocator, reads its options from the environment once, when the
# extension is loaded. By default it commits its arenas eagerly, and where the kernel backs memory
# with transparent huge pages that inflates a journal check's peak RSS (105 MiB instead of 68 on a
# 100 MB journal, benches/RESULTS.md); committing on demand and purging freed memory at once costs
# no measurable time. A user's own MIMALLOC_* settings win, and the environment is restored after
# the import.
_MIMALLOC_DEFAULTS = {"MIMALLOC_ARENA_EAGER_COMMIT": "0", "MIMALLOC_PURGE_DELAY": "0"}


def _import_core() -> Any:
    added = [name for name in _MIMALLOC_DEFAULTS if name not in os.environ]
    for name in added:
        os.environ[name] = _MIMALLOC_DEFAULTS[name]
    try:
        return importlib.import_module("pairling_fast._core")
    finally:
        for name in added:
            os.environ.pop(name, None)


def engine(name: str) -> Engine:
    """The engine module of backend ``name``; raises ImportError if the Rust core is missing."""
    if name == "rust":
        module: Any = _import_core()
    elif name == "python":
        module = importlib.import_module("pairling_fast._fallback")
    else:
        raise ValueError(f"unknown backend {name!r}: choose one of {', '.join(BACKENDS)}")
    return module  # type: ignore[no-any-return]


def _initial() -> tuple[str, Engine]:
    requested = os.environ.get(BACKEND_ENV, "").strip().lower() or "rust"
    if requested not in BACKENDS:
        warnings.warn(
            f"pairling_fast: {BACKEND_ENV}={requested!r} is not one of {BACKENDS}; using rust",
            RuntimeWarning,
            stacklevel=3,
        )
        requested = "rust"
    if requested == "rust":
        try:
            return "rust", engine("rust")
        except ImportError as error:
            warnings.warn(
                f"pairling_fast: Rust core unavailable ({error}); using the pure-Python fallback",
                RuntimeWarning,
                stacklevel=3,
            )
    return "python", engine("python")


_active_name, _active = _initial()


def active() -> Engine:
    return _active


def active_name() -> str:
    return _active_name


@contextmanager
def use(name: str) -> Iterator[Engine]:
    """Run a block on backend ``name`` (tests use this to run every case on both backends)."""
    global _active_name, _active
    previous = _active_name, _active
    _active_name, _active = name, engine(name)
    try:
        yield _active
    finally:
        _active_name, _active = previous
