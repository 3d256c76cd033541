"""Turning a request to remind into validated triggers, stored records and a first due time.

Bad input (no trigger, a radius outside (0, 50 km], a time in the past for a
``once`` intention, an unreadable phrase or recurrence, an unknown zone)
raises :class:`~recalld.errors.ValidationError` naming the field, before
anything is written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from recalld import _validate as check
from recalld._text import shown
from recalld._time import check_offset_minutes, from_iso_text
from recalld.config import Settings
from recalld.context.signals import MAX_READINGS, check_biometrics
from recalld.errors import ValidationError
from recalld.intentions.matching import lookup_term, tokens
from recalld.intentions.model import (
    DEFAULT_RADIUS_M,
    MAX_RADIUS_M,
    MAX_WINDOW_MINUTES,
    IntentionRequest,
    MentionTrigger,
    PlaceTrigger,
    ResolvedTime,
    SignalCondition,
    SignalTrigger,
    TagTrigger,
    TimeTrigger,
    Trigger,
)
from recalld.intentions.timing import (
    PhraseParser,
    Recurrence,
    parse_zone,
    wall_anchor,
    zone_label,
)
from recalld.model import PlaceInput
from recalld.store.intentions import TriggerRecord

__all__ = [
    "Built",
    "build",
    "describe",
    "first_due",
    "parse_signal",
    "recurrence_of",
    "trigger_record",
    "window_end",
]

SIGNAL = re.compile(r"^\s*([A-Za-z_][\w.-]{0,63})\s*([<>])\s*(-?\d+(?:\.\d+)?)\s*$")
MAX_MENTIONS = 32
# Signals one intention may give: a range (above and below) on each reading a sense can
# report, and no more (each is a stored trigger row).
MAX_SIGNALS = 2 * MAX_READINGS
MENTION_MAX_CHARS = 200
METRES_PER_DEGREE = 111_320.0  # along a meridian


@dataclass(frozen=True)
class Built:
    """A request made ready to store: its triggers, zone, expiry and first due time."""

    triggers: list[Trigger]
    zone: str
    expires_at: datetime | None
    scheduled: bool
    next_due: datetime | None
    resolved: list[ResolvedTime]
    min_interval_seconds: float


def _check_signal_names(names: set[str], field: str) -> None:
    """Refuse signals on more readings than one sense reports (:data:`MAX_READINGS`):
    every trigger must hold in the same sense, so such an intention could never fire.
    Several signals on one reading (a range: above one value, below another) are one."""
    if len(names) > MAX_READINGS:
        raise ValidationError(
            field, f"signals on {len(names)} readings; a sense reports at most {MAX_READINGS}"
        )


def _check_signal_ranges(conditions: Sequence[SignalCondition]) -> None:
    """Refuse signals on one reading that no value meets (``heart_rate>150`` beside
    ``heart_rate<100``): every trigger must hold in the same sense, so such an intention
    could never fire."""
    for name in sorted({condition.signal for condition in conditions}):
        above = [c.above for c in conditions if c.signal == name and c.above is not None]
        below = [c.below for c in conditions if c.signal == name and c.below is not None]
        if above and below and max(above) >= min(below):
            raise ValidationError(
                "signals",
                f"{name}: above {max(above):g} and below {min(below):g} together hold for no"
                " reading, so the reminder could never fire",
            )


def parse_signal(value: SignalCondition | str) -> SignalCondition:
    """A threshold from ``"heart_rate>150"`` (or ``<``), or a :class:`SignalCondition`."""
    if isinstance(value, SignalCondition):
        condition = value
    else:
        match = SIGNAL.match(value)
        if match is None:
            raise ValidationError(
                "signals", f"expected NAME>VALUE or NAME<VALUE (heart_rate>150), got {shown(value)}"
            )
        name, operator, number = match.groups()
        condition = check.parse_model(
            SignalCondition,
            {"signal": name, "above" if operator == ">" else "below": float(number)},
            prefix="signals.",
        )
    if (condition.above is None) == (condition.below is None):
        raise ValidationError("signals", f"{condition.signal}: give exactly one of above or below")
    threshold = condition.above if condition.above is not None else condition.below
    assert threshold is not None
    check_biometrics({condition.signal: threshold})
    return condition


def recurrence_of(trigger: TimeTrigger) -> Recurrence | None:
    """The recurrence of a stored time trigger (None for an instant or a window)."""
    if trigger.rrule is None or trigger.at is None:
        return None
    anchor = wall_anchor(trigger.at, parse_zone(trigger.zone))
    return Recurrence(rule=trigger.rrule, anchor=anchor)


def trigger_record(trigger: Trigger) -> TriggerRecord:
    """How a trigger is stored: its JSON and the column its candidate lookup uses."""
    spec = trigger.model_dump(mode="json")
    if isinstance(trigger, PlaceTrigger):
        return TriggerRecord(type="place", spec=spec, box=_box(trigger))
    if isinstance(trigger, MentionTrigger):
        return TriggerRecord(type="mention", spec=spec, term=lookup_term(tokens(trigger.text)))
    if isinstance(trigger, TagTrigger):
        return TriggerRecord(type="tag", spec=spec, term=trigger.tag)
    if isinstance(trigger, SignalTrigger):
        return TriggerRecord(type="signal", spec=spec, term=trigger.signal)
    return TriggerRecord(type="time", spec=spec)


def exported_trigger_records(
    triggers: Sequence[Trigger], scheduled: bool, settings: Settings
) -> list[TriggerRecord]:
    """The records of triggers read back from an export (stored shapes, not phrases),
    each checked as :func:`build` checks what it makes: a place's coordinates and
    radius, a time's zone, recurrence and window, a signal's bounds, and ``scheduled``
    exactly when the one trigger is a time (the scheduler fires only those)."""
    if not triggers:
        raise ValidationError("triggers", "an intention has at least one trigger")
    for index, trigger in enumerate(triggers):
        field = f"triggers[{index}]"
        if isinstance(trigger, PlaceTrigger):
            check.place(
                check.parse_model(
                    PlaceInput,
                    {"lat": trigger.lat, "lon": trigger.lon, "geohash": trigger.geohash},
                    prefix=f"{field}.",
                )
            )
            if not (math.isfinite(trigger.radius_m) and 0 < trigger.radius_m <= MAX_RADIUS_M):
                raise ValidationError(f"{field}.radius_m", f"must be in (0, {MAX_RADIUS_M:g}]")
        elif isinstance(trigger, TimeTrigger):
            zone = parse_zone(trigger.zone, f"{field}.zone")
            for name, moment in (("at", trigger.at), ("until", trigger.until)):
                if moment is not None and moment.tzinfo is None:
                    raise ValidationError(f"{field}.{name}", "needs its offset (or Z)")
            window = trigger.window_minutes
            if window is not None and not (
                math.isfinite(window) and 0 < window <= MAX_WINDOW_MINUTES
            ):
                raise ValidationError(
                    f"{field}.window_minutes", f"must be in (0, {MAX_WINDOW_MINUTES:g}]"
                )
            if trigger.at is not None and trigger.until is not None and trigger.until <= trigger.at:
                raise ValidationError(f"{field}.until", "must be after at")
            if trigger.rrule is not None:
                if trigger.at is None:
                    raise ValidationError(f"{field}.at", "a recurrence needs its first occurrence")
                parsed = Recurrence.parse(
                    trigger.rrule,
                    wall_anchor(trigger.at, zone),
                    field=f"{field}.rrule",
                    shortest_gap=settings.intention_min_recurrence_seconds,
                ).rule
                if parsed != trigger.rrule:
                    # "monthly" or "RRULE:…" is what remind reads, not what it stores: kept
                    # as given, every firing failed in dateutil.
                    raise ValidationError(
                        f"{field}.rrule",
                        f"give the rule itself, such as {parsed!r}, not {trigger.rrule!r}",
                    )
        elif isinstance(trigger, SignalTrigger):
            check.parse_model(
                SignalCondition,
                {
                    "signal": trigger.signal,
                    "above": trigger.above,
                    "below": trigger.below,
                    "readings": trigger.readings,
                },
                prefix=f"{field}.",
            )
        elif isinstance(trigger, MentionTrigger):
            # What remind accepts (a zero-width non-joiner of Persian included), so that
            # every reminder's export line imports.
            _mention_text(trigger.text, f"{field}.text")
        else:
            check.name_text(trigger.tag, f"{field}.tag")
    signals = [trigger.signal for trigger in triggers if isinstance(trigger, SignalTrigger)]
    if len(signals) > MAX_SIGNALS:
        raise ValidationError("triggers", f"{len(signals)} signals; the limit is {MAX_SIGNALS}")
    _check_signal_names(set(signals), "triggers")
    only_time = len(triggers) == 1 and isinstance(triggers[0], TimeTrigger)
    if scheduled != only_time:
        raise ValidationError(
            "scheduled", "is true exactly when the intention's one trigger is a time"
        )
    return [trigger_record(trigger) for trigger in triggers]


def _box(trigger: PlaceTrigger) -> tuple[float, float, float, float]:
    """Latitude and longitude bounds around the trigger's circle (a little generous).

    Near a pole or across the antimeridian the longitude bounds widen to the
    whole circle of latitude: the exact distance is checked afterwards anyway.
    """
    reach = trigger.radius_m * 1.01
    lat_reach = reach / METRES_PER_DEGREE
    shrink = math.cos(math.radians(min(89.0, abs(trigger.lat) + lat_reach)))
    lon_reach = reach / (METRES_PER_DEGREE * shrink)
    low_lon, high_lon = trigger.lon - lon_reach, trigger.lon + lon_reach
    if low_lon < -180 or high_lon > 180 or abs(trigger.lat) + lat_reach >= 89.0:
        low_lon, high_lon = -180.0, 180.0
    return (trigger.lat - lat_reach, trigger.lat + lat_reach, low_lon, high_lon)


def _zone(request: IntentionRequest, settings: Settings, now: datetime) -> tzinfo:
    if request.zone is not None:
        return parse_zone(request.zone)
    if request.at is not None:
        # An ISO time with an offset names the caller's offset.
        check_offset_minutes("at", request.at)
        try:
            given = from_iso_text(request.at.strip())
        except ValueError:
            given = None
        if given is not None and given.tzinfo is not None:
            return parse_zone(zone_label(given.tzinfo))
    if settings.zone is not None:
        return parse_zone(settings.zone, field="RECALLD_ZONE")
    local = now.astimezone().tzinfo
    assert local is not None
    return parse_zone(zone_label(local))


def _place(request: IntentionRequest) -> PlaceTrigger | None:
    if request.place is None:
        if request.radius_m is not None:
            raise ValidationError("radius_m", "a radius needs a place")
        return None
    radius = DEFAULT_RADIUS_M if request.radius_m is None else request.radius_m
    if not 0 < radius <= MAX_RADIUS_M:
        raise ValidationError(
            "radius_m", f"must be more than 0 and at most {MAX_RADIUS_M:g} m, got {radius:g}"
        )
    place = check.place(request.place)
    return PlaceTrigger(
        lat=place.lat, lon=place.lon, geohash=place.geohash, radius_m=radius, name=place.name
    )


def _time(
    request: IntentionRequest,
    parser: PhraseParser,
    zone: tzinfo,
    now: datetime,
    resolved: list[ResolvedTime],
    shortest_gap: float,
) -> TimeTrigger | None:
    def instant(field: str, value: str | None) -> datetime | None:
        if value is None:
            return None
        moment = parser.resolve(field, value, zone, now).astimezone(zone)
        resolved.append(ResolvedTime(field=field, text=value, instant=moment))
        return moment

    at = instant("at", request.at)
    until = instant("until", request.until)
    if at is None and until is None and request.every is None:
        if request.window_minutes is not None:
            raise ValidationError("window_minutes", "a window needs a recurrence (every)")
        return None
    label = zone_label(zone)
    if request.every is not None:
        if until is not None:
            raise ValidationError("until", "a recurrence ends with expires, not until")
        if at is None:
            raise ValidationError(
                "at", "a recurrence needs its first occurrence or local time, e.g. at='09:00'"
            )
        recurrence = Recurrence.parse(request.every, at, shortest_gap=shortest_gap)
        if recurrence.next_after(now, inclusive=True) is None:
            raise ValidationError("every", "the recurrence has no occurrence after now")
        return TimeTrigger(
            at=at,
            every=request.every.strip(),
            rrule=recurrence.rule,
            zone=label,
            window_minutes=request.window_minutes,
        )
    if request.window_minutes is not None:
        raise ValidationError("window_minutes", "a window needs a recurrence (every)")
    if at is None:
        raise ValidationError("at", "a window needs its start (at) as well as its end (until)")
    if until is not None and until.astimezone(UTC) <= at.astimezone(UTC):
        # Compared as instants: two times on one zone's clock compare by wall time,
        # whichever pass of a repeated hour each is.
        raise ValidationError("until", f"must be after at ({at.isoformat()})")
    # A window that has ended never opens again, whatever the repeat (every_time stored it,
    # and it never fired).
    if until is not None and until <= now:
        raise ValidationError("until", f"{until.isoformat()} is in the past")
    if request.repeat == "once" and until is None and at <= now:
        raise ValidationError(
            "at", f"{at.isoformat()} is in the past (now {now.astimezone(zone).isoformat()})"
        )
    return TimeTrigger(at=at, until=until, zone=label)


def _mentions(values: Sequence[str]) -> list[MentionTrigger]:
    if len(values) > MAX_MENTIONS:
        raise ValidationError("mention", f"{len(values)} mentions; the limit is {MAX_MENTIONS}")
    triggers = []
    for index, value in enumerate(values):
        field = f"mention[{index}]"
        check.free_text(value, field)  # a NUL's position is where the caller put it
        text = " ".join(value.split())
        if len(text) > MENTION_MAX_CHARS:
            raise ValidationError(field, f"is {len(text)} chars; the limit is {MENTION_MAX_CHARS}")
        triggers.append(MentionTrigger(text=_mention_text(text, field, value)))
    return triggers


def _mention_text(text: str, field: str, given: str | None = None) -> str:
    """A mention's text, as ``remind`` and an import alike take it: no NUL (it listened
    for the words around it, "a<NUL>b" for "a b", and PostgreSQL cannot store it) and at
    least one word to listen for."""
    check.free_text(text, field)
    if not tokens(text):
        raise ValidationError(
            field, f"{given if given is not None else text!r} has no word to listen for"
        )
    return text


def first_due(trigger: TimeTrigger, now: datetime) -> datetime | None:
    """When the scheduler should first fire a time-only intention."""
    recurrence = recurrence_of(trigger)
    if recurrence is not None:
        return recurrence.next_after(now, inclusive=True)
    return trigger.at


def _gate_opens(trigger: TimeTrigger, now: datetime, settings: Settings) -> datetime | None:
    """When a time beside sensed triggers first lets the intention fire: ``now`` while its
    gate is open (after ``at``, inside the window of a recurrence's occurrence), else
    when it next opens (None: never)."""
    recurrence = recurrence_of(trigger)
    if recurrence is None:
        return now if trigger.at is None or trigger.at <= now else trigger.at
    last = recurrence.last_at_or_before(now)
    if last is not None and now < window_end(trigger, last, settings):
        return now
    return recurrence.next_after(now)


def build(
    request: IntentionRequest, settings: Settings, parser: PhraseParser, now: datetime
) -> Built:
    """Validate ``request`` into triggers (all must hold) and the intention's schedule."""
    check.content(request.action, settings, field="action")
    zone = _zone(request, settings, now)
    resolved: list[ResolvedTime] = []
    triggers: list[Trigger] = []
    place = _place(request)
    if place is not None:
        triggers.append(place)
    time_trigger = _time(
        request, parser, zone, now, resolved, settings.intention_min_recurrence_seconds
    )
    if time_trigger is not None:
        triggers.append(time_trigger)
    triggers.extend(_mentions(request.mention))
    triggers.extend(TagTrigger(tag=tag) for tag in check.tags(request.tags, settings))
    if len(request.signals) > MAX_SIGNALS:
        raise ValidationError(
            "signals", f"{len(request.signals)} signals; the limit is {MAX_SIGNALS}"
        )
    signals = [parse_signal(signal) for signal in request.signals]
    _check_signal_names({condition.signal for condition in signals}, "signals")
    _check_signal_ranges(signals)
    triggers.extend(
        SignalTrigger(
            signal=condition.signal,
            above=condition.above,
            below=condition.below,
            readings=condition.readings,
        )
        for condition in signals
    )
    if not triggers:
        raise ValidationError(
            "triggers",
            "give at least one trigger: a place, a time (at/every), a mention, a signal or a tag",
        )
    expires_at = None
    if request.expires is not None:
        expires_at = parser.resolve("expires", request.expires, zone, now).astimezone(zone)
        resolved.append(ResolvedTime(field="expires", text=request.expires, instant=expires_at))
        if expires_at <= now:
            raise ValidationError("expires", f"{expires_at.isoformat()} is in the past")
    if request.repeat == "once" and request.min_interval_seconds is not None:
        raise ValidationError("min_interval_seconds", "applies to repeat='every_time' only")
    interval = (
        settings.intention_min_interval_seconds
        if request.min_interval_seconds is None
        else request.min_interval_seconds
    )
    scheduled = time_trigger is not None and len(triggers) == 1
    if (
        scheduled
        and request.repeat == "every_time"
        and time_trigger is not None
        and time_trigger.every is None
        and time_trigger.until is None
    ):
        # An instant alone holds once: "whenever it holds again" would be never.
        raise ValidationError(
            "repeat",
            "every_time with a time alone repeats within a window: give until (every"
            " min_interval_seconds from at to until) or a recurrence (every)",
        )
    next_due = first_due(time_trigger, now) if scheduled and time_trigger is not None else None
    # Beside sensed triggers a time is a gate: one that opens only after the expiry (a place
    # and at 09:00, expiring at 08:00) was stored and could never fire.
    opens = (
        next_due if scheduled or time_trigger is None else _gate_opens(time_trigger, now, settings)
    )
    if (
        opens is not None
        and expires_at is not None
        and opens.astimezone(UTC) >= expires_at.astimezone(UTC)  # as instants (see _time)
    ):
        raise ValidationError(
            "expires", f"{expires_at.isoformat()} comes before the first time it would fire"
        )
    return Built(
        triggers=triggers,
        zone=zone_label(zone),
        expires_at=expires_at,
        scheduled=scheduled,
        next_due=None if next_due is None else next_due.astimezone(zone),
        resolved=resolved,
        min_interval_seconds=interval if request.repeat == "every_time" else 0.0,
    )


def window_end(trigger: TimeTrigger, occurrence: datetime, settings: Settings) -> datetime:
    """The end of the window a recurrence's occurrence opens beside sensed triggers:
    ``window_minutes`` of elapsed time (counted in UTC: on the zone's wall clock, 01:30
    plus 20 minutes on the night the clocks go back is 01:50 of the first pass, before
    an occurrence at the second 01:30)."""
    minutes = (
        settings.intention_window_minutes
        if trigger.window_minutes is None
        else trigger.window_minutes
    )
    try:
        return occurrence.astimezone(UTC) + timedelta(minutes=minutes)
    except OverflowError:  # a window past the end of 9999 stays open to the calendar's end
        return datetime.max.replace(tzinfo=UTC)


def describe(value: Any) -> str:
    """An instant for a reminder's text (ISO 8601, minutes precision when whole)."""
    if isinstance(value, datetime):
        return value.isoformat(timespec="minutes" if value.second == 0 else "seconds")
    return str(value)
