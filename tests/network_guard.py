"""Refuses network access from inside the test process (conftest.py turns it on for the whole
suite): pairling_fast never uses the network, so any attempt is a bug the suite must surface."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

# TEST-NET-1 (RFC 5737): never routed, so a proxied request could not leave either.
UNREACHABLE_PROXY = "http://192.0.2.1:9"
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")


class NetworkAccessRefused(OSError):
    """Raised instead of opening a connection or resolving a name."""


def _is_local(address: Any) -> bool:
    if not isinstance(address, tuple):
        return True  # an AF_UNIX path: not the network
    host = address[0]
    if host in (None, "", "localhost"):
        return True  # binding or naming this machine
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextmanager
def network_refused(*, loopback_allowed: bool) -> Iterator[list[str]]:
    """Within the block every outgoing connection and name lookup raises NetworkAccessRefused
    (loopback excepted if ``loopback_allowed``, for tools that talk to themselves); yields the
    list of refused attempts."""
    attempts: list[str] = []

    def refuse(what: str) -> None:
        attempts.append(what)
        raise NetworkAccessRefused(f"network access refused in tests: {what}")

    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex
    original_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> None:
        if not (loopback_allowed and _is_local(address)):
            refuse(f"connect {address!r}")
        original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if not (loopback_allowed and _is_local(address)):
            refuse(f"connect_ex {address!r}")
        return original_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not (loopback_allowed and _is_local((host,))):
            refuse(f"getaddrinfo {host!r}")
        return original_getaddrinfo(host, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", connect)
        patch.setattr(socket.socket, "connect_ex", connect_ex)
        patch.setattr(socket, "getaddrinfo", getaddrinfo)
        if not loopback_allowed:

            def no_socket(*args: Any, **kwargs: Any) -> socket.socket:
                refuse(f"socket{args!r}")
                raise AssertionError("unreachable")

            def no_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
                refuse(f"create_connection {address!r}")
                raise AssertionError("unreachable")

            patch.setattr(socket, "socket", no_socket)
            patch.setattr(socket, "create_connection", no_connection)
        for variable in PROXY_VARIABLES:
            patch.setenv(variable, UNREACHABLE_PROXY)
        yield attempts
