"""CAR's event payload contracts (python/pairling_fast/car_payloads.toml, docs/journals.md): every
contract member dropped or retyped is found at its pointer, on both backends and on the Rust core's
fast path and full path alike; journals CAR wrote carry no payload finding; the option, the config
key and the CLI flag; a bundle that covers a kind itself replaces our contract for it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast._fallback.journal import car_payloads
from pairling_fast.generate.journal import generate_journal

ROOT = Path(__file__).resolve().parent.parent
CAR_JOURNALS = sorted((ROOT / "tests" / "data" / "car").glob("*.jsonl"))
RELEASES = ("0.58.0", "0.60.0")
PAYLOAD_CODES = {"PF360", "PF361", "PF362", "PF363", "PF364", "PF365"}
STAMP = "2026-01-01T00:00:00Z"

# A value of each class, and the first class a type admits (a value CAR could have written).
SAMPLES: dict[str, Any] = {
    "string": "s",
    "boolean": True,
    "null": None,
    "object": {"k": 1},
    "array": [1],
    "unsigned": 3,
    "negative": -3,
    "fraction": 1.5,
}
WRITTEN = {
    "any": "string",
    "string": "string",
    "boolean": "boolean",
    "null": "null",
    "object": "object",
    "array": "array",
    "number": "fraction",
    "integer": "negative",
    "unsigned": "unsigned",
}


def members_of(kind: str, release: str) -> list[car_payloads.Member]:
    """The members a kind's `data` is checked for under `release` (those of `*` included)."""
    return [
        member
        for contract in car_payloads.contracts()
        if release in contract.releases and contract.kind in (kind, "*")
        for member in contract.members
    ]


def kinds_with_contracts(release: str) -> list[str]:
    kinds = {c.kind for c in car_payloads.contracts() if release in c.releases} - {"*"}
    return sorted(kinds & set(pf.journal.event_kinds(release)))


def valid_data(kind: str, release: str) -> dict[str, Any]:
    """`data` with every member a contract names, each of a type CAR writes."""
    return {m.name: SAMPLES[WRITTEN[m.types[0]]] for m in members_of(kind, release)}


def event_line(kind: str, data: dict[str, Any]) -> bytes:
    event = {"kind": kind, "data": data, "timestamp": STAMP}
    return json.dumps(event, ensure_ascii=False).encode() + b"\n"


def mutation_corpus(release: str) -> tuple[bytes, set[tuple[int, str, str]]]:
    """One event per mutation (a member dropped, or given each type CAR does not write), with
    the finding each must give: (line, code, pointer)."""
    lines: list[bytes] = []
    expected: set[tuple[int, str, str]] = set()
    kinds = [*kinds_with_contracts(release), "state_changed"]  # state_changed: `*` only
    for kind in kinds:
        good = valid_data(kind, release)
        lines.append(event_line(kind, good))
        for member in members_of(kind, release):
            pointer = f"/data/{member.name}"
            if member.required:
                dropped = {k: v for k, v in good.items() if k != member.name}
                lines.append(event_line(kind, dropped))
                expected.add((len(lines), "PF360", pointer))
            for cls, value in SAMPLES.items():
                if any(cls in car_payloads._ADMITS[t] for t in member.types):
                    continue
                lines.append(event_line(kind, {**good, member.name: value}))
                expected.add((len(lines), "PF361", pointer))
    return b"".join(lines), expected


