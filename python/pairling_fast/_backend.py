"""Backend selection: the Rust core (``pairling_fast._core``) or the pure-Python fallback.

Both export the same engine API (``docs/architecture.md``). ``PAIRLING_FAST_BACKEND=python``
selects the fallback as the process default; so does a missing or broken extension, with a
one-line warning.

An engine is a value: each public check resolves one (its ``backend=`` argument where it has
one, else ``active()``) and hands it down to everything it runs, threads and cluster tasks
included, so checks on different backends can run side by side in one process. ``selected``
changes what ``active()`` resolves to for the calling thread only (the CLI's ``--backend``, the
tests' ``backend`` fixture); nothing swaps a backend for the whole process.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

from ._load_core import import_core
from .codes import Severity
from .errors import CanonicalizationError
from .report import RawDifferingBinding, RawMapChange
from .report import RawFinding as _Record  # the class body's own RawFinding is the constructor

__all__ = [
    "BACKENDS",
    "CompiledSchema",
    "Engine",
    "JournalChecker",
    "JournalStreamEngine",
    "active",
    "active_name",
    "engine",
    "name_of",
    "resolve",
    "selected",
    "use",
]

BACKENDS = ("rust", "python")
BACKEND_ENV = "PAIRLING_FAST_BACKEND"

RawViolation = tuple[str, str, str, str, tuple[str, str, str] | None]
"""(pointer, schema_pointer, keyword, message, best_match): for a failing ``oneOf``/``anyOf``,
the branch error that came closest as (pointer, schema_pointer, message), or ``None``."""
EvaluationOutput = tuple[
    bool, dict[str, Any], dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]
]
"""(valid, list output, hierarchical output, error entries, annotation entries):
``Validator.evaluate``'s parts."""
WireOutcome = tuple[Sequence[_Record], dict[str, Any]]
"""The findings of a wire check and its stats."""


class CompiledSchema(Protocol):
    def is_valid(self, instance: Any) -> bool: ...
    def accepts(self, instance: Any) -> bool: ...
    def accepts_many(self, instances: list[Any]) -> list[bool]: ...
    def errors(self, instance: Any) -> list[RawViolation]: ...
    def errors_many(
        self, instances: list[Any]
    ) -> list[list[RawViolation] | CanonicalizationError | None]: ...
    def accepts_json(self, data: bytes | str) -> bool: ...
    def errors_json(self, data: bytes | str) -> list[RawViolation]: ...
    def evaluate(self, instance: Any) -> EvaluationOutput: ...


class JournalChecker(Protocol):
    """The ordered stage of ``check_journal`` fed byte-range chunks in file order
    (``docs/cluster.md``)."""

    def feed(self, chunk: bytes) -> None: ...
    def finish(self, interrupted: bool = False) -> tuple[Sequence[_Record], JournalStats]: ...


class JournalStreamEngine(Protocol):
    """A journal checked as its bytes arrive (``JournalStream``): ``feed`` returns the findings
    of the lines it completed; ``snapshot`` is the ordered stage's state at the end of the last
    complete line (``--state``'s ``checker``)."""

    def feed(self, data: bytes) -> Sequence[_Record]: ...
    @property
    def lines(self) -> int: ...
    @property
    def events(self) -> int: ...
    @property
    def pending(self) -> int: ...
    def snapshot(self) -> str: ...
    def finish(self, interrupted: bool = False) -> tuple[Sequence[_Record], JournalStats]: ...


class TranscriptChecker(Protocol):
    def feed_lines(self, lines: list[bytes]) -> None: ...
    def finish(self) -> WireOutcome: ...


