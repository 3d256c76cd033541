"""How a tool's arguments are read before validation, as LLMs send them.

The MCP SDK reads any string argument as JSON when the parameter's type is not exactly
``str`` (Claude Desktop sends lists and objects as JSON text: ``"[\\"a\\", \\"b\\"]"``).
An optional text parameter (``str | None``) is not exactly ``str``, so the SDK read
its text as JSON too: ``"null"`` became None (a write naming namespace ``"null"``
went to the server's namespace, a key ``"null"`` was dropped) and ``"[1, 2]"`` a list
that the parameter then refused. :class:`TextKeptMetadata` keeps the SDK's reading for
parameters that take no text, and keeps the text for those that take it.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata

__all__ = ["TextKeptMetadata", "takes_text"]


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
        return cls(
            arg_model=metadata.arg_model,
            output_schema=metadata.output_schema,
            output_model=metadata.output_model,
            wrap_output=metadata.wrap_output,
        )
