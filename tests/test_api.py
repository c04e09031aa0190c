"""The public facade: backend selection, build info, validators, reports — on both backends."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import pytest

import pairling_fast
from pairling_fast import (
    CanonicalizationError,
    Finding,
    Report,
    SchemaCompileError,
    ValidationError,
    Validator,
    schema_validator,
    schemas,
)
from pairling_fast import distributed as pfd
from pairling_fast._tables import read_table
from pairling_fast.journal.options import (
    ChainMode,
    JournalKeywords,
    JournalOptions,
    Payloads,
    Profile,
)
from pairling_fast.options import CheckKeywords, CheckOptions

ROOT = Path(__file__).resolve().parents[1]

# The spec files are copied verbatim from the spec; the wire bundle's exact bytes are digested by
# CAR (`digest.scope`), so any edit, even whitespace, changes behaviour. These are their digests.
SPEC_SHA256 = {
    "car-wire-schema.v1.json": ("b12a8c1ca823ed77300a06338992cbfbd63a6de92f9b3cd3c64e1bf61d5896d0"),
    "coding-agent-remote-control-capability-map.schema.json": (
        "8749a8a51b51bdf311baf7536cfee8c465749b1857bb46a2549a9c052e681509"
    ),
}

RPC_METHODS = [
    "capabilities.list",
    "infer",
    "models.catalog_snapshot",
    "server.handshake",
    "server.schema",
    "state.exists",
    "state.get",
    "state.keys",
    "state.set",
    "state.snapshot",
    "tools.cancel",
    "tools.list",
    "tools.poll",
    "tools.register",
    "tools.stream.subscribe",
    "tools.unregister",
]

GOOD_ACTION_RESULT = {
    "action_id": "a0",
    "status": "succeeded",
    "state_changes": {},
    "timestamp": "2026-12-02T14:21:11.877945340Z",
}


def test_spec_files_are_verbatim_copies() -> None:
    for name, expected in SPEC_SHA256.items():
        digest = hashlib.sha256((ROOT / "schemas" / name).read_bytes()).hexdigest()
        assert digest == expected, f"schemas/{name} differs from the spec it was copied from"
        packaged = Path(pairling_fast.__file__).with_name("_schemas") / name
        assert packaged.read_bytes() == (ROOT / "schemas" / name).read_bytes()


def test_bundled_ids(backend: object) -> None:
    ids = schemas.ids()
    assert ids == sorted(ids)
    expected = {"pairling.capability-map.2.0.0", "car.journal.event", "car.type.action_result"}
    expected |= {f"car.rpc.{method}.result" for method in RPC_METHODS}
    assert expected <= set(ids)
    # The capability map and every schema of the default bundle, CAR 0.60.0's (120 schemas).
    assert len(ids) == 121
    for schema_id in ids:
        assert schema_validator(schema_id) is schema_validator(schema_id)  # compiled once
        assert isinstance(schemas.schema(schema_id), dict)


def test_unknown_schema_id(backend: object) -> None:
    with pytest.raises(KeyError):
        schema_validator("car.rpc.nope.result")


def test_backend_attribute_follows_fixture(backend: object) -> None:
    assert pairling_fast.backend in ("rust", "python")
    assert pairling_fast.__build__["backend"] == pairling_fast.backend


def test_build_info_names_crate_versions() -> None:
    build = pairling_fast.__build__
    assert build["version"] == pairling_fast.__version__
    assert build["core"]["dependencies"]["jsonschema"] == "0.61.2"


def test_build_info_says_whether_the_core_is_profile_guided() -> None:
    guided = pairling_fast.__build__["core"]["profile_guided"]
    assert isinstance(guided, bool)
    # Set where the core under test was built with the release's profile (docs/release.md).
    if os.environ.get("PAIRLING_FAST_PGO_PROFILE"):
        assert guided


def test_digest_formats(backend: object) -> None:
    value = {"b": [1, 2.5, None], "a": "é"}
    hex_digest = pairling_fast.digest_hex(value)
    assert len(hex_digest) == 64 and int(hex_digest, 16) >= 0
    assert pairling_fast.digest(value) == "sha256:" + hex_digest
    assert hex_digest == hashlib.sha256(pairling_fast.canonicalize(value)).hexdigest()


def test_validator_findings(backend: object) -> None:
    validator = schema_validator("car.type.action_result")
    assert validator.is_valid(GOOD_ACTION_RESULT)
    bad = dict(GOOD_ACTION_RESULT, status="sometimes", extra=1)
    findings = list(validator.iter_errors(bad))
    assert [(f.code, f.pointer, f.schema_pointer) for f in findings] == [
        ("PF101", "", "/additionalProperties"),
        ("PF101", "/status", "/definitions/ActionStatus/enum"),
    ]
    assert all(f.severity == "error" for f in findings)
    with pytest.raises(ValidationError) as caught:
        validator.validate(bad)
    assert caught.value.findings == findings
    assert isinstance(caught.value, ValueError)


def test_validator_rejects_values_outside_the_json_model(backend: object) -> None:
    validator = schema_validator("car.type.action_result")
    bad = dict(GOOD_ACTION_RESULT, duration_ms=float("nan"))
    assert not validator.is_valid(bad)
    [finding] = validator.iter_errors(bad)
    assert (finding.code, finding.pointer) == ("PF006", "/duration_ms")


def test_validate_json_parses_in_the_engine(backend: object) -> None:
    validator = schema_validator("car.type.action_result")
    assert validator.validate_json(json.dumps(GOOD_ACTION_RESULT).encode()).ok
    report = validator.validate_json(b'{"action_id": "a", "action_id": "b"}')
    assert [(f.code, f.pointer) for f in report.findings] == [("PF002", "/action_id")]
    report = validator.validate_json(b'{"action_id": ')
    [finding] = report.findings
    assert (finding.code, finding.line) == ("PF001", 1)


def test_user_schema_formats_follow_the_draft(backend: object) -> None:
    date_time = {"type": "string", "format": "date-time"}
    draft7 = Validator({"$schema": "http://json-schema.org/draft-07/schema#", **date_time})
    draft2020 = Validator({"$schema": "https://json-schema.org/draft/2020-12/schema", **date_time})
    assert not draft7.is_valid("yesterday")
    assert draft2020.is_valid("yesterday")
    assert not Validator(date_time, validate_formats=True).is_valid("yesterday")


def test_remote_ref_is_refused_at_compile_time(backend: object) -> None:
    with pytest.raises(SchemaCompileError) as caught:
        Validator({"$ref": "https://example.com/schema.json"})
    assert caught.value.code == "PF103"
    served = Validator(
        {"$ref": "https://example.com/schema.json"},
        resources={"https://example.com/schema.json": {"type": "integer"}},
    )
    assert served.is_valid(3) and not served.is_valid("3")


def test_validators_pickle(backend: object) -> None:
    user = Validator({"type": "array", "items": {"type": "integer"}})
    bundled = schema_validator("car.journal.event")
    for validator in (user, bundled):
        clone = pickle.loads(pickle.dumps(validator))
        assert clone.is_valid([1, 2]) == validator.is_valid([1, 2])
    assert pickle.loads(pickle.dumps(bundled)) is bundled


def test_report_json_shape() -> None:
    finding = Finding("PF101", "error", "bad", path="a.json", pointer="/x", schema_pointer="/type")
    report = Report(findings=[finding], stats={"n": 1})
    data = json.loads(report.to_json())
    assert data == {
        "report_version": 1,
        "ok": False,
        "findings": [
            {
                "code": "PF101",
                "severity": "error",
                "message": "bad",
                "path": "a.json",
                "line": None,
                "pointer": "/x",
                "schema_pointer": "/type",
                "column": None,
                "best_match": None,
            }
        ],
        "stats": {"n": 1},
    }
    assert Finding.from_dict(data["findings"][0]) == finding
    assert Report(findings=[Finding("PF999", "warning", "w")]).ok
    assert Report().ok and Report(findings=[]).ok
    assert not Report(findings=[Finding("PF999", "warning", "w"), finding]).ok


def test_canonicalization_error_is_a_value_error(backend: object) -> None:
    with pytest.raises(ValueError) as caught:
        pairling_fast.canonicalize({"a": float("inf")})
    assert isinstance(caught.value, CanonicalizationError)
    assert "PF006" in str(caught.value) and "/a" in str(caught.value)


def _run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )


def test_environment_selects_the_fallback() -> None:
    result = _run_python(
        "import pairling_fast; print(pairling_fast.backend)", PAIRLING_FAST_BACKEND="python"
    )
    assert result.stdout.strip() == "python" and result.returncode == 0


def test_missing_extension_falls_back_with_one_warning() -> None:
    code = (
        "import sys; sys.modules['pairling_fast._core'] = None\n"
        "import pairling_fast; print(pairling_fast.backend)"
    )
    result = _run_python(code, PAIRLING_FAST_BACKEND="")
    assert result.stdout.strip() == "python"
    warning_lines = [line for line in result.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warning_lines) == 1 and "fallback" in warning_lines[0]


@pytest.mark.parametrize(
    ("keywords", "options"), [(JournalKeywords, JournalOptions), (CheckKeywords, CheckOptions)]
)
def test_the_keywords_are_the_options_fields(keywords: Any, options: Any) -> None:
    """The journal checks take ``**keywords: Unpack[JournalKeywords]`` and build
    ``JournalOptions(**keywords)``, ``check_paths`` likewise ``CheckOptions``: a name in one list
    and not the other would be a keyword mypy refuses or an option no call can set. The derived
    fields (the resolved release, the journal options) are no keyword."""
    fields = [field.name for field in dataclasses.fields(options) if field.init]
    assert list(keywords.__annotations__) == fields


def test_the_defaults_come_from_the_one_table() -> None:
    """journal_defaults.toml's names are choices of their types, and both options objects (and
    the command line, which leaves them unset) default to them."""
    table = read_table("journal_defaults.toml")
    for name, kind in (("chain", ChainMode), ("profile", Profile), ("payloads", Payloads)):
        assert table[name] in get_args(kind)
        assert getattr(JournalOptions(), name) == table[name]
    assert CheckOptions().journal == JournalOptions(max_findings=table["max_findings"])
    assert CheckOptions().payloads == table["payloads"]


def test_car_version_is_resolved_when_the_options_are_built() -> None:
    options = CheckOptions(car_version="0.58")
    assert options.car_version == "0.58" and options.journal.release == "0.58.0"
    assert options.wire_release == "0.58.0" and CheckOptions().wire_release is None
    assert JournalOptions().release == pairling_fast.schemas.bundles()[-1].car_version
    assert pickle.loads(pickle.dumps(options)).journal.release == "0.58.0"
    with pytest.raises(ValueError, match=r"no bundled wire schema for CAR version '0\.59'"):
        CheckOptions(car_version="0.59")
    with pytest.raises(ValueError, match="payloads"):
        CheckOptions(payloads="sometimes")  # type: ignore[arg-type]


def test_check_paths_takes_the_options_or_their_keywords() -> None:
    examples = ROOT / "examples"
    options = CheckOptions(max_findings=1, payloads="error")
    by_object = pairling_fast.check_paths([examples], options)
    by_keywords = pairling_fast.check_paths([examples], max_findings=1, payloads="error")
    changed = pairling_fast.check_paths([examples], CheckOptions(payloads="error"), max_findings=1)
    assert by_object.to_json() == by_keywords.to_json() == changed.to_json()
    assert by_object.max_findings == 1 and any(file.not_listed for file in by_object.files)


@pytest.mark.parametrize(
    "call",
    [
        lambda: pairling_fast.check_journal(b"{}\n", chian="off"),
        lambda: pairling_fast.JournalStream(chian="off"),
        lambda: pfd.journal_reports([], None, chian="off"),
        lambda: pfd.check_journal_on_cluster("events.jsonl", None, chian="off"),
        lambda: pfd.check_journal_paths_on_cluster([], None, chian="off"),
    ],
)
def test_an_unknown_journal_keyword_is_a_type_error(call: Any) -> None:
    with pytest.raises(TypeError, match="chian"):
        call()
