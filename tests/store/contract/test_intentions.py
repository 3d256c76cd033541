"""Intentions: stored with their memory, found by trigger terms and places, claimed once."""

from __future__ import annotations

import threading
from datetime import timedelta

from recalld.store.base import Store
from recalld.store.intentions import (
    IntentionRecord,
    IntentionSession,
    Lookup,
    ReminderDraft,
    Streak,
    TriggerRecord,
)
from tests.store.contract.conftest import NOW, OpenStore, record


def intention(store: Store, id: str, *, scheduled: bool = False, **fields: object) -> int:
    triggers = [
        TriggerRecord(type="mention", spec={"text": "Anna"}, term="anna"),
        TriggerRecord(
            type="place",
            spec={"lat": 48.853, "lon": 2.349, "radius_m": 100},
            box=(48.852, 48.854, 2.348, 2.350),
        ),
    ]
    if scheduled:
        triggers = [TriggerRecord(type="time", spec={"at": NOW.isoformat()})]
    with store.transaction() as tx:
        memory = tx.insert(record(id=id, content=f"remind {id}", kind="intention"))
        tx.save_intention(
            memory.seq,
            IntentionRecord(
                namespace="default",
                repeat="once",
                min_interval_seconds=0,
                zone="Europe/Paris",
                scheduled=scheduled,
                triggers=triggers,
                created_at=NOW,
                next_due=NOW if scheduled else None,
                **fields,  # type: ignore[arg-type]
            ),
        )
    return memory.seq


def test_intentions_stored_listed_and_found(store: Store) -> None:
    seq = intention(store, "i1")
    timed = intention(store, "i2", scheduled=True)
    rows = store.intentions.select("default", None)
    assert [row.seq for row in rows] == [timed, seq]
    row = store.intentions.get("default", "i1")
    assert row is not None
    assert row.state == "active"
    assert row.zone == "Europe/Paris"
    assert [trigger.type for trigger in row.triggers] == ["mention", "place"]
    assert row.triggers[0].spec == {"text": "Anna"}
    assert store.intentions.get("other", "i1") is None
    assert store.intentions.candidates("default", Lookup(terms={"mention": ["anna"]})) == [seq]
    assert store.intentions.candidates("default", Lookup(place=(48.853, 2.349))) == [seq]
    assert store.intentions.candidates("default", Lookup(place=(10.0, 10.0))) == []
    assert store.intentions.candidates("other", Lookup(terms={"mention": ["anna"]})) == []
    assert store.intentions.next_due() == NOW
    assert store.intentions.counts("default") == {"active": 2}


def test_intentions_session_fires_queues_and_streaks(store: Store) -> None:
    seq = intention(store, "i1")

    def step(session: IntentionSession) -> int:
        (row,) = session.load([seq])
        session.set_streak(seq, 1, Streak(count=2, last_at=NOW))
        session.record_firing(seq, NOW, "done", None)
        session.queue(
            ReminderDraft(
                seq=seq,
                namespace="default",
                score=1.0,
                channels={"mention": 1.0},
                prompt_line="[reminder] x",
                details={"why": "Anna"},
            ),
            NOW,
        )
        return row.fire_count

    assert store.intentions.session(step) == 0
    row = store.intentions.get("default", "i1")
    assert row is not None
    assert (row.state, row.fire_count, row.last_fired_at) == ("done", 1, NOW)
    assert row.streaks == {1: Streak(count=2, last_at=NOW)}
    (pending,) = store.context.take_pending("default", 5, drain=False, now=NOW)
    assert (pending.kind, pending.details) == ("reminder", {"why": "Anna"})
    assert store.intentions.session(lambda session: session.load([seq])) == []  # not active


def test_intentions_cancel_drops_reminders_and_streaks(store: Store) -> None:
    seq = intention(store, "i1")

    def step(session: IntentionSession) -> None:
        session.set_streak(seq, 0, Streak(count=1, last_at=NOW))
        draft = ReminderDraft(
            seq=seq, namespace="default", score=1.0, channels={}, prompt_line="p", details={}
        )
        session.queue(draft, NOW)

    store.intentions.session(step)
    cancelled = store.intentions.cancel("default", "i1", NOW + timedelta(minutes=1))
    assert cancelled is not None
    assert cancelled.state == "cancelled"
    assert cancelled.streaks == {}
    assert store.context.take_pending("default", 5, drain=False, now=NOW) == []
    assert store.intentions.cancel("default", "unknown", NOW) is None
    with store.transaction() as tx:
        tx.delete(seq)
    assert store.intentions.select("default", None) == []


def test_intentions_due_claims_are_taken_once(open_another: OpenStore) -> None:
    stores = [open_another() for _ in range(3)]
    for index in range(6):
        intention(stores[0], f"due{index}", scheduled=True)
    claimed: list[list[int]] = [[] for _ in stores]
    barrier = threading.Barrier(len(stores))

    def scheduler(index: int) -> None:
        barrier.wait(timeout=10)

        def step(session: IntentionSession) -> list[int]:
            rows = session.due(NOW, 2)
            for row in rows:
                session.record_firing(row.seq, NOW, "done", None)
            return [row.seq for row in rows]

        while batch := stores[index].intentions.session(step):
            claimed[index] += batch

    threads = [threading.Thread(target=scheduler, args=(index,)) for index in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    everything = [seq for seqs in claimed for seq in seqs]
    assert len(everything) == 6
    assert len(set(everything)) == 6
    assert stores[1].intentions.counts("default") == {"done": 6}
    assert stores[2].intentions.next_due() is None


def test_queued_reminders_are_read_without_taking_them(store: Store) -> None:
    # An export reads them (adversarial pass a63): reminders only, oldest first, left queued.
    seqs = [intention(store, "i1"), intention(store, "i2")]
    with store.transaction() as tx:
        plain = tx.insert(record(id="m1", content="a plain note"))
    store.context.fire("default", [(plain.seq, 0.9, {"text": 0.9})], NOW, NOW)

    def step(session: IntentionSession) -> None:
        for seq in reversed(seqs):
            draft = ReminderDraft(
                seq=seq, namespace="default", score=1.0, channels={}, prompt_line="p", details={}
            )
            session.queue(draft, NOW + timedelta(seconds=seq))

    store.intentions.session(step)
    queued = store.context.queued_reminders("default", NOW)
    assert [(item.memory.id, item.kind) for item in queued] == [
        ("i2", "reminder"),
        ("i1", "reminder"),
    ]
    assert queued[0].fired_at == NOW + timedelta(seconds=seqs[1])
    assert store.context.queued_reminders("other", NOW) == []
    assert len(store.context.take_pending("default", 10, drain=False, now=NOW)) == 3
