"""The code table (python/pairling_fast/codes.toml) is the one source of every finding code.

Three checks keep it so: emitting code in either backend names codes only through the table's
constants (no bare "PFnnn" outside unit tests), every code the table lists has a constant in both
languages under one name, and every finding the backends emit over the test corpora carries a
listed code with the severity the table gives it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pairling_fast import _backend, codes
from pairling_fast.codes import CODES, NAMES
from pairling_fast.generate.journal import generate_journal
from pairling_fast.paths import check_paths

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).with_name("data")
BARE_CODE = re.compile(r'"PF\d{3}"')
# Codes whose severity the emitter decides: the profile or the rule's own reading makes the same
# code an error in one place and a warning in another (docs/findings.md says where).
SEVERITY_VARIES: frozenset[str] = frozenset()


def _emitting_sources() -> list[Path]:
    rust = sorted((ROOT / "rust").rglob("*.rs"))
    python = sorted((ROOT / "python" / "pairling_fast").rglob("*.py"))
    return [*rust, *python]


def _without_unit_tests(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".rs":
        # Unit tests assert on the codes as they appear on the wire; that is their job.
        text = text.split("\n#[cfg(test)]\nmod tests", 1)[0]
    return text


@pytest.mark.parametrize("path", _emitting_sources(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_bare_code_strings_in_emitting_code(path: Path) -> None:
    assert not BARE_CODE.findall(_without_unit_tests(path)), (
        f"{path.name}: name codes through the codes.toml constants, not as string literals"
    )


def test_every_code_has_one_constant_in_both_languages() -> None:
    assert len(NAMES) == len(CODES)
    assert sorted(NAMES.values()) == sorted(CODES)
    for name, code in NAMES.items():
        assert getattr(codes, name) == code
    # build.rs derives the Rust constants from the same table; the extension was built from it.
    rust_tree = "\n".join(_without_unit_tests(p) for p in sorted((ROOT / "rust").rglob("*.rs")))
    for name in re.findall(r"codes::([A-Z_0-9]+)", rust_tree):
        assert name in NAMES, f"codes::{name} is not in codes.toml"


@pytest.fixture(scope="module")
def journals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Generated journals with planted defects, chained and not (the PF3xx codes)."""
    folder = tmp_path_factory.mktemp("journals")
    for chain in (False, True):
        lines, _ = generate_journal(400, seed=18, chain=chain, defects=60)
        (folder / f"chain-{chain}.jsonl").write_bytes(b"".join(lines))
    return folder


@pytest.mark.parametrize("profile", ["strict", "car-compatible"])
def test_emitted_codes_and_severities_come_from_the_table(
    backend: _backend.Engine, profile: str, journals: Path
) -> None:
    corpora = [DATA / "car", DATA / "maps", DATA / "oracle", ROOT / "tests" / "adversarial"]
    report = check_paths(
        [journals, *(p for p in corpora if p.exists())],
        profile=profile,
        max_findings=None,
        jobs=1,
    )
    emitted: dict[str, set[str]] = {}
    for result in report.files:
        for finding in result.findings:
            emitted.setdefault(finding.code, set()).add(finding.severity)
    # The journals alone plant some twenty kinds of defect; fewer means the scan went blind.
    assert len(emitted) >= 15, sorted(emitted)
    for code, severities in emitted.items():
        assert code in CODES, f"{code} is emitted but not in codes.toml"
        if code not in SEVERITY_VARIES:
            assert severities == {CODES[code].severity}, (code, severities)
