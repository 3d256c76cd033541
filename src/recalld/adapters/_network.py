"""Bind addresses, shared by ``recalld serve`` and ``recalld mcp --transport http``."""

from __future__ import annotations

import errno
import ipaddress
import os
import socket

from recalld.errors import ValidationError

__all__ = [
    "KEEP_ALIVE_SECONDS",
    "base_url",
    "bind_address",
    "check_listen",
    "free_port",
    "host_name",
    "is_loopback",
]

# How long an idle keep-alive connection stays open. uvicorn's default (5 s) equals
# httpx's pool expiry (5 s) and exceeds Node's (4 s) by little: the server closed a
# connection just as a client sent its next request on it, which failed at the
# transport level (13 of 9,000 requests from 100 clients). A server that waits longer
# than its clients' pools leaves the close to the client, which never races its own
# send. 75 s is nginx's default, above httpx, aiohttp (15 s), Node and a load
# balancer's usual 60 s; an idle connection costs one socket.
KEEP_ALIVE_SECONDS = 75


def bind_address(host: str) -> str:
    """The address to hand the socket layer: trimmed, without URL brackets (``[::1]``)."""
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return text


def base_url(host: str, port: int) -> str:
    """``http://host:port`` for a bind address (an IPv6 address in brackets, once)."""
    address = bind_address(host)
    shown = f"[{address}]" if ":" in address else address
    return f"http://{shown}:{port}"


def free_port(host: str) -> int:
    """A port free on ``host`` now, for a server told to listen on port 0: chosen before
    it starts, so it can say where it listens (uvicorn's own choice is not told)."""
    found = socket.getaddrinfo(bind_address(host) or None, 0, type=socket.SOCK_STREAM)
    family, kind, protocol, _, address = found[0]
    with socket.socket(family, kind, protocol) as probe:
        probe.bind(address)
        return int(probe.getsockname()[1])


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address, ``[::1]``, or ``localhost`` in any case) only accepts
    connections from this machine."""
    address = bind_address(host)
    if address.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def check_listen(host: str, port: int, *, choose: str) -> None:
    """Refuse, before anything starts, an address this machine cannot listen on.

    Every address ``host`` resolves to is bound and released again as the server
    (asyncio, under uvicorn) will bind it, so a port already in use is one line naming
    it and how to ``choose`` another (``ValidationError`` on ``port``), not uvicorn's
    error after the banner and the application's startup.
    """
    try:
        found = socket.getaddrinfo(
            bind_address(host) or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as error:
        raise ValidationError("host", f"cannot listen on {host}: {error.strerror}") from None
    for family, kind, protocol, _, address in found:
        try:
            probe = socket.socket(family, kind, protocol)
        except OSError:
            continue  # a family this machine lacks (no IPv6): the server skips it too
        with probe:
            if os.name == "posix":
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(address)
            except OSError as error:
                if error.errno == errno.EADDRINUSE:
                    raise ValidationError(
                        "port",
                        f"{port} on {host} is already in use (another server?); choose"
                        f" another with {choose}",
                    ) from None
                raise ValidationError(
                    "host", f"cannot listen on {host} port {port}: {error.strerror}"
                ) from None


def host_name(header: str) -> str:
    """The name in an HTTP ``Host`` header, without its port (``[::1]:8765`` → ``[::1]``)."""
    text = header.strip()
    if text.startswith("["):
        return text[: text.find("]") + 1] if "]" in text else text
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text
