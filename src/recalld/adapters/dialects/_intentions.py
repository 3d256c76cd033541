"""The native dialect's prospective-memory tools: ``remind``, ``intentions``, ``cancel_intention``.

Reminders are delivered like recollections once their triggers hold: fired by
``sense`` or the scheduler, collected with ``pending_recollections`` (this
dialect's or madeleine's, see :mod:`._pending`), ``GET /v1/recollections/pending``
or the ``recollections://pending`` resource.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from recalld.adapters.dialects._arguments import TIME_TEXT
from recalld.adapters.dialects._compact import compact, compact_result
from recalld.adapters.dialects.base import ToolSpec, scoped_namespace, state_of
from recalld.intentions import Intention
from recalld.intentions.model import (
    INTERVAL_RANGE,
    MAX_RADIUS_M,
    MAX_WINDOW_MINUTES,
    RADIUS_RANGE,
    WINDOW_RANGE,
    Number,
)

__all__ = ["INTENTION_TOOLS"]


class IntentionOut(BaseModel):
    """An intention, compact: what it is for, its state, its triggers (and what is set)."""

    model_config = ConfigDict(extra="allow")

    id: str
    action: str
    state: str


class IntentionsOut(BaseModel):
    intentions: list[IntentionOut]


def _compact(intention: Intention) -> dict[str, Any]:
    # The minimum interval only means something to an intention that repeats every time.
    hidden = {"seq"} if intention.repeat == "every_time" else {"seq", "min_interval_seconds"}
    return compact(intention, exclude=hidden)


Namespace = Annotated[str | None, Field(description="default: the server's")]
UserId = Annotated[str | None, Field(description="mem0 scope: namespace user:<id>")]
AgentId = Annotated[str | None, Field(description="mem0 scope: namespace agent:<id>")]
When = Annotated[
    str | None,
    Field(description="ISO 8601 with offset, or a phrase: 'tomorrow at 9', 'next Friday 18:00'"),
    TIME_TEXT,
]


def remind(
    ctx: Context,
    action: Annotated[str, Field(description="what to remind of, e.g. 'pick up the prescription'")],
    place: Annotated[
        dict[str, Any] | None,
        Field(description='{"lat": .., "lon": ..} or {"geohash": ".."}: fire on arriving there'),
    ] = None,
    radius_m: Annotated[
        Number | None,
        Field(gt=0, le=MAX_RADIUS_M, description="metres around place (default 150)"),
        RADIUS_RANGE,  # after the Field: before it, the schema lost the bounds
    ] = None,
    at: When = None,
    until: Annotated[
        str | None, Field(description="end of a window that starts at"), TIME_TEXT
    ] = None,
    every: Annotated[
        str | None,
        Field(description="daily, weekdays, weekly, monthly or an RRULE such as FREQ=WEEKLY"),
    ] = None,
    window_minutes: Annotated[
        Number | None,
        Field(
            gt=0,
            le=MAX_WINDOW_MINUTES,
            description="with other triggers: minutes each occurrence lasts",
        ),
        WINDOW_RANGE,
    ] = None,
    zone: Annotated[
        str | None, Field(description="the user's zone: Europe/Paris (follows DST) or +01:00")
    ] = None,
    mention: Annotated[
        list[str],
        Field(description="names or phrases (whole words); fires when all are heard in one sense"),
    ] = [],  # noqa: B006
    signals: Annotated[
        list[str], Field(description="thresholds such as 'heart_rate>150' or 'temperature<35'")
    ] = [],  # noqa: B006
    readings: Annotated[
        StrictInt, Field(ge=1, le=1000, description="consecutive readings each signal needs")
    ] = 1,
    tags: Annotated[list[str], Field(description="tags the sensed context must carry")] = [],  # noqa: B006
    expires: Annotated[
        str | None, Field(description="never fire after this time"), TIME_TEXT
    ] = None,
    repeat: Annotated[
        Literal["once", "every_time"], Field(description="once (default) or every_time")
    ] = "once",
    min_interval_seconds: Annotated[
        Number | None,
        Field(ge=0, description="every_time: seconds between firings"),
        INTERVAL_RANGE,
    ] = None,
    namespace: Namespace = None,
    user_id: UserId = None,
    agent_id: AgentId = None,
) -> Annotated[CallToolResult, IntentionOut]:
    scope = scoped_namespace(ctx, namespace, user_id, agent_id, write=True)
    service = state_of(ctx).service
    intention = service.remind(
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
        namespace=scope,
    )
    return compact_result(_compact(intention))


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
    namespace: Namespace = None,
    user_id: UserId = None,
    agent_id: AgentId = None,
) -> Annotated[CallToolResult, IntentionsOut]:
    scope = scoped_namespace(ctx, namespace, user_id, agent_id, write=False)
    found = state_of(ctx).service.intentions(state=state, namespace=scope)
    return compact_result({"intentions": [_compact(intention) for intention in found]})


def cancel_intention(
    ctx: Context,
    id: Annotated[str, Field(description="the intention's id")],
    namespace: Namespace = None,
    user_id: UserId = None,
    agent_id: AgentId = None,
) -> Annotated[CallToolResult, IntentionOut]:
    scope = scoped_namespace(ctx, namespace, user_id, agent_id, write=True)
    return compact_result(_compact(state_of(ctx).service.cancel(id, namespace=scope)))


INTENTION_TOOLS = (
    ToolSpec(
        "remind",
        remind,
        "Remind of an action when every trigger given holds: place (+ radius_m), at (with "
        "until a window, with every a recurrence), mention, signals, tags. Times may be "
        "phrases ('tomorrow at 9') read in zone; check how each was resolved. Delivered once "
        "as a pending reminder.",
    ),
    ToolSpec(
        "intentions",
        intentions,
        "List intentions (active by default), newest first, with triggers and next due time.",
        read_only=True,
    ),
    ToolSpec(
        "cancel_intention",
        cancel_intention,
        "Cancel an intention by id: it never fires again (forget removes it).",
        destructive=True,
        idempotent=True,
    ),
)
