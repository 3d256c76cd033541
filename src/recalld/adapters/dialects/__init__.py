"""The dialect registry: one module per dialect, each exposing ``DIALECT``.

A new dialect plugs in by adding its module here; the MCP server never
changes. Enabling several dialects whose tool names collide is refused.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from recalld.adapters.dialects.base import Dialect
from recalld.errors import ValidationError

__all__ = ["DIALECT_MODULES", "resolve_dialects"]

DIALECT_MODULES: dict[str, str] = {
    "native": "recalld.adapters.dialects.native",
    "batbox": "recalld.adapters.dialects.batbox",
    "chaoscore": "recalld.adapters.dialects.chaoscore",
    "rover": "recalld.adapters.dialects.rover",
    "hermes": "recalld.adapters.dialects.hermes",
    "madeleine": "recalld.adapters.dialects.madeleine",
    "knowledge": "recalld.adapters.dialects.knowledge",
}


def resolve_dialects(names: Sequence[str]) -> list[Dialect]:
    """Load the named dialects, refusing unknown names and clashing tool names."""
    if not names:
        raise ValidationError("dialect", "enable at least one dialect")
    dialects: list[Dialect] = []
    owners: dict[str, str] = {}
    shared: dict[str, tuple[object, str]] = {}
    for name in dict.fromkeys(names):
        module_path = DIALECT_MODULES.get(name)
        if module_path is None:
            known = ", ".join(sorted(DIALECT_MODULES))
            raise ValidationError("dialect", f"unknown dialect {name!r}; known: {known}")
        dialect: Dialect = importlib.import_module(module_path).DIALECT
        for tool in dialect.tool_names:
            if tool in owners:
                raise ValidationError(
                    "dialect",
                    f"dialects {owners[tool]!r} and {name!r} both define the tool {tool!r};"
                    " enable only one of them per server",
                )
            owners[tool] = name
        for spec, key in [(r, f"resource {r.uri}") for r in dialect.resources] + [
            (p, f"prompt {p.name}") for p in dialect.prompts
        ]:
            previous = shared.get(key)
            if previous is not None and previous[0] is not spec:
                raise ValidationError(
                    "dialect",
                    f"dialects {previous[1]!r} and {name!r} both define the {key};"
                    " enable only one of them per server",
                )
            shared[key] = (spec, name)
        dialects.append(dialect)
    return dialects
