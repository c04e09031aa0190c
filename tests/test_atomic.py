"""The one atomic writer behind seal, chain, canonicalize -o, check -o and generate -o."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pairling_fast._atomic import atomic_write, write_atomically


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_gets_the_permissions_the_umask_allows(tmp_path: Path) -> None:
    target = tmp_path / "new.json"
    previous = os.umask(0o027)
    try:
        write_atomically(target, b"{}\n")
    finally:
        os.umask(previous)
    assert target.read_bytes() == b"{}\n"
    assert _mode(target) == 0o640


def test_a_replaced_file_keeps_its_permissions_unless_told(tmp_path: Path) -> None:
    target = tmp_path / "map.json"
    target.write_bytes(b"old")
    os.chmod(target, 0o604)
    write_atomically(target, b"new")
    assert (target.read_bytes(), _mode(target)) == (b"new", 0o604)
    write_atomically(target, b"newer", mode=0o600)
    assert (target.read_bytes(), _mode(target)) == (b"newer", 0o600)


def test_a_failure_leaves_the_destination_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "journal.jsonl"
    target.write_bytes(b"old\n")
    with pytest.raises(RuntimeError, match="half way"):
        with atomic_write(target) as stream:
            stream.write(b"half")
            raise RuntimeError("half way")
    assert target.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["journal.jsonl"]


def test_a_relative_name_is_written_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with atomic_write("out.txt", fsync=False) as stream:
        stream.write(b"x")
    assert (tmp_path / "out.txt").read_bytes() == b"x"
