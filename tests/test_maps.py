"""Capability maps: every rule fires on its broken twin, only there, on both backends."""

from __future__ import annotations

import argparse
import copy
import json
import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from map_mutations import corpus
from map_twins import EXAMPLE, MANIFEST, TWINS, Twin, broken, example, manifest, twin_manifest

import pairling_fast
from pairling_fast import MapInvalidError, _backend, check_map, seal_map, write_sealed
from pairling_fast.codes import (
    CODES,
    MAP_DIFF_DIGEST_REVIEW,
    MAP_DIFF_LOOSENING,
    MAP_DIFF_NEUTRAL,
    MAP_DIFF_TIGHTENING,
)
from pairling_fast.generate import map as generate
from pairling_fast.generate.map import generate_map
from pairling_fast.report import Report

# The map check's codes; `diff`'s (PF270-PF273, MAP_DIFF_*) judge a change between two maps.
MAP_DIFF_CODES = {MAP_DIFF_LOOSENING, MAP_DIFF_TIGHTENING, MAP_DIFF_NEUTRAL, MAP_DIFF_DIGEST_REVIEW}
MAP_CODES = sorted(code for code in CODES if code.startswith("PF2") and code not in MAP_DIFF_CODES)
DOCS = Path(__file__).resolve().parents[1] / "docs"


def located(report: Report) -> list[tuple[Any, ...]]:
    """What must be identical across backends: everything but the message."""
    return [(f.code, f.severity, f.pointer, f.line, f.schema_pointer) for f in report.findings]


def worded(report: Report) -> list[str]:
    """The messages, but for PF101's (worded by each backend's schema library)."""
    return [f.message for f in report.findings if f.code != "PF101"]


def on_both(source: Any, reviewed: Any = None) -> tuple[Report, Report]:
    reports = []
    for name in _backend.BACKENDS:
        with _backend.selected(name):
            reports.append(check_map(copy.deepcopy(source), manifest=reviewed))
    return reports[0], reports[1]


def test_example_map_is_clean(backend: _backend.Engine) -> None:
    report = check_map(EXAMPLE)
    assert report.findings == []
    assert report.stats["digests"] == {"verified": 11, "mismatched": 0, "unchecked": 0}
    assert report.stats["collections"]["operation_bindings"] == 11
    assert report.stats["schema_violations"] == 0


@pytest.mark.parametrize("twin", TWINS, ids=[f"{t.code}-{t.name}" for t in TWINS])
def test_twin_fires_its_rule_and_nothing_else(backend: _backend.Engine, twin: Twin) -> None:
    document = broken(twin, backend.seal_map)
    report = check_map(document, manifest=twin_manifest(twin))
    assert [(f.code, f.pointer) for f in report.findings] == [
        (twin.code, pointer) for pointer in twin.pointers
    ]
    assert all(f.severity == CODES[twin.code].severity for f in report.findings)


@pytest.mark.parametrize("twin", TWINS, ids=[f"{t.code}-{t.name}" for t in TWINS])
def test_twin_findings_identical_on_both_backends(twin: Twin) -> None:
    with _backend.selected("python") as engine:
        document = broken(twin, engine.seal_map)
    rust, python = on_both(document, twin_manifest(twin))
    assert rust.to_dict() == python.to_dict()


def test_example_map_is_clean_with_its_manifest(backend: _backend.Engine) -> None:
    assert check_map(EXAMPLE, manifest=MANIFEST).findings == []
    assert check_map(EXAMPLE, manifest=MANIFEST.read_bytes()).findings == []
    assert check_map(example(), manifest=manifest()).findings == []


def test_unparsable_manifest_raises(backend: _backend.Engine, tmp_path: Path) -> None:
    bad = tmp_path / "manifest.json"
    bad.write_text('{"operations": [', encoding="utf-8")
    with pytest.raises(ValueError):
        check_map(EXAMPLE, manifest=bad)
    with pytest.raises(OSError):
        check_map(EXAMPLE, manifest=tmp_path / "missing.json")


