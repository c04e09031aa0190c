"""Journals and documents named by an fsspec URL (``s3://``, ``gs://``, ``az://``, ``http(s)://``,
``file://``): opened, sized, listed and read by byte ranges through fsspec, so a local check and
a Dask worker read an object the same way (docs/cluster.md, "Object storage").

Credentials come from each filesystem's usual places (``~/.aws``, ``AWS_*`` variables, gcloud's
application default credentials, ``AZURE_STORAGE_*``...): pairling_fast never takes or stores one.
A URL is only ever shown redacted (``https://***@host/...``), and every error raised here is an
``OSError`` with a one-line ``strerror`` naming the redacted URL, whatever the filesystem raised
(botocore, aiohttp and friends put URLs, and sometimes signed query strings, in their messages).
"""

from __future__ import annotations

import errno
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
    "Redacted",
    "RemoteFile",
    "RemoteObject",
    "is_url",
    "listing",
    "opened",
    "redact",
    "stat",
]

T = TypeVar("T")

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# ``scheme://user:password@`` or ``scheme://token@``: what a URL may carry as a credential.
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s?#]+@")
# Query parameters that carry a secret (pre-signed S3/GCS URLs, Azure SAS tokens).
_SECRET_QUERY = re.compile(
    r"(?i)(?P<name>[?&](?:x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature"
    r"|x-goog-credential|signature|sig|token|access_token|awsaccesskeyid))=[^&\s#'\"]*"
)


def is_url(text: str) -> bool:
    """Whether ``text`` names a resource by URL (``scheme://...``) rather than a local path."""
    return _URL.match(text) is not None


def redact(text: str) -> str:
    """``text`` with any ``user:password@`` of a URL and any signature in its query masked."""
    text = _USERINFO.sub(r"\g<scheme>***@", text)
    return _SECRET_QUERY.sub(r"\g<name>=***", text)


