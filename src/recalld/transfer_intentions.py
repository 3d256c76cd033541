"""An export's ``recalld.intention`` lines read back (:mod:`recalld.transfer` imports them)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, TypeAdapter
from pydantic import ValidationError as PydanticError

from recalld import _validate as check
from recalld._time import parse_instant
from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.intentions.building import exported_trigger_records
from recalld.intentions.model import IntentionState, Number, Repeat, Trigger
from recalld.intentions.timing import parse_zone
from recalld.store.intentions import IntentionRecord
from recalld.transfer_lines import line_text

__all__ = ["checked_intention"]


def checked_intention(
    value: Any, namespace: str, settings: Settings
) -> tuple[str, IntentionRecord]:
    """The memory id and the reminder a ``recalld.intention`` line's ``value`` holds for
    ``namespace`` (nothing is written); raises ValidationError naming the first field
    that is wrong."""

    memory_id = check.memory_id(value.get("id"))
    fields: dict[str, Any] = {}
    shapes: tuple[tuple[str, Any, bool], ...] = (
        ("state", IntentionState, True),
        ("repeat", Repeat, True),
        ("min_interval_seconds", Annotated[Number, Field(ge=0)], True),
        ("scheduled", bool, True),
        ("triggers", list[Trigger], False),  # their times are ISO text, as exported
    )
    for name, shape, strict in shapes:
        try:
            fields[name] = TypeAdapter(shape).validate_python(value.get(name), strict=strict)
        except PydanticError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in (name, *first["loc"]))
            raise ValidationError(where, first["msg"]) from None
    records = exported_trigger_records(fields["triggers"], fields["scheduled"], settings)
    zone = line_text(value, "zone")
    parse_zone(zone)
    times = {
        name: None if value.get(name) is None else parse_instant(name, value[name])
        for name in ("created_at", "expires_at", "next_due")
    }
    if times["created_at"] is None:
        raise ValidationError("created_at", "is required")
    if fields["scheduled"] and fields["state"] == "active" and times["next_due"] is None:
        # The scheduler fires a reminder with a time alone at its next_due: without one it
        # would stay active and never fire.
        raise ValidationError("next_due", "is required for an active reminder with a time alone")
    return memory_id, IntentionRecord(
        namespace=namespace,
        repeat=fields["repeat"],
        min_interval_seconds=fields["min_interval_seconds"],
        zone=zone,
        scheduled=fields["scheduled"],
        triggers=records,
        created_at=times["created_at"],
        expires_at=times["expires_at"],
        next_due=times["next_due"],
        state=fields["state"],
    )
