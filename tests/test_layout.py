"""The house rules of docs/architecture.md that a reader relies on, held by tests: no import
circles among the package's modules (imports inside functions and under TYPE_CHECKING count), no
file of the product or its benches over 1,000 code lines (Rust unit-test modules aside), the
fallback's packages named module for module as the core's, and every Rust module in the file its
name says."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python"
MAX_CODE_LINES = 1000


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules `name` imports, anywhere in its text."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (
                package.split(".")[: len(package.split(".")) - (node.level - 1)]
                if node.level
                else []
            )
            prefix = ".".join([*base, *([node.module] if node.module else [])])
            targets = [prefix, *(f"{prefix}.{alias.name}" for alias in node.names)]
        # A package's submodules import the package itself on the way: not an edge back.
        found.update(
            t for t in targets if t in modules and t != name and not name.startswith(f"{t}.")
        )
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_sees_a_circle_through_a_function_import() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _code_lines(path: Path) -> int:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".rs":
        text = text.split("\n#[cfg(test)]\nmod tests", 1)[0]
        comment = "//"
    else:
        text = re.sub(r'"""[\s\S]*?"""', '""', text)
        comment = "#"
    return sum(
        1 for line in text.splitlines() if line.strip() and not line.strip().startswith(comment)
    )


def test_no_source_file_over_a_thousand_code_lines() -> None:
    sources = [
        *(ROOT / "rust").rglob("*.rs"),
        *PACKAGE.rglob("*.py"),
        *(ROOT / "benches").glob("*.py"),
    ]
    assert sources
    over = {str(p.relative_to(ROOT)): n for p in sources if (n := _code_lines(p)) > MAX_CODE_LINES}
    assert over == {}


# The core's packages the fallback mirrors, and the fallback modules without a Rust module of their
# name, each with where the core keeps that concern (docs/architecture.md, the concern table).
MIRRORED_PACKAGES = ("graph", "journal", "wire")
FALLBACK_ONLY = {
    "journal/schema.py": "the event schema the checks read is `event_schema` in journal/mod.rs",
    "wire/arguments.py": "the core reads the engine API's arguments in rust/python/wire_checks.rs",
}


def test_the_fallback_packages_mirror_the_core_module_for_module() -> None:
    unmatched = set()
    for package in MIRRORED_PACKAGES:
        rust = {path.stem for path in (ROOT / "rust" / package).glob("*.rs")}
        fallback = PACKAGE / "pairling_fast" / "_fallback" / package
        assert (ROOT / "rust" / package / "mod.rs").is_file()
        assert (fallback / "__init__.py").is_file()
        unmatched |= {
            f"{package}/{path.name}"
            for path in fallback.glob("*.py")
            if path.stem != "__init__" and path.stem not in rust
        }
    assert unmatched == set(FALLBACK_ONLY)


# A `#[path]` attribute, the attributes and doc comments after it, and the module it places.
PATH_ATTRIBUTE = re.compile(
    r'#\[path = "[^"]*"\]\s*(?:(?:#\[[^\]]*\]|///[^\n]*)\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)'
)


def test_rust_modules_are_found_by_their_names() -> None:
    """No `#[path]` attribute but for a file's unit tests: a reader finds a module's file from its
    name."""
    placed = {
        f"{path.relative_to(ROOT)}: mod {name}"
        for path in (ROOT / "rust").rglob("*.rs")
        for name in PATH_ATTRIBUTE.findall(path.read_text(encoding="utf-8"))
        if name != "tests"
    }
    assert placed == set()


def test_the_path_attribute_finder_sees_a_placed_module() -> None:
    text = '#[cfg(test)]\n#[path = "a_tests.rs"]\nmod tests;\n#[path = "b.rs"]\n/// b\npub mod b;'
    assert PATH_ATTRIBUTE.findall(text) == ["tests", "b"]
