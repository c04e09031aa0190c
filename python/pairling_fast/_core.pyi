"""Type stubs of the Rust core; the engine API is documented in docs/architecture.md."""

from collections.abc import Callable
from typing import Any, Literal, final

from pairling_fast.journal import JournalOptions

__all__ = [
    "CompiledSchema",
    "JournalChecker",
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
    "digest_hex",
    "journal_chain_digest",
    "journal_event_kinds",
    "parse_json",
    "seal_map",
    "seal_map_json",
    "wire_bundles",
    "wire_schema_digest",
]

# The crate's version, the package's (pyproject.toml reads it from Cargo.toml).
__version__: str

_RawViolation = tuple[str, str, str, str]
_RawFinding = tuple[
    str, Literal["info", "warning", "error"], str, int | None, str | None, str | None
]
_WireOutcome = tuple[list[_RawFinding], dict[str, Any]]

def parse_json(data: bytes | str) -> Any: ...
def canonicalize(value: Any) -> bytes: ...
def canonicalize_json(data: bytes | str) -> bytes: ...
def digest_hex(value: Any) -> str: ...
def compile_schema(
    schema: Any,
    validate_formats: bool | None = None,
    resources: dict[str, Any] | None = None,
) -> CompiledSchema: ...
def bundled_schema_ids() -> list[str]: ...
def bundled_validator(schema_id: str) -> CompiledSchema: ...
def build_info() -> dict[str, Any]: ...
def _panic_for_tests() -> None: ...
def check_journal(
    source: Any, options: JournalOptions, progress: Callable[[int], object] | None = None
) -> tuple[list[_RawFinding], dict[str, Any]]: ...
def check_journal_resumable(
    source: Any,
    state: str | None,
    options: JournalOptions,
    progress: Callable[[int], object] | None = None,
) -> tuple[list[_RawFinding], dict[str, Any], str | None]: ...
def journal_event_kinds(car_version: str | None = None) -> list[str]: ...
def journal_chain_digest(line: bytes) -> str: ...
def check_journal_chunk(source: Any, start: int, end: int, options: JournalOptions) -> bytes: ...

@final
class JournalChecker:
    def __new__(cls, options: JournalOptions) -> JournalChecker: ...
    def feed(self, chunk: bytes) -> None: ...
    def finish(self, interrupted: bool = False) -> tuple[list[_RawFinding], dict[str, Any]]: ...

def check_map(document: Any, manifest: Any = None) -> tuple[list[_RawFinding], dict[str, Any]]: ...
def check_map_json(
    data: bytes | str, manifest: Any = None
) -> tuple[list[_RawFinding], dict[str, Any]]: ...
def seal_map(document: Any) -> Any: ...
def seal_map_json(data: bytes | str) -> Any: ...

@final
class CompiledSchema:
    def is_valid(self, instance: Any) -> bool: ...
    def errors(self, instance: Any) -> list[_RawViolation]: ...
    def errors_json(self, data: bytes | str) -> list[_RawViolation]: ...

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
