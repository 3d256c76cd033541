"""A subscribe, unsubscribe or session end costs the same however many sessions subscribed.

:class:`Subscribers` kept each URI's sessions in a list searched whole on every
``resources/subscribe`` and ``resources/unsubscribe``, and a session's end searched every
URI's: many sessions subscribing took time quadratic in their number. The cost is
measured here in Python lines run (``sys.settrace``), never in time."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from recalld.adapters.dialects.base import Subscribers

URI = "recollections://pending"
HELD = 3_000


def _lines_run(action: Callable[[], None]) -> int:
    """How many Python lines ``action`` runs (its own and those of what it calls)."""
    count = 0

    def trace(frame: FrameType, event: str, argument: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        action()
    finally:
        sys.settrace(previous)
    return count


def test_mcp_subscribe_and_unsubscribe_cost_no_more_with_many_subscribers() -> None:
    subscribers = Subscribers()
    held = [object() for _ in range(HELD)]
    for session in held:
        subscribers.add(URI, session)
    newcomer = object()
    assert _lines_run(lambda: subscribers.add(URI, newcomer)) < 100
    assert _lines_run(lambda: subscribers.add(URI, newcomer)) < 100  # again: still once
    assert _lines_run(lambda: subscribers.remove(URI, held[0])) < 100
    assert subscribers.count() == HELD
    assert subscribers.of(URI)[-1] is newcomer


def test_mcp_session_end_costs_no_more_with_many_uris_subscribed() -> None:
    subscribers = Subscribers()
    for number in range(HELD):
        subscribers.add(f"recalld://transcript/{number}", object())
    ended = object()
    subscribers.add(URI, ended)
    subscribers.add("recalld://transcript/7", ended)
    assert _lines_run(lambda: subscribers.drop(ended)) < 100
    assert subscribers.of(URI) == []
    assert ended not in subscribers.of("recalld://transcript/7")
    assert subscribers.count() == HELD
