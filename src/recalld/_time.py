"""Time helpers: one storage format, offset-preserving parsing, an injectable clock."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, time, timedelta, timezone, tzinfo
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from recalld._text import shown
from recalld.errors import ValidationError

Clock = Callable[[], datetime]
# RFC 3339 allows a lower-case "t" and "z" and a leap second (:60), which Python's parser
# does not: they are normalised first (a leap second counts as the last microsecond).
_LOWER_T = re.compile(r"^(\d{4}-\d{2}-\d{2})t")
_LEAP_SECOND = re.compile(r"(T\d{2}:\d{2}):60(?:\.\d+)?")
# A time of day, 24-hour clock: 09:00, 23:59.
CLOCK_TIME = re.compile(r"(?:[01]\d|2[0-3]):[0-5]\d")
# Names the zone database resolves to this machine's own setting (links, not zones).
MACHINE_ZONES = frozenset({"localtime", "posixrules"})
# A fixed offset as a zone: +01:00, -0530, UTC+2.
OFFSET = re.compile(r"^(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)
# An offset with seconds (+05:30:15): a zone offset is written in hours and minutes.
OFFSET_SECONDS = re.compile(
    r"^(?:UTC|GMT)?\s*[+-]\d{1,2}:?\d{2}:?\d{2}(?:[.,]\d+)?$", re.IGNORECASE
)


def utc_now() -> datetime:
    """The current time as an aware UTC datetime (the default clock)."""
    return datetime.now(UTC)


def to_storage(moment: datetime) -> str:
    """Format an aware datetime as fixed-width UTC text that sorts chronologically.

    The year is written with four digits itself: ``strftime("%Y")`` writes the year 800
    as ``800``, which sorts after ``2026`` and which ``fromisoformat`` cannot read back.
    """
    utc = moment.astimezone(UTC)
    return f"{utc.year:04d}" + utc.strftime("-%m-%dT%H:%M:%S.%fZ")


_SHORT_YEAR = re.compile(r"^(\d{1,3})-")


def from_storage(text: str) -> datetime:
    """Parse text written by :func:`to_storage` (or any ISO 8601 string) back to a datetime
    (also a year before 1000 written without its leading zeros by an older version)."""
    if text[4:5] != "-":
        text = _SHORT_YEAR.sub(lambda year: f"{int(year[1]):04d}-", text)
    return datetime.fromisoformat(text)


# A time whose offset's "+" became a space: a URL's query string reads "+" as a space, so
# `curl '...?since=2026-10-25T10:00:00+02:00'` sends "2026-10-25T10:00:00 02:00" (a "-"
# arrives as it is). Refused as before, with the reason and the fix.
_PLUS_AS_SPACE = re.compile(r"[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)? \d{2}(?::?\d{2})?$")
# Said only as a possibility: the library, CLI and MCP take the time as written (no URL).
_PLUS_IN_URL = (
    "if it came in a URL's query string, an offset's + arrived as a space there: write it"
    " %2B (or give the time in UTC, ending in Z)"
)

# The offset ending a written time ("10:00+05:30", "T1000-0800", "+05:30:15"): its minutes.
_OFFSET_MINUTES = re.compile(r"\d[+-]\d{2}:?(\d{2})(?::?\d{2}(?:[.,]\d+)?)?$")


def check_offset_minutes(field: str, text: str) -> None:
    """Refuse a written time whose UTC offset has minutes past 59: ``fromisoformat`` reads
    "+05:75" as +06:15, which would move the time by an hour nobody asked for."""
    match = _OFFSET_MINUTES.search(text.strip())
    if match is not None and int(match.group(1)) > 59:
        raise ValidationError(field, f"offset in {text!r} has minutes out of range (00-59)")


def rfc3339_text(value: str) -> str:
    """``value`` (an RFC 3339 time, maybe) as Python's parser reads it: a lower-case ``t``
    and ``z`` upper-cased, a leap second as the last microsecond of its minute."""
    text = _LOWER_T.sub(r"\1T", value.strip())
    if text.endswith("z"):
        text = text[:-1] + "Z"
    return _LEAP_SECOND.sub(r"\1:59.999999", text)


# A date (basic or extended form) followed at once by a digit: Python's fromisoformat
# takes any character after the date as the separator, so 200 ones were read as
# 1111-11-11T11:11:11.111111 (the ninth digit eaten), a time nobody wrote.
# A basic week date with its day (2026W495) too: Python took "2026W4951111" for week 49's
# Monday at 11:11, its day eaten as the separator (review of pass e63).
_DIGIT_AFTER_DATE = re.compile(r"[+-]?(?:\d{8}|\d{4}-\d{2}-\d{2}|\d{4}W\d{3})\d")


def from_iso_text(text: str) -> datetime:
    """``datetime.fromisoformat(text)``, but a ValueError, as for any unreadable text,
    when a digit follows the date where ISO 8601 puts ``T`` (or a space)."""
    if _DIGIT_AFTER_DATE.match(text.strip()):
        raise ValueError(f"no separator between the date and the time in {text!r}")
    return datetime.fromisoformat(text)


def parse_instant(field: str, value: str | datetime) -> datetime:
    """Parse an ISO 8601 instant, keeping its offset; a value without one is taken as UTC.

    The offset is kept because the local time of day at which something happened
    matters for recall (08:10 at a café is not 20:10 there).
    """
    if isinstance(value, datetime):
        moment = value
    elif not isinstance(value, str):
        raise ValidationError(
            field, f"must be an ISO 8601 time (text) or a datetime, got {type(value).__name__}"
        )
    else:
        text = rfc3339_text(value)
        check_offset_minutes(field, text)
        try:
            moment = from_iso_text(text)
        except ValueError:
            reason = (
                f"expected an ISO 8601 date-time such as 2026-10-25T16:20:00Z, got {shown(value)}"
            )
            if _PLUS_AS_SPACE.search(text):
                reason += f": {_PLUS_IN_URL}"
            raise ValidationError(field, reason) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        moment.astimezone(UTC)
    except OverflowError:
        # e.g. 0001-01-01T00:00+05:00 is before the first representable UTC instant.
        raise ValidationError(field, f"{value!s} is out of the representable range") from None
    offset = moment.utcoffset()
    if offset is not None and offset % timedelta(minutes=1):
        # An offset with seconds (a historical local mean time: Amsterdam's +00:19:32 in
        # 1900) cannot be written in RFC 3339: JSON showed it to the minute, the instant 32 s
        # off after an export and import. UTC keeps the instant.
        moment = moment.astimezone(UTC)
    return moment


def expiry(now: datetime, ttl_seconds: float) -> datetime:
    """The instant a memory written at ``now`` with ``ttl_seconds`` stops being returned."""
    try:
        expires_at = now + timedelta(seconds=ttl_seconds)
    except OverflowError:
        raise ValidationError(
            "ttl_seconds", f"{ttl_seconds} s reaches past the year 9999"
        ) from None
    if expires_at <= now:
        # Times are kept to the microsecond: a positive TTL that rounds to none would be
        # acknowledged as written, yet expired at birth (no read would ever see it).
        raise ValidationError(
            "ttl_seconds", f"{ttl_seconds} s is under the 1 microsecond that times are kept to"
        )
    return expires_at


def parse_zone(value: str, field: str = "zone") -> tzinfo:
    """An IANA zone (``Europe/Paris``) or a fixed offset (``+01:00``, ``-0530``, ``UTC``)."""
    text = value.strip()
    if text.upper() in ("Z", "UTC", "GMT"):
        return UTC
    match = OFFSET.match(text)
    if match:
        sign, hours, minutes = match.groups()
        if int(minutes or 0) > 59:
            # "+05:75" is no offset anyone writes: read as +06:15 it would move every time.
            raise ValidationError(field, f"offset {value!r} has minutes out of range (00-59)")
        delta = timedelta(hours=int(hours), minutes=int(minutes or 0))
        if delta >= timedelta(hours=24):
            raise ValidationError(field, f"offset {value!r} is out of range (under 24 hours)")
        return timezone(-delta if sign == "-" else delta)
    if OFFSET_SECONDS.match(text):
        raise ValidationError(
            field, f"offset {value!r} has seconds; give hours and minutes, such as +05:30"
        )
    if text in MACHINE_ZONES:
        raise ValidationError(
            field,
            f"{value!r} is this machine's own zone file, another zone on another machine"
            " (a reminder exported there): give an IANA name such as Europe/Paris",
        )
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationError(
            field,
            f"unknown time zone {value!r}; give an IANA name such as Europe/Paris or +01:00"
            + _zone_hint(text),
        ) from None


def _zone_hint(text: str) -> str:
    """``"; did you mean 'Europe/Paris'?"`` for a zone name in the wrong case (zone names
    are case-sensitive where tzdata is read from a case-sensitive file system)."""
    match = _zones_by_folded_name().get(text.casefold())
    return f"; did you mean {match!r}?" if match is not None else ""


@cache
def _zones_by_folded_name() -> dict[str, str]:
    """This machine's zone names by their case-folded spelling (read once: a listing of
    intentions on a zone it does not know asks for each)."""
    return {name.casefold(): name for name in sorted(available_timezones(), reverse=True)}


def parse_clock_time(value: str, field: str) -> time:
    """``HH:MM`` (24-hour clock), e.g. the default time of a day-only phrase: a time of day
    on whichever clock it is read on, so no offset (which would be ignored), no seconds."""
    text = value.strip()
    if CLOCK_TIME.fullmatch(text) is None:
        raise ValidationError(field, f"expected HH:MM (such as 09:00), got {shown(value)}")
    return time(int(text[:2]), int(text[3:]))


def local_time(now: datetime, zone: str | None) -> datetime:
    """``now`` on the user's clock, as a fixed offset: ``zone`` (``RECALLD_ZONE``: an IANA
    name or an offset) when set, else this machine's current offset.

    The present moment of a sense and a memory written without ``at`` are compared by
    their local time of day: a server whose machine keeps UTC must still read 08:05 in
    Paris as 08:05 when the user said so.
    """
    try:
        local = now.astimezone(parse_zone(zone, "RECALLD_ZONE")) if zone else now.astimezone()
    except OverflowError:
        # The user's clock is past 9999-12-31 (the calendar's last hours, east of UTC):
        # no datetime holds that, so the moment stays on UTC's clock.
        return now.astimezone(UTC)
    offset = local.utcoffset()
    assert offset is not None
    return local.replace(tzinfo=timezone(offset))