class Redacted:
    """A path or URL carried as a task argument: Dask logs a failed task with its arguments'
    ``repr``, which here is redacted; ``text`` is the URL itself, for the worker to read."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Redacted({redact(self.text)!r})"

    def __reduce__(self) -> tuple[type[Redacted], tuple[str]]:
        return Redacted, (self.text,)


@dataclass(frozen=True)
class RemoteObject:
    """What a listing or ``stat`` says of one object: its URL (as given, not redacted), size
    (None when the server does not say) and version tag (ETag, generation or version id)."""

    url: str
    size: int | None
    version: str | None


# The extra (pyproject.toml) that installs each protocol's filesystem.
_EXTRAS = {
    "s3": "s3",
    "s3a": "s3",
    "gs": "gcs",
    "gcs": "gcs",
    "az": "azure",
    "abfs": "azure",
    "abfss": "azure",
    "adl": "azure",
    "http": "http",
    "https": "http",
}


def _missing_package(url: str, error: ImportError) -> OSError:
    """The one line for a protocol whose filesystem is not installed: the extra to install."""
    scheme = url.split("://", 1)[0].lower()
    extra = _EXTRAS.get(scheme)
    if extra is None:
        return _error(url, f"{scheme}:// needs a package not installed: {_one_line(error)}")
    return _error(
        url, f"{scheme}:// needs the [{extra}] extra: pip install 'pairling_fast[{extra}]'"
    )


def _filesystem(url: str) -> tuple[Any, str]:
    try:
        from fsspec.core import url_to_fs  # type: ignore[import-untyped]
    except ImportError as error:
        raise _missing_package(url, error) from None
    try:
        bare, authorization = _http_credentials(url)
        if authorization is not None:
            headers = {"Authorization": authorization}
            filesystem, path = url_to_fs(bare, client_kwargs={"headers": headers})
        else:
            filesystem, path = url_to_fs(url)
        return filesystem, str(path)
    except ImportError as error:
        raise _missing_package(url, error) from None
    except ValueError as error:
        raise _error(url, _one_line(error)) from None


def _http_credentials(url: str) -> tuple[str, str | None]:
    """(``url`` without ``user:password@``, the Basic ``Authorization`` header of them or None):
    fsspec and aiohttp log the URLs they fetch at DEBUG level, so the password must not be in
    one."""
    import base64
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or "@" not in parts.netloc:
        return url, None
    host = parts.netloc.rpartition("@")[2]
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    token = base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return urlunsplit(parts._replace(netloc=host)), f"Basic {token}"


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return redact(text[0] if text else type(error).__name__)


def _error(url: str, reason: str, number: int = errno.EIO) -> OSError:
    """``OSError(number, reason, redacted url)``: ``str()`` names the URL, ``strerror`` is the
    reason alone (a report already shows the path next to it)."""
    return OSError(number, reason, redact(url))


def _status(error: BaseException) -> int | None:
    """The HTTP status behind ``error`` (fsspec's HTTP filesystem turns every failed ``info``
    into ``FileNotFoundError`` and keeps aiohttp's error as its cause)."""
    seen: BaseException | None = error
    while seen is not None:
        status = getattr(seen, "status", None)
        if isinstance(status, int):
            return status
        seen = seen.__cause__ or seen.__context__
    return None


def _translated(url: str, error: BaseException) -> OSError:
    """A filesystem's exception as a one-line ``OSError`` naming the redacted URL."""
    status = _status(error)
    if isinstance(error, PermissionError) or status in (401, 403):
        return _error(url, "access denied" + (f" (HTTP {status})" if status else ""), errno.EACCES)
    if isinstance(error, FileNotFoundError):
        return _error(url, "no such object or bucket", errno.ENOENT)
    if isinstance(error, IsADirectoryError):
        return _error(url, "is a prefix (a directory), not an object", errno.EISDIR)
    if isinstance(error, OSError) and error.filename == redact(url):
        return error  # already ours
    return _error(url, f"cannot be read: {type(error).__name__}: {_one_line(error)}")


@contextmanager
def translated_errors(url: str) -> Iterator[None]:
    """Any exception of reading ``url`` (except Ctrl-C) re-raised as a one-line ``OSError``."""
    try:
        yield
    except Exception as error:
        raise _translated(url, error) from None


def bare_errors(run: Callable[[], T]) -> T:
    """``run()`` with its ``OSError`` re-raised bare (errno, message, file name, nothing chained).
    For a task on a Dask worker: its exception goes back to the driver pickled with its chain,
    and a filesystem's exceptions do not always pickle (aiohttp's keep the response headers),
    which would reach the driver as a plain ``Exception``."""
    try:
        return run()
    except OSError as error:
        bare = OSError(error.errno, error.strerror or str(error), error.filename)
    raise bare  # outside the handler: nothing is chained to it


def _version(info: dict[str, Any]) -> str | None:
    for key in ("VersionId", "generation", "version_id", "ETag", "etag", "ETAG", "mtime"):
        value = info.get(key)
        if value not in (None, ""):
            return f"{key}:{str(value).strip(chr(34))}"
    return None


def stat(url: str) -> RemoteObject:
    """The object at ``url`` (``OSError`` if it is missing, unreadable, or a prefix)."""
    with translated_errors(url):
        filesystem, path = _filesystem(url)
        info = filesystem.info(path)
        if info.get("type") == "directory":
            raise IsADirectoryError(url)
        size = info.get("size")
        return RemoteObject(url, int(size) if size is not None else None, _version(info))


def listing(url: str) -> list[RemoteObject]:
    """The objects at ``url``: the object itself, or every object under the prefix, sorted."""
    with translated_errors(url):
        filesystem, path = _filesystem(url)
        try:
            info = filesystem.info(path)
        except FileNotFoundError:
            if url.endswith("/") and _container_exists(url, filesystem, path):
                return []  # an empty prefix, as an empty folder: nothing to check (exit 5)
            raise
        if info.get("type") != "directory":
            size = info.get("size")
            return [RemoteObject(url, int(size) if size is not None else None, _version(info))]
        protocol = url[: url.index("://") + 3]
        found = filesystem.find(path, detail=True)
        objects = []
        for name, entry in sorted(found.items()):
            if entry.get("type") == "directory":
                continue
            unstripped = filesystem.unstrip_protocol(name)
            child = unstripped if is_url(unstripped) else protocol + name
            size = entry.get("size")
            objects.append(
                RemoteObject(child, int(size) if size is not None else None, _version(entry))
            )
        return objects


def _container_exists(url: str, filesystem: Any, path: str) -> bool:
    """Whether the bucket (container) a prefix is in exists: object stores have no folders, so
    a prefix with no object under it is only told from a mistyped bucket this way."""
    if _EXTRAS.get(url.split("://", 1)[0].lower()) not in ("s3", "gcs", "azure"):
        return False
    bucket = path.strip("/").split("/", 1)[0]
    return bool(bucket) and bucket != path.strip("/") and bool(filesystem.exists(bucket))


@contextmanager
def opened(url: str) -> Iterator[RemoteFile]:
    """``url`` opened for reading by byte ranges (``seek``/``read``: fsspec fetches the ranges it
    needs, a few MiB at a time, so memory stays bounded whatever the object's size). Errors on
    opening and on every read are one-line ``OSError``s naming the redacted URL."""
    with translated_errors(url):
        filesystem, path = _filesystem(url)
        handle = filesystem.open(path, "rb")
    try:
        yield RemoteFile(handle, url)
    finally:
        try:
            handle.close()
        except Exception:  # closing a read-only handle that already failed: nothing to keep
            pass


class RemoteFile:
    """An object opened for reading: a binary file whose ``read``/``seek`` errors are one-line
    ``OSError``s naming the redacted URL."""

    def __init__(self, handle: Any, url: str) -> None:
        self._handle = handle
        self._url = url
        self.name = redact(url)

    def read(self, size: int = -1) -> bytes:
        with translated_errors(self._url):
            data: bytes = self._handle.read(size)
            return data

    def readline(self, size: int = -1) -> bytes:
        with translated_errors(self._url):
            data: bytes = self._handle.readline(size)
            return data

    def seek(self, offset: int, whence: int = 0) -> int:
        with translated_errors(self._url):
            return int(self._handle.seek(offset, whence))

    def tell(self) -> int:
        return int(self._handle.tell())

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line
