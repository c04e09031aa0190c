"""Replace a file atomically: readers see the old content or the new one, never half a file.

Every command that writes a document (``seal``, ``chain``, ``canonicalize -o``, ``check -o``,
``generate … -o``) goes through ``atomic_write``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Union

__all__ = ["atomic_write", "write_atomically"]

PathLike = Union[str, "os.PathLike[str]"]


@contextmanager
def atomic_write(
    destination: PathLike, *, mode: int | None = None, fsync: bool = True
) -> Iterator[IO[bytes]]:
    """A binary file to write ``destination``'s new content to.

    It is a temporary file in the destination's directory; when the block ends normally it is
    fsynced, given ``mode`` (default: the permissions of the file it replaces, else those the
    umask allows a new file) and renamed over ``destination``, and the directory is fsynced so
    the rename survives a crash. If the block raises, the temporary file is removed and
    ``destination`` is untouched. ``fsync=False`` skips both fsyncs (tests, throwaway output).
    """
    target = Path(os.fspath(destination))
    directory = target.parent
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
            stream.flush()
            if fsync:
                os.fsync(stream.fileno())
        os.chmod(temporary, mode if mode is not None else _mode_for(target))
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    if fsync:
        _fsync_directory(directory)


def write_atomically(destination: PathLike, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``destination`` with ``data`` through ``atomic_write``."""
    with atomic_write(destination, mode=mode) as stream:
        stream.write(data)


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable; some platforms (Windows) cannot open a directory, which is fine."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
