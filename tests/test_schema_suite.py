"""The JSON-Schema-Test-Suite (required tests of draft 7 and draft 2020-12) on both backends.

Deliberately skipped, on the Python backend only (the Rust core passes them):

- draft2020-12 vocabulary.json, the two groups using a custom meta-schema
  (``http://localhost:1234/draft2020-12/metaschema-*.json``): python-jsonschema picks its
  validator from a known ``$schema`` only, so an unknown one is PF103 there.
- draft2020-12 pattern.json / patternProperties.json, "... Unicode property escape ...":
  Python's ``re`` has no ``\\p{...}`` classes, so the schema is PF102 (invalid regex) there.

Remote ``$ref``s (``http://localhost:1234/...``) are served from the suite's ``remotes/`` folder
through ``resources``; nothing is fetched.

The error triples (pointer, schema_pointer, keyword) of the two backends are compared on every
invalid case too; the known exceptions are in ``TRIPLES_DIFFER``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from pairling_fast import _backend

SUITE = Path(__file__).with_name("data") / "JSON-Schema-Test-Suite"
REMOTE_BASE = "http://localhost:1234/"
# The suite's schemas leave `$schema` out: the folder names the draft.
DIALECTS = {
    "draft7": "http://json-schema.org/draft-07/schema#",
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
}

_CUSTOM_METASCHEMA = "python-jsonschema cannot validate under a custom meta-schema (PF103)"
_UNICODE_PROPERTY = "Python's re has no \\p{...} classes (PF102)"
SKIPPED_ON_PYTHON = {
    (
        "draft2020-12",
        "vocabulary.json",
        "schema that uses custom metaschema with with no validation vocabulary",
    ): _CUSTOM_METASCHEMA,
    (
        "draft2020-12",
        "vocabulary.json",
        "ignore unrecognized optional vocabulary",
    ): _CUSTOM_METASCHEMA,
    (
        "draft2020-12",
        "pattern.json",
        "pattern with Unicode property escape requires unicode mode",
    ): _UNICODE_PROPERTY,
    (
        "draft2020-12",
        "patternProperties.json",
        "patternProperties with Unicode property escape",
    ): _UNICODE_PROPERTY,
}
# Same validity, different errors: python-jsonschema does not report `unevaluatedProperties`
# next to a failing `oneOf` here, jsonschema-rs does.
TRIPLES_DIFFER = {
    ("draft2020-12", "unevaluatedProperties.json", "dynamic evalation inside nested refs"),
}


class Case(NamedTuple):
    draft: str
    file: str
    group: str
    description: str
    schema: Any
    data: Any
    valid: bool


@cache
def remotes() -> dict[str, Any]:
    folder = SUITE / "remotes"
    return {
        REMOTE_BASE + path.relative_to(folder).as_posix(): json.loads(path.read_text("utf-8"))
        for path in sorted(folder.rglob("*.json"))
    }


def suite_cases() -> list[Case]:
    cases = []
    for draft, dialect in DIALECTS.items():
        for path in sorted((SUITE / "tests" / draft).glob("*.json")):
            for group in json.loads(path.read_text("utf-8")):
                schema = group["schema"]
                if isinstance(schema, dict) and "$schema" not in schema:
                    schema = {"$schema": dialect, **schema}
                for test in group["tests"]:
                    cases.append(
                        Case(
                            draft,
                            path.name,
                            group["description"],
                            test["description"],
                            schema,
                            test["data"],
                            test["valid"],
                        )
                    )
    return cases


def case_id(case: Case) -> str:
    return f"{case.draft}/{case.file}/{case.group}/{case.description}"


CASES = suite_cases()


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_suite_case(backend: _backend.Engine, case: Case) -> None:
    reason = SKIPPED_ON_PYTHON.get((case.draft, case.file, case.group))
    if reason is not None and _backend.active_name() == "python":
        pytest.skip(reason)
    compiled = backend.compile_schema(case.schema, None, remotes())
    assert compiled.is_valid(case.data) is case.valid
    assert (not compiled.errors(case.data)) is case.valid


def _triples(engine: _backend.Engine, case: Case) -> list[tuple[str, str, str]]:
    errors = engine.compile_schema(case.schema, None, remotes()).errors(case.data)
    return [(pointer, schema_pointer, keyword) for pointer, schema_pointer, keyword, _ in errors]


INVALID_CASES = [
    case
    for case in CASES
    if not case.valid
    and (case.draft, case.file, case.group) not in SKIPPED_ON_PYTHON
    and (case.draft, case.file, case.group) not in TRIPLES_DIFFER
]


@pytest.mark.parametrize("case", INVALID_CASES, ids=case_id)
def test_backends_report_the_same_error_triples(case: Case) -> None:
    pytest.importorskip("pairling_fast._core", reason="the Rust core is not built")
    assert _triples(_backend.engine("rust"), case) == _triples(_backend.engine("python"), case)