class Engine(Protocol):
    def parse_json(self, data: bytes | str) -> Any: ...
    def canonicalize(self, value: Any) -> bytes: ...
    def canonicalize_json(self, data: bytes | str) -> bytes: ...
    def digest_hex(self, value: Any) -> str: ...
    def digest_hex_many(self, values: list[Any]) -> list[str]: ...
    def compile_schema(
        self,
        schema: Any,
        validate_formats: bool | None = None,
        resources: dict[str, Any] | None = None,
        formats: dict[str, Callable[[str], object]] | None = None,
        ignore_unknown_formats: bool = True,
        base_uri: str | None = None,
        pattern_options: tuple[str, int | None, int | None, int | None] | None = None,
        keywords: dict[str, Callable[[Any, Any, list[str | int]], Any]] | None = None,
    ) -> CompiledSchema: ...
    def bundled_schema_ids(self) -> list[str]: ...
    def bundled_validator(self, schema_id: str) -> CompiledSchema: ...
    def check_journal(
        self,
        source: Any,
        options: JournalOptions,
        progress: Callable[[int], object] | None = None,
    ) -> tuple[Sequence[_Record], JournalStats]: ...
    def check_journal_resumable(
        self,
        source: Any,
        state: str | None,
        options: JournalOptions,
        progress: Callable[[int], object] | None = None,
    ) -> tuple[Sequence[_Record], JournalStats, str | None]: ...
    def journal_event_kinds(self, release: str) -> list[str]: ...
    def journal_chain_digest(self, line: bytes) -> str: ...
    def check_journal_chunk(
        self, source: Any, start: int, end: int, options: JournalOptions
    ) -> bytes: ...
    def JournalChecker(  # the engine's class, called as a constructor
        self, options: JournalOptions
    ) -> JournalChecker: ...
    def JournalStream(
        self, options: JournalOptions, state: str | None = None
    ) -> JournalStreamEngine: ...
    def RawFinding(  # the engine's record of a finding, called as a constructor
        self,
        code: str,
        severity: Severity,
        message: str,
        line: int | None = None,
        pointer: str | None = None,
        schema_pointer: str | None = None,
        best_match: tuple[str, str, str] | None = None,
    ) -> _Record: ...
    def check_rpc_result(
        self,
        method: str,
        result: Any,
        catalog: Any = None,
        wire_schema_digest: str | None = None,
        car_version: str | None = None,
    ) -> WireOutcome: ...
    def check_rpc_params(
        self, method: str, params: Any, car_version: str | None = None
    ) -> WireOutcome: ...
    def check_transcript_file(
        self, path: str, wire_schema_digest: str | None = None, car_version: str | None = None
    ) -> WireOutcome: ...
    def TranscriptChecker(
        self, wire_schema_digest: str | None = None, car_version: str | None = None
    ) -> TranscriptChecker: ...
    def wire_bundles(self) -> list[tuple[str, str, str]]: ...
    def check_wire_schema(self, path: str) -> WireOutcome: ...
    def wire_schema_digest(self, path: str) -> str: ...
    def check_map(
        self, document: Any, manifest: Any = None
    ) -> tuple[Sequence[_Record], dict[str, Any]]: ...
    def check_map_json(
        self, data: bytes | str, manifest: Any = None
    ) -> tuple[Sequence[_Record], dict[str, Any]]: ...
    def seal_map(self, document: Any) -> Any: ...
    def seal_map_json(self, data: bytes | str) -> Any: ...
    def diff_maps(
        self, old: Any, new: Any, manifest: Any = None
    ) -> tuple[
        tuple[Sequence[_Record], dict[str, Any]],
        tuple[Sequence[_Record], dict[str, Any]],
        tuple[list[RawMapChange], list[RawDifferingBinding]] | None,
    ]: ...


if TYPE_CHECKING:
    from . import _core, _fallback
    from .journal.options import JournalOptions
    from .journal.stats import JournalStats

    # The engine API is declared in _core.pyi (held to the extension by stubtest); _fallback's
    # names and parameters, and this protocol's, are tests/test_engine_api.py's to hold to it,
    # and mypy holds both backends' modules to this protocol's types.
    _RUST_ENGINE: Engine = _core
    _PYTHON_ENGINE: Engine = _fallback


_MODULES = {"rust": "pairling_fast._core", "python": "pairling_fast._fallback"}
_NAMES = {module: name for name, module in _MODULES.items()}


def engine(name: str) -> Engine:
    """The engine module of backend ``name``; raises ImportError if the Rust core is missing."""
    if name not in _MODULES:
        raise ValueError(f"unknown backend {name!r}: choose one of {', '.join(BACKENDS)}")
    module: Any = import_core() if name == "rust" else importlib.import_module(_MODULES[name])
    return module  # type: ignore[no-any-return]


def name_of(engine: Engine) -> str:
    """The backend name of an engine (``"rust"``, ``"python"``), as reports give it."""
    return _NAMES[getattr(engine, "__name__", "")]


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


_DEFAULT_NAME, _DEFAULT = _initial()
# A context variable, not a global: a selection made in one thread is not seen by the others (a
# new thread starts from the process default).
_SELECTED: ContextVar[str | None] = ContextVar("pairling_fast_backend", default=None)


def active_name() -> str:
    """The backend a check resolves when it is given none: the one ``selected`` in this thread,
    else the process default."""
    return _SELECTED.get() or _DEFAULT_NAME


def active() -> Engine:
    """The engine of ``active_name()``."""
    name = _SELECTED.get()
    return _DEFAULT if name is None else engine(name)


def resolve(backend: str | None) -> Engine:
    """The engine of ``backend``, or the active one for None: what a public check resolves once."""
    return active() if backend is None else engine(backend)


@contextmanager
def selected(name: str) -> Iterator[Engine]:
    """Within the block, checks called from this thread without a backend run on ``name``."""
    chosen = engine(name)
    token = _SELECTED.set(name)
    try:
        yield chosen
    finally:
        _SELECTED.reset(token)


@contextmanager
def use(name: str) -> Iterator[Engine]:
    """Deprecated: ``selected(name)``, or pass ``backend=`` to the check."""
    warnings.warn(
        "pairling_fast._backend.use() is deprecated: pass backend= to the check, or use "
        "_backend.selected(), which applies to the calling thread only",
        DeprecationWarning,
        stacklevel=3,
    )
    with selected(name) as chosen:
        yield chosen
