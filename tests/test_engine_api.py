"""The engine API is declared once, in the Rust core's stub (``_core.pyi``, which stubtest holds to
the extension in CI); everything else that spells it out is held to the stub here: the pure-Python
fallback's engine (the same names, parameters and defaults), the ``Engine`` protocol the facade is
typed with (mypy holds both backends' modules to it, types included), and the list in
docs/architecture.md."""

from __future__ import annotations

import ast
import inspect
import io
import re
from pathlib import Path
from typing import Any

import pytest

from pairling_fast import _backend, _fallback

ROOT = Path(__file__).resolve().parents[1]
STUB = ROOT / "python" / "pairling_fast" / "_core.pyi"

# The core's own helpers, which the facade calls only where the core is there (the fallback has
# its own routes, in the facade): the build's description, json.dumps-style indenting
# (``_json_text``), the tables as build.rs read them (``_tables``), BLAKE3 for ``--state``'s
# block hashes (the fallback uses the blake3 package), and the diff's set-array table as the core
# compiled it (test_map_diff.py holds it equal to the fallback's ``SET_ARRAYS``).
CORE_ONLY = {"Blake3", "build_info", "indent_json", "map_diff_set_arrays", "table_json"}
# Likewise the compiled schema's fast routes, which validator.py takes where they are there.
CORE_ONLY_MEMBERS = {"CompiledSchema": {"report_json", "validate"}}

Parameters = list[tuple[str, str, Any]]
"""(name, kind, default or ``inspect.Parameter.empty``) of each parameter."""

_KINDS = {
    "posonlyargs": "POSITIONAL_ONLY",
    "args": "POSITIONAL_OR_KEYWORD",
    "kwonlyargs": "KEYWORD_ONLY",
}


def _stub_parameters(function: ast.FunctionDef, skip_first: bool) -> Parameters:
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[Any] = [inspect.Parameter.empty] * (
        len(positional) - len(arguments.defaults)
    ) + [ast.literal_eval(d) for d in arguments.defaults]
    kinds = ["POSITIONAL_ONLY"] * len(arguments.posonlyargs) + ["POSITIONAL_OR_KEYWORD"] * len(
        arguments.args
    )
    found = [(a.arg, kind, d) for a, kind, d in zip(positional, kinds, defaults, strict=True)]
    if arguments.vararg:
        found.append((arguments.vararg.arg, "VAR_POSITIONAL", inspect.Parameter.empty))
    for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        value = inspect.Parameter.empty if default is None else ast.literal_eval(default)
        found.append((argument.arg, "KEYWORD_ONLY", value))
    if arguments.kwarg:
        found.append((arguments.kwarg.arg, "VAR_KEYWORD", inspect.Parameter.empty))
    return found[1:] if skip_first else found


def _parameters(function: Any) -> Parameters:
    return [
        (p.name, p.kind.name, p.default) for p in inspect.signature(function).parameters.values()
    ]


