"""CAR's own wire schemas, catalog identities and messages (issues 14 and 20).

The bundles are CAR's `wire-schema.json` files as `car-server-core` ships them; the catalog rows,
JCS vectors, requests and notifications come from CAR's crates (tests/data/car/SOURCE.md). Every
case runs on both backends, and the parity helper compares them finding for finding.
"""

from __future__ import annotations

import bisect
import copy
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pairling_fast
from pairling_fast import _backend, schemas
from pairling_fast._fallback.canonical import canonicalize, digest_hex
from pairling_fast.report import Report

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "schemas"
CAR_DATA = ROOT / "tests" / "data" / "car"
EXAMPLE = ROOT / "examples" / "transcripts" / "session.jsonl"
VECTORS = json.loads(
    (CAR_DATA / "car-inference-0.58.0.catalog_identity_jcs_vectors.json").read_text("utf-8")
)
BUILTIN_CATALOG = json.loads(
    (CAR_DATA / "car-inference-0.58.0.builtin_catalog.json").read_text("utf-8")
)
SESSION_060 = CAR_DATA / "car-server-core-0.60.0.session.jsonl"
REJECTED_060 = json.loads((CAR_DATA / "car-server-core-0.60.0.rejected-params.json").read_text())

# The digests CAR publishes (`wire-schema.sha256` beside each file) and the seed's.
PINNED = {
    "seed": (
        "car-wire-schema.v1.json",
        "b12a8c1ca823ed77300a06338992cbfbd63a6de92f9b3cd3c64e1bf61d5896d0",
    ),
    "0.58.0": (
        "car-wire-schema.0.58.0.json",
        "92860a7f0da6ceeb4d781f97a9a6023ecd9d614bfd1d2c821864f9cc89ddc16b",
    ),
    "0.60.0": (
        "car-wire-schema.0.60.0.json",
        "4a2cf6512a5736958d20d8f68bdc72317bda289b59a09caade4e129b12110262",
    ),
}


def located(report: Report) -> list[tuple[Any, ...]]:
    return [(f.code, f.severity, f.pointer, f.line, f.schema_pointer) for f in report.findings]


def assert_parity(run: Callable[[], Report]) -> Report:
    reports = {}
    for name in _backend.BACKENDS:
        with _backend.selected(name):
            reports[name] = run()
    rust, python = reports["rust"], reports["python"]
    assert located(rust) == located(python)
    assert rust.stats == python.stats
    return rust


def bundle(version: str) -> Any:
    return json.loads((SCHEMAS / PINNED[version][0]).read_bytes())


# ---------------------------------------------------------------------------------------------
# The bundles


@pytest.mark.parametrize("version", PINNED)
def test_every_bundled_file_is_pinned(version: str) -> None:
    file, digest = PINNED[version]
    data = (SCHEMAS / file).read_bytes()
    assert hashlib.sha256(data).hexdigest() == digest
    packaged = ROOT / "python" / "pairling_fast" / "_schemas" / file
    assert packaged.read_bytes() == data  # what the wheel ships (a link to schemas/)
    if version != "seed":
        published = (SCHEMAS / f"car-wire-schema.{version}.sha256").read_text()
        assert published == f"{digest}  wire-schema.json\n"


def test_bundles_are_listed_oldest_first_with_their_digests(backend: _backend.Engine) -> None:
    assert [(b.car_version, b.file, b.digest) for b in schemas.bundles()] == [
        (version, file, digest) for version, (file, digest) in PINNED.items()
    ]
    assert schemas.bundle_path("0.58") == schemas.bundle_path("0.58.0")
    with pytest.raises(ValueError, match=r"bundled: seed, 0\.58\.0, 0\.60\.0"):
        schemas.bundle_path("0.59.0")


def test_licence_and_source_ship_beside_the_bundles() -> None:
    packaged = ROOT / "python" / "pairling_fast" / "_schemas"
    assert "Apache License" in (packaged / "LICENSE-car-server-core").read_text()
    source = (packaged / "SOURCE-car-server-core.md").read_text()
    for version in ("0.58.0", "0.60.0"):
        assert f"| `car-server-core` | {version} | `wire-schema.json` |" in source


@pytest.mark.parametrize("version", PINNED)
def test_every_bundled_file_passes_check_wire_schema(version: str) -> None:
    report = assert_parity(lambda: pairling_fast.check_wire_schema(schemas.bundle_path(version)))
    assert report.findings == []
    assert report.stats["car_version"] == version
    assert report.stats["digest"] == PINNED[version][1]


