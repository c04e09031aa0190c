"""The walk: turn the paths ``check_paths`` is given into the regular files to check, and every
other thing met (excluded, a link not followed, a loop, a device, the same file twice) into a
``Skipped`` with its reason, so nothing is ignored silently.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import remote
from ._atomic import is_temporary_name
from ._files import special_file_kind
from .codes import UNREADABLE
from .errors import PairlingError
from .report import Finding
from .results import FileResult, Skipped

__all__ = ["DEFAULT_EXCLUDES", "STDIN", "Candidate", "PathArgumentError", "Walker", "os_reason"]

DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    ".benchmarks",
    "target",
    "dist",
    "build",
    "*.egg-info",
)
"""Directories of tools, VCS and build outputs that hold no documents to check (a built clone has
thousands of files under ``target/``): listed as skipped when met while walking. A path named
explicitly is checked even when one of these matches it."""


class PathArgumentError(PairlingError, OSError):
    """A path named on the command line (or given to ``check_paths``) does not exist or cannot
    be opened at all."""


@dataclass(frozen=True)
class Candidate:
    path: Path
    display: str
    size: int
    stream: bool = False  # "-" (stdin), or a FIFO named on the command line
    url: str | None = None  # an object read through fsspec (``remote``); ``path`` is its name


STDIN = "-"
_TEMPORARY_REASON = "temporary file of a pairling-fast write (in progress, or left by a kill)"


def os_reason(error: OSError) -> str:
    return error.strerror or str(error)


class Walker:
    """Collects the regular files under the given paths; everything else becomes ``Skipped``."""

    def __init__(
        self, excludes: Sequence[str], follow_symlinks: bool, named_excludes: Sequence[str]
    ) -> None:
        self.excludes = tuple(excludes)
        # What applies to the paths named on the command line: the user's own patterns only.
        self.named_excludes = tuple(named_excludes)
        self.follow_symlinks = follow_symlinks
        self.files: list[Candidate] = []
        self.skipped: list[Skipped] = []
        self.unreadable: list[FileResult] = []
        self._files_seen: dict[tuple[int, int], str] = {}
        self._directories_seen: dict[tuple[int, int], str] = {}

    def _excluded_by(
        self, display: str, name: str, patterns: Sequence[str] | None = None
    ) -> str | None:
        posix = display.replace(os.sep, "/")
        for pattern in self.excludes if patterns is None else patterns:
            if fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(posix, pattern):
                return pattern
        return None

    def add_argument(self, raw: str) -> None:
        if raw == STDIN:
            self.files.append(Candidate(Path(raw), raw, 0, stream=True))
            return
        if remote.is_url(raw):
            self._add_objects(raw)
            return
        path = Path(raw)
        display = os.path.normpath(raw)
        # A path the user names is followed even when it is a symlink: they asked for it.
        try:
            info = path.stat()
        except FileNotFoundError:
            if path.is_symlink():
                raise PathArgumentError(f"{raw}: broken symbolic link") from None
            raise PathArgumentError(f"{raw}: no such file or directory") from None
        except OSError as error:
            raise PathArgumentError(f"{raw}: {os_reason(error)}") from None
        pattern = self._excluded_by(display, path.name, self.named_excludes)
        if pattern is not None:
            self.skipped.append(Skipped(display, f"excluded by {pattern!r}"))
        elif stat.S_ISDIR(info.st_mode):
            self._walk(path, display, (), info)
        elif stat.S_ISFIFO(info.st_mode):
            # A pipe named by the user (`check <(cat j.jsonl)`, /dev/stdin): read as a stream.
            # Met in a walk it is skipped (reading it could block), as devices always are.
            self.files.append(Candidate(path, display, 0, stream=True))
        else:
            self._add_file(path, display, info)

    def _walk(
        self,
        directory: Path,
        display: str,
        ancestors: tuple[tuple[int, int], ...],
        info: os.stat_result,
    ) -> None:
        key = (info.st_dev, info.st_ino)
        if key in ancestors:
            self.skipped.append(Skipped(display, "symbolic link loop (leads back to a parent)"))
            return
        if key in self._directories_seen:
            first = self._directories_seen[key]
            self.skipped.append(Skipped(display, f"same directory as {first}, walked once"))
            return
        self._directories_seen[key] = display
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError as error:
            self._unreadable(display, f"cannot list directory: {os_reason(error)}")
            return
        for entry in entries:
            child = os.path.join(display, entry.name) if display != "." else entry.name
            pattern = self._excluded_by(child, entry.name)
            if pattern is not None:
                self.skipped.append(Skipped(child, f"excluded by {pattern!r}"))
                continue
            is_link = entry.is_symlink()
            if is_link and not self.follow_symlinks:
                self.skipped.append(
                    Skipped(child, "symbolic link, not followed (use --follow-symlinks)")
                )
                continue
            try:
                child_info = os.stat(entry.path)
            except FileNotFoundError:
                reason = "broken symbolic link" if is_link else "vanished while walking"
                self.skipped.append(Skipped(child, reason))
                continue
            except OSError as error:
                self._unreadable(child, os_reason(error))
                continue
            if stat.S_ISDIR(child_info.st_mode):
                self._walk(Path(entry.path), child, (*ancestors, key), child_info)
            else:
                self._add_file(Path(entry.path), child, child_info)

    def _add_file(self, path: Path, display: str, info: os.stat_result) -> None:
        if not stat.S_ISREG(info.st_mode):
            self.skipped.append(Skipped(display, f"{special_file_kind(info.st_mode)}, not read"))
            return
        if is_temporary_name(path.name):
            self.skipped.append(Skipped(display, _TEMPORARY_REASON))
            return
        key = (info.st_dev, info.st_ino)
        if key in self._files_seen:
            self.skipped.append(Skipped(display, f"same file as {self._files_seen[key]}"))
            return
        self._files_seen[key] = display
        self.files.append(Candidate(path, display, info.st_size))

    def _add_objects(self, url: str) -> None:
        """The object at ``url``, or every object under the prefix: a missing bucket or object
        is that URL's read error, and the other paths are still checked."""
        display = remote.redact(url)
        try:
            objects = remote.listing(url)
        except OSError as error:
            # As a missing local path: one error line, and the URL listed as not checked.
            reason = os_reason(error)
            self.skipped.append(Skipped(display, f"not checked: {reason}", error=reason))
            return
        for found in objects:
            shown = remote.redact(found.url)
            name = found.url.rstrip("/").rsplit("/", 1)[-1]
            named = found.url == url
            pattern = self._excluded_by(shown, name, self.named_excludes if named else None)
            if pattern is not None:
                self.skipped.append(Skipped(shown, f"excluded by {pattern!r}"))
            else:
                self.files.append(Candidate(Path(name), shown, found.size or 0, url=found.url))

    def _unreadable(self, display: str, reason: str) -> None:
        finding = Finding.of(UNREADABLE, reason, path=display)
        self.unreadable.append(FileResult(display, None, [finding]))
