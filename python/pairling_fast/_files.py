"""Reading whole documents from files, bounded.

A capability map, an RPC result or a wire-schema bundle is one JSON document that is held in
memory whole, so it is read only from a regular file and only up to a size limit
(``DEFAULT_MAX_DOCUMENT_BYTES``, or ``$PAIRLING_FAST_MAX_DOCUMENT_BYTES``, or the caller's):
``/dev/zero`` is never read forever, a FIFO never blocks the reader (docs/limits.md).
"""

from __future__ import annotations

import errno
import os
import stat

__all__ = [
    "DEFAULT_MAX_DOCUMENT_BYTES",
    "LIMIT_VARIABLE",
    "DocumentTooLarge",
    "max_document_bytes",
    "read_document",
    "special_file_kind",
]

DEFAULT_MAX_DOCUMENT_BYTES = 256 << 20
LIMIT_VARIABLE = "PAIRLING_FAST_MAX_DOCUMENT_BYTES"


class DocumentTooLarge(OSError):
    """A document over the size limit: refused before it is read (PF502 in ``check``)."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(
            errno.EFBIG,
            f"document of {size} bytes is over the limit of {limit} bytes "
            f"(--max-document-bytes, ${LIMIT_VARIABLE})",
            path,
        )
        self.size = size
        self.limit = limit


def max_document_bytes(limit: int | None = None) -> int:
    """The limit in force: ``limit`` if given, else the environment's, else the default."""
    if limit is not None:
        return limit
    configured = os.environ.get(LIMIT_VARIABLE, "").strip()
    if configured.isdigit():
        return int(configured)
    return DEFAULT_MAX_DOCUMENT_BYTES


def special_file_kind(mode: int) -> str:
    """What a file that is not a regular file is, for messages ("a FIFO")."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_document(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the regular file at ``path``, refusing other files (``OSError`` EINVAL) and
    files over ``max_document_bytes(limit)`` (``DocumentTooLarge``)."""
    bound = max_document_bytes(limit)
    shown = os.fsdecode(os.fspath(path))
    # O_NONBLOCK: opening a FIFO must not wait for a writer; a regular file ignores the flag.
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            what = special_file_kind(info.st_mode)
            raise OSError(errno.EINVAL, f"is {what}: a document is read from a regular file", shown)
        if info.st_size > bound:
            raise DocumentTooLarge(shown, info.st_size, bound)
        if hasattr(os, "O_NONBLOCK"):
            os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    with os.fdopen(descriptor, "rb") as stream:
        data = stream.read(bound + 1)  # the file may have grown since
    if len(data) > bound:
        raise DocumentTooLarge(shown, len(data), bound)
    return data