def test_the_060_inventory_as_car_states_it() -> None:
    coverage = bundle("0.60.0")["coverage"]
    params = coverage["rpc_params"]
    assert len(bundle("0.60.0")["schemas"]) == 120
    assert params["total"] == coverage["rpc_results"]["total"] == 559
    counts = {
        "covered": len(params["covered"]),
        "not_read": len(params["not_read"]),
        "typed_without_schema": len(params["uncovered"]["typed_without_schema"]),
        "unresolved": len(params["uncovered"]["unresolved"]),
    }
    assert counts == {
        "covered": 92,
        "not_read": 100,
        "typed_without_schema": 18,
        "unresolved": 349,
    }
    assert coverage["journal_event_payloads"]["total"] == 56
    assert bundle("0.58.0")["coverage"]["journal_event_payloads"]["total"] == 53


def _mutated(tmp_path: Path, mutate: Callable[[Any], None]) -> Path:
    document = bundle("0.60.0")
    mutate(document)
    path = tmp_path / "wire-schema.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _drop_not_read(document: Any) -> None:
    document["coverage"]["rpc_params"]["not_read"].pop(0)


def _twice(document: Any) -> None:
    params = document["coverage"]["rpc_params"]
    bisect.insort(params["uncovered"]["unresolved"], params["not_read"][0])
    params["total"] += 1


def _drop_params_schema(document: Any) -> None:
    del document["schemas"]["rpc.mail.send.params"]
    document["coverage"]["covered"].remove("rpc.mail.send.params")


def _unknown_payload_type(document: Any) -> None:
    document["coverage"]["notifications"]["host_event_payloads"]["x.y"] = "type.missing"


def _uncovered_notification(document: Any) -> None:
    document["coverage"]["notifications"]["covered"] = []


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            _drop_not_read,
            [("PF442", "/coverage/rpc_params"), ("PF433", "/coverage/rpc_params/total")],
        ),
        (_twice, [("PF434", "/coverage/rpc_params/uncovered/unresolved/{twice}")]),
        (
            _drop_params_schema,
            [("PF442", "/coverage/rpc_params/covered/{mail_send}")],
        ),
        (
            _unknown_payload_type,
            [("PF443", "/coverage/notifications/host_event_payloads/x.y")],
        ),
        (_uncovered_notification, [("PF443", "/schemas/notification.host.event.params")]),
    ],
)
def test_a_broken_params_or_notification_inventory_is_caught(
    tmp_path: Path, mutate: Callable[[Any], None], expected: list[tuple[str, str]]
) -> None:
    path = _mutated(tmp_path, mutate)
    report = assert_parity(lambda: pairling_fast.check_wire_schema(path))
    mail_send = bundle("0.60.0")["coverage"]["rpc_params"]["covered"].index("mail.send")
    first = bundle("0.60.0")["coverage"]["rpc_params"]["not_read"][0]
    twice = bisect.bisect(
        bundle("0.60.0")["coverage"]["rpc_params"]["uncovered"]["unresolved"], first
    )
    wanted = [
        (code, pointer.format(mail_send=mail_send, twice=twice)) for code, pointer in expected
    ]
    assert [(f.code, f.pointer) for f in report.findings] == wanted


# ---------------------------------------------------------------------------------------------
# Catalog identities (car-inference 0.58.0 catalog_identity.rs and its JCS vectors)


def _utf16(row: Any) -> bytes:
    return str(row["model"]["id"]).encode("utf-16-be", "surrogatepass")


def _snapshot(rows: list[Any]) -> dict[str, Any]:
    """A snapshot as `CatalogSnapshot::new` builds it: rows sorted by id in UTF-16 order."""
    rows = sorted(rows, key=_utf16)
    return {"catalog_revision": digest_hex(rows), "models": rows}


