"""Type stubs of the Rust core; the engine API is documented in docs/architecture.md."""

from collections.abc import Callable, Sequence
from typing import Any, Literal, final

from pairling_fast.errors import CanonicalizationError
from pairling_fast.journal.options import JournalOptions
from pairling_fast.journal.stats import JournalStats
from pairling_fast.report import Report

__all__ = [
    "Blake3",
    "CompiledSchema",
    "JournalChecker",
    "JournalStream",
    "RawFinding",
    "TranscriptChecker",
    "__version__",
    "_panic_for_tests",
    "build_info",
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
    "indent_json",
    "journal_chain_digest",
    "journal_event_kinds",
    "map_diff_set_arrays",
    "parse_json",
    "seal_map",
    "seal_map_json",
    "table_json",
    "wire_bundles",
    "wire_schema_digest",
]

# The crate's version, the package's (pyproject.toml reads it from Cargo.toml).
__version__: str

_RawViolation = tuple[str, str, str, str, tuple[str, str, str] | None]

@final
class RawFinding:
    """A finding before it has a path; the fallback's is a named tuple of these fields."""

    def __new__(
        cls,
        code: str,
        severity: Literal["info", "warning", "error"],
        message: str,
        line: int | None = None,
        pointer: str | None = None,
        schema_pointer: str | None = None,
        best_match: Sequence[str] | None = None,
    ) -> RawFinding: ...
    @property
    def code(self) -> str: ...
    @property
    def severity(self) -> Literal["info", "warning", "error"]: ...
    @property
    def message(self) -> str: ...
    @property
    def line(self) -> int | None: ...
    @property
    def pointer(self) -> str | None: ...
    @property
    def schema_pointer(self) -> str | None: ...
    @property
    def best_match(self) -> tuple[str, str, str] | None: ...

_WireOutcome = tuple[list[RawFinding], dict[str, Any]]

def parse_json(data: bytes | str) -> Any: ...
def canonicalize(value: Any) -> bytes: ...
def canonicalize_json(data: bytes | str) -> bytes: ...
def digest_hex(value: Any) -> str: ...
def digest_hex_many(values: list[Any]) -> list[str]: ...
def indent_json(compact: str, width: int) -> str: ...
def compile_schema(
    schema: Any,
    validate_formats: bool | None = None,
    resources: dict[str, Any] | None = None,
    formats: dict[str, Callable[[str], object]] | None = None,
    ignore_unknown_formats: bool = True,
    base_uri: str | None = None,
    pattern_options: tuple[str, int | None, int | None, int | None] | None = None,
    keywords: dict[str, Callable[[Any, Any, list[str | int]], Any]] | None = None,
) -> CompiledSchema: ...
def bundled_schema_ids() -> list[str]: ...
def bundled_validator(schema_id: str) -> CompiledSchema: ...
def build_info() -> dict[str, Any]: ...
def table_json(name: str) -> str | None: ...
def _panic_for_tests() -> None: ...
def check_journal(
    source: Any, options: JournalOptions, progress: Callable[[int], object] | None = None
) -> tuple[list[RawFinding], JournalStats]: ...
def check_journal_resumable(
    source: Any,
    state: str | None,
    options: JournalOptions,
    progress: Callable[[int], object] | None = None,
) -> tuple[list[RawFinding], JournalStats, str | None]: ...
def journal_event_kinds(release: str) -> list[str]: ...
def journal_chain_digest(line: bytes) -> str: ...
def check_journal_chunk(source: Any, start: int, end: int, options: JournalOptions) -> bytes: ...

@final
class JournalChecker:
    def __new__(cls, options: JournalOptions) -> JournalChecker: ...
    def feed(self, chunk: bytes) -> None: ...
    def finish(self, interrupted: bool = False) -> tuple[list[RawFinding], JournalStats]: ...

@final
class JournalStream:
    def __new__(cls, options: JournalOptions, state: str | None = None) -> JournalStream: ...
    def feed(self, data: bytes) -> list[RawFinding]: ...
    @property
    def lines(self) -> int: ...
    @property
    def events(self) -> int: ...
    @property
    def pending(self) -> int: ...
    def snapshot(self) -> str: ...
    def finish(self, interrupted: bool = False) -> tuple[list[RawFinding], JournalStats]: ...

def check_map(document: Any, manifest: Any = None) -> tuple[list[RawFinding], dict[str, Any]]: ...
def check_map_json(
    data: bytes | str, manifest: Any = None
) -> tuple[list[RawFinding], dict[str, Any]]: ...
def seal_map(document: Any) -> Any: ...
def seal_map_json(data: bytes | str) -> Any: ...
def diff_maps(
    old: Any, new: Any, manifest: Any = None
) -> tuple[
    tuple[list[RawFinding], dict[str, Any]],
    tuple[list[RawFinding], dict[str, Any]],
    tuple[
        list[
            tuple[
                str,
                str,
                str,
                str,
                str | None,
                str | None,
                list[Any],
                list[Any],
                int | None,
                int | None,
            ]
        ],
        list[tuple[str, int, int, list[Any], list[Any]]],
    ]
    | None,
]: ...
def map_diff_set_arrays() -> list[tuple[str, str, str]]: ...

@final
class Blake3:
    def __init__(self) -> None: ...
    def update(self, data: bytes, start: int = 0, end: int | None = None) -> None: ...
    def update_from_fd(self, fd: int, offset: int, length: int) -> None: ...
    def copy(self) -> Blake3: ...
    def hexdigest(self) -> str: ...

@final
class CompiledSchema:
    def is_valid(self, instance: Any) -> bool: ...
    def accepts(self, instance: Any) -> bool: ...
    def accepts_many(self, instances: list[Any]) -> list[bool]: ...
    def errors(self, instance: Any) -> list[_RawViolation]: ...
    def errors_many(
        self, instances: list[Any]
    ) -> list[list[_RawViolation] | CanonicalizationError | None]: ...
    def accepts_json(self, data: bytes | str) -> bool: ...
    def errors_json(self, data: bytes | str) -> list[_RawViolation]: ...
    def evaluate(
        self, instance: Any
    ) -> tuple[
        bool, dict[str, Any], dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]
    ]: ...
    def report_json(self, data: bytes | str) -> Report: ...
    def validate(self, instance: Any) -> None: ...

def check_rpc_result(
    method: str,
    result: Any,
    catalog: Any = None,
    wire_schema_digest: str | None = None,
    car_version: str | None = None,
) -> _WireOutcome: ...
def check_rpc_params(method: str, params: Any, car_version: str | None = None) -> _WireOutcome: ...
def check_transcript_file(
    path: str, wire_schema_digest: str | None = None, car_version: str | None = None
) -> _WireOutcome: ...
def wire_bundles() -> list[tuple[str, str, str]]: ...
def check_wire_schema(path: str) -> _WireOutcome: ...
def wire_schema_digest(path: str) -> str: ...

@final
class TranscriptChecker:
    def __new__(
        cls, wire_schema_digest: str | None = None, car_version: str | None = None
    ) -> TranscriptChecker: ...
    def feed_lines(self, lines: list[bytes]) -> None: ...
    def finish(self) -> _WireOutcome: ...
