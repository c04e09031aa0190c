"""Counts of the JSON-Schema-Test-Suite cases each engine passes, per draft and part.

    python tests/schema_suite_counts.py

The same cases and verdicts as ``tests/test_schema_suite.py`` (the Rust core, the Python fallback
and jsonschema-rs); the known failures are listed there, in ``KNOWN_FAILURES``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from test_schema_suite import CASES, ENGINES, Case, verdict


def passes(engine: str, case: Case) -> bool:
    try:
        return verdict(engine, case) is case.valid
    except Exception:
        return False


def main() -> None:
    table: dict[tuple[str, str], list[int]] = {}
    failures: list[str] = []
    for case in CASES:
        part = "optional" if case.file.startswith("optional/") else "required"
        row = table.setdefault((case.draft, part), [0] * (len(ENGINES) + 1))
        row[-1] += 1
        for index, engine in enumerate(ENGINES):
            if passes(engine, case):
                row[index] += 1
            elif "-v" in sys.argv:
                failures.append(
                    f"{engine}\t{case.draft}/{case.file}/{case.group}/{case.description}"
                )
    print("draft\tpart\t" + "\t".join(ENGINES) + "\ttotal")
    for (draft, part), row in table.items():
        print(f"{draft}\t{part}\t" + "\t".join(str(count) for count in row))
    print("\n".join(failures))


if __name__ == "__main__":
    main()
