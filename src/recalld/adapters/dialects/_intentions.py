"""The native dialect's prospective-memory tools: ``remind``, ``intentions``, ``cancel_intention``.

Reminders are delivered like recollections (``pending_recollections`` of the
madeleine dialect, ``GET /v1/recollections/pending``, the
``recollections://pending`` resource) once their triggers hold.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from recalld.adapters.dialects.base import ToolSpec, state_of
from recalld.intentions import Intention, IntentionList

__all__ = ["INTENTION_TOOLS"]

When = Annotated[
    str | None,
    Field(description="ISO 8601 with offset, or a phrase: 'tomorrow at 9', 'next Friday 18:00'"),
]


def remind(
    ctx: Context,
    action: Annotated[str, Field(description="what to remind of, e.g. 'pick up the prescription'")],
    place: Annotated[
        dict[str, Any] | None,
        Field(description='{"lat": .., "lon": ..} or {"geohash": ".."}: fire on arriving there'),
    ] = None,
    radius_m: Annotated[
        float | None, Field(gt=0, le=50_000, description="metres around place (default 150)")
    ] = None,
    at: When = None,
    until: Annotated[str | None, Field(description="end of a window that starts at")] = None,
    every: Annotated[
        str | None,
        Field(description="daily, weekdays, weekly, monthly or an RRULE such as FREQ=WEEKLY"),
    ] = None,
    window_minutes: Annotated[
        float | None, Field(gt=0, description="with other triggers: minutes each occurrence lasts")
    ] = None,
    zone: Annotated[
        str | None, Field(description="the user's zone: Europe/Paris (follows DST) or +01:00")
    ] = None,
    mention: Annotated[
        list[str], Field(description="fire when one of these names/words is heard (all needed)")
    ] = [],  # noqa: B006
    signals: Annotated[
        list[str], Field(description="thresholds such as 'heart_rate>150' or 'temperature<35'")
    ] = [],  # noqa: B006
    readings: Annotated[
        int, Field(ge=1, le=1000, description="consecutive readings each signal needs")
    ] = 1,
    tags: Annotated[list[str], Field(description="tags the sensed context must carry")] = [],  # noqa: B006
    expires: Annotated[str | None, Field(description="never fire after this time")] = None,
    repeat: Annotated[
        Literal["once", "every_time"], Field(description="once (default) or every_time")
    ] = "once",
    min_interval_seconds: Annotated[
        float | None, Field(ge=0, description="every_time: seconds between firings")
    ] = None,
) -> Intention:
    service = state_of(ctx).service
    return service.remind(
        action,
        place=place,
        radius_m=radius_m,
        at=at,
        until=until,
        every=every,
        window_minutes=window_minutes,
        zone=zone,
        mention=mention,
        signals=[
            {"signal": name, "readings": readings, **bounds}
            for name, bounds in (_signal(text) for text in signals)
        ],
        tags=tags,
        expires=expires,
        repeat=repeat,
        min_interval_seconds=min_interval_seconds,
    )


def _signal(text: str) -> tuple[str, dict[str, float | None]]:
    from recalld.intentions.building import parse_signal

    condition = parse_signal(text)
    return condition.signal, {"above": condition.above, "below": condition.below}


def intentions(
    ctx: Context,
    state: Annotated[
        Literal["active", "done", "cancelled", "expired", "all"],
        Field(description="which to list (default active)"),
    ] = "active",
) -> IntentionList:
    return IntentionList(intentions=state_of(ctx).service.intentions(state=state))


def cancel_intention(
    ctx: Context, id: Annotated[str, Field(description="the intention's id")]
) -> Intention:
    return state_of(ctx).service.cancel(id)


INTENTION_TOOLS = (
    ToolSpec(
        "remind",
        remind,
        "Remember to do something when a situation comes up (prospective memory): 'when I am "
        "at the pharmacy, pick up the prescription', 'next time Anna comes up, ask about her "
        "move', 'on Friday at 9, send the report', 'if my heart rate stays over 150, tell me "
        "to slow down'. Give the action and one or more triggers, all of which must hold: "
        "place (+ radius_m), at (an instant; with until a window; with every a recurrence), "
        "mention, signals (+ readings), tags. Times may be phrases read in zone. The reminder "
        "is delivered once through pending_recollections (kind 'reminder'). Returns the "
        "intention with each time as resolved: check it matches what the user meant.",
    ),
    ToolSpec(
        "intentions",
        intentions,
        "List stored intentions (active by default; or done, cancelled, expired, all), "
        "newest first, with their triggers and the next time each is due.",
        read_only=True,
    ),
    ToolSpec(
        "cancel_intention",
        cancel_intention,
        "Cancel an intention by id: it never fires again and a reminder of it still waiting "
        "is dropped. Use forget to remove it entirely.",
    ),
)