def test_renamed_provider_is_one_error_with_its_references(backend: _backend.Engine) -> None:
    document = example()
    document["providers"][0]["provider_id"] = "northwind"
    report = check_map(backend.seal_map(document))
    assert [(f.code, f.pointer) for f in report.errors] == [
        ("PF204", "/implementations/0/provider_id")
    ]
    assert "9 references" in report.errors[0].message


def test_a_1_0_0_map_is_named_not_skipped(backend: _backend.Engine) -> None:
    document = {"schema_version": "1.0.0", "observed_at": "2026-08-05T00:00:00Z", "agents": []}
    report = check_map(document)
    assert [(f.code, f.pointer) for f in report.findings] == [("PF253", "/schema_version")]
    assert "'1.0.0'" in report.findings[0].message


def test_lints_never_are_errors() -> None:
    lints = ("PF202", "PF206", "PF208", "PF222", "PF223", "PF224", "PF225", "PF226", "PF227")
    assert {CODES[code].severity for code in lints} <= {"warning", "info"}
    assert all("pairling_fast's own" in CODES[code].description for code in lints)


def test_every_map_code_has_a_twin() -> None:
    assert sorted({twin.code for twin in TWINS}) == MAP_CODES


def test_every_map_code_is_documented() -> None:
    text = (DOCS / "maps.md").read_text(encoding="utf-8")
    assert [code for code in MAP_CODES if f"`{code}`" not in text] == []


def test_digest_mismatch_shows_expected_and_recorded(backend: _backend.Engine) -> None:
    document = example()
    recorded = document["operation_bindings"][3]["semantic_digest"]
    document["operation_bindings"][3]["operation_id"] = "session.approval.respond"
    expected = seal_map(document)["operation_bindings"][3]["semantic_digest"]
    (finding,) = check_map(document).findings
    assert finding.message == f"semantic_digest mismatch: expected {expected}, found {recorded}"


def test_semantic_digest_is_sha256_of_jcs_without_the_digest(backend: _backend.Engine) -> None:
    binding = example()["operation_bindings"][0]
    content = {key: value for key, value in binding.items() if key != "semantic_digest"}
    assert binding["semantic_digest"] == pairling_fast.digest(content)


def test_seal_round_trip(backend: _backend.Engine) -> None:
    document = example()
    for binding in document["operation_bindings"]:
        binding["semantic_digest"] = "sha256:" + "0" * 64
    assert {f.code for f in check_map(document).findings} == {"PF221"}
    sealed = seal_map(document)
    assert check_map(sealed).findings == []
    assert sealed == example()
    assert document["operation_bindings"][0]["semantic_digest"] == "sha256:" + "0" * 64


def test_seal_refuses_an_invalid_map_with_its_findings(backend: _backend.Engine) -> None:
    document = example()
    document["operation_bindings"][2]["implementation_id"] = "northwind_cli.2_5"
    with pytest.raises(MapInvalidError) as raised:
        seal_map(document)
    assert [(f.code, f.pointer) for f in raised.value.findings] == [
        ("PF212", "/operation_bindings/2/implementation_id"),
        ("PF221", "/operation_bindings/2/semantic_digest"),
    ]
    assert isinstance(raised.value, pairling_fast.ValidationError)
    assert "PF212" in str(raised.value)


def test_seal_keeps_warnings(backend: _backend.Engine) -> None:
    orphan = next(twin for twin in TWINS if twin.code == "PF227")
    document = broken(orphan, backend.seal_map)
    assert {f.code for f in check_map(seal_map(document)).findings} == {"PF227"}


def test_integrity_runs_on_schema_invalid_maps_identically() -> None:
    document = example()
    document["providers"][1] = "tern_sdk"
    document["transports"] = {"not": "an array"}
    document["capabilities"][0]["implementation_ids"] = [7, None, "northwind_cli.9"]
    document["operation_bindings"][1]["capability_ids"] = "northwind_cli.turn.send_prompt"
    document["operation_bindings"][4] = []
    document["evidence_claims"][3]["subject_type"] = 12
    del document["operation_bindings"][6]["semantic_digest"]
    rust, python = on_both(document)
    assert located(rust) == located(python)
    assert rust.stats == python.stats
    codes = {f.code for f in rust.findings}
    assert {"PF101", "PF204", "PF205", "PF209", "PF227"} <= codes
    assert rust.stats["digests"]["unchecked"] == 2