def _fixture_model(model_id: str) -> dict[str, Any]:
    """catalog_identity.rs `tests::schema(id, id)` as serde serializes it (the vectors' row
    digests pin every member)."""
    return {
        "capabilities": ["generate"],
        "context_length": 32768,
        "cost": {
            "cache_read_input_per_mtok": None,
            "cache_write_input_per_mtok": None,
            "input_per_mtok": None,
            "output_per_mtok": None,
            "pricing_tiers": [],
            "ram_mb": None,
            "size_mb": None,
        },
        "deprecated": False,
        "family": "fixture",
        "id": model_id,
        "max_output_tokens": 4096,
        "name": model_id,
        "param_count": "",
        "performance": {"latency_p50_ms": None, "latency_p99_ms": None, "tokens_per_second": None},
        "provider": "test",
        "public_benchmarks": [],
        "quantization": None,
        "source": {
            "api_key_env": "TEST_API_KEY",
            "api_key_envs": [],
            "api_version": None,
            "endpoint": "https://example.test/v1",
            "protocol": "open_ai_compat",
            "type": "remote_api",
        },
        "supported_params": [],
        "tags": ["fixture"],
        "trust_tier": "curated",
        "version": "immutable-v1",
    }


def _as_serialized(model: dict[str, Any]) -> dict[str, Any]:
    """A `builtin_catalog.json` row as CAR serializes it: the serde defaults of car-inference
    0.58.0 src/schema.rs filled in (ModelSchema, CostModel, ProprietaryProtocol.wire) and the
    legacy `o_auth2_pkce` spelling written canonically, as catalog_identity.rs's test shows."""
    model = copy.deepcopy(model)
    model.setdefault("max_output_tokens", None)
    model.setdefault("trust_tier", "curated")
    model.setdefault("deprecated", False)
    for member in ("cache_read_input_per_mtok", "cache_write_input_per_mtok"):
        model["cost"].setdefault(member, None)
    model["cost"].setdefault("pricing_tiers", [])
    source = model["source"]
    if source["type"] == "proprietary":
        source["protocol"].setdefault("wire", "responses")
        if source["auth"]["type"] == "o_auth2_pkce":
            source["auth"]["type"] = "oauth2_pkce"
    return model


def _row(model: dict[str, Any]) -> dict[str, Any]:
    return {"model": model, "row_digest": digest_hex(model)}


def test_jcs_vectors_digest_as_car_does(backend: _backend.Engine) -> None:
    assert VECTORS["algorithm"] == "RFC 8785"
    for vector in VECTORS["canonical_vectors"]:
        value = json.loads(vector["input_json"])
        assert pairling_fast.canonicalize(value) == vector["canonical_json"].encode(), vector[
            "name"
        ]
        assert pairling_fast.digest(value) == f"sha256:{vector['sha256']}", vector["name"]
    # CAR refuses these ("outside the interoperable safe integer range"); so does PF005.
    for text in VECTORS["unsafe_integer_inputs"]:
        with pytest.raises(pairling_fast.CanonicalizationError, match="PF005"):
            pairling_fast.canonicalize(json.loads(text))


def _production_rows() -> list[dict[str, Any]]:
    return [
        {"model": v["model"], "row_digest": v["row_digest"]} for v in VECTORS["production_rows"]
    ]


def test_the_production_rows_pass_with_car_s_digests_and_revision() -> None:
    snapshot = _snapshot(_production_rows())
    assert snapshot["catalog_revision"] == VECTORS["catalog_revision"]
    report = assert_parity(
        lambda: pairling_fast.check_rpc_result(
            "models.catalog_snapshot", snapshot, car_version="0.58.0"
        )
    )
    assert report.findings == []


def test_the_unicode_order_vector_sorts_by_utf16_code_units() -> None:
    vector = VECTORS["unicode_catalog_order"]
    snapshot = _snapshot([_row(_fixture_model(i)) for i in vector["input_ids"]])
    expected = [(r["model_id"], r["row_digest"]) for r in vector["expected_rows"]]
    assert [(r["model"]["id"], r["row_digest"]) for r in snapshot["models"]] == expected
    assert snapshot["catalog_revision"] == vector["catalog_revision"]

    def check(value: Any) -> Callable[[], Report]:
        return lambda: pairling_fast.check_rpc_result(
            "models.catalog_snapshot", value, car_version="0.58.0"
        )

    assert assert_parity(check(snapshot)).findings == []
    # UTF-8 (code point) order is what CAR's own test rejects.
    swapped = {**snapshot, "models": snapshot["models"][::-1]}
    assert [(f.code, f.pointer) for f in assert_parity(check(swapped)).findings] == [
        ("PF407", "/models/1/model/id"),
        ("PF439", "/catalog_revision"),
    ]


