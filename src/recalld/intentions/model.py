"""The shapes of prospective memory: triggers, the request to remind, the stored intention.

These pydantic models are the wire shapes too (REST bodies and MCP tool results).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AllowInfNan, BaseModel, ConfigDict, Field, Strict, StrictInt

from recalld._schema import TEXT_PATTERN, extra
from recalld.context.signals import MAX_BIOMETRIC_MAGNITUDE
from recalld.model import ComposedName, PlaceInput, finite_between

__all__ = [
    "DEFAULT_RADIUS_M",
    "MAX_RADIUS_M",
    "MAX_WINDOW_MINUTES",
    "Intention",
    "IntentionList",
    "IntentionRequest",
    "IntentionState",
    "MentionTrigger",
    "Number",
    "PlaceTrigger",
    "Repeat",
    "ResolvedTime",
    "SignalCondition",
    "SignalTrigger",
    "TagTrigger",
    "TimeTrigger",
    "Trigger",
]

DEFAULT_RADIUS_M = 150.0
MAX_RADIUS_M = 50_000.0
# A recurrence's window beside sensed triggers lasts at most a year (366 days): longer
# would overflow the calendar when added to an occurrence.
MAX_WINDOW_MINUTES = 366 * 24 * 60.0
# A number as a caller gives it: a JSON number or a Python int or float, never a bool
# (``true`` is not 1) nor text (``"5"`` is not 5), and finite (JSON has no infinity).
Number = Annotated[float, Strict(), AllowInfNan(False)]
# The ranges stated when a number is out of them, 1e400 and a 4,000-digit integer
# included (pydantic said only "a finite number" or "a valid number").
BIOMETRIC_RANGE = finite_between(-MAX_BIOMETRIC_MAGNITUDE, MAX_BIOMETRIC_MAGNITUDE)
RADIUS_RANGE = finite_between(0, MAX_RADIUS_M, low_excluded=True)
WINDOW_RANGE = finite_between(0, MAX_WINDOW_MINUTES, low_excluded=True)
INTERVAL_RANGE = finite_between(0, None)
IntentionState = Literal["active", "done", "cancelled", "expired"]
Repeat = Literal["once", "every_time"]


class PlaceTrigger(BaseModel):
    """Holds while the sensed place is within ``radius_m`` of this point."""

    type: Literal["place"] = "place"
    lat: float
    lon: float
    geohash: str
    radius_m: float
    name: str | None = None


class TimeTrigger(BaseModel):
    """An instant (``at``), a window (``at`` to ``until``) or a recurrence (``every``).

    Alone, it fires from the scheduler at ``at`` (or each occurrence). Beside
    sensed triggers it is a gate: from ``at`` on, inside the window, or within
    ``window_minutes`` after each occurrence.
    """

    type: Literal["time"] = "time"
    at: datetime | None = None
    until: datetime | None = None
    every: str | None = None
    rrule: str | None = None
    zone: str
    window_minutes: float | None = None


class MentionTrigger(BaseModel):
    """Holds when these words come up, as whole words, in what ``sense`` hears
    (or in a memory that surfaces with it), or when an entity of this name is
    recognised in it."""

    type: Literal["mention"] = "mention"
    text: str


class TagTrigger(BaseModel):
    """Holds when the sensed context (or a memory that surfaces with it) carries the tag."""

    type: Literal["tag"] = "tag"
    tag: ComposedName  # in NFC, as the tags it is compared with (a stored one is read so)


class SignalTrigger(BaseModel):
    """Holds once ``readings`` consecutive readings of ``signal`` are above (or below) a value."""

    type: Literal["signal"] = "signal"
    signal: str
    above: float | None = None
    below: float | None = None
    readings: int = 1


Trigger = Annotated[
    PlaceTrigger | TimeTrigger | MentionTrigger | TagTrigger | SignalTrigger,
    Field(discriminator="type"),
]


class SignalCondition(BaseModel):
    """A biometric threshold as a caller gives it (or ``"heart_rate>150"``)."""

    model_config = ConfigDict(extra="forbid")

    signal: str = Field(min_length=1, max_length=64)
    above: Annotated[Number | None, BIOMETRIC_RANGE] = Field(
        default=None, ge=-MAX_BIOMETRIC_MAGNITUDE, le=MAX_BIOMETRIC_MAGNITUDE
    )
    below: Annotated[Number | None, BIOMETRIC_RANGE] = Field(
        default=None, ge=-MAX_BIOMETRIC_MAGNITUDE, le=MAX_BIOMETRIC_MAGNITUDE
    )
    readings: StrictInt = Field(default=1, ge=1, le=1000, description="consecutive readings needed")


class IntentionRequest(BaseModel):
    """What ``remind`` takes: the action and its triggers (all given triggers must hold)."""

    model_config = ConfigDict(extra="forbid")

    action: str = Field(
        description="what to remind of, e.g. 'pick up the prescription'",
        json_schema_extra=extra(pattern=TEXT_PATTERN),
    )
    place: PlaceInput | None = Field(default=None, description="lat+lon or geohash")
    radius_m: Annotated[Number | None, RADIUS_RANGE] = Field(
        default=None,
        gt=0,
        le=MAX_RADIUS_M,
        description="metres around the place (default 150, at most 50 km)",
    )
    at: str | None = Field(
        default=None,
        max_length=200,
        description="ISO 8601 or a phrase ('tomorrow at 9', 'next Friday'): the instant,"
        " the window's start or the first occurrence",
    )
    until: str | None = Field(default=None, max_length=200, description="end of the window")
    every: str | None = Field(
        default=None,
        max_length=500,
        description="daily, weekdays, weekly, monthly or an RRULE (FREQ=WEEKLY;BYDAY=FR)",
    )
    window_minutes: Annotated[Number | None, WINDOW_RANGE] = Field(
        default=None,
        gt=0,
        le=MAX_WINDOW_MINUTES,
        description="beside other triggers: minutes after each occurrence (at most 366 days)",
    )
    zone: str | None = Field(
        default=None,
        max_length=64,
        description="IANA zone (Europe/Paris) or offset (+01:00) for phrases and recurrences",
    )
    mention: list[str] = Field(default_factory=list, description="words or names to listen for")
    signals: list[SignalCondition | str] = Field(
        default_factory=list, description="thresholds such as 'heart_rate>150'"
    )
    tags: list[str] = Field(default_factory=list, description="tags the context must carry")
    expires: str | None = Field(
        default=None, max_length=200, description="never fire after this (ISO 8601 or phrase)"
    )
    repeat: Repeat = Field(default="once", description="once (default) or every_time")
    min_interval_seconds: Annotated[Number | None, INTERVAL_RANGE] = Field(
        default=None, ge=0, description="every_time: at least this long between firings"
    )


class ResolvedTime(BaseModel):
    """How a time the caller gave was read: the field, the text, the instant."""

    field: str
    text: str
    instant: datetime


class Intention(BaseModel):
    """A stored intention: a memory of kind ``intention`` with its triggers and firing state."""

    id: str
    seq: int
    namespace: str
    action: str
    state: IntentionState
    repeat: Repeat
    min_interval_seconds: float
    triggers: list[Trigger]
    zone: str
    expires_at: datetime | None = None
    next_due: datetime | None = Field(
        default=None, description="when the scheduler fires it next (time-only intentions)"
    )
    last_fired_at: datetime | None = None
    fire_count: int = 0
    created_at: datetime
    resolved: list[ResolvedTime] = Field(
        default_factory=list, description="how the times given were read (remind only)"
    )


class IntentionList(BaseModel):
    """A listing of intentions, newest first."""

    intentions: list[Intention]
