"""The JSON-Schema-Test-Suite (drafts 4, 6, 7, 2019-09, 2020-12; required and optional tests) on
both backends and on jsonschema-rs.

Every case runs on three engines: the Rust core, the Python fallback and jsonschema-rs itself (the
``jsonschema_rs`` package, the oracle: our Rust core is built on the same crate). A case passes
when the engine's verdict is the suite's. The cases that do not pass on some engine are listed,
with the reason, in ``KNOWN_FAILURES`` below — the one place; they run as strict xfails, so the
list cannot go stale. ``python tests/schema_suite_counts.py`` prints the counts per draft and
engine.

Formats are asserted (``validate_formats=True``) for the ``optional/format/`` files, whose tests
assume it; everything else runs with the default (``None``: by draft, ``docs/formats.md``).

Remote ``$ref``s (``http://localhost:1234/...``) are served from the suite's ``remotes/`` folder
through ``resources``; nothing is fetched.

The two backends must also agree with each other on every case (the known failures included: the
same error code), and report the same error triples (pointer, schema_pointer, keyword) on every
invalid case; the known exceptions to the triples are in ``TRIPLES_DIFFER``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from pairling_fast import _backend
from pairling_fast.errors import CanonicalizationError, SchemaCompileError

SUITE = Path(__file__).with_name("data") / "JSON-Schema-Test-Suite"
REMOTE_BASE = "http://localhost:1234/"
# The suite's schemas leave `$schema` out: the folder names the draft.
DIALECTS = {
    "draft4": "http://json-schema.org/draft-04/schema#",
    "draft6": "http://json-schema.org/draft-06/schema#",
    "draft7": "http://json-schema.org/draft-07/schema#",
    "draft2019-09": "https://json-schema.org/draft/2019-09/schema",
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
}
ENGINES = ("rust", "python", "jsonschema_rs")
ORACLE = "jsonschema_rs"

_BOTH = frozenset({"rust", "python"})

_BIGNUM = (
    "integers beyond 64 bits are outside pairling_fast's value model (docs/limits.md): "
    "CanonicalizationError PF005 on both backends, where jsonschema-rs reads them as floats"
)
# (draft, file, group description, test description or None for the whole group) -> the engines a
# case fails on, and why.
KNOWN_FAILURES: dict[tuple[str, str, str, str | None], tuple[frozenset[str], str]] = {
    **{
        (draft, "optional/bignum.json", group, description): (_BOTH, _BIGNUM)
        for draft in DIALECTS
        for group, description in [
            ("integer", "a bignum is an integer"),
            ("integer", "a negative bignum is an integer"),
            ("number", "a bignum is a number"),
            ("number", "a negative bignum is a number"),
            ("string", "a bignum is not a string"),
            ("minimum integer comparison", "comparison works for very negative numbers"),
        ]
    },
}
# Same validity, different errors: in draft 4, jsonschema-rs reports only `multipleOf` for 1e308
# against `{"type": "integer", "multipleOf": 0.123456789}`, python-jsonschema `type` too.
TRIPLES_DIFFER = {
    ("draft4", "multipleOf.json", "float division = inf"),
}


class Case(NamedTuple):
    draft: str
    file: str
    group: str
    description: str
    schema: Any
    data: Any
    valid: bool
    validate_formats: bool | None


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
        folder = SUITE / "tests" / draft
        for path in sorted(folder.rglob("*.json")):
            file = path.relative_to(folder).as_posix()
            validate_formats = True if file.startswith("optional/format/") else None
            for group in json.loads(path.read_text("utf-8")):
                schema = group["schema"]
                if isinstance(schema, dict) and "$schema" not in schema:
                    schema = {"$schema": dialect, **schema}
                for test in group["tests"]:
                    cases.append(
                        Case(
                            draft,
                            file,
                            group["description"],
                            test["description"],
                            schema,
                            test["data"],
                            test["valid"],
                            validate_formats,
                        )
                    )
    return cases


def case_id(case: Case) -> str:
    return f"{case.draft}/{case.file}/{case.group}/{case.description}"


def known_failure(case: Case) -> tuple[frozenset[str], str] | None:
    return KNOWN_FAILURES.get(
        (case.draft, case.file, case.group, case.description)
    ) or KNOWN_FAILURES.get((case.draft, case.file, case.group, None))


_COMPILED: dict[tuple[str, int, bool | None], _backend.CompiledSchema | SchemaCompileError] = {}


def _compiled(engine: str, case: Case) -> _backend.CompiledSchema:
    """The case's schema compiled on a backend, once per group (the cases of a group share their
    schema object, which keeps the ``id`` valid), to keep the suite's run time down."""
    key = (engine, id(case.schema), case.validate_formats)
    if key not in _COMPILED:
        try:
            _COMPILED[key] = _backend.engine(engine).compile_schema(
                case.schema, case.validate_formats, remotes()
            )
        except SchemaCompileError as error:
            _COMPILED[key] = error
    compiled = _COMPILED[key]
    if isinstance(compiled, SchemaCompileError):
        raise compiled
    return compiled