def test_a_tampered_row_or_revision_is_caught() -> None:
    snapshot = _snapshot(_production_rows())
    revised = {**snapshot, "catalog_revision": "f" * 64}
    report = assert_parity(
        lambda: pairling_fast.check_rpc_result("models.catalog_snapshot", revised)
    )
    assert [(f.code, f.severity, f.pointer) for f in report.findings] == [
        ("PF439", "error", "/catalog_revision")
    ]
    tampered = copy.deepcopy(snapshot)
    tampered["models"][1]["model"]["context_length"] += 1
    report = assert_parity(
        lambda: pairling_fast.check_rpc_result("models.catalog_snapshot", tampered)
    )
    assert [(f.code, f.severity, f.pointer) for f in report.findings] == [
        ("PF409", "error", "/models/1/row_digest"),
        ("PF439", "error", "/catalog_revision"),
    ]


def test_the_default_filling_reproduces_car_s_production_rows() -> None:
    builtin = {model["id"]: model for model in BUILTIN_CATALOG}
    for vector in VECTORS["production_rows"]:
        serialized = _as_serialized(builtin[vector["model"]["id"]])
        assert canonicalize(serialized) == canonicalize(vector["model"])
        assert digest_hex(serialized) == vector["row_digest"]


def _builtin_snapshot() -> dict[str, Any]:
    return _snapshot([_row(_as_serialized(model)) for model in BUILTIN_CATALOG])


def test_car_s_builtin_catalog_passes_under_its_release() -> None:
    snapshot = _builtin_snapshot()
    assert len(snapshot["models"]) == 70
    report = assert_parity(
        lambda: pairling_fast.check_rpc_result(
            "models.catalog_snapshot", snapshot, car_version="0.58.0"
        )
    )
    assert report.findings == []


def test_the_seed_bundle_refuses_car_s_catalog_by_name() -> None:
    snapshot = _builtin_snapshot()
    report = assert_parity(
        lambda: pairling_fast.check_rpc_result(
            "models.catalog_snapshot", snapshot, car_version="seed"
        )
    )
    assert {f.code for f in report.findings} == {"PF101"}
    benchmarks = [f for f in report.findings if "/public_benchmarks/" in (f.pointer or "")]
    sources = [f for f in report.findings if (f.pointer or "").endswith("/model/source")]
    assert len(benchmarks) + len(sources) == len(report.findings)
    # public_benchmarks[].runs / spread: members the seed's BenchmarkScore does not allow.
    assert benchmarks and all("runs" in f.message for f in benchmarks)
    # The proprietary rows' protocol.wire (ProprietaryWire is new in 0.58.0).
    assert sources and all(
        snapshot["models"][int((f.pointer or "").split("/")[2])]["model"]["source"]["type"]
        == "proprietary"
        for f in sources
    )


def test_car_omits_benchmark_runs_it_did_not_measure() -> None:
    """CAR's schema lists BenchmarkScore.runs/spread as required, but car-inference skips them
    when None: the production row of claude-opus-4-8 has neither, and it passes."""
    row = next(
        v for v in VECTORS["production_rows"] if v["model"]["id"] == "anthropic/claude-opus-4-8"
    )
    assert set(row["model"]["public_benchmarks"][0]) == {
        "harness",
        "measured_at",
        "name",
        "score",
        "source_url",
    }
    required = bundle("0.58.0")["schemas"]["rpc.models.catalog_snapshot.result"]["definitions"][
        "BenchmarkScore"
    ]["required"]
    assert {"runs", "spread"} <= set(required)


@pytest.mark.parametrize("caller", ["host", "agent", "operator"])
def test_car_058_capabilities_list_results(caller: str) -> None:
    path = CAR_DATA / f"car-server-core-0.58.0.{caller}.capabilities.list.result.json"
    result = json.loads(path.read_text())
    for version in ("0.58.0", "0.60.0"):
        report = assert_parity(
            lambda: pairling_fast.check_rpc_result(
                "capabilities.list",
                result,
                car_version=version,  # noqa: B023 - called at once
            )
        )
        assert report.findings == [], version
    seed = assert_parity(
        lambda: pairling_fast.check_rpc_result("capabilities.list", result, car_version="seed")
    )
    operator_only = [
        f"/methods/{index}/role"
        for index, row in enumerate(result["methods"])
        if row["role"] == "operator_only"
    ]
    assert [(f.code, f.pointer) for f in seed.findings] == [("PF101", p) for p in operator_only]
    assert len(operator_only) == (0 if caller == "agent" else 9)


