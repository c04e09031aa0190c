"""Where ``pairling-fast diff`` reads a map from: a file, ``-`` (standard input), an fsspec URL,
or ``REV:PATH``, the file at a git revision (``git show REV:PATH``, so a CI job can diff
``origin/main:maps/map.json`` against ``maps/map.json``; PATH is from the repository's root, or
``REV:./PATH`` from the current directory, as git reads it). A path that exists is a path even
when it holds a colon. Every failure is an ``OSError`` with a one-line reason.
"""

from __future__ import annotations

import errno
import os
import sys

from . import remote
from ._files import DocumentTooLarge, max_document_bytes, read_document

__all__ = ["STDIN", "read_map_source"]

STDIN = "-"


def _bounded(data: bytes, label: str, bound: int) -> bytes:
    if len(data) > bound:
        raise DocumentTooLarge(label, len(data), bound)
    return data


def _git_revision(spec: str, bound: int) -> bytes:
    # A spec starting with "-" would be read by git as an option.
    if spec.startswith("-"):
        raise OSError(errno.EINVAL, "not a file, URL or REV:PATH", spec)
    import subprocess  # only for REV:PATH: `import pairling_fast` stays lean

    try:
        with subprocess.Popen(
            ["git", "show", "--no-textconv", spec],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        ) as process:
            assert process.stdout is not None and process.stderr is not None
            data = process.stdout.read(bound + 1)
            if len(data) > bound:
                process.kill()
                raise DocumentTooLarge(spec, len(data), bound)
            reason = process.stderr.read().decode("utf-8", "replace").strip()
            returncode = process.wait()
    except FileNotFoundError:
        raise OSError(errno.ENOENT, "no such file, and git is not installed", spec) from None
    if returncode != 0:
        first = reason.splitlines()[0] if reason else f"git show exited {returncode}"
        raise OSError(errno.ENOENT, f"no such file, nor in git: {first}", spec)
    return data


def read_map_source(spec: str, limit: int | None = None) -> tuple[bytes, str]:
    """The bytes of the map ``spec`` names and the label to report it by (a URL redacted)."""
    bound = max_document_bytes(limit)
    if spec == STDIN:
        return _bounded(sys.stdin.buffer.read(bound + 1), "<stdin>", bound), "<stdin>"
    if os.path.lexists(spec):
        return read_document(spec, limit), spec
    if remote.is_url(spec):
        label = remote.redact(spec)
        with remote.opened(spec) as handle:
            return _bounded(handle.read(bound + 1), label, bound), label
    if ":" in spec and not spec.startswith(":"):
        return _git_revision(spec, bound), spec
    return read_document(spec, limit), spec