def verdict(engine: str, case: Case) -> bool | str:
    """The engine's verdict on the case's instance, or the code of the error it raises."""
    if engine == ORACLE:
        import jsonschema_rs

        try:
            oracle = jsonschema_rs.validator_for(
                case.schema, validate_formats=case.validate_formats, retriever=remotes().__getitem__
            )
        except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError):
            return "compile error"
        return bool(oracle.is_valid(case.data))
    try:
        compiled = _compiled(engine, case)
        valid = compiled.is_valid(case.data)
        assert (not compiled.errors(case.data)) is valid
    except (SchemaCompileError, CanonicalizationError) as error:
        return error.code
    return valid


def _engine_available(engine: str) -> bool:
    module = {"rust": "pairling_fast._core", ORACLE: "jsonschema_rs"}.get(engine)
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        return False
    return True


CASES = suite_cases()


def _params(cases: list[Case], engines: tuple[str, ...]) -> list[Any]:
    params = []
    for case in cases:
        failure = known_failure(case)
        for engine in engines:
            marks: list[pytest.MarkDecorator] = []
            if failure is not None and engine in failure[0]:
                marks.append(pytest.mark.xfail(reason=failure[1], strict=True))
            params.append(pytest.param(case, engine, marks=marks, id=f"{engine}:{case_id(case)}"))
    return params


@pytest.mark.parametrize(("case", "engine"), _params(CASES, ENGINES))
def test_suite_case(case: Case, engine: str) -> None:
    if not _engine_available(engine):
        pytest.skip(f"{engine} is not installed or built")
    assert verdict(engine, case) is case.valid


@pytest.mark.parametrize(
    "case", [case for case in CASES if known_failure(case) is not None], ids=case_id
)
def test_backends_agree_where_they_fail(case: Case) -> None:
    # Elsewhere both match the suite's verdict, so they agree.
    pytest.importorskip("pairling_fast._core", reason="the Rust core is not built")
    assert verdict("rust", case) == verdict("python", case)


def _triples(engine: str, case: Case) -> list[tuple[str, str, str]]:
    errors = _compiled(engine, case).errors(case.data)
    return [(pointer, schema_pointer, keyword) for pointer, schema_pointer, keyword, *_ in errors]


INVALID_CASES = [
    case
    for case in CASES
    if not case.valid
    and known_failure(case) is None
    and (case.draft, case.file, case.group) not in TRIPLES_DIFFER
]


@pytest.mark.parametrize("case", INVALID_CASES, ids=case_id)
def test_backends_report_the_same_error_triples(case: Case) -> None:
    pytest.importorskip("pairling_fast._core", reason="the Rust core is not built")
    assert _triples("rust", case) == _triples("python", case)


# Same errors, other words: for `propertyNames: false` jsonschema-rs names the object, while
# python-jsonschema's error carries only the property name, so the fallback cannot show the object.
MESSAGES_DIFFER = {
    (draft, "propertyNames.json", "propertyNames with boolean schema false")
    for draft in ("draft6", "draft7", "draft2019-09", "draft2020-12")
}


def _message_params() -> list[Any]:
    params = []
    for case in INVALID_CASES:
        marks: list[pytest.MarkDecorator] = []
        if (case.draft, case.file, case.group) in MESSAGES_DIFFER:
            reason = "propertyNames false: the fallback's error does not carry the object"
            marks.append(pytest.mark.xfail(reason=reason, strict=True))
        params.append(pytest.param(case, marks=marks, id=case_id(case)))
    return params


@pytest.mark.parametrize("case", _message_params())
def test_backends_word_errors_alike(case: Case) -> None:
    # The fallback rebuilds jsonschema-rs's messages (_fallback/messages.py): a PF101 reads the
    # same whichever backend found it.
    pytest.importorskip("pairling_fast._core", reason="the Rust core is not built")
    messages = {
        engine: [error[3] for error in _compiled(engine, case).errors(case.data)]
        for engine in ("rust", "python")
    }
    assert messages["python"] == messages["rust"]


@pytest.mark.parametrize("case", INVALID_CASES, ids=case_id)
def test_backends_name_the_same_best_match(case: Case) -> None:
    # A failing oneOf/anyOf's closest branch error (rust/validate/best_match.rs,
    # _fallback/best_match.py): the same one, located and worded alike, on both backends.
    pytest.importorskip("pairling_fast._core", reason="the Rust core is not built")
    best_matches = {
        engine: [error[4] for error in _compiled(engine, case).errors(case.data)]
        for engine in ("rust", "python")
    }
    assert best_matches["python"] == best_matches["rust"]
