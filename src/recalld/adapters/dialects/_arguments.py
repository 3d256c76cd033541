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
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin

from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata, func_metadata
from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError

from recalld._text import shown
from recalld.errors import RecalldError
from recalld.model import WHOLE_COUNT, WHOLE_NUMBER

__all__ = [
    "TIME_TEXT",
    "TextKeptMetadata",
    "check_text_kept",
    "check_text_lists",
    "takes_text",
    "text_lists_of",
    "whole_in",
]


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


def text_lists_of(metadata: FuncMetadata) -> frozenset[str]:
    """The arguments (as the caller names them) of a tool whose SDK metadata is
    ``metadata`` that take a list of strings (``tags``): text sent for one is answered
    "for one item send [...]" (failures._text_for_type)."""
    return frozenset(
        info.alias or name
        for name, info in metadata.arg_model.model_fields.items()
        if _is_text_list(info.annotation)
    )


def _is_text_list(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_text_list(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(_is_text_list(member) for member in get_args(annotation))
    return origin is list and get_args(annotation) == (str,)


def _probe_lists(
    tags: list[str], names: Annotated[list[str] | None, Field(alias="entityNames")] = None
) -> None:
    """A tool signature with lists of strings, for :func:`check_text_lists`."""


def check_text_lists() -> None:
    """Refuse an MCP SDK whose tool metadata no longer shows a tool's arguments with their
    types (``FuncMetadata.arg_model``'s fields) as recalld reads them: text sent for a list
    would lose its "send [...]" fix without a word."""
    try:
        found = text_lists_of(func_metadata(_probe_lists))
    except AttributeError as missing:
        found = frozenset({f"none: {missing}"})
    if found != {"tags", "entityNames"}:
        raise RecalldError(
            "the installed MCP SDK no longer describes a tool's arguments as recalld reads "
            f"them (FuncMetadata.arg_model; found lists of strings {sorted(found)}): "
            "install the mcp release pyproject.toml pins"
        )


def whole_in(low: int, high: int, *, count: bool = False) -> BeforeValidator:
    """WHOLE_NUMBER (``count``: WHOLE_COUNT) whose refusal of text or a boolean names the
    range the Field's bounds allow: ``"limit": "5"`` answers "must be an integer from 1
    to 100, got '5'", not only "must be an integer"."""
    # Both are plain one-argument validators (model._given_count, model._whole_number).
    delegate = cast("Callable[[Any], Any]", (WHOLE_COUNT if count else WHOLE_NUMBER).func)

    def check(value: Any) -> Any:
        if isinstance(value, bool | str):
            raise ValueError(f"must be an integer from {low} to {high}, got {shown(value)}")
        return delegate(value)

    return BeforeValidator(check)


def _time_as_text(value: Any) -> Any:
    """A time argument the native tools take as text, given a number (Unix seconds) or a
    boolean: refused in the words of REST and the library (``_validate.union_problem``)
    rather than pydantic's "Input should be a valid string"."""
    if value is None or isinstance(value, str):
        return value
    raise PydanticCustomError(
        "string_type",
        "expected an ISO 8601 date-time as text, got {kind}",
        {"kind": type(value).__name__},
    )


# With an ``str | None`` time argument: Annotated[str | None, Field(...), TIME_TEXT].
TIME_TEXT = BeforeValidator(_time_as_text)
