"""The robustness guarantees of issue 8 that are not about one input: no panic crosses the FFI
boundary, and nothing ever touches the network (both backends)."""

from __future__ import annotations

import socket
import urllib.request
from collections.abc import Iterator

import pytest
from network_guard import NetworkAccessRefused, network_refused

import pairling_fast
from pairling_fast import InternalError, SchemaCompileError, Validator, _backend, schema_validator


def test_a_rust_panic_reaches_python_as_internal_error() -> None:
    core = _backend.engine("rust")
    with pytest.raises(InternalError, match="_panic_for_tests: deliberate panic") as raised:
        core._panic_for_tests()  # type: ignore[attr-defined]
    # An ordinary exception: callers can catch it (PyO3's PanicException is a BaseException).
    assert isinstance(raised.value, Exception)
    assert isinstance(raised.value, pairling_fast.PairlingError)


def test_the_suite_runs_with_the_network_refused() -> None:
    with pytest.raises(NetworkAccessRefused):
        socket.create_connection(("192.0.2.1", 80), timeout=0.1)


@pytest.fixture
def offline() -> Iterator[list[str]]:
    """Stricter than the suite-wide guard: no socket may even be created."""
    with network_refused(loopback_allowed=False) as attempts:
        yield attempts


def test_the_guard_refuses_what_a_fetch_would_do(offline: list[str]) -> None:
    with pytest.raises(OSError):
        urllib.request.urlopen("https://example.com/schema.json", timeout=0.1)
    assert offline


EVENT = (
    b'{"kind": "action_succeeded", "data": {"n": 1}, "timestamp": "2026-12-02T14:21:11Z",'
    b' "action_id": "a0"}'
)


def test_public_api_works_offline(backend: _backend.Engine, offline: list[str]) -> None:
    value = pairling_fast.parse_json(EVENT)
    assert pairling_fast.canonicalize_json(EVENT) == pairling_fast.canonicalize(value)
    assert pairling_fast.digest(value) == "sha256:" + pairling_fast.digest_hex(value)
    for schema_id in pairling_fast.schemas.ids():
        schema_validator(schema_id).validate_json(EVENT)
    assert schema_validator("car.journal.event").validate_json(EVENT).findings == []
    draft7 = Validator(
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "properties": {"t": {"format": "date-time"}, "s": {"pattern": "^a+$"}},
            "definitions": {"x": {"type": "integer"}},
            "items": {"$ref": "#/definitions/x"},
        }
    )
    assert not draft7.is_valid({"t": "yesterday"})
    remote_ok = Validator(
        {"$ref": "https://example.com/int.json"},
        resources={"https://example.com/int.json": {"type": "integer"}},
    )
    assert remote_ok.is_valid(3) and not remote_ok.is_valid("3")
    assert pairling_fast.__build__["backend"] == _backend.active_name()
    assert offline == []


REMOTE_REFERENCES = [
    {"$ref": "https://example.com/schema.json"},
    {"$ref": "http://example.com/schema.json#/definitions/a"},
    {"properties": {"a": {"$ref": "https://example.com/a.json"}}},
    {"$ref": "file:///etc/passwd"},
    {"$schema": "https://example.com/my-meta-schema", "type": "object"},
]


@pytest.mark.parametrize("schema", REMOTE_REFERENCES, ids=lambda schema: str(schema)[:48])
def test_remote_ref_fails_closed(
    backend: _backend.Engine, offline: list[str], schema: dict[str, object]
) -> None:
    with pytest.raises(SchemaCompileError) as raised:
        Validator(schema)
    assert raised.value.code == "PF103"
    assert offline == []
