"""Deciding which intentions fire: every trigger must hold, then the repeat rule.

Triggers, against a sensed situation at the engine's clock time ``now``:

- ``place``: the sensed place is within the radius (great-circle distance);
- ``mention``: its words occur as whole words in what was heard, or in a memory
  that surfaced as a recollection in the same ``sense``, or it names an entity
  the entity hook recognised (see :mod:`recalld.intentions.matching`);
- ``tag``: the sensed tags, or a surfaced memory's tags, include it;
- ``signal``: the last ``readings`` readings of the signal were all beyond the
  threshold (a streak kept in the store; a reading not beyond it, or a gap of
  more than ``intention_reading_gap_seconds`` since the last one, restarts it);
- ``time``: from ``at`` on; inside ``at``..``until``; or for a recurrence,
  within ``window_minutes`` after its latest occurrence.

Repeat rule: ``once`` fires once and is then ``done``; a recurrence fires once
per occurrence; ``every_time`` fires whenever the triggers hold again and at
least ``min_interval_seconds`` have passed since it last fired. Past its
``expires`` an intention never fires (it becomes ``expired``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pydantic import TypeAdapter

from recalld._text import reminder_line
from recalld.config import Settings
from recalld.context.place import distance_m
from recalld.intentions.building import describe, recurrence_of, window_end
from recalld.intentions.matching import contains_phrase, fold, tokens
from recalld.intentions.model import (
    MentionTrigger,
    PlaceTrigger,
    SignalTrigger,
    TagTrigger,
    TimeTrigger,
    Trigger,
)
from recalld.model import Place
from recalld.recollection.cue import Reminder, ReminderMatch
from recalld.store.intentions import IntentionRow, ReminderDraft, Streak

__all__ = [
    "Firing",
    "Situation",
    "Surfaced",
    "decide",
    "parse_triggers",
    "reminder_draft",
    "update_streaks",
]

TRIGGERS: TypeAdapter[list[Trigger]] = TypeAdapter(list[Trigger])
PROMPT_WIDTH = 160


@dataclass(frozen=True)
class Surfaced:
    """A memory that surfaced as a recollection in the same sense (mentions and tags).

    Its id is left out on purpose: a reminder's ``why`` waits in the pending queue,
    and must not name a memory that expires or is forgotten meanwhile (the
    recollection delivered beside the reminder, with the same ``fired_at``, is
    hidden or removed with it; a reason naming it would outlive it).
    """

    words: list[str]
    tags: frozenset[str]


@dataclass
class Situation:
    """What ``sense`` perceived, as intentions see it."""

    now: datetime
    place: Place | None = None
    words: list[str] = field(default_factory=list)
    tags: frozenset[str] = frozenset()
    readings: dict[str, float] = field(default_factory=dict)
    surfaced: list[Surfaced] = field(default_factory=list)
    entities: frozenset[str] = frozenset()
    """Folded names of the entities the entity hook recognised."""


@dataclass(frozen=True)
class Firing:
    """An intention that fires now: what matched, the state it moves to, its next due time."""

    row: IntentionRow
    matched: list[ReminderMatch]
    state: str
    next_due: datetime | None
    due_at: datetime | None = None


def parse_triggers(row: IntentionRow) -> list[Trigger]:
    """The trigger models of a stored intention, in order."""
    return TRIGGERS.validate_python([trigger.spec for trigger in row.triggers])


def _beyond(trigger: SignalTrigger, value: float) -> bool:
    if trigger.above is not None:
        return value > trigger.above
    return trigger.below is not None and value < trigger.below


def update_streaks(
    row: IntentionRow, triggers: Sequence[Trigger], situation: Situation, settings: Settings
) -> dict[int, Streak | None]:
    """The new streak of each signal trigger the situation has a reading for (None: reset)."""
    gap = timedelta(seconds=settings.intention_reading_gap_seconds)
    updated: dict[int, Streak | None] = {}
    for position, trigger in enumerate(triggers):
        if not isinstance(trigger, SignalTrigger) or trigger.signal not in situation.readings:
            continue
        if not _beyond(trigger, situation.readings[trigger.signal]):
            if position in row.streaks:
                updated[position] = None  # the streak breaks (nothing to write otherwise)
            continue
        previous = row.streaks.get(position)
        count = 1
        if previous is not None and situation.now - previous.last_at <= gap:
            count = previous.count + 1
        updated[position] = Streak(count=count, last_at=situation.now)
    return updated


def _place(trigger: PlaceTrigger, situation: Situation) -> ReminderMatch | None:
    if situation.place is None:
        return None
    distance = distance_m(trigger.lat, trigger.lon, situation.place.lat, situation.place.lon)
    if distance > trigger.radius_m:
        return None
    where = trigger.name or f"{trigger.lat:.5f},{trigger.lon:.5f}"
    return ReminderMatch(
        trigger="place",
        detail=f"{distance:.0f} m from {where}, within {trigger.radius_m:g} m",
    )


def _mention(trigger: MentionTrigger, situation: Situation) -> ReminderMatch | None:
    phrase = tokens(trigger.text)
    if contains_phrase(situation.words, phrase):
        return ReminderMatch(trigger="mention", detail=f"'{trigger.text}' was mentioned")
    for surfaced in situation.surfaced:
        if contains_phrase(surfaced.words, phrase):
            return ReminderMatch(
                trigger="mention",
                detail=f"'{trigger.text}' came up in a recollection",
            )
    if fold(" ".join(phrase)) in situation.entities:
        return ReminderMatch(trigger="mention", detail=f"entity '{trigger.text}' was recognised")
    return None


def _tag(trigger: TagTrigger, situation: Situation) -> ReminderMatch | None:
    if trigger.tag in situation.tags:
        return ReminderMatch(trigger="tag", detail=f"the context is tagged '{trigger.tag}'")
    for surfaced in situation.surfaced:
        if trigger.tag in surfaced.tags:
            return ReminderMatch(trigger="tag", detail=f"a recollection is tagged '{trigger.tag}'")
    return None


def _signal(
    trigger: SignalTrigger, streak: Streak | None, situation: Situation
) -> ReminderMatch | None:
    if trigger.signal not in situation.readings:
        return None
    if streak is None or streak.count < trigger.readings:
        return None
    relation = f"> {trigger.above:g}" if trigger.above is not None else f"< {trigger.below:g}"
    readings = "1 reading" if trigger.readings == 1 else f"{trigger.readings} readings in a row"
    value = situation.readings[trigger.signal]
    return ReminderMatch(
        trigger="signal", detail=f"{trigger.signal} {value:g} {relation} ({readings})"
    )


def _time(
    trigger: TimeTrigger, row: IntentionRow, now: datetime, settings: Settings
) -> tuple[ReminderMatch | None, datetime | None]:
    """Whether the time gate is open now, and the occurrence it belongs to (recurrences)."""
    recurrence = recurrence_of(trigger)
    if recurrence is not None:
        occurrence = recurrence.last_at_or_before(now)
        if occurrence is None or now >= window_end(trigger, occurrence, settings):
            return None, None
        if row.last_fired_at is not None and row.last_fired_at >= occurrence:
            return None, None  # already fired for this occurrence
        return ReminderMatch(
            trigger="time", detail=f"the occurrence of {describe(occurrence)} ({trigger.every})"
        ), occurrence
    if trigger.at is not None and now < trigger.at:
        return None, None
    if trigger.until is not None:
        if now >= trigger.until:
            return None, None
        return ReminderMatch(
            trigger="time",
            detail=f"between {describe(trigger.at)} and {describe(trigger.until)}",
        ), None
    return ReminderMatch(trigger="time", detail=f"after {describe(trigger.at)}"), None


def decide(
    row: IntentionRow,
    triggers: Sequence[Trigger],
    streaks: dict[int, Streak | None],
    situation: Situation,
    settings: Settings,
) -> Firing | None:
    """Whether a sensed intention fires now (every trigger holds and the repeat rule allows)."""
    now = situation.now
    matched: list[ReminderMatch] = []
    recurring = False
    for position, trigger in enumerate(triggers):
        match: ReminderMatch | None
        if isinstance(trigger, PlaceTrigger):
            match = _place(trigger, situation)
        elif isinstance(trigger, MentionTrigger):
            match = _mention(trigger, situation)
        elif isinstance(trigger, TagTrigger):
            match = _tag(trigger, situation)
        elif isinstance(trigger, SignalTrigger):
            streak = streaks[position] if position in streaks else row.streaks.get(position)
            match = _signal(trigger, streak, situation)
        else:
            match, occurrence = _time(trigger, row, now, settings)
            recurring = recurring or occurrence is not None
        if match is None:
            return None
        matched.append(match)
    if (
        row.repeat == "every_time"
        and row.last_fired_at is not None
        and (now - row.last_fired_at).total_seconds() < row.min_interval_seconds
    ):
        return None
    state = "active" if recurring or row.repeat == "every_time" else "done"
    return Firing(row=row, matched=matched, state=state, next_due=None)


def reminder_draft(firing: Firing, now: datetime) -> tuple[ReminderDraft, Reminder, str]:
    """The pending-queue entry of a firing, its :class:`Reminder` and its prompt line."""
    memory = firing.row.memory
    why = "; ".join(match.detail for match in firing.matched)
    reminder = Reminder(
        intention_id=memory.id,
        action=memory.content,
        why=why,
        matched=firing.matched,
        due_at=firing.due_at,
    )
    line = reminder_line(memory.content, why, PROMPT_WIDTH)
    channels = {match.trigger: 1.0 for match in firing.matched}
    details: dict[str, Any] = reminder.model_dump(mode="json")
    draft = ReminderDraft(
        seq=memory.seq,
        namespace=memory.namespace,
        score=1.0,
        channels=channels,
        prompt_line=line,
        details=details,
    )
    return draft, reminder, line