def test_capabilities_role_operator_only_is_a_0_58_role() -> None:
    result = {
        "caller_role": "owner",
        "count": 1,
        "methods": [{"method": "agents.chat", "role": "operator_only"}],
    }
    new = assert_parity(
        lambda: pairling_fast.check_rpc_result("capabilities.list", result, car_version="0.58")
    )
    assert new.findings == []
    old = assert_parity(
        lambda: pairling_fast.check_rpc_result("capabilities.list", result, car_version="seed")
    )
    assert [(f.code, f.pointer) for f in old.findings] == [("PF101", "/methods/0/role")]


# ---------------------------------------------------------------------------------------------
# Requests, notifications and bundle choice in transcripts


def test_car_060_session_is_checked_in_both_directions() -> None:
    report = assert_parity(lambda: pairling_fast.check_transcript(SESSION_060))
    assert [(f.code, f.severity, f.line) for f in report.findings] == [
        ("PF440", "info", 3),
        ("PF401", "info", 4),
        ("PF401", "info", 7),
        ("PF401", "info", 8),
    ]
    assert "as unresolved" in report.findings[0].message
    assert report.stats["params_validated"] == 4  # handshake, 2 x runs.cancel, host.event
    assert report.stats["car_version"] == "0.60.0"


@pytest.mark.parametrize("case", REJECTED_060, ids=lambda case: f"{case['method']}")
def test_params_car_060_refuses_are_errors(case: dict[str, Any]) -> None:
    report = assert_parity(
        lambda: pairling_fast.check_rpc_params(case["method"], case["params"], car_version="0.60")
    )
    assert report.findings
    assert {f.code for f in report.findings} == {"PF101"}


def _session_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SESSION_060.read_text().splitlines()]


def test_a_host_event_payload_is_checked_against_its_kind_s_type() -> None:
    messages = _session_lines()
    event = next(m for m in messages if m.get("method") == "host.event")
    event["params"]["payload"]["status"] = "maybe"
    lines = [json.dumps(m) for m in messages]
    report = assert_parity(lambda: pairling_fast.check_transcript(lines))
    wrong = [f for f in report.findings if f.code == "PF101"]
    assert [(f.pointer, f.line) for f in wrong] == [("/params/payload/status", 9)]


def test_unchecked_and_unknown_methods_are_reported_once_each() -> None:
    def message(method: str, request_id: int | None = None) -> str:
        line: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": {}}
        if request_id is not None:
            line["id"] = request_id
        return json.dumps(line)

    lines = [
        message("a2a.send"),
        message("a2a.send"),
        message("no.such.method", 1),
        message("no.such.method", 2),
        message("x.pushed"),
    ]
    report = assert_parity(lambda: pairling_fast.check_transcript(lines, car_version="0.60.0"))
    assert [(f.code, f.severity, f.line, f.pointer) for f in report.findings] == [
        ("PF440", "info", 1, "/method"),
        ("PF441", "warning", 3, "/method"),
        ("PF424", "warning", 3, "/id"),
        ("PF424", "warning", 4, "/id"),
        ("PF440", "info", 5, "/method"),
    ]
    messages = [f.message for f in report.findings]
    assert "typed_without_schema (Rust type A2aSendParams)" in messages[0]
    assert "not in the rpc_params inventory" in messages[1]
    assert "not inventory server-to-client notifications" in messages[4]


def test_check_rpc_params_names_the_category(backend: _backend.Engine) -> None:
    typed = pairling_fast.check_rpc_params("verify", {})
    assert [(f.code, f.severity) for f in typed.findings] == [("PF440", "info")]
    assert typed.stats == {
        "method": "verify",
        "coverage": "typed_without_schema",
        "car_version": "0.60.0",
    }
    assert pairling_fast.check_rpc_params("host.subscribe", {"x": 1}).findings == []
    assert pairling_fast.check_rpc_params("nope", {}).findings[0].code == "PF441"
    old = pairling_fast.check_rpc_params("mail.send", {}, car_version="0.58.0")
    assert [f.code for f in old.findings] == ["PF440"]
    assert "no params schemas" in old.findings[0].message
    with pytest.raises(ValueError, match="no bundled wire schema"):
        pairling_fast.check_rpc_params("mail.send", {}, car_version="9.9")


