"""What a process on the Rust core loads: not the pure-Python fallback, nor python-jsonschema,
nor rich when the report goes to a pipe.

A small job's cost is mostly the interpreter's start-up and imports (a `check --state` re-run of a
grown journal, a small map: benches/RESULTS.md), and the fallback with python-jsonschema was more
than half of `import pairling_fast`. The facade shares what it needs with the fallback through
modules of its own (`_bundled`, `_pointers`); this holds that in a fresh interpreter, where
nothing else has imported them first.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from cli_helpers import run_python

from pairling_fast import _backend
from pairling_fast.generate.journal import write_journal
from pairling_fast.journal.state_file import JournalStates

# What the Rust core must not load: the fallback and the validator it is built on, the cluster
# (dask, and our module for it, which only `--dask` needs); nor rich, which only a report to a
# terminal uses (these runs write to a pipe); nor importlib.metadata, which with the email package
# it loads was the largest share of the import (the version is the core's); nor tomllib, which
# parsed the package's tables at every import (the core carries them parsed: `_tables`); nor
# tempfile, shutil's copy, secrets or ctypes, which only a writer into a device or a stopped run
# needs (19 ms of the import); nor the modules of the other kinds and commands (maps, the map diff,
# the wire documents, the validator, the generators), which the facade and the command line import
# when one of their names or subcommands is first used.
HEAVY = (
    "pairling_fast._fallback",
    "jsonschema",
    "referencing",
    "dask",
    "distributed",
    "pairling_fast.distributed",
    "pairling_fast.journal.cluster",
    "rich",
    "importlib.metadata",
    "tomllib",
    "tempfile",
    "secrets",
    "ctypes",
    "pairling_fast.maps",
    "pairling_fast.map_diff",
    "pairling_fast.wire",
    "pairling_fast.validator",
    "pairling_fast.meta",
    "pairling_fast.generate",
)

# Runs the package as `python -m pairling_fast ARGS` would (runpy, `__main__`), then prints the
# heavy modules loaded, as the last line of stdout.
PROBE = """\
import json, runpy, sys
heavy = {heavy!r}
args = {args!r}
if args:
    sys.argv = ["pairling-fast", *args]
    try:
        runpy.run_module("pairling_fast", run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
else:
    import pairling_fast
loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy or m.startswith(heavy))
print(json.dumps(loaded))
"""


def _loaded(backend: str, *args: str, cwd: Path) -> list[str]:
    done = run_python(backend, "-c", PROBE.format(heavy=HEAVY, args=list(args)), cwd=cwd)
    assert "Traceback" not in done.stderr, done.stderr
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


@pytest.fixture(scope="module")
def core() -> None:
    try:
        _backend.engine("rust")
    except ImportError as error:
        pytest.skip(f"the Rust core is not built: {error}")


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    path = tmp_path / "events.jsonl"
    with path.open("wb") as out:
        write_journal(out, 300, seed=4, chain=True)
    return path


def test_the_probe_sees_the_fallback_where_it_runs(tmp_path: Path, journal: Path) -> None:
    # Without this, an empty answer could mean a probe that sees nothing.
    loaded = _loaded("python", "check", str(journal), cwd=tmp_path)
    assert "pairling_fast._fallback" in loaded and "jsonschema" in loaded


def test_import_on_the_core_loads_no_fallback(core: None, tmp_path: Path) -> None:
    assert _loaded("rust", cwd=tmp_path) == []


FACADE_PROBE = """\
import json, sys
import pairling_fast as pf
before = sorted(m for m in sys.modules if m.startswith("pairling_fast"))
missing = [name for name in pf.__all__ if name not in dir(pf)]
resolved = {name: type(getattr(pf, name)).__name__ for name in pf.__all__}
print(json.dumps([before, missing, sorted(resolved)]))
"""


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_the_facade_imports_a_module_when_a_name_of_it_is_used(
    backend: str, tmp_path: Path
) -> None:
    """``import pairling_fast`` loads none of the modules its names live in (PEP 562); each name
    of ``__all__`` is still listed by ``dir`` and resolves."""
    done = run_python(backend, "-c", FACADE_PROBE, cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    before, missing, resolved = json.loads(done.stdout.splitlines()[-1])
    assert before == ["pairling_fast", "pairling_fast._load_core"]
    assert missing == []
    import pairling_fast

    assert resolved == sorted(pairling_fast.__all__)


def test_the_facade_s_three_lists_of_names_agree() -> None:
    """The facade names each public name three times: imported under TYPE_CHECKING (what type
    checkers read), in ``_HOMES`` (where ``__getattr__`` imports it from) and in ``__all__``
    (a literal, which mypy needs for the re-export). They must list the same names and homes."""
    import pairling_fast

    tree = ast.parse(Path(pairling_fast.__file__).read_text(encoding="utf-8"))
    (block,) = (
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    imported: dict[str, tuple[str, ...]] = {}
    for statement in block.body:
        assert isinstance(statement, ast.ImportFrom) and statement.level == 1
        imported[statement.module or ""] = tuple(alias.name for alias in statement.names)
    submodules = imported.pop("")
    assert imported == pairling_fast._HOMES
    assert submodules == pairling_fast._SUBMODULES
    computed = {"__build__", "__version__", "backend"}
    assert sorted(pairling_fast.__all__) == sorted(
        [*pairling_fast._HOME_OF, *submodules, *computed]
    )


def test_a_subcommand_s_own_module_is_imported_by_its_run_only(core: None, tmp_path: Path) -> None:
    """``diff`` and the generators define their arguments in their own modules: a parse of
    another subcommand does not import them, their help and their runs do."""
    loaded = _loaded("rust", "generate", "journal", "--help", cwd=tmp_path)
    assert "pairling_fast.generate.journal" in loaded
    assert "pairling_fast.generate.map" not in loaded
    assert "pairling_fast.map_diff" in _loaded("rust", "diff", "--help", cwd=tmp_path)


@pytest.mark.parametrize("output", [[], ["--format", "json"]], ids=["text", "json"])
def test_check_on_the_core_loads_no_fallback(
    core: None, tmp_path: Path, journal: Path, output: list[str]
) -> None:
    assert _loaded("rust", "check", str(journal), *output, cwd=tmp_path) == []


def test_state_runs_on_the_core_load_no_fallback(core: None, tmp_path: Path, journal: Path) -> None:
    state = str(tmp_path / "journal.state")
    assert _loaded("rust", "check", str(journal), "--state", state, cwd=tmp_path) == []
    with journal.open("ab") as out:
        write_journal(out, 20, seed=5, chain=False)
    # The second run resumes: the prefix re-hashed, the state read and written anew.
    assert _loaded("rust", "check", str(journal), "--state", state, cwd=tmp_path) == []
    states = JournalStates.load(state)
    (only,) = states.journals()
    entry = states.entry(only)
    assert entry is not None and entry["offset"] == journal.stat().st_size


# Records mimalloc's option as it is when the extension is found, whoever imports it first.
ALLOCATOR_PROBE = """\
import os, sys
seen = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "pairling_fast._core":
            seen.append(os.environ.get("MIMALLOC_ARENA_EAGER_COMMIT"))
sys.meta_path.insert(0, Watch())
{first_use}
print(seen, os.environ.get("MIMALLOC_ARENA_EAGER_COMMIT"))
"""

# Each loads the core by a different road: the facade's `backend` through `_backend` (whose
# `codes` reads the code table from the core while `_backend` is still being imported).
FIRST_USES = {
    "pairling_fast": "import pairling_fast; pairling_fast.backend",
    "pairling_fast.cli": "import pairling_fast.cli",
    "pairling_fast.codes": "import pairling_fast.codes",
}


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize("module", sorted(FIRST_USES))
def test_the_core_is_loaded_with_the_allocator_settings(
    core: None, tmp_path: Path, backend: str, module: str
) -> None:
    """Every module reaches the extension through `_load_core.import_core`, which sets mimalloc's
    options around the import (`_tables` reads the code table from the core while `_backend` is
    still being imported): loaded without them, a 3-line journal's check peaked at 49 MiB, not
    36."""
    probe = ALLOCATOR_PROBE.format(first_use=FIRST_USES[module])
    done = run_python(backend, "-c", probe, cwd=tmp_path)
    assert done.stdout.split() == ["['0']", "None"], done.stderr
