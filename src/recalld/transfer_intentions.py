"""An export's ``recalld.intention`` lines read back (:mod:`recalld.transfer` imports them)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import Field, TypeAdapter
from pydantic import ValidationError as PydanticError

from recalld import _validate as check
from recalld._text import shown
from recalld._time import parse_instant
from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.intentions.building import exported_trigger_records
from recalld.intentions.model import (
    IntentionState,
    MentionTrigger,
    Number,
    PlaceTrigger,
    Repeat,
    SignalTrigger,
    TagTrigger,
    TimeTrigger,
    Trigger,
)
from recalld.intentions.timing import parse_zone
from recalld.recollection.cue import Reminder
from recalld.store.base import Store
from recalld.store.context import PendingRow, rewritten_pending
from recalld.store.intentions import IntentionRecord, IntentionRow, ReminderDraft
from recalld.transfer_lines import INTENTION_LINE, PENDING_LINE, line_text
from recalld.writing import INTENTION_KIND

__all__ = ["checked_intention", "intention_line", "pending_line", "queue_pending"]

# Each trigger's fields in the order its model declares them (as a trigger is written).
TRIGGER_FIELDS: dict[str, tuple[str, ...]] = {
    str(model.model_fields["type"].default): tuple(model.model_fields)
    for model in (PlaceTrigger, TimeTrigger, MentionTrigger, TagTrigger, SignalTrigger)
}


def intention_line(namespace: str, row: IntentionRow) -> dict[str, Any]:
    """The ``recalld.intention`` line of a stored reminder: its state and triggers."""
    return {
        "type": INTENTION_LINE,
        "namespace": namespace,
        "id": row.memory.id,
        "state": row.state,
        "repeat": row.repeat,
        "min_interval_seconds": row.min_interval_seconds,
        "zone": row.zone,
        "scheduled": row.scheduled,
        "created_at": row.created_at.isoformat(),
        "expires_at": None if row.expires_at is None else row.expires_at.isoformat(),
        "next_due": None if row.next_due is None else row.next_due.isoformat(),
        "triggers": [_in_written_order(trigger.spec) for trigger in row.triggers],
    }


def _in_written_order(spec: dict[str, Any]) -> dict[str, Any]:
    """A stored trigger with its fields in its model's order: PostgreSQL's ``jsonb`` gives
    them back in its own (shorter keys first), so the same reminder's line differed
    between the stores; a field no model declares (an older version's) comes last."""
    order = TRIGGER_FIELDS.get(str(spec.get("type")), ())
    known = {name: spec[name] for name in order if name in spec}
    return known | {name: value for name, value in spec.items() if name not in known}


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


def pending_line(namespace: str, item: PendingRow) -> dict[str, Any]:
    """The ``recalld.pending`` line of a reminder fired and not yet delivered.

    Its ``details`` in the order the reminder's model writes them and its ``channels`` in
    the order of the triggers that held: PostgreSQL's ``jsonb`` gives both back in its own
    key order, and the line must read the same from either store."""
    try:
        details: Any = Reminder.model_validate(item.details).model_dump(mode="json")
    except PydanticError:  # as stored: the importer names what is wrong with it
        details = item.details
    matched = details.get("matched") if isinstance(details, dict) else None
    held = (
        [match.get("trigger") for match in matched if isinstance(match, dict)]
        if isinstance(matched, list)
        else []
    )
    order = {
        name: (held.index(name) if name in held else len(held), name) for name in item.channels
    }
    return {
        "type": PENDING_LINE,
        "namespace": namespace,
        "id": item.memory.id,
        "fired_at": item.fired_at.isoformat(),
        "score": item.score,
        "channels": {name: item.channels[name] for name in sorted(order, key=order.__getitem__)},
        "details": details,
    }


def queue_pending(
    store: Store,
    namespace: str,
    value: Any,
    *,
    created: set[tuple[str, str]],
    first_line: dict[tuple[str, str, datetime], int],
    number: int,
    settings: Settings,
) -> bool:
    """Queue again the reminder a ``recalld.pending`` line (number ``number``) holds, as it
    fired (its time, its why), for ``pending`` to hand out, when this import wrote that
    reminder (in ``created``); else only check the line. Whether it was queued; raises
    ValidationError naming the wrong field, the id of a reminder not stored, or the line
    (noted in ``first_line``) an identical one came on: it would be handed out twice."""
    memory_id = check.memory_id(value.get("id"))
    fired_at = parse_instant("fired_at", line_text(value, "fired_at"))
    shapes: tuple[tuple[str, Any], ...] = (
        ("score", Annotated[Number, Field(ge=0, le=1)]),
        ("channels", dict[str, Number]),
        ("details", Reminder),
    )
    fields: dict[str, Any] = {}
    for name, shape in shapes:
        try:
            fields[name] = TypeAdapter(shape).validate_python(value.get(name))
        except PydanticError as error:
            first = error.errors()[0]
            raise ValidationError(
                ".".join(str(part) for part in (name, *first["loc"])), first["msg"]
            ) from None
    score: float = fields["score"]
    channels: dict[str, float] = fields["channels"]
    reminder: Reminder = fields["details"]
    if reminder.intention_id != memory_id:
        raise ValidationError("details.intention_id", f"must be the line's id {memory_id!r}")
    _check_why(reminder, channels, settings)
    earlier = first_line.setdefault((namespace, memory_id, fired_at), number)
    if earlier != number:
        raise ValidationError(
            "fired_at",
            f"repeats line {earlier} (reminder {memory_id!r}, namespace {namespace!r}): a"
            " reminder that fired is queued once",
        )
    queue = (namespace, memory_id) in created
    # Looked up and queued in one transaction: a forget between the two made the queued
    # item name a memory no longer there, a failure that ended the whole import.
    with store.transaction() as tx:
        memory = tx.find(namespace, id=memory_id)
        if memory is None or memory.kind != INTENTION_KIND:
            raise ValidationError("id", f"no reminder {memory_id!r} in {namespace!r}")
        if queue:
            prompt, details = rewritten_pending(
                memory, "reminder", reminder.model_dump(mode="json")
            )
            draft = ReminderDraft(memory.seq, namespace, score, channels, prompt, details or {})
            tx.queue_reminder(draft, fired_at)
    return queue


def _check_why(reminder: Reminder, channels: dict[str, float], settings: Settings) -> None:
    """Refuse a queued reminder no firing writes: a channel or a matched trigger that is no
    trigger type, a channel's score outside [0, 1] (a firing gives 1.0 to each trigger that
    held), a why or matches' details larger than a memory's content may be (the why is
    handed out in the prompt line)."""
    types = ", ".join(TRIGGER_FIELDS)
    for name, score in channels.items():
        if name not in TRIGGER_FIELDS:
            raise ValidationError(
                "channels", f"a channel is a trigger type ({types}), not {shown(name)}"
            )
        if not 0 <= score <= 1:
            raise ValidationError(f"channels.{name}", f"must be between 0 and 1, got {score}")
    for position, match in enumerate(reminder.matched):
        if match.trigger not in TRIGGER_FIELDS:
            raise ValidationError(
                f"details.matched.{position}.trigger",
                f"must be a trigger type ({types}), not {shown(match.trigger)}",
            )
    # The why is the matches' details joined: neither is larger than a memory's content.
    limit = settings.max_content_bytes
    sizes = {
        "details.why": _size(reminder.why),
        "details.matched": sum(_size(match.detail) for match in reminder.matched),
    }
    for field, size in sizes.items():
        if size > limit:
            raise ValidationError(field, f"holds {size} bytes of text; the limit is {limit}")


def _size(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogatepass"))
