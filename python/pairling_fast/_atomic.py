"""Write a destination without destroying it: readers see the old content or the new one.

Every command that writes a document (``seal``, ``chain``, ``canonicalize -o``, ``check -o``,
``generate … -o``) goes through ``atomic_write``. What the destination is decides how:

- a regular file (or nothing yet): a temporary file beside it, renamed over it; the new file
  keeps the old one's owner, group and permissions (setuid/setgid are dropped when the owner or
  group cannot be kept);
- a symbolic link: followed, always; the file it points to is the destination (a dangling link
  creates its target, as the shell's ``>`` does);
- a character device or a FIFO (``/dev/null``, ``/dev/stdout``, a pipe): written into directly
  once the whole content is ready (spooled to an anonymous temporary file), which is not atomic
  (a note says so);
- a directory, a block device or a socket: refused, nothing is written.

Temporary files are named ``.<name>.<pid>.<random>.pairling-fast-tmp`` (``TEMPORARY_SUFFIX``):
``check`` skips them, and those left by a process that no longer runs (killed mid-write) are
removed by the next write to the same destination. Errors name the user's path, not the temporary.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Union

from ._files import special_file_kind

__all__ = ["TEMPORARY_SUFFIX", "atomic_write", "is_temporary_name", "write_atomically"]

PathLike = Union[str, "os.PathLike[str]"]

TEMPORARY_SUFFIX = ".pairling-fast-tmp"
# A temporary's name must fit NAME_MAX (255) whatever the destination's name is.
_NAME_PART = 160
_COPY_BLOCK = 1 << 20


def is_temporary_name(name: str) -> bool:
    """Whether a file name is one of ``atomic_write``'s temporary files."""
    return name.startswith(".") and name.endswith(TEMPORARY_SUFFIX)


@contextmanager
def atomic_write(
    destination: PathLike,
    *,
    mode: int | None = None,
    fsync: bool = True,
    notes: list[str] | None = None,
) -> Iterator[IO[bytes]]:
    """A binary file to write ``destination``'s new content to (see the module for what each
    kind of destination gets).

    For a regular file, when the block ends normally the temporary file is fsynced, given
    ``mode`` (default: the permissions of the file it replaces, else those the umask allows a new
    file) and the replaced file's owner, renamed over ``destination``, and the directory is
    fsynced so the rename survives a crash. If the block raises, the temporary file is removed
    and ``destination`` is untouched. ``fsync=False`` skips both fsyncs (tests, throwaway
    output). What the user should know (a device written directly, hard links that keep the old
    content, permission bits dropped) is appended to ``notes``.
    """
    shown = os.fspath(destination)
    said = notes if notes is not None else []
    target, info = _resolve(Path(shown))
    if info is not None and not stat.S_ISREG(info.st_mode):
        with _write_directly(target, info, shown, said) as stream:
            yield stream
        return
    with _replace(target, info, shown, mode, fsync, said) as stream:
        yield stream


def write_atomically(
    destination: PathLike,
    data: bytes,
    *,
    mode: int | None = None,
    notes: list[str] | None = None,
) -> None:
    """Replace ``destination`` with ``data`` through ``atomic_write``."""
    with atomic_write(destination, mode=mode, notes=notes) as stream:
        stream.write(data)


