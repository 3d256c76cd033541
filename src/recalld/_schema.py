"""What the engine accepts, written once for both the checks and the published schemas.

The service checks names and text with :mod:`recalld._validate`; the REST
API's OpenAPI document and the MCP tools' input schemas carry the same rules as
JSON Schema (``pattern``, ``format``, bounds) through :func:`extra` and
:func:`replaced`, so a request the schema allows is one the engine accepts.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

__all__ = [
    "DATE_TIME",
    "ID_PATTERN",
    "INVISIBLE_CLASS",
    "INVISIBLE_RANGES",
    "KEY_PATTERN",
    "META_VALUE_NAME",
    "NAME_PATTERN",
    "NO_NUL_PATTERN",
    "TEXT_PATTERN",
    "VISIBLE_PATTERN",
    "cap_count",
    "count_default",
    "extra",
    "meta_value_schema",
    "nullable",
    "replaced",
]

# Characters no name (key, tag, kind, category, source) and no core-memory entry may hold:
# Unicode's control, format (zero-width, bidi, soft hyphen, byte-order mark, tags) and
# line/paragraph separator characters (categories Cc, Cf, Zl, Zp; checked against the
# running Python's Unicode tables by the tests). One list serves the checks and the
# published schemas, so the two cannot disagree.
INVISIBLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x001F),
    (0x007F, 0x009F),
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x2028, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)
INVISIBLE_CLASS = "".join(
    chr(low) if low == high else f"{chr(low)}-{chr(high)}" for low, high in INVISIBLE_RANGES
)
# A name: at least one visible character, none of the invisible ones.
NAME_PATTERN = f"^[^{INVISIBLE_CLASS}]*[^\\s{INVISIBLE_CLASS}][^{INVISIBLE_CLASS}]*$"
# A name that also neither starts nor ends with white space (a biometric reading's).
TRIMMED_NAME_PATTERN = f"^[^\\s{INVISIBLE_CLASS}](?:[^{INVISIBLE_CLASS}]*[^\\s{INVISIBLE_CLASS}])?$"
# Free text (content): at least one non-space character, and no NUL.
TEXT_PATTERN = "^[^\\x00]*[^\\s\\x00][^\\x00]*$"
# A query: at least one non-space character (a blank one matches nothing: refused).
QUERY_PATTERN = "\\S"
# What \s means in a published pattern (ECMA-262's WhiteSpace and LineTerminator, as JSON
# Schema reads it), for Python's re: its \s also holds U+001C-U+001F and U+0085, so a
# content of U+0085 alone, valid by TEXT_PATTERN, was refused as empty.
ECMA_SPACE_CLASS = (
    "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
)
# A name that may be blank (a place's: blank is none), with nothing invisible.
VISIBLE_PATTERN = f"^[^{INVISIBLE_CLASS}]*$"
# Optional free text (title): no NUL.
NO_NUL_PATTERN = "^[^\\x00]*$"
# The component a meta object's values refer to (a JSON value is recursive).
META_VALUE_NAME = "MetaValue"
# A client id, as ``recalld._validate.memory_id`` checks it ("." and ".." are refused: a URL's
# path resolves them away, so such a memory could not be reached over REST).
ID_PATTERN = "^(?!\\.\\.?$)[\\w.:-]{1,64}$"
# A key: a name with no "." or ".." between slashes, as ``recalld._validate.key`` checks it.
KEY_PATTERN = "^(?!(?:[^/]*/)*\\.\\.?(?:/|$))" + NAME_PATTERN[1:]
# The time fields take RFC 3339 date-times (ISO 8601 with an offset; "Z" for UTC).
DATE_TIME = {"type": "string", "format": "date-time"}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or ``null``."""
    return {"anyOf": [copy.deepcopy(schema), {"type": "null"}]}


def extra(**keywords: Any) -> Callable[[dict[str, Any]], None]:
    """A ``json_schema_extra`` that adds ``keywords`` to the field's schema (for an optional
    field, to its non-null branch, so ``null`` stays allowed)."""

    def apply(schema: dict[str, Any]) -> None:
        options = schema.get("anyOf")
        if isinstance(options, list):
            for option in options:
                if option.get("type") != "null":
                    option.update(copy.deepcopy(keywords))
        else:
            schema.update(copy.deepcopy(keywords))

    return apply


def replaced(
    replacement: dict[str, Any], *, keep_default: bool = True
) -> Callable[[dict[str, Any]], None]:
    """A ``json_schema_extra`` that replaces the field's generated schema (keeping its
    description, and its default unless ``keep_default`` is off: a field that may be
    left out but never be null publishes no null default)."""

    def apply(schema: dict[str, Any]) -> None:
        names = ("description", "title", "default") if keep_default else ("description", "title")
        kept = {key: schema[key] for key in names if key in schema}
        schema.clear()
        schema.update(copy.deepcopy(replacement), **kept)

    return apply


def count_default(default: int) -> Callable[[dict[str, Any]], None]:
    """A ``json_schema_extra`` for a count (``limit``, ``k``) declared ``int | None = None``
    so that a caller who leaves it out gets ``default`` held to ``RECALLD_MAX_LIMIT``
    (``_validate.limit``): published as the plain integer it is, defaulting to ``default``."""

    def apply(schema: dict[str, Any]) -> None:
        options = schema.pop("anyOf", None)
        if isinstance(options, list):
            for option in options:
                if option.get("type") != "null":
                    schema.update(copy.deepcopy(option))
        schema["default"] = default

    return apply


def cap_count(schema: dict[str, Any], cap: int) -> None:
    """Publish ``cap`` (``RECALLD_MAX_LIMIT``) as the count's maximum (unless its own is
    lower: ``k``'s 100), and a default above it as the cap, which is what the engine then
    uses."""
    own = schema.get("maximum")
    schema["maximum"] = cap if not isinstance(own, int | float) or own > cap else own
    default = schema.get("default")
    if isinstance(default, int) and not isinstance(default, bool) and default > cap:
        schema["default"] = cap


def meta_value_schema(reference: str) -> dict[str, Any]:
    """Any JSON value without a NUL in a key or a string (``meta``'s values, batbox's
    ``metadata``'s): PostgreSQL's ``jsonb`` cannot hold one, so no store accepts one.
    ``reference`` is where this schema itself is found (its arrays and objects nest)."""
    return {
        "anyOf": [
            {"type": "string", "pattern": NO_NUL_PATTERN},
            {"type": ["number", "boolean", "null"]},
            {"type": "array", "items": {"$ref": reference}},
            {
                "type": "object",
                "propertyNames": {"pattern": NO_NUL_PATTERN},
                "additionalProperties": {"$ref": reference},
            },
        ]
    }
