"""Differential check: Pairling's own map validator against ``check_map``, over our mutation corpus.

    python tests/interop/pairling_compare.py PAIRLING_HELPER_CHECKOUT [--backend rust|python]
        [--json OUT] [--show N]

``PAIRLING_HELPER_CHECKOUT`` is a checkout of Pairling's companion repository
(``mergimg0/pairling-helper``); its ``validate_capability_graph`` is loaded from there and run
here, never copied. Each case of ``tests/map_mutations.py`` goes to both; a map is rejected by
Pairling when the validator returns errors (or raises), by us when ``check_map`` reports an
error-severity finding. The table counts both accept / we reject only / they reject only / both
reject; every case in the middle two columns is listed with its reason (``explain``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from map_mutations import Case, corpus  # noqa: E402

import pairling_fast  # noqa: E402
from pairling_fast import _backend  # noqa: E402
from pairling_fast.generate.map import generate_map  # noqa: E402

VALIDATOR = Path("mac/companiond/providers/capability_graph.py")
VERDICTS = ("both accept", "we reject only", "they reject only", "both reject")


def load_validator(checkout: Path) -> ModuleType:
    """Pairling's capability_graph module, imported from the checkout (not copied)."""
    path = checkout / VALIDATOR
    spec = importlib.util.spec_from_file_location("pairling_capability_graph", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class Outcome(NamedTuple):
    case: Case
    theirs: list[str]
    ours: list[tuple[str, str | None, str]]

    @property
    def verdict(self) -> str:
        they, we = bool(self.theirs), bool(self.ours)
        return VERDICTS[2 * they + we] if they != we else VERDICTS[3 if we else 0]


def theirs(validator: ModuleType, case: Case) -> list[str]:
    try:
        errors: list[str] = validator.validate_capability_graph(
            case.document, operation_manifest=case.manifest
        )
    except Exception as error:  # Pairling's validator raising is its way of rejecting
        return [f"raised {type(error).__name__}: {error}"]
    return errors


def ours(case: Case) -> list[tuple[str, str | None, str]]:
    report = pairling_fast.check_map(case.document, manifest=case.manifest)
    return [(f.code, f.pointer, f.message) for f in report.errors]


# Why a case is still in a middle column: (explanation, predicate on the outcome). The first that
# matches explains it; docs/maps.md ("Differential check") gives the same list, empty today.
EXPLANATIONS: tuple[tuple[str, Any], ...] = ()


def explain(outcome: Outcome) -> str:
    for text, matches in EXPLANATIONS:
        if matches(outcome):
            return text
    return "UNEXPLAINED"


def compare(checkout: Path, backend: str) -> list[Outcome]:
    validator = load_validator(checkout)
    with _backend.selected(backend) as engine:
        return [
            Outcome(case, theirs(validator, case), ours(case))
            for case in corpus(engine.seal_map, generate_map)
        ]


def table(outcomes: list[Outcome]) -> dict[str, Any]:
    families = sorted({o.case.family for o in outcomes})
    counts = {
        family: Counter(o.verdict for o in outcomes if o.case.family == family)
        for family in families
    }
    total = Counter(o.verdict for o in outcomes)
    return {
        "cases": len(outcomes),
        "total": {verdict: total[verdict] for verdict in VERDICTS},
        "families": {f: {v: counts[f][v] for v in VERDICTS} for f in families},
        "differences": [
            {
                "case": o.case.name,
                "family": o.case.family,
                "verdict": o.verdict,
                "theirs": o.theirs[:3],
                "ours": [f"{code} {pointer}" for code, pointer, _ in o.ours[:3]],
                "why": explain(o),
            }
            for o in outcomes
            if o.verdict in VERDICTS[1:3]
        ],
    }


def disagreements() -> list[str]:
    """Cases on which the two backends differ (codes, severities, pointers, lines, schema
    pointers, and every message but PF101's, which each schema library words its own way)."""

    def seen(case: Case) -> list[tuple[Any, ...]]:
        report = pairling_fast.check_map(case.document, manifest=case.manifest)
        return [
            (
                f.code,
                f.severity,
                f.pointer,
                f.line,
                f.schema_pointer,
                f.code != "PF101" and f.message,
            )
            for f in report.findings
        ]

    with _backend.selected(_backend.BACKENDS[0]) as engine:
        cases = list(corpus(engine.seal_map, generate_map))
    found = {}
    for name in _backend.BACKENDS:
        with _backend.selected(name):
            found[name] = [seen(case) for case in cases]
    first, second = (found[name] for name in _backend.BACKENDS)
    return [case.name for case, a, b in zip(cases, first, second, strict=True) if a != b]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a checkout of mergimg0/pairling-helper")
    parser.add_argument("--backend", choices=_backend.BACKENDS, default=_backend.BACKENDS[0])
    parser.add_argument("--json", type=Path, help="write the whole table as JSON here")
    parser.add_argument("--show", type=int, default=20, help="differences to print (default 20)")
    parser.add_argument(
        "--agree", action="store_true", help="also check both backends agree on every case"
    )
    args = parser.parse_args(argv)
    if args.agree:
        differing = disagreements()
        print(f"backends disagree on {len(differing)} cases: {differing[: args.show]}")
    result = table(compare(args.checkout, args.backend))
    width = max(len(f) for f in result["families"]) + 2
    print(f"{'family':<{width}}" + "".join(f"{v:>18}" for v in VERDICTS))
    for family, counts in result["families"].items():
        print(f"{family:<{width}}" + "".join(f"{counts[v]:>18}" for v in VERDICTS))
    print(f"{'total':<{width}}" + "".join(f"{result['total'][v]:>18}" for v in VERDICTS))
    print(f"{result['cases']} cases, {len(result['differences'])} differences")
    for difference in result["differences"][: args.show]:
        print(f"- [{difference['verdict']}] {difference['case']}: {difference['why']}")
        print(f"    theirs: {difference['theirs']}  ours: {difference['ours']}")
    if args.json is not None:
        args.json.write_text(
            json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    unexplained = [d for d in result["differences"] if d["why"] == "UNEXPLAINED"]
    return 1 if unexplained or (args.agree and differing) else 0


if __name__ == "__main__":
    sys.exit(main())