def _resolve(path: Path) -> tuple[Path, os.stat_result | None]:
    """The file a write to ``path`` really goes to (symbolic links followed) and its status."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        # Nothing there, or a dangling link: the link's final target is created.
        return (Path(os.path.realpath(path)) if path.is_symlink() else path), None
    except OSError as error:
        raise _named(error, path) from None
    if stat.S_ISREG(info.st_mode) and path.is_symlink():
        return Path(os.path.realpath(path)), info
    return path, info


@contextmanager
def _write_directly(
    target: Path, info: os.stat_result, shown: str, notes: list[str]
) -> Iterator[IO[bytes]]:
    kind = info.st_mode
    if not (stat.S_ISCHR(kind) or stat.S_ISFIFO(kind)):
        what = special_file_kind(kind)
        raise OSError(errno.EINVAL, f"is {what}: refusing to write to it", shown)
    what = special_file_kind(kind)
    notes.append(f"{shown} is {what}: written into directly, not atomically")
    # Imported here, not with the package: only writing into a device or pipe needs them (with
    # `secrets`, now `os.urandom`, they were 14 ms of `import pairling_fast`).
    import shutil
    import tempfile

    # The content is spooled first, so a writer that fails half way sends nothing at all.
    with tempfile.TemporaryFile() as spool:
        yield spool
        spool.seek(0)
        try:
            # No O_CREAT, no O_TRUNC: the node is written into, never replaced.
            with os.fdopen(os.open(target, os.O_WRONLY), "wb") as stream:
                shutil.copyfileobj(spool, stream, _COPY_BLOCK)
        except OSError as error:
            raise _named(error, shown, target) from None


@contextmanager
def _replace(
    target: Path,
    info: os.stat_result | None,
    shown: str,
    mode: int | None,
    fsync: bool,
    notes: list[str],
) -> Iterator[IO[bytes]]:
    directory = target.parent
    _remove_stale_temporaries(directory, target.name)
    prefix = f".{target.name[:_NAME_PART]}.{os.getpid()}."
    temporary = directory / f"{prefix}{os.urandom(4).hex()}{TEMPORARY_SUFFIX}"
    try:
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        raise _named(error, shown) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
            stream.flush()
            if fsync:
                os.fsync(stream.fileno())
        _keep_identity(temporary, info, mode, shown, notes)
        os.replace(temporary, target)
    except BaseException as failure:
        temporary.unlink(missing_ok=True)
        if isinstance(failure, OSError):
            raise _named(failure, shown, temporary) from None
        raise
    if info is not None and info.st_nlink > 1:
        others = info.st_nlink - 1
        notes.append(
            f"{shown} had {others} other hard link{'s' if others > 1 else ''}: "
            "replaced atomically, so the other names keep the old content"
        )
    if fsync:
        _fsync_directory(directory)


def _keep_identity(
    temporary: Path, info: os.stat_result | None, mode: int | None, shown: str, notes: list[str]
) -> None:
    """The replaced file's owner, group and mode on the new file. Owner first: chown clears the
    setuid/setgid bits, so the mode is set after it."""
    wanted = mode if mode is not None else (_umask_mode() if info is None else info.st_mode)
    wanted = stat.S_IMODE(wanted)
    owned = hasattr(os, "geteuid")  # not on Windows: no owners to keep there
    if owned and info is not None and (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.chown(temporary, info.st_uid, info.st_gid)
        except PermissionError:
            # Kept only the group, or nothing: a setuid/setgid bit must not move to our id.
            try:
                os.chown(temporary, -1, info.st_gid)
            except PermissionError:
                pass
            if wanted & (stat.S_ISUID | stat.S_ISGID):
                wanted &= ~(stat.S_ISUID | stat.S_ISGID)
                notes.append(
                    f"{shown}: its owner {info.st_uid}:{info.st_gid} could not be kept, so "
                    "the setuid/setgid bits were dropped"
                )
    os.chmod(temporary, wanted)


def _umask_mode() -> int:
    current = os.umask(0)
    os.umask(current)
    return 0o666 & ~current


def _remove_stale_temporaries(directory: Path, name: str) -> None:
    """Remove the temporaries of earlier writes to ``name`` whose process is gone."""
    prefix = f".{name[:_NAME_PART]}."
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return  # the write itself will report why the directory is unusable
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(TEMPORARY_SUFFIX)):
            continue
        pid_text = entry.name[len(prefix) :].split(".", 1)[0]
        if pid_text.isdigit() and not _running(int(pid_text)):
            try:
                os.unlink(entry.path)
            except OSError:
                pass


def _running(pid: int) -> bool:
    if os.name == "nt":
        return True  # os.kill would terminate it there; leftovers stay (check skips them)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _named(error: OSError, path: PathLike, ours: Path | None = None) -> OSError:
    """The same error, naming the user's path instead of ``ours`` (the temporary) or nothing.
    An error that names another file (the input, read inside the block) is kept as it is."""
    if error.errno is None or (
        error.filename is not None and ours is not None and error.filename != os.fspath(ours)
    ):
        return error
    named = OSError(error.errno, error.strerror or os.strerror(error.errno), os.fspath(path))
    return named


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
