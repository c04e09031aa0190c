"""Writers never lose data: whatever fails while ``write_sealed``, ``chain_journal`` or
``pairling-fast canonicalize -o`` rewrites a file in place (a write, the fsync, the rename, a full
disk), the original stays byte-identical and no temporary file is left behind (issue 8)."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tmpfs import mounted_tmpfs

from pairling_fast import _backend, chain_journal, cli, write_sealed
from pairling_fast.generate.map import generate_map

Rewrite = Callable[[], Any]


def stale_map(folder: Path, bindings: int = 20) -> tuple[Path, Rewrite]:
    """A map whose first digest is wrong, so sealing it in place changes the file."""
    document = generate_map(bindings, seed=1)
    document["operation_bindings"][0]["semantic_digest"] = "sha256:" + "0" * 64
    path = folder / "map.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path, lambda: write_sealed(path, in_place=True)


def unchained_journal(folder: Path, events: int = 50) -> tuple[Path, Rewrite]:
    path = folder / "journal.jsonl"
    with path.open("w", encoding="utf-8") as journal:
        for number in range(events):
            event = {
                "kind": "state_changed",
                "data": {"key": f"k{number}", "value": "x" * 40},
                "timestamp": f"2026-12-02T14:{number // 60:02}:{number % 60:02}Z",
            }
            journal.write(json.dumps(event) + "\n")
    return path, lambda: chain_journal(path, path)


def pretty_document(folder: Path) -> tuple[Path, Rewrite]:
    """``canonicalize -o`` over an existing file, from a pretty-printed copy of it."""
    path = folder / "document.json"
    document = {"b": [1, 2.5, None], "a": {"text": "caf\u00e9 " * 200}}
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path, lambda: cli.main(["canonicalize", str(path), "-o", str(path)])


WRITERS = {
    "write_sealed": stale_map,
    "chain_journal": unchained_journal,
    "canonicalize -o": pretty_document,
}


def assert_failed_for_lack_of_space(rewrite: Rewrite, capsys: pytest.CaptureFixture[str]) -> None:
    """The API raises the OSError; the CLI exits with status 2 and names it on stderr."""
    try:
        status = rewrite()
    except OSError as error:
        assert error.errno == errno.ENOSPC
        return
    assert status == 2
    assert os.strerror(errno.ENOSPC) in capsys.readouterr().err


def disk_full(*_args: Any, **_kwargs: Any) -> Any:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class FailingFile:
    """A file object that accepts a little, then fails as a full disk does."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.budget = 64

    def write(self, data: bytes) -> int:
        if len(data) > self.budget:
            disk_full()
        self.budget -= len(data)
        return int(self.real.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def __enter__(self) -> FailingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.real.close()


def failing_fdopen(monkeypatch: pytest.MonkeyPatch) -> None:
    real_fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: FailingFile(real_fdopen(*a, **k)))


FAILURES: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "write": failing_fdopen,
    "fsync": lambda patch: patch.setattr(os, "fsync", disk_full),
    "rename": lambda patch: patch.setattr(os, "replace", disk_full),
}


@pytest.mark.parametrize("failure", sorted(FAILURES))
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_failed_rewrite_leaves_the_original_intact(
    backend: _backend.Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    writer: str,
    failure: str,
) -> None:
    path, rewrite = WRITERS[writer](tmp_path)
    original = path.read_bytes()
    FAILURES[failure](monkeypatch)
    assert_failed_for_lack_of_space(rewrite, capsys)
    monkeypatch.undo()
    assert path.read_bytes() == original
    assert sorted(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_successful_rewrite_changes_the_file_and_leaves_no_temporary(
    backend: _backend.Engine, tmp_path: Path, writer: str
) -> None:
    path, rewrite = WRITERS[writer](tmp_path)
    original = path.read_bytes()
    rewrite()
    assert path.read_bytes() != original
    assert sorted(tmp_path.iterdir()) == [path]


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs: a real full disk (needs root and mount rights; skipped otherwise)."""
    with mounted_tmpfs(tmp_path / "tiny", "size=256k") as mount_point:
        yield mount_point


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_full_disk_leaves_the_original_intact(
    backend: _backend.Engine, tiny_disk: Path, capsys: pytest.CaptureFixture[str], writer: str
) -> None:
    path, rewrite = WRITERS[writer](tiny_disk)
    original = path.read_bytes()
    filler = tiny_disk / "filler"
    with filler.open("wb", buffering=0) as fill:
        try:
            while True:  # fill the disk up to the last block
                fill.write(b"\0" * 4096)
                fill.flush()
        except OSError as error:
            assert error.errno == errno.ENOSPC
    assert_failed_for_lack_of_space(rewrite, capsys)
    assert path.read_bytes() == original
    assert sorted(tiny_disk.iterdir()) == sorted([path, filler])
