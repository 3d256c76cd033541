"""Bind addresses, shared by ``recalld serve`` and ``recalld mcp --transport http``."""

from __future__ import annotations

import ipaddress

__all__ = ["bind_address", "is_loopback"]


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
