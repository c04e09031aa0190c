"""The house rules of docs/architecture.md that a reader relies on, held by tests: no import
circles among the package's modules (imports inside functions and under TYPE_CHECKING count) nor
among the core's Rust modules, no file of the product or its benches over 1,000 code lines (Rust
unit-test modules aside), the fallback's packages named module for module as the core's, and every
Rust module in the file its name says."""

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


# Rust: the modules from rust/lib.rs down (`mod x;`, `#[path]`), and the `crate::`, `super::`
# and `self::` paths each one's code names (`use` trees expanded; unit-test modules left out).
# Comments and literals are blanked first, so a path in a message or a doc is no use.
_RUST_COMMENTS = r"//[^\n]*|/\*[\s\S]*?\*/"
_RUST_LITERALS = re.compile(
    _RUST_COMMENTS + r'|r(#*)"[\s\S]*?"\1|b?"(?:\\[\s\S]|[^"\\])*"|b?\'(?:\\[^\']{1,10}|[^\'\\])\''
)
_RUST_MOD = re.compile(r"((?:#\[[^\]]*\]\s*)*)(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*([;{])")
_RUST_USE = re.compile(r"\buse\s+([^;]+);")
_RUST_PATH = re.compile(r"\b(?:crate|super|self)(?:\s*::\s*\w+)+")

RustModule = tuple[str, ...]