@pytest.mark.parametrize("collection", ["implementations", "capabilities", "operation_bindings"])
@pytest.mark.parametrize("wrong", [None, 0, "text", [], {}, True])
def test_wrong_types_never_crash_and_agree(collection: str, wrong: Any) -> None:
    base = example()
    for field in list(base[collection][0]):
        document = copy.deepcopy(base)
        document[collection][0][field] = wrong
        rust, python = on_both(document)
        assert located(rust) == located(python), field
        assert rust.stats == python.stats, field


def test_findings_are_in_document_order(backend: _backend.Engine) -> None:
    document = example()
    for binding in document["operation_bindings"]:
        binding["semantic_digest"] = "sha256:" + "f" * 64
    document["operation_bindings"][10]["capability_ids"].append("nowhere")
    document["providers"][0]["display_name"] = ""
    pointers = [f.pointer for f in check_map(document).findings]
    assert pointers[0] == "/providers/0/display_name"
    assert pointers[-2:] == [
        "/operation_bindings/10/capability_ids/1",
        "/operation_bindings/10/semantic_digest",
    ]
    assert pointers[1:11] == [f"/operation_bindings/{i}/semantic_digest" for i in range(10)]


def test_sources_bytes_dict_and_path_agree(backend: _backend.Engine, tmp_path: Path) -> None:
    document = broken(TWINS[0], backend.seal_map)
    path = tmp_path / "map.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    from_path = check_map(path)
    from_str_path = check_map(str(path))
    from_bytes = check_map(path.read_bytes())
    from_dict = check_map(document)
    assert {f.path for f in from_path.findings} == {str(path)}
    assert from_str_path.findings == from_path.findings
    # A text locates its findings by line (as `check` shows them); a parsed dict has no lines.
    assert [replace(f, line=None) for f in from_bytes.findings] == from_dict.findings
    assert [f.line for f in from_bytes.findings] == [f.line for f in from_path.findings]
    assert all(f.line is not None for f in from_bytes.findings if f.pointer is not None)
    assert [f.pointer for f in from_bytes.findings] == [f.pointer for f in from_path.findings]
    assert from_bytes.stats == from_path.stats


