"""What uvicorn's access log may show of a request: tokens are never logged.

A client may put a token where none belongs, under any name (``?bearer=``,
``?api-key=``) or in the path. The API refuses it there, but the access log has
the URL already, so the log line is masked: every query value but those of
:data:`LOGGED_PARAMETERS`, and anything shaped like a token.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote

__all__ = ["LOGGED_PARAMETERS", "RedactSecrets", "redact_target"]

# The query parameters whose values the log shows: numbers, switches, words from a
# fixed list, times and cursors, which hold no secret and no memory text.
LOGGED_PARAMETERS = frozenset(
    {
        "_",
        "after",
        "before",
        "buckets",
        "created_since",
        "created_until",
        "cursor",
        "depth",
        "drain",
        "end",
        "field",
        "format",
        "has_key",
        "include_system",
        "include_tools",
        "limit",
        "order",
        "since",
        "state",
        "unit",
        "until",
    }
)
# A name shown as it is (its value masked); a longer one, or one of other characters,
# may itself be the secret.
PARAMETER_NAME = re.compile(r"[A-Za-z0-9_.-]{1,32}")
# A recalld token (rcd_<id>_<secret>, see recalld.tokens) or what is left of one: its
# public id is kept.
TOKEN_SHAPE = re.compile(r"(?<![A-Za-z0-9])rcd_(?:([0-9a-f]{16})_)?[A-Za-z0-9_-]+")
MASK = "***"
# How many layers of percent-escapes are decoded looking for a token ("%2520" is two).
MAX_UNQUOTES = 4
# What a decoded target may not show as it is: anything but visible ASCII and the space.
UNSAFE = re.compile(r"[^\x21-\x7e]")


def _mask_tokens(text: str) -> str:
    return TOKEN_SHAPE.sub(
        lambda found: f"rcd_{found[1]}_{MASK}" if found[1] else f"rcd_{MASK}", text
    )


def _mask_parameter(parameter: str) -> str:
    name, equals, _ = parameter.partition("=")
    if not parameter or name in LOGGED_PARAMETERS:
        return parameter
    if equals and PARAMETER_NAME.fullmatch(name):
        return f"{name}={MASK}"
    return MASK  # a bare word or an odd name: it may be the secret itself


def redact_target(target: str) -> str:
    """``target`` (a request's path and query) as the access log may show it: every
    query value masked but those of :data:`LOGGED_PARAMETERS`, and any token masked."""
    path, question, query = target.partition("?")
    if question:
        path += "?" + "&".join(_mask_parameter(part) for part in query.split("&"))
    masked = _mask_tokens(path)
    decoded = masked
    for _ in range(MAX_UNQUOTES):
        once = unquote(decoded)
        if once == decoded:
            break
        decoded = once
    if decoded != masked and TOKEN_SHAPE.search(decoded):
        # A token behind escapes ("Bearer%20rcd_…", "%3Drcd_…", "rcd%5F…", "%2520rcd_…"):
        # the line shows the target decoded, the token masked, and every character that
        # is not visible ASCII escaped again (a decoded line break would forge a line).
        masked = UNSAFE.sub(_escape, _mask_tokens(decoded))
    return masked


def _escape(found: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in found[0].encode("utf-8"))


class RedactSecrets(logging.Filter):
    """Mask what may be a secret in uvicorn's access log lines (see :func:`redact_target`):
    tokens are never logged, even one sent where none belongs."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and len(record.args) >= 3:
            target = record.args[2]
            if isinstance(target, str):
                record.args = (*record.args[:2], redact_target(target), *record.args[3:])
        return True