def _blanked(pattern: str | re.Pattern[str], text: str) -> str:
    """``text`` with what ``pattern`` matches turned to spaces (lines kept)."""
    return re.sub(pattern, lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _rust_modules(lib: Path) -> dict[RustModule, str]:
    """Each module of the crate at ``lib`` (by its path, ``()`` the crate) and its code."""
    modules: dict[RustModule, str] = {}

    def visit(name: RustModule, path: Path, owns_directory: bool) -> None:
        raw = path.read_text(encoding="utf-8")
        modules[name] = _blanked(_RUST_LITERALS, raw)
        directory = path.parent if owns_directory else path.parent / path.stem
        for match in _RUST_MOD.finditer(_blanked(_RUST_COMMENTS, raw)):
            attributes, child, end = match.groups()
            if "cfg(test)" in attributes or end == "{":
                continue  # unit tests; an inline module's code is its file's
            explicit = re.search(r'path\s*=\s*"([^"]+)"', attributes)
            if explicit:
                visit((*name, child), path.parent / explicit.group(1), False)
                continue
            for candidate, owns in (
                (directory / f"{child}.rs", False),
                (directory / child / "mod.rs", True),
            ):
                if candidate.exists():
                    visit((*name, child), candidate, owns)
                    break

    visit((), lib, True)
    return modules


def _closing_brace(text: str, opening: int) -> int:
    depth = 0
    for index in range(opening, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return index
    return len(text)


def _use_paths(tree: str) -> list[list[str]]:
    """The paths of a `use` tree: `a::{b, c::{d, e}}` is a::b, a::c::d, a::c::e."""
    tree = re.sub(r"\s+", "", tree)
    if "{" not in tree:
        return [tree.split("::")] if tree else []
    head, _, rest = tree.partition("{")
    items, depth, item = [], 0, ""
    for char in rest[: rest.rindex("}")]:
        if char == "," and depth == 0:
            items.append(item)
            item = ""
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        item += char
    items.append(item)
    prefix = [segment for segment in head.split("::") if segment]
    return [prefix + path for item in items for path in _use_paths(item)]


def _rust_paths(text: str) -> list[tuple[int, list[str]]]:
    """Each path the code names, with how many inline modules deep it is (for `super`)."""
    inline: list[tuple[int, int]] = []
    for match in _RUST_MOD.finditer(text):
        if match.group(3) == "{":
            end = _closing_brace(text, match.end() - 1)
            if "cfg(test)" in match.group(1):
                text = (
                    text[: match.start()]
                    + _blanked(".+", text[match.start() : end + 1])
                    + text[end + 1 :]
                )
            else:
                inline.append((match.end(), end))

    def depth(position: int) -> int:
        return sum(start <= position <= end for start, end in inline)

    found = []
    uses = [(m.start(), m.end()) for m in _RUST_USE.finditer(text)]
    for match in _RUST_USE.finditer(text):
        found += [(depth(match.start()), path) for path in _use_paths(match.group(1))]
    for match in _RUST_PATH.finditer(text):
        if not any(start <= match.start() < end for start, end in uses):
            found.append((depth(match.start()), re.sub(r"\s+", "", match.group(0)).split("::")))
    return found


def _rust_target(
    module: RustModule, inline: int, path: list[str], modules: dict[RustModule, str]
) -> RustModule | None:
    """The module ``path`` (named in ``module``, ``inline`` modules deep) is in, if the crate's."""
    if path[0] == "crate":
        target: RustModule = ()
        rest = path[1:]
    elif path[0] in ("super", "self"):
        ups = -inline
        while path and path[0] in ("super", "self"):
            ups += path[0] == "super"
            path = path[1:]
        if ups <= 0:
            return None  # inside the file's own module
        target, rest = module[: len(module) - ups], path
    else:
        return None  # another crate, or a name in scope
    for segment in rest:
        if (*target, segment) not in modules:
            break
        target = (*target, segment)
    return target


def _rust_graph(lib: Path) -> dict[str, set[str]]:
    """Module to the modules it uses, among siblings: a use of `a::x` from `b::y` is an edge
    b -> a (a module and its parent or children are one concern, and not counted)."""
    modules = _rust_modules(lib)
    graph: dict[str, set[str]] = {"::".join(m) or "crate": set() for m in modules}
    for module, text in modules.items():
        for inline, path in _rust_paths(text):
            target = _rust_target(module, inline, path, modules)
            if target is None:
                continue
            shared = 0
            while shared < min(len(module), len(target)) and module[shared] == target[shared]:
                shared += 1
            if shared < min(len(module), len(target)):
                graph["::".join(module[: shared + 1])].add("::".join(target[: shared + 1]))
    return graph


def test_no_rust_module_cycles() -> None:
    assert _cycles(_rust_graph(ROOT / "rust" / "lib.rs")) == []


def test_the_rust_module_graph_sees_uses_through_paths_trees_and_super(tmp_path: Path) -> None:
    crate = {
        "lib.rs": 'mod a;\n#[path = "b_file.rs"]\nmod b;\nmod c;\n#[cfg(test)]\nmod t;\n',
        "a.rs": "use crate::{b::{self, x}, c};\n// crate::zzz in a comment\n",
        "b_file.rs": 'pub fn x() -> &\'static str { "crate::a" }\n'
        "mod inner { use super::super::c; }\n",
        "c.rs": "pub fn y() { crate::a::f(); }\n",
        "t.rs": "use crate::a;\n",
    }
    for name, text in crate.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert _rust_graph(tmp_path / "lib.rs") == {
        "crate": set(),
        "a": {"b", "c"},
        "b": {"c"},
        "c": {"a"},
    }
    assert _cycles(_rust_graph(tmp_path / "lib.rs")) == [["a", "b", "c"]]


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


# A private name (`_x`) is its module's own: where two modules share behaviour it has a public
# name in the module that owns it. The fallback is one backend's inside, whose modules share their
# helpers among themselves (not the facade's); private modules (`_backend`, `_files`, the core
# `_core`...) are shared by name, and so may be imported.
_PRIVATE_SHARING = ("pairling_fast._fallback",)


def _private_imports(name: str, path: Path, modules: dict[str, Path]) -> list[str]:
    """`from M import _x` in module `name`, M a package module and `_x` not a module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            source = ".".join([*base, *([node.module] if node.module else [])])
        else:
            source = node.module or ""
        if source not in modules:
            continue
        found.extend(
            f"{name}: from {source} import {alias.name} (line {node.lineno})"
            for alias in node.names
            if alias.name.startswith("_")
            and not alias.name.startswith("__")
            and f"{source}.{alias.name}" not in modules
            and not _is_extension(source, alias.name, modules)
        )
    return found


def _is_extension(package: str, name: str, modules: dict[str, Path]) -> bool:
    """A compiled module of the package (``_core``, known by its stub)."""
    directory = modules[package].parent
    return (directory / f"{name}.pyi").exists()


def test_no_module_imports_another_modules_private_names() -> None:
    modules = _modules()
    found = [
        line
        for name, path in sorted(modules.items())
        for line in _private_imports(name, path, modules)
        if not (name.startswith(_PRIVATE_SHARING) and line.split()[2].startswith(_PRIVATE_SHARING))
    ]
    assert found == []


def test_the_private_import_scan_sees_one(tmp_path: Path) -> None:
    planted = tmp_path / "b.py"
    planted.write_text("from .a import _hidden, shown\nfrom . import _c\n", encoding="utf-8")
    modules = {"p": tmp_path / "__init__.py", "p.a": tmp_path / "a.py", "p.b": planted}
    modules["p._c"] = tmp_path / "_c.py"
    assert _private_imports("p.b", planted, modules) == ["p.b: from p.a import _hidden (line 1)"]
