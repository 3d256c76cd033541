"""How a tool's arguments are read before validation, as LLMs send them.

The MCP SDK reads any string argument as JSON when the parameter's type is not exactly
``str`` (Claude Desktop sends lists and objects as JSON text: ``"[\\"a\\", \\"b\\"]"``).
An optional text parameter (``str | None``) is not exactly ``str``, so the SDK read
its text as JSON too: ``"null"`` became None (a write naming namespace ``"null"``
went to the server's namespace, a key ``"null"`` was dropped) and ``"[1, 2]"`` a list
that the parameter then refused. :class:`TextKeptMetadata` keeps the SDK's reading for
parameters that take no text, and keeps the text for those that take it.

It overrides a method of the SDK's (``pre_parse_json``); an SDK release that moves the
module fails the import, and :func:`check_text_kept` (run when the server's tools are
built) refuses one that no longer calls the method, rather than silently reading
``"null"`` as null again.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata, func_metadata

from recalld.errors import RecalldError

__all__ = ["TextKeptMetadata", "check_text_kept", "takes_text"]


def takes_text(annotation: Any) -> bool:
    """Whether a parameter of type ``annotation`` accepts a string as it is."""
    if annotation is str:
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return takes_text(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(takes_text(member) for member in get_args(annotation))
    if origin is Literal:
        return any(isinstance(value, str) for value in get_args(annotation))
    return False


class TextKeptMetadata(FuncMetadata):
    """The SDK's argument metadata, but a string given to a parameter that takes text
    stays that string (see the module docstring)."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        """Parse JSON text given for list, object and number parameters, as the SDK
        does; keep the text given to a parameter that takes text."""
        parsed = super().pre_parse_json(data)
        textual = {
            info.alias or name
            for name, info in self.arg_model.model_fields.items()
            if takes_text(info.annotation)
        }
        return {
            key: data[key] if key in textual and isinstance(data[key], str) else value
            for key, value in parsed.items()
        }

    @classmethod
    def of(cls, metadata: FuncMetadata) -> TextKeptMetadata:
        """``metadata`` (as the SDK built it for a function) with text kept."""
        # Every field the SDK's metadata has, so one a later release adds is not dropped.
        return cls(**{name: getattr(metadata, name) for name in FuncMetadata.model_fields})


def _probe(text: str | None = None) -> str | None:
    """A tool signature with an optional text argument, for :func:`check_text_kept`."""
    return text


def check_text_kept() -> None:
    """Refuse an MCP SDK whose argument validation no longer goes through
    :meth:`TextKeptMetadata.pre_parse_json`: the text ``"null"`` must stay text."""
    kept = TextKeptMetadata.of(func_metadata(_probe)).validate_arguments({"text": "null"})
    if kept != {"text": "null"}:
        raise RecalldError(
            "the installed MCP SDK no longer calls FuncMetadata.pre_parse_json, through "
            "which recalld keeps text arguments as sent (an optional text argument "
            '"null" would be read as null): install the mcp release pyproject.toml pins'
        )
