"""Bind addresses, shared by ``recalld serve`` and ``recalld mcp --transport http``."""

from __future__ import annotations

import ipaddress

__all__ = ["bind_address", "host_name", "is_loopback"]


def bind_address(host: str) -> str:
    """The address to hand the socket layer: trimmed, without URL brackets (``[::1]``)."""
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return text


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


def host_name(header: str) -> str:
    """The name in an HTTP ``Host`` header, without its port (``[::1]:8765`` → ``[::1]``)."""
    text = header.strip()
    if text.startswith("["):
        return text[: text.find("]") + 1] if "]" in text else text
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text
