"""The engine is a value a check resolves once and hands down, so checks on different backends
can run side by side in one process (Dask worker threads, a user's threads)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from pairling_fast import _backend, _fallback
from pairling_fast.generate.journal import generate_journal
from pairling_fast.paths import check_paths

ROUNDS = 4


def _journals(folder: Path, count: int, seed: int) -> list[str]:
    folder.mkdir()
    names = []
    for number in range(count):
        lines, _ = generate_journal(300, seed=seed + number, chain=True, defects=5)
        path = folder / f"{folder.name}-{number}.jsonl"
        path.write_bytes(b"".join(lines))
        names.append(path.name)
    return names


def test_threads_check_on_the_backend_each_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "rust" not in _backend.BACKENDS or not _core_available():
        pytest.skip("the Rust core is not built")
    folders = {name: tmp_path / name for name in _backend.BACKENDS}
    names = {
        name: _journals(folder, 3, seed) for seed, (name, folder) in enumerate(folders.items())
    }
    # Which journals reached the fallback engine, from any thread (the pools' included).
    seen_by_python: list[str] = []
    check_journal = _fallback.check_journal

    def recording(source: Any, *args: Any, **kwargs: Any) -> Any:
        # check_paths hands the engine the journal's open file (its kind was told from it).
        seen_by_python.append(Path(getattr(source, "name", source)).name)
        return check_journal(source, *args, **kwargs)

    monkeypatch.setattr(_fallback, "check_journal", recording)
    start = threading.Barrier(len(folders))
    backends_reported: dict[str, set[str]] = {name: set() for name in folders}
    failures: list[BaseException] = []

    def run(name: str) -> None:
        try:
            for _ in range(ROUNDS):
                start.wait(timeout=60)
                report = check_paths([folders[name]], backend=name, jobs=2)
                assert len(report.files) == len(names[name])
                backends_reported[name].add(report.backend)
        except BaseException as error:  # handed to the test's thread
            failures.append(error)

    threads = [threading.Thread(target=run, args=(name,)) for name in folders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not failures, failures
    assert backends_reported == {name: {name} for name in folders}
    # The python checks ran on the fallback, every round; the rust ones never reached it.
    assert sorted(seen_by_python) == sorted(names["python"] * ROUNDS)


def _core_available() -> bool:
    try:
        _backend.engine("rust")
    except ImportError:
        return False
    return True


def test_a_selection_is_the_calling_threads_alone() -> None:
    default = _backend.active_name()
    other = next(name for name in _backend.BACKENDS if name != default)
    seen: list[str] = []
    with _backend.selected(other):
        thread = threading.Thread(target=lambda: seen.append(_backend.active_name()))
        thread.start()
        thread.join()
        assert _backend.active_name() == other
    assert seen == [default]
    assert _backend.active_name() == default


def test_use_is_deprecated_and_still_selects() -> None:
    with (
        pytest.warns(DeprecationWarning, match="deprecated"),
        _backend.use("python") as engine,
    ):
        assert _backend.active_name() == "python"
        assert engine is _backend.engine("python")