def test_unparsable_map_is_one_located_finding(backend: _backend.Engine, tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_bytes(b'{\n  "schema_version": "2.0.0",\n  "providers": [,]\n}')
    report = check_map(path)
    (finding,) = report.findings
    assert (finding.code, finding.path, finding.line) == ("PF001", str(path), 3)
    assert "line 3" in finding.message
    assert report.stats["collections"]["providers"] == 0


def test_duplicate_key_is_located_by_pointer(backend: _backend.Engine) -> None:
    text = b'{"providers": [{"provider_id": "a", "provider_id": "b"}]}'
    (finding,) = check_map(text).findings
    assert (finding.code, finding.pointer) == ("PF002", "/providers/0/provider_id")


def test_python_value_outside_json_is_a_finding(backend: _backend.Engine) -> None:
    document = example()
    document["exclusions"][0]["source_refs"] = {"a", "b"}
    (finding,) = check_map(document).findings
    assert (finding.code, finding.pointer) == ("PF009", "/exclusions/0/source_refs")


def test_str_json_text_is_refused_as_a_missing_path(backend: _backend.Engine) -> None:
    with pytest.raises(OSError):
        check_map('{"not": "a path"}')
    with pytest.raises(TypeError):
        check_map(42)  # type: ignore[arg-type]


def test_write_sealed_to_another_file(backend: _backend.Engine, tmp_path: Path) -> None:
    source = tmp_path / "in.json"
    document = example()
    document["operation_bindings"][0]["semantic_digest"] = "sha256:" + "1" * 64
    source.write_text(json.dumps(document), encoding="utf-8")
    before = source.read_bytes()
    written = write_sealed(source, tmp_path / "out.json")
    assert written == tmp_path / "out.json"
    assert source.read_bytes() == before
    assert check_map(written).findings == []
    assert json.loads(written.read_text(encoding="utf-8")) == example()


def test_write_sealed_in_place_keeps_mode_and_leaves_no_temp(
    backend: _backend.Engine, tmp_path: Path
) -> None:
    source = tmp_path / "map.json"
    document = example()
    document["operation_bindings"][4]["semantic_digest"] = "sha256:" + "2" * 64
    source.write_text(json.dumps(document), encoding="utf-8")
    os.chmod(source, 0o640)
    write_sealed(source, in_place=True)
    assert check_map(source).findings == []
    assert stat.S_IMODE(source.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.json"]


def test_write_sealed_refuses_invalid_map_and_writes_nothing(
    backend: _backend.Engine, tmp_path: Path
) -> None:
    source = tmp_path / "map.json"
    document = broken(TWINS[12], backend.seal_map)
    source.write_text(json.dumps(document), encoding="utf-8")
    before = source.read_bytes()
    with pytest.raises(MapInvalidError) as raised:
        write_sealed(source, in_place=True)
    assert raised.value.path == str(source)
    assert source.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.json"]


def test_write_sealed_needs_exactly_one_destination(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        write_sealed(EXAMPLE)
    with pytest.raises(ValueError):
        write_sealed(EXAMPLE, tmp_path / "out.json", in_place=True)


@pytest.mark.parametrize("bindings", [1, 3, 37, 1200])
def test_generated_maps_are_clean(backend: _backend.Engine, bindings: int) -> None:
    document = generate_map(bindings, seed=bindings)
    report = check_map(document)
    assert report.findings == []
    assert report.stats["collections"]["operation_bindings"] == bindings
    assert report.stats["digests"]["verified"] == bindings


def test_generator_is_deterministic_across_backends() -> None:
    maps = []
    for name in _backend.BACKENDS:
        with _backend.selected(name):
            maps.append(generate_map(50, seed=7))
    assert maps[0] == maps[1]
    assert maps[0] != generate_map(50, seed=8)
    with pytest.raises(ValueError):
        generate_map(0, seed=1)


def test_generate_cli_module_writes_a_clean_map(
    backend: _backend.Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    generate.add_arguments(parser)
    out = tmp_path / "generated.json"
    assert generate.run(parser.parse_args(["--bindings", "12", "--seed", "3", "-o", str(out)])) == 0
    assert check_map(out).findings == []
    assert generate.run(parser.parse_args(["--bindings", "12", "--seed", "3"])) == 0
    assert capsys.readouterr().out == out.read_text(encoding="utf-8")
    assert generate.run(parser.parse_args(["--bindings", "0"])) == 2
    assert "at least one" in capsys.readouterr().err


def test_binding_without_canonical_form_is_located_and_unchecked() -> None:
    document = example()
    document["operation_bindings"][1]["requires"][1]["max_age_seconds"] = 2**60
    rust, python = on_both(document)
    assert located(rust) == located(python)
    assert ("PF005", "/operation_bindings/1/requires/1/max_age_seconds") in [
        (f.code, f.pointer) for f in rust.findings
    ]
    assert rust.stats["digests"] == {"verified": 10, "mismatched": 0, "unchecked": 1}


def test_backends_agree_on_the_mutation_corpus() -> None:
    """Every 10th case of the rule families of the differential corpus (tests/map_mutations.py;
    `pairling_compare.py --agree` checks all of it): identical findings, messages included
    except for PF101, whose text each backend's schema library words its own way."""
    families = ("twin", "digest", "requirements", "retry", "release", "manifest")
    with _backend.selected("rust") as engine:
        cases = list(corpus(engine.seal_map, generate_map, families))[::10]
    for case in cases:
        rust, python = on_both(case.document, case.manifest)
        assert located(rust) == located(python), case.name
        assert worded(rust) == worded(python), case.name


@pytest.mark.parametrize("name", _backend.BACKENDS)
def test_check_with_manifest_on_the_command_line(name: str, tmp_path: Path) -> None:
    reviewed = manifest()
    reviewed["release_memberships"][0]["launch_config_digest"] = "sha256:" + "0" * 64
    changed = tmp_path / "manifest.json"
    changed.write_text(json.dumps(reviewed), encoding="utf-8")
    clean = run_cli(name, "check", str(EXAMPLE), "--manifest", str(MANIFEST), cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    done = run_cli(
        name, "check", str(EXAMPLE), "--manifest", str(changed), "-f", "json", cwd=tmp_path
    )
    assert done.returncode == 1
    findings = json.loads(done.stdout)["files"][0]["findings"]
    assert [(f["code"], f["pointer"]) for f in findings] == [
        ("PF259", "/implementations/0/release_membership/launch_config_digest")
    ]
    broken_manifest = tmp_path / "broken.json"
    broken_manifest.write_text("{", encoding="utf-8")
    for bad in (broken_manifest, tmp_path / "missing.json"):
        refused = run_cli(name, "check", str(EXAMPLE), "--manifest", str(bad), cwd=tmp_path)
        assert refused.returncode == 2
        assert refused.stderr.count("\n") == 1 and "--manifest" in refused.stderr


@pytest.mark.parametrize("name", _backend.BACKENDS)
def test_check_names_a_1_0_0_map_instead_of_skipping_it(name: str, tmp_path: Path) -> None:
    old = tmp_path / "capability-map.json"
    old.write_text(
        json.dumps(
            {
                "schema_version": "1.0.0",
                "observed_at": "2026-08-05T00:00:00Z",
                "evidence_policy": {"rule": "direct sources"},
                "agents": [{"id": "northwind_cli"}],
                "exclusions": [],
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    done = run_cli(name, "check", str(tmp_path), "-f", "json", cwd=tmp_path)
    assert done.returncode == 1
    (checked,) = json.loads(done.stdout)["files"]
    assert checked["kind"] == "map"
    assert [f["code"] for f in checked["findings"]] == ["PF253"]


def test_an_empty_eligibility_status_is_worded_alike() -> None:
    """Found by `pairling_compare.py --agree`: an empty status once read as a missing one."""
    document = example()
    document["providers"][0]["implementation_eligibility"]["status"] = ""
    rust, python = on_both(document)
    assert located(rust) == located(python)
    assert worded(rust) == worded(python)
    assert any("is '', not" in message for message in worded(rust))


# `format` is an annotation in 2020-12 and Pairling's validator does not assert it: a date-time
# that Python's datetime reads but RFC 3339 does not is a PF104 warning. What Python's datetime
# cannot hold, Pairling rejects (`datetime.fromisoformat` in validate_capability_graph): PF232.
@pytest.mark.parametrize(
    ("observed_at", "expected"),
    [
        ("2026-11-20T10:30Z", [("PF104", "warning")]),
        ("2026-11-20 10:30:00Z", [("PF104", "warning")]),
        ("2026-02-30T09:30:00Z", [("PF104", "warning"), ("PF232", "error")]),
        ("2026-11-20T24:00:00Z", [("PF104", "warning"), ("PF232", "error")]),
        ("2026-11-20T10:60:00Z", [("PF104", "warning"), ("PF232", "error")]),
        ("Z", [("PF104", "warning"), ("PF232", "error")]),
        ("2024-02-29T00:00:00Z", []),
    ],
)
def test_observed_at_format_is_a_warning_and_unreadable_dates_an_error(
    backend: _backend.Engine, observed_at: str, expected: list[tuple[str, str]]
) -> None:
    document = example()
    document["observed_at"] = observed_at
    report = check_map(document)
    assert sorted((f.code, f.severity) for f in report.findings) == expected
    assert all(f.pointer == "/observed_at" for f in report.findings)


def test_format_findings_become_errors_on_request(backend: _backend.Engine, tmp_path: Path) -> None:
    document = example()
    document["observed_at"] = "2026-11-20T10:30Z"
    path = tmp_path / "map.json"
    path.write_text(json.dumps(document))
    assert pairling_fast.check_paths([path]).ok
    strict = pairling_fast.check_paths([path], severities={"PF104": "error"})
    assert not strict.ok
    assert [(f.code, f.severity) for f in strict.files[0].findings] == [("PF104", "error")]
