"""A reminder stored in a time zone this machine's tzdata does not know (a database written
where tzdata knew a newer zone) fires nowhere here, is reported with its id and zone, and
blocks no other reminder: not the scheduler's batch, not a sense, not a listing."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import apsw
import psycopg
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.intentions.conftest import PHARMACY

UNKNOWN = "Mars/Olympus_Mons"


def _rewrite_zone(database: Path | str, seq: int) -> None:
    """Store ``UNKNOWN`` as the intention's zone and its time trigger's, as another
    machine's tzdata would have let it be written."""
    if isinstance(database, str):
        with psycopg.connect(database, autocommit=True) as server:
            server.execute("UPDATE intentions SET zone = %s WHERE seq = %s", (UNKNOWN, seq))
            server.execute(
                "UPDATE intention_triggers SET spec = jsonb_set(spec, '{zone}', to_jsonb(%s::text))"
                " WHERE seq = %s AND type = 'time'",
                (UNKNOWN, seq),
            )
        return
    connection = apsw.Connection(str(database))
    try:
        connection.execute("UPDATE intentions SET zone = ? WHERE seq = ?", (UNKNOWN, seq))
        connection.execute(
            "UPDATE intention_triggers SET spec = json_set(spec, '$.zone', ?)"
            " WHERE seq = ? AND type = 'time'",
            (UNKNOWN, seq),
        )
    finally:
        connection.close()


@pytest.fixture
def settings(shared_settings: Settings) -> Settings:
    return shared_settings.model_copy(update={"scheduler_poll_seconds": 3600})


def test_unknown_zone_reminder_does_not_block_the_scheduler_batch(
    settings: Settings, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    with MemoryService.open(settings, clock=clock) as memory:
        stuck = memory.remind("water the plants", at="in 5 minutes")
        daily = memory.remind("take the pills", at="in 6 minutes", every="daily")
        memory.remind("call mum", at="in 7 minutes")
    _rewrite_zone(settings.db, stuck.seq)
    _rewrite_zone(settings.db, daily.seq)
    clock.advance(10 * 60)
    with MemoryService.open(settings, clock=clock) as memory:
        with caplog.at_level(logging.WARNING, logger="recalld.intentions.component"):
            fired = memory.intentions.run_due()
            again = memory.intentions.run_due()
        # A one-shot's instant needs no zone: it fires, its due time given in UTC.
        assert [item.memory.content for item in fired] == ["water the plants", "call mum"]
        reminder = fired[0].reminder
        assert reminder is not None
        assert reminder.due_at is not None
        assert reminder.due_at.utcoffset() == timedelta(0)
        assert again == []
        # Reported once per process, naming the intention and the zone.
        warnings = [record.getMessage() for record in caplog.records]
        assert len(warnings) == 2
        assert all(UNKNOWN in warning for warning in warnings)
        assert {stuck.id, daily.id} == {w.split()[1] for w in warnings}
        # A recurrence cannot be expanded on a clock this machine cannot read: not fired,
        # not dropped, still active, and the scheduler does not spin on it.
        listed = {item.action: item for item in memory.intentions(state="all")}
        assert listed["water the plants"].state == "done"
        assert listed["water the plants"].zone == UNKNOWN
        assert listed["take the pills"].state == "active"
        assert listed["call mum"].state == "done"
        assert memory.intentions.next_due() is None  # so the scheduler does not spin on them
        pending = [item.memory.content for item in memory.recollections.pending()]
        assert pending == ["water the plants", "call mum"]
        # The way out: it can be cancelled.
        assert memory.cancel(daily.id).state == "cancelled"


def test_unknown_zone_reminder_past_its_window_or_expiry_expires(
    settings: Settings, clock: FakeClock
) -> None:
    # Expiry needs no zone: a window that passed, and a recurrence past its expires, end
    # as they would in a known zone (the scheduler wakes for the expiry it looks past).
    with MemoryService.open(settings, clock=clock) as memory:
        window = memory.remind("water the plants", at="in 5 minutes", until="in 15 minutes")
        daily = memory.remind("take the pills", at="in 6 minutes", every="daily", expires="in 3h")
    _rewrite_zone(settings.db, window.seq)
    _rewrite_zone(settings.db, daily.seq)
    clock.advance(2 * 60 * 60)  # the window is long over; the recurrence is due
    with MemoryService.open(settings, clock=clock) as memory:
        assert memory.intentions.run_due() == []
        assert memory.intentions.get(window.id).state == "expired"
        assert memory.intentions.get(daily.id).state == "active"  # looked past, until it ends
        ends = memory.intentions.get(daily.id).expires_at
        assert ends is not None
        assert memory.intentions.next_due() == ends
        clock.advance(60 * 60)
        assert memory.intentions.run_due() == []
        assert memory.intentions.get(daily.id).state == "expired"
        assert memory.intentions.next_due() is None


def test_unknown_zone_recurrence_does_not_fail_a_sense(
    settings: Settings, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    with MemoryService.open(settings, clock=clock) as memory:
        stuck = memory.remind(
            "buy stamps", place=PHARMACY, at="in 1 minute", every="daily", window_minutes=600
        )
        memory.remind("pick up the prescription", place=PHARMACY)
    _rewrite_zone(settings.db, stuck.seq)
    clock.advance(5 * 60)
    with MemoryService.open(settings, clock=clock) as memory:
        with caplog.at_level(logging.WARNING, logger="recalld.intentions.component"):
            fired = memory.recollections.sense(memory.recollections.cue(place=PHARMACY))
        assert [item.memory.content for item in fired] == ["pick up the prescription"]
        assert any(stuck.id in record.getMessage() for record in caplog.records)
        assert memory.intentions.get(stuck.id).state == "active"


def test_unknown_zone_many_do_not_starve_the_rest(
    settings: Settings, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # More unfireable recurrences due first than one batch holds: the batch looks past them.
    monkeypatch.setattr("recalld.intentions.component.DUE_BATCH", 2)
    with MemoryService.open(settings, clock=clock) as memory:
        stuck = [
            memory.remind(f"stuck {index}", at="in 1 minute", every="daily") for index in range(3)
        ]
        memory.remind("call mum", at="in 2 minutes")
    for intention in stuck:
        _rewrite_zone(settings.db, intention.seq)
    clock.advance(timedelta(minutes=5).total_seconds())
    with MemoryService.open(settings, clock=clock) as memory:
        assert [item.memory.content for item in memory.intentions.run_due()] == ["call mum"]
