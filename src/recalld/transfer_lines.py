"""The kinds of an export's structure lines and the fields each holds.

:mod:`recalld.transfer` writes these lines and reads them back; a memory line's
fields are :class:`recalld.model.ExportRecord`'s. A structure line is read as
strictly as a memory line: a field it does not hold (a newer export's, a typo) and
text given as another JSON type are refused with the field's name, never dropped
or turned into text.
"""

from __future__ import annotations

from typing import Any

from recalld.errors import ValidationError

__all__ = [
    "CORE_LINE",
    "ENTITY_LINE",
    "INTENTION_LINE",
    "LINE_FIELDS",
    "RELATION_LINE",
    "SENSES_LINE",
    "line_text",
    "structure_kind",
]

CORE_LINE = "recalld.core"
ENTITY_LINE = "recalld.entity"
RELATION_LINE = "recalld.relation"
SENSES_LINE = "recalld.senses"
INTENTION_LINE = "recalld.intention"

_COMMON = frozenset({"type", "namespace"})
LINE_FIELDS: dict[str, frozenset[str]] = {
    CORE_LINE: _COMMON | {"target", "entries"},
    ENTITY_LINE: _COMMON | {"name", "entity_type", "observations"},
    RELATION_LINE: _COMMON | {"from", "to", "relation_type"},
    SENSES_LINE: _COMMON | {"id", "signals", "biometrics"},
    INTENTION_LINE: _COMMON
    | {
        "id",
        "state",
        "repeat",
        "min_interval_seconds",
        "zone",
        "scheduled",
        "created_at",
        "expires_at",
        "next_due",
        "triggers",
    },
}


def structure_kind(value: dict[str, Any]) -> str:
    """The kind (``type``) of a structure line, checked with its fields: an unknown kind,
    or a field that kind of line does not hold, is refused naming it."""
    kind = value.get("type")
    if not isinstance(kind, str) or kind not in LINE_FIELDS:
        raise ValidationError(
            "type",
            f"a recalld export line is a memory (no type), {CORE_LINE}, {ENTITY_LINE},"
            f" {RELATION_LINE}, {SENSES_LINE} or {INTENTION_LINE}; got {kind!r}",
        )
    for name in value:
        if name not in LINE_FIELDS[kind]:
            raise ValidationError(
                name,
                f"not a field of a {kind} line (it has {', '.join(sorted(LINE_FIELDS[kind]))})",
            )
    return kind


def line_text(value: dict[str, Any], name: str) -> str:
    """The text field ``name`` of a structure line (missing: empty, which its own check
    refuses); another JSON type is refused rather than turned into its text."""
    text = value.get(name, "")
    if not isinstance(text, str):
        raise ValidationError(name, f"must be text, got {type(text).__name__}")
    return text
