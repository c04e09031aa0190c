"""Our maps against Pairling's own map validator, run from a checkout of its repository.

Pairling's companion repository (``mergimg0/pairling-helper``) has no licence, so nothing of it is
in this repository: these tests import ``validate_capability_graph`` from a checkout named by the
``PAIRLING_HELPER`` environment variable and are skipped without one (``.ci/run`` clones it when
GitHub is reachable).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import ModuleType

import pytest
from map_twins import EXAMPLE, TWINS, Twin, broken, example, manifest, twin_manifest

from pairling_fast import _backend
from pairling_fast.codes import CODES
from pairling_fast.generate.map import generate_map

sys.path.insert(0, str(Path(__file__).resolve().parent / "interop"))
import pairling_compare

CHECKOUT = Path(os.environ.get("PAIRLING_HELPER", "/nonexistent"))
pytestmark = pytest.mark.skipif(
    not (CHECKOUT / pairling_compare.VALIDATOR).is_file(),
    reason="set PAIRLING_HELPER to a checkout of mergimg0/pairling-helper",
)


@pytest.fixture(scope="module")
def pairling() -> ModuleType:
    return pairling_compare.load_validator(CHECKOUT)


def test_pairling_accepts_the_example_with_and_without_its_manifest(pairling: ModuleType) -> None:
    assert EXAMPLE.is_file()
    assert pairling.validate_capability_graph(example()) == []
    assert pairling.validate_capability_graph(example(), operation_manifest=manifest()) == []


@pytest.mark.parametrize("bindings", [1, 37, 600])
def test_pairling_accepts_generated_maps(pairling: ModuleType, bindings: int) -> None:
    assert pairling.validate_capability_graph(generate_map(bindings, seed=bindings)) == []


@pytest.mark.parametrize("twin", TWINS, ids=[f"{t.code}-{t.name}" for t in TWINS])
def test_pairling_rejects_exactly_the_error_twins(pairling: ModuleType, twin: Twin) -> None:
    with _backend.selected("python") as engine:
        document = broken(twin, engine.seal_map)
    case = pairling_compare.Case("twin", "twin", document, twin_manifest(twin))
    errors = pairling_compare.theirs(pairling, case)
    assert bool(errors) == (CODES[twin.code].severity == "error"), errors


def test_differential_corpus_has_only_explained_differences() -> None:
    outcomes = pairling_compare.compare(CHECKOUT, _backend.BACKENDS[0])
    table = pairling_compare.table(outcomes)
    assert [d for d in table["differences"] if d["why"] == "UNEXPLAINED"] == []
    # A map Pairling rejects always gets an error from us.
    assert table["total"]["they reject only"] == 0