def _stub() -> tuple[dict[str, Parameters], dict[str, dict[str, Parameters | None]]]:
    """The stub's engine: each function's parameters, and each class's constructor (``""``),
    methods (their parameters) and properties (None)."""
    functions: dict[str, Parameters] = {}
    classes: dict[str, dict[str, Parameters | None]] = {}
    for node in ast.parse(STUB.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            functions[node.name] = _stub_parameters(node, skip_first=False)
        elif isinstance(node, ast.ClassDef):
            members: dict[str, Parameters | None] = {}
            for item in node.body:
                if not isinstance(item, ast.FunctionDef):
                    continue
                if any(ast.unparse(d) == "property" for d in item.decorator_list):
                    members[item.name] = None
                else:
                    name = "" if item.name == "__new__" else item.name
                    members[name] = _stub_parameters(item, skip_first=True)
            for name in CORE_ONLY_MEMBERS.get(node.name, ()):
                del members[name]
            classes[node.name] = members
    for name in CORE_ONLY:
        functions.pop(name, None)
        classes.pop(name, None)
    return functions, classes


def _engine_names() -> set[str]:
    functions, classes = _stub()
    return set(functions) | (set(classes) - {"CompiledSchema"})  # made by compile_schema only


def test_the_stub_is_the_whole_engine_api_and_no_more() -> None:
    # A name in the stub the core does not export is stubtest's to catch; one the core exports
    # and the stub does not list, too. Here: the stub's list is the one the rest follows.
    assert set(ast.literal_eval(_stub_all())) >= CORE_ONLY | _engine_names()
    assert sorted(_engine_names()) == sorted(_fallback.__all__)


def _stub_all() -> str:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    (node,) = (
        n
        for n in tree.body
        if isinstance(n, ast.Assign) and [ast.unparse(t) for t in n.targets] == ["__all__"]
    )
    return ast.unparse(node.value)


def test_the_fallback_has_the_stubs_signatures() -> None:
    functions, classes = _stub()
    for name, parameters in functions.items():
        assert _parameters(getattr(_fallback, name)) == parameters, name
    compiled = type(_fallback.compile_schema({}, None, None))
    for name, members in classes.items():
        cls = compiled if name == "CompiledSchema" else getattr(_fallback, name)
        for member, parameters in members.items():
            if member == "":
                assert _parameters(cls) == parameters, name
            elif parameters is None:
                # A property, or a named tuple's field (the fallback's RawFinding).
                read_only = isinstance(inspect.getattr_static(cls, member), property)
                assert read_only or member in getattr(cls, "_fields", ()), (name, member)
            else:
                method = inspect.getattr_static(cls, member)
                assert _parameters(method)[1:] == parameters, (name, member)


def test_the_engine_protocol_has_the_stubs_signatures() -> None:
    """The facade's ``Engine``: mypy checks both modules' types against it; its names and
    parameters are the stub's (a class of the engine is a method of the protocol that
    constructs it)."""
    functions, classes = _stub()
    declared = {
        name: value
        for name, value in vars(_backend.Engine).items()
        if inspect.isfunction(value) and not name.startswith("_")
    }
    assert sorted(declared) == sorted(_engine_names())
    for name, method in declared.items():
        stub = functions[name] if name in functions else classes[name][""]
        assert _parameters(method)[1:] == stub, name
    protocols = {
        "CompiledSchema": _backend.CompiledSchema,
        "JournalChecker": _backend.JournalChecker,
        "JournalStream": _backend.JournalStreamEngine,
        "TranscriptChecker": _backend.TranscriptChecker,
    }
    for name, protocol in protocols.items():
        for member, value in vars(protocol).items():
            if member.startswith("_"):
                continue
            stub_member = classes[name][member]
            if isinstance(value, property):
                assert stub_member is None, (name, member)
            else:
                assert _parameters(value)[1:] == stub_member, (name, member)


def test_the_facades_raw_finding_protocol_has_the_stubs_fields() -> None:
    """``report.RawFinding`` is the protocol mypy types both backends' records with: the stub's
    properties, in the stub's order (the fallback's named tuple has them as fields, in order)."""
    from pairling_fast import report

    _, classes = _stub()
    stub_fields = [name for name, members in classes["RawFinding"].items() if members is None]
    declared = [
        name for name, value in vars(report.RawFinding).items() if isinstance(value, property)
    ]
    assert declared == stub_fields
    assert list(_fallback.RawFinding._fields) == stub_fields


def test_the_architecture_docs_list_the_engine_api() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Engine API", 1)[1]
    block = section.split("```", 2)[1]
    listed = set(re.findall(r"^(\w+)\(", block, flags=re.MULTILINE))
    assert sorted(listed) == sorted(_engine_names())


@pytest.mark.parametrize(
    ("module", "public"),
    [
        ("journal/__init__.py", "check_journal"),
        ("maps.py", "check_map"),
        ("wire.py", "check_rpc_result"),
        ("wire.py", "check_rpc_params"),
        ("wire.py", "check_transcript"),
        ("wire.py", "check_wire_schema"),
    ],
)
def test_a_check_is_its_engine_taking_form_on_the_active_engine(module: str, public: str) -> None:
    """``check_x_on(engine, ...)`` stays internal (``check_paths`` and the cluster tasks hand down
    the engine they resolved; users choose one with ``_backend.selected`` or ``backend=``): the
    public ``check_x`` is that one implementation called with the active engine."""
    source = (ROOT / "python" / "pairling_fast" / module).read_text(encoding="utf-8")
    tree = ast.parse(source)
    (function,) = (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == public)
    (returned,) = (n for n in ast.walk(function) if isinstance(n, ast.Return))
    call = returned.value
    assert isinstance(call, ast.Call) and ast.unparse(call.func) == f"{public}_on"
    assert ast.unparse(call.args[0]) == "_backend.active()"


def test_a_journals_stats_are_the_declared_fields_in_order(backend: _backend.Engine) -> None:
    """Both engines return ``journal.stats.JournalStats``: its fields, in its order (the report's
    bytes follow it), with ``chain`` one of its two shapes or null."""
    from pairling_fast.journal.options import JournalOptions
    from pairling_fast.journal.stats import ChainStats, JournalStats

    for chain in ("auto", "off"):
        _, stats = backend.check_journal(io.BytesIO(b"{}\n[1]\n"), JournalOptions(chain=chain))
        assert list(stats) == list(JournalStats.__annotations__)
        assert stats["chain"] is None or set(stats["chain"]) < set(ChainStats.__annotations__)
