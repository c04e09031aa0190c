"""The hash ``check --state`` proves a journal's verified prefix unchanged with: BLAKE3
(docs/journals.md). Cryptographic, so no edit of the prefix can be made to pass (a fast
non-cryptographic hash would let a deliberate one through), and several times SHA-256's speed.

The Rust core's hasher (``_core.Blake3``) whichever backend checks the journal: the state is
the same from both. Without the core, the ``blake3`` package's (the same digests); with
neither, a state cannot be used and saying so is a ``JournalStateError``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import IO, Any, Protocol

from ._load_core import import_core
from .errors import PairlingError

__all__ = ["NAME", "Hasher", "hash_range", "new", "update"]

NAME = "blake3"

# Without the core, each block is read and hashed 1 MiB at a time into one buffer per worker.
_PIECE = 1 << 20


class Hasher(Protocol):
    def copy(self) -> Hasher: ...

    def hexdigest(self) -> str: ...


def _core_hasher() -> Any:
    try:
        return import_core().Blake3
    except ImportError:
        return None


def _package_hasher() -> Any:
    try:
        import blake3  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return blake3.blake3


_CORE = _core_hasher()


def new() -> Hasher:
    """An empty hasher; a ``PairlingError`` (one line and exit 2 from the CLI) without either
    implementation."""
    factory = _CORE or _package_hasher()
    if factory is None:
        raise PairlingError(
            "a journal state needs BLAKE3: the Rust core, or the blake3 package "
            "(pip install blake3)"
        )
    hasher: Hasher = factory()
    return hasher


def update(hasher: Hasher, data: bytes, start: int, end: int) -> None:
    """Feeds ``data[start:end]`` to ``hasher``."""
    if _CORE is not None and isinstance(hasher, _CORE):
        hasher.update(data, start, end)
    else:
        hasher.update(memoryview(data)[start:end])  # type: ignore[attr-defined]


def hash_range(stream: IO[bytes], start: int, length: int) -> Hasher:
    """The hasher of ``length`` bytes of ``stream`` from ``start``, callable from any thread
    at once: positional reads move no shared offset, and the hashing releases the GIL."""
    hasher = new()
    if hasattr(hasher, "update_from_fd"):
        hasher.update_from_fd(stream.fileno(), start, length)
        return hasher
    read = _positional_reader(stream)
    view = memoryview(bytearray(min(length, _PIECE)))
    done = 0
    while done < length:
        read_now = read(view[: min(length - done, _PIECE)], start + done)
        if not read_now:
            raise OSError("the journal ended while its verified prefix was re-hashed")
        hasher.update(view[:read_now])  # type: ignore[attr-defined]
        done += read_now
    return hasher


def _positional_reader(stream: IO[bytes]) -> Callable[[memoryview, int], int]:
    """``read(buffer, offset)``: reads into ``buffer`` from ``offset`` of ``stream``, from any
    thread. ``os.preadv`` releases the GIL and moves no shared offset, so the workers read at
    once; where it is missing (Windows) the reads take turns (seek, then read)."""
    fd = stream.fileno()
    if hasattr(os, "preadv"):
        return lambda buffer, offset: os.preadv(fd, [buffer], offset)
    turn = threading.Lock()

    def read(buffer: memoryview, offset: int) -> int:
        with turn:
            stream.seek(offset)
            return stream.readinto(buffer)  # type: ignore[attr-defined,no-any-return]

    return read