def test_the_handshake_release_and_the_schema_digest_choose_the_bundle() -> None:
    report = assert_parity(lambda: pairling_fast.check_transcript(EXAMPLE))
    assert report.findings == []
    assert report.stats["car_version"] == "0.58.0"


def test_an_explicit_car_version_wins_and_says_so() -> None:
    report = assert_parity(lambda: pairling_fast.check_transcript(EXAMPLE, car_version="0.60"))
    assert report.stats["car_version"] == "0.60.0"
    found = [(f.code, f.line, f.pointer) for f in report.findings]
    # CAR 0.60.0's handshake result has the protocol range a 0.58.0 daemon does not send.
    assert ("PF101", 2, "/result") in found
    assert ("PF444", 4, "/result/digest") in found


def test_an_unknown_schema_digest_is_a_located_warning() -> None:
    messages = [json.loads(line) for line in EXAMPLE.read_text().splitlines()]
    for message in messages:
        result = message.get("result")
        if isinstance(result, dict) and "digest_algorithm" in result:
            result["digest"] = "0" * 64
    lines = [json.dumps(m) for m in messages]
    report = assert_parity(lambda: pairling_fast.check_transcript(lines))
    unknown = [f for f in report.findings if f.code == "PF438"]
    assert [(f.severity, f.line, f.pointer) for f in unknown] == [("warning", 4, "/result/digest")]
    for version, (_file, digest) in PINNED.items():
        assert f"{version} {digest}" in unknown[0].message


# ---------------------------------------------------------------------------------------------
# Command line and configuration


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pairling_fast", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )


def test_schemas_command_lists_every_bundle() -> None:
    listing = _cli("schemas")
    assert listing.returncode == 0
    for version, (file, digest) in PINNED.items():
        assert f"wire-schema {version}\t{file}\tsha256:{digest}" in listing.stdout
    assert listing.stdout.rstrip().endswith("\tdefault")


def test_check_takes_a_car_version_and_params_files(tmp_path: Path) -> None:
    (tmp_path / "cancel.runs.cancel.params.json").write_text(
        json.dumps({"run_id": "r", "idempotency_key": "k", "reason": "stop", "extra": True})
    )
    (tmp_path / "session.jsonl").write_bytes(EXAMPLE.read_bytes())
    default = _cli("check", "--format", "json", str(tmp_path))
    report = json.loads(default.stdout)
    kinds = {Path(f["path"]).name: f["kind"] for f in report["files"]}
    assert kinds == {"cancel.runs.cancel.params.json": "rpc-params", "session.jsonl": "transcript"}
    assert default.returncode == 1
    pinned = _cli("check", "--car-version", "0.58", "--format", "json", str(tmp_path))
    files = {Path(f["path"]).name: f for f in json.loads(pinned.stdout)["files"]}
    assert [f["code"] for f in files["cancel.runs.cancel.params.json"]["findings"]] == ["PF440"]
    bad = _cli("check", "--car-version", "0.1", str(tmp_path))
    assert bad.returncode == 2
    assert "no bundled wire schema for CAR version" in bad.stderr
    (tmp_path / "pairling-fast.toml").write_text('car-version = "0.58.0"\n')
    configured = _cli("check", "--format", "json", str(tmp_path), cwd=tmp_path)
    assert json.loads(configured.stdout)["files"] == json.loads(pinned.stdout)["files"]


def test_closing_figures_per_inventory_category(backend: _backend.Engine) -> None:
    """Every one of CAR 0.60.0's 559 methods, through check_rpc_params: how many have their
    params validated against a schema, and how many are reported unchecked, per category."""
    coverage = bundle("0.60.0")["coverage"]["rpc_results"]
    methods = coverage["covered"] + coverage["uncovered"]
    counts: dict[str, int] = {}
    for method in methods:
        report = pairling_fast.check_rpc_params(method, {}, car_version="0.60.0")
        category = report.stats["coverage"]
        counts[category] = counts.get(category, 0) + 1
        unchecked = [f.code for f in report.findings if f.code in ("PF440", "PF441")]
        assert unchecked == (
            ["PF440"] if category in ("typed_without_schema", "unresolved") else []
        )
    assert counts == {
        "covered": 92,
        "not_read": 100,
        "typed_without_schema": 18,
        "unresolved": 349,
    }