def payload_findings(report: pf.Report) -> set[tuple[int, str, str]]:
    return {
        (f.line or 0, f.code, f.pointer or "") for f in report.findings if f.code in PAYLOAD_CODES
    }


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("fast_path", ["1", "0"])
def test_every_dropped_or_retyped_member_is_found_at_its_pointer(
    backend: _backend.Engine, release: str, fast_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAIRLING_FAST_JOURNAL_FAST_PATH", fast_path)
    text, expected = mutation_corpus(release)
    assert len(expected) > 100, "the corpus covers every member of every contract"
    report = pf.check_journal(text, car_version=release, max_findings=None, lifecycle=False)
    assert payload_findings(report) == expected
    # Nothing else is wrong with the lines: the payload findings are the only findings.
    assert {f.code for f in report.findings} <= PAYLOAD_CODES
    assert all(f.severity == "warning" for f in report.findings)


@pytest.mark.parametrize("fast_path", ["1", "0"])
def test_a_member_named_with_escapes_is_the_member(
    backend: _backend.Engine, fast_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key is its decoded text: `tokens\\u005fin` and a raw-escaped twin are `tokens_in`, so
    the fast path may not skip a contract for a key it would have to decode."""
    monkeypatch.setenv("PAIRLING_FAST_JOURNAL_FAST_PATH", fast_path)
    stamp = '"timestamp":"2026-01-01T00:00:00Z"'
    text = (
        f'{{"kind":"inference_metered","data":{{"tokens\\u005fin":"x"}},{stamp}}}\n'
        f'{{"kind":"inference_metered","data":{{"to\\nkens":1,"tokens_out":"y"}},{stamp}}}\n'
    ).encode()
    report = pf.check_journal(text, lifecycle=False)
    assert payload_findings(report) == {
        (1, "PF361", "/data/tokens_in"),
        (2, "PF361", "/data/tokens_out"),
    }


def test_payloads_error_reports_errors_and_off_reports_nothing(backend: _backend.Engine) -> None:
    text, expected = mutation_corpus("0.60.0")
    as_errors = pf.check_journal(text, payloads="error", max_findings=None, lifecycle=False)
    renamed = {"PF360": "PF363", "PF361": "PF364"}
    assert payload_findings(as_errors) == {(n, renamed[c], p) for n, c, p in expected}
    assert not as_errors.ok
    assert pf.check_journal(text, payloads="off", max_findings=None, lifecycle=False).findings == []
    with pytest.raises(ValueError, match="payloads"):
        pf.check_journal(text, payloads="loud")  # type: ignore[arg-type]


def test_the_seed_bundle_has_no_contracts(backend: _backend.Engine) -> None:
    line = event_line("run_started", {})
    assert pf.check_journal(line, car_version="seed", lifecycle=False).findings == []


def car_events(path: Path) -> list[bytes]:
    """The events of one of CAR's fixtures: a journal, or self-heal records ``{"event", "path"}``
    (tests/data/car/SOURCE.md)."""
    events = []
    for line in path.read_bytes().splitlines():
        record = json.loads(line)
        event = record.get("event", record) if isinstance(record, dict) else record
        events.append(json.dumps(event).encode())
    return events


@pytest.mark.parametrize("path", CAR_JOURNALS, ids=lambda p: p.name)
def test_journals_car_wrote_break_no_contract(backend: _backend.Engine, path: Path) -> None:
    events = car_events(path)
    assert events
    for release in RELEASES:
        report = pf.check_journal(events, car_version=release, max_findings=None)
        assert report.stats["events"] == len(events)
        assert payload_findings(report) == set(), (release, report.findings[:3])


def test_generated_journals_break_no_contract(backend: _backend.Engine) -> None:
    lines, _ = generate_journal(1500, 11, chain=True)
    report = pf.check_journal(b"".join(lines), max_findings=None)
    assert payload_findings(report) == set()


def test_a_bundle_that_covers_a_kind_replaces_our_contract() -> None:
    """The fallback's half (the core's: car_payloads::tests); a bundle made for the test."""
    bundle = {
        "coverage": {"journal_event_payloads": {"covered": ["run_started"]}},
        "schemas": {
            car_payloads.covered_schema_name("run_started"): {
                "type": "object",
                "required": ["run_label"],
                "properties": {"run_label": {"type": "string"}},
            }
        },
    }
    rules = car_payloads.Payloads("0.58.0", bundle, ["run_started", "inference_metered"])
    assert rules.findings("run_started", {"run_label": "x"}, "warn", 1) == []
    [found] = rules.findings("run_started", {"run_label": 1}, "warn", 1)
    assert (found.code, found.line, found.pointer) == ("PF362", 1, "/data/run_label")
    [(code, *_)] = rules.findings("run_started", {}, "error", 1)
    assert code == "PF365"
    # Kinds the bundle does not cover keep the contracts.
    [(code, *_rest)] = rules.findings("inference_metered", {"agent": 1}, "warn", 1)
    assert code == "PF361"


def test_the_table_is_well_formed_and_cites_its_sources() -> None:
    table = car_payloads.contracts()
    assert {c.kind for c in table} >= {"*", "run_started", "proposal_received"}
    for contract in table:
        assert contract.sources and set(contract.releases) <= set(RELEASES), contract.kind
        for source in contract.sources:
            assert source.startswith("car-"), source
        for release in contract.releases:
            assert contract.kind == "*" or contract.kind in pf.journal.event_kinds(release)


def test_cli_and_config_take_the_option(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    journal.write_bytes(event_line("run_started", {"agent_id": "a"}))

    def check(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "pairling_fast", "check", str(journal), "--format"]
        return subprocess.run(
            [*command, "json", *args], capture_output=True, text=True, cwd=tmp_path, check=False
        )

    def codes(result: subprocess.CompletedProcess[str]) -> set[str]:
        report = json.loads(result.stdout)
        return {f["code"] for f in report["files"][0]["findings"]} & PAYLOAD_CODES

    assert codes(check()) == {"PF360"}
    assert check().returncode == 0
    errors = check("--payloads", "error")
    assert (codes(errors), errors.returncode) == ({"PF363"}, 1)
    assert codes(check("--payloads", "off")) == set()
    (tmp_path / "pairling-fast.toml").write_text('payloads = "error"\n')
    assert codes(check()) == {"PF363"}
    assert codes(check("--payloads", "warn")) == {"PF360"}
    (tmp_path / "pairling-fast.toml").write_text('payloads = "loud"\n')
    refused = check()
    assert refused.returncode == 2 and "payloads" in refused.stderr
