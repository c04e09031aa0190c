"""The house rules of docs/architecture.md that a reader relies on, held by tests: no import
circles among the package's modules (imports inside functions and under TYPE_CHECKING count), and
no file of the product or its benches over 1,000 code lines (Rust unit-test modules aside)."""

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
