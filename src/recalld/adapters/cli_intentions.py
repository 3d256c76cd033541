"""``recalld`` commands for prospective memory: ``remind``, ``intentions``, ``cancel``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from recalld import _validate as check
from recalld._text import shown
from recalld.adapters._cli_support import _parse_place, _print_json, _State, pass_state
from recalld.errors import NotFoundError

if TYPE_CHECKING:
    from recalld.intentions import Intention
    from recalld.intentions.model import Trigger


def _describe(trigger: Trigger) -> str:
    from recalld.intentions.model import (
        MentionTrigger,
        PlaceTrigger,
        SignalTrigger,
        TagTrigger,
        TimeTrigger,
    )

    if isinstance(trigger, PlaceTrigger):
        return f"within {trigger.radius_m:g} m of {trigger.lat:.5f},{trigger.lon:.5f}"
    if isinstance(trigger, TimeTrigger):
        at = "" if trigger.at is None else trigger.at.isoformat()
        if trigger.every is not None:
            return f"{trigger.every} from {at} ({trigger.zone})"
        if trigger.until is not None:
            return f"between {at} and {trigger.until.isoformat()}"
        return f"at {at}"
    if isinstance(trigger, MentionTrigger):
        return f"when '{trigger.text}' is mentioned"
    if isinstance(trigger, TagTrigger):
        return f"when tagged '{trigger.tag}'"
    assert isinstance(trigger, SignalTrigger)
    relation = f"> {trigger.above:g}" if trigger.above is not None else f"< {trigger.below:g}"
    return f"{trigger.signal} {relation} for {trigger.readings} reading(s)"


def _show(state: _State, intention: Intention) -> None:
    triggers = "; ".join(_describe(trigger) for trigger in intention.triggers)
    # The action is the user's text: "[/x]" in it is not rich markup (nor is "[active]").
    state.console.print(
        f"{intention.id} [{intention.state}] {intention.action} — {triggers}",
        highlight=False,
        markup=False,
    )
    if intention.next_due is not None:
        state.console.print(f"  next due: {intention.next_due.isoformat()}", highlight=False)


@click.command()
@click.argument("action")
@click.option("--place", help="LAT,LON or a geohash")
@click.option("--radius", type=float, help="metres around --place (default 150, at most 50000)")
@click.option("--at", help="ISO 8601 or a phrase: 'tomorrow at 9', 'next Friday 18:00'")
@click.option("--until", help="end of a time window that starts --at")
@click.option("--every", help="daily, weekdays, weekly, monthly or an RRULE (FREQ=WEEKLY;BYDAY=FR)")
@click.option(
    "--window",
    "window_minutes",
    type=float,
    help="minutes a recurrence stays open [default: RECALLD_INTENTION_WINDOW_MINUTES, 60]",
)
@click.option("--zone", help="time zone for phrases and recurrences (Europe/Paris, +01:00)")
@click.option("--mention", "mentions", multiple=True, help="fire when this is mentioned (repeat)")
@click.option(
    "--when-signal", "signals", multiple=True, help="a threshold such as heart_rate>150 (repeat)"
)
@click.option(
    "--for",
    "readings",
    type=click.IntRange(1, 1000),
    default=1,
    show_default=True,
    help="consecutive readings each --when-signal needs",
)
@click.option(
    "--tag", "tags", multiple=True, help="fire when the context carries this tag (repeat)"
)
@click.option("--expires", help="never fire after this (ISO 8601 or a phrase)")
@click.option("--every-time", is_flag=True, help="fire each time the triggers hold (default once)")
@click.option(
    "--min-interval",
    type=float,
    help="with --every-time: seconds between firings"
    " [default: RECALLD_INTENTION_MIN_INTERVAL_SECONDS, 3600]",
)
@click.option("--json", "as_json", is_flag=True, help="print the stored intention as JSON")
@pass_state
def remind(
    state: _State,
    action: str,
    place: str | None,
    radius: float | None,
    at: str | None,
    until: str | None,
    every: str | None,
    window_minutes: float | None,
    zone: str | None,
    mentions: tuple[str, ...],
    signals: tuple[str, ...],
    readings: int,
    tags: tuple[str, ...],
    expires: str | None,
    every_time: bool,
    min_interval: float | None,
    as_json: bool,
) -> None:
    """Remind of ACTION when every given trigger holds (place, time, mention, signal, tag)."""
    from recalld.intentions.building import parse_signal

    conditions: list[dict[str, Any]] = [
        parse_signal(signal).model_copy(update={"readings": readings}).model_dump()
        for signal in signals
    ]
    intention = state.memory().remind(
        action,
        place=_parse_place(place),
        radius_m=radius,
        at=at,
        until=until,
        every=every,
        window_minutes=window_minutes,
        zone=zone,
        mention=mentions,
        signals=conditions,
        tags=tags,
        expires=expires,
        repeat="every_time" if every_time else "once",
        min_interval_seconds=min_interval,
    )
    if as_json:
        _print_json(intention)
        return
    _show(state, intention)
    for resolved in intention.resolved:
        state.console.print(
            f'  {resolved.field}: {resolved.instant.isoformat()} (from "{resolved.text}")',
            highlight=False,
            markup=False,
        )


@click.command()
@click.option(
    "--state",
    "wanted",
    type=click.Choice(["active", "done", "cancelled", "expired", "all"]),
    default="active",
    show_default=True,
)
@click.option("--json", "as_json", is_flag=True, help='print {"intentions": [...]}')
@pass_state
def intentions(state: _State, wanted: str, as_json: bool) -> None:
    """List intentions (active ones by default), newest first."""
    found = state.memory(existing=True).intentions(state=wanted)  # type: ignore[arg-type]
    if as_json:
        _print_json({"intentions": [item.model_dump(mode="json") for item in found]})
        return
    if not found:
        state.console.print("no intentions")
    for intention in found:
        _show(state, intention)


@click.command()
@click.argument("intention_id")
@click.option("--json", "as_json", is_flag=True, help="print the cancelled intention as JSON")
@pass_state
def cancel(state: _State, intention_id: str, as_json: bool) -> None:
    """Cancel intention INTENTION_ID: it never fires again (forget removes it)."""
    if state.no_database_yet():
        # No intention is there, and nothing is created to say so (review of pass e66):
        # refused as the service refuses an unknown id, after the same checks.
        scope_namespace = check.namespace(state.settings.namespace)
        check.lookup(intention_id, "id")
        raise NotFoundError(f"no intention with id {shown(intention_id)} in {scope_namespace!r}")
    intention = state.memory().cancel(intention_id)
    if as_json:
        _print_json(intention)
    else:
        _show(state, intention)


intention_commands: list[click.Command] = [remind, intentions, cancel]
