"""Signal features, place and time candidates, firing with habituation, the pending queue."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta, timezone

import pytest

from recalld._text import prompt_line
from recalld.model import Memory, Place
from recalld.store.base import Store, stored_record
from tests.store.contract.conftest import NOW, OpenStore, record

LOCAL = timezone(timedelta(hours=1))


def memories(store: Store) -> list[int]:
    with store.transaction() as tx:
        first = tx.insert(
            record(
                id="e1",
                content="croissant",
                at=NOW.astimezone(LOCAL),
                place=Place(lat=48.8642, lon=2.3475, geohash="u09tvw0f6s"),
            )
        )
        second = tx.insert(
            record(
                id="e2",
                content="museum",
                at=NOW - timedelta(days=1),
                place=Place(lat=48.8606, lon=2.3376, geohash="u09tunqu7k"),
            )
        )
        tx.insert(
            record(
                id="e3",
                content="elsewhere",
                namespace="other",
                place=Place(lat=48.8642, lon=2.3475, geohash="u09tvw0f6s"),
            )
        )
        tx.save_signals(first.seq, {"image": b"\x01\x02", "audio": b"\x03"}, {"heart_rate": 120.0})
        tx.save_signals(second.seq, {"image": b"\x09"}, {"heart_rate": 80.0, "temperature": 37.0})
    return [first.seq, second.seq]


def test_context_features_and_readings(store: Store) -> None:
    first, second = memories(store)
    assert store.context.signals([first, second]) == {
        first: {"image": b"\x01\x02", "audio": b"\x03"},
        second: {"image": b"\x09"},
    }
    assert store.context.biometrics([second]) == {second: {"heart_rate": 80.0, "temperature": 37.0}}
    assert sorted(store.context.with_channel("default", "image", NOW)) == [
        (first, b"\x01\x02"),
        (second, b"\x09"),
    ]
    assert store.context.with_channel("other", "image", NOW) == []
    assert sorted(store.context.biometric_rows("default", ["heart_rate"], NOW)) == [
        (first, "heart_rate", 120.0),
        (second, "heart_rate", 80.0),
    ]
    assert store.context.nearest_readings("default", "heart_rate", 100, 115, 130, NOW, 5) == [first]
    with store.transaction() as tx:
        tx.save_signals(first, {}, {})
    assert store.context.signals([first]) == {}


def test_context_candidates_by_place_time_and_seq(store: Store) -> None:
    first, second = memories(store)
    points = store.context.near_points("default", ["u09tv", "u09tu"], NOW, 10)
    assert sorted(point[0] for point in points) == [first, second]
    by_seq = {point[0]: point for point in points}
    at = by_seq[first][3]
    assert at is not None
    assert at.utcoffset() == timedelta(hours=1)
    assert store.context.near_points("default", ["zzzz"], NOW, 10) == []
    # cells match a whole geohash (a place given coarser than the search), never a prefix.
    exact = store.context.near_points("default", [], NOW, 10, cells=["u09", "u09tvw0f6s"])
    assert [point[0] for point in exact] == [first]
    assert exact[0][4] == "u09tvw0f6s"
    assert [m.seq for m in store.context.by_seqs("default", [second, first, 999], NOW)] in (
        [first, second],
        [second, first],
    )
    assert store.context.by_seqs("other", [first], NOW) == []
    with store.transaction() as tx:
        # Dated, salient, but expired: never a point.
        tx.insert(
            record(
                id="e4",
                content="gone",
                at=NOW,
                salience=0.9,
                expires_at=NOW - timedelta(seconds=1),
            )
        )
        salient = tx.insert(
            record(id="e5", content="kept", at=NOW - timedelta(days=2), salience=0.9)
        )
    dated = store.context.dated_points("default", NOW, 1)
    assert [seq for seq, _, _ in dated] == [first]
    assert dated[0][1] == at  # on the clock it was stored with
    assert dated[0][1].utcoffset() == timedelta(hours=1)
    timed = store.context.dated_points("default", NOW, 10)
    assert [seq for seq, _, _ in timed] == [first, second, salient.seq]
    assert timed[2][2] == pytest.approx(0.9)
    assert store.context.dated_points("other", NOW, 10) == []


def test_context_fire_habituates_and_queues_oldest_first(store: Store) -> None:
    first, second = memories(store)
    since = NOW - timedelta(hours=3)
    fired = store.context.fire("default", [(first, 0.9, {"place": 1.0})], NOW, since)
    assert [memory.seq for memory in fired] == [first]
    again = store.context.fire(
        "default",
        [(first, 0.9, {"place": 1.0}), (second, 0.7, {"text": 0.8})],
        NOW + timedelta(minutes=1),
        since + timedelta(minutes=1),
    )
    assert [memory.seq for memory in again] == [second]
    assert store.context.counts("default") == (2, 2)
    version = store.context.pending_version("default")
    peek = store.context.take_pending("default", 10, drain=False, now=NOW)
    assert [item.memory.seq for item in peek] == [first, second]
    assert peek[0].channels == {"place": 1.0}
    assert peek[0].prompt_line == prompt_line(fired[0])
    assert "croissant" in peek[0].prompt_line
    assert peek[0].fired_at == NOW
    assert peek[0].kind == "recollection"
    drained = store.context.take_pending("default", 1, drain=True, now=NOW)
    assert [item.memory.seq for item in drained] == [first]
    assert store.context.pending_version("default") != version
    assert [
        item.memory.seq for item in store.context.take_pending("default", 5, drain=True, now=NOW)
    ] == [second]
    assert store.context.take_pending("default", 5, drain=True, now=NOW) == []


def test_context_queue_never_returns_a_memory_expired_since_it_fired(store: Store) -> None:
    first, second = memories(store)
    with store.transaction() as tx:
        memory = tx.find("default", id="e1")
        assert memory is not None
        tx.replace(first, replace(stored_record(memory), expires_at=NOW + timedelta(minutes=5)))
    fired = store.context.fire(
        "default",
        [(first, 0.9, {}), (second, 0.8, {})],
        NOW,
        NOW - timedelta(hours=3),
    )
    assert [memory.seq for memory in fired] == [first, second]
    later = NOW + timedelta(minutes=10)  # expired, not purged yet
    peek = store.context.take_pending("default", 10, drain=False, now=later)
    assert [item.memory.seq for item in peek] == [second]
    assert [item.memory.seq for item in peek if item.memory.content == "croissant"] == []
    # A limit of one is not spent on the expired item; draining never hands it out.
    drained = store.context.take_pending("default", 1, drain=True, now=later)
    assert [item.memory.seq for item in drained] == [second]
    assert store.context.take_pending("default", 5, drain=True, now=later) == []


def test_context_fire_leaves_out_a_memory_forgotten_since_it_was_ranked(store: Store) -> None:
    first, second = memories(store)
    with store.transaction() as tx:
        tx.delete(first)  # another caller's forget, between the sense's ranking and its firing
    fired = store.context.fire(
        "default", [(first, 0.9, {}), (second, 0.8, {})], NOW, NOW - timedelta(hours=3)
    )
    assert [memory.seq for memory in fired] == [second]
    assert store.context.counts("default") == (1, 1)


def test_context_forget_removes_history_and_queue(store: Store) -> None:
    first, _ = memories(store)
    store.context.fire("default", [(first, 0.9, {})], NOW, NOW - timedelta(hours=3))
    with store.transaction() as tx:
        tx.delete(first)
    assert store.context.counts("default") == (0, 0)
    assert store.context.signals([first]) == {}


def test_context_concurrent_drains_deliver_each_item_once(open_another: OpenStore) -> None:
    stores = [open_another() for _ in range(4)]
    with stores[0].transaction() as tx:
        seqs = [
            tx.insert(record(id=f"q{index}", content=f"item {index}")).seq for index in range(40)
        ]
    for seq in seqs:
        stores[0].context.fire("default", [(seq, 0.9, {})], NOW, NOW - timedelta(hours=1))
    received: list[list[int]] = [[] for _ in stores]
    barrier = threading.Barrier(len(stores))

    def drain(index: int) -> None:
        barrier.wait(timeout=10)
        while batch := stores[index].context.take_pending("default", 3, drain=True, now=NOW):
            received[index] += [item.memory.seq for item in batch]

    threads = [threading.Thread(target=drain, args=(index,)) for index in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    everything = [seq for items in received for seq in items]
    assert sorted(everything) == sorted(seqs)  # each exactly once


def test_context_concurrent_senses_fire_a_memory_once(open_another: OpenStore) -> None:
    stores = [open_another() for _ in range(4)]
    with stores[0].transaction() as tx:
        seq = tx.insert(record(id="once", content="fires once")).seq
    fired: list[list[Memory]] = [[] for _ in stores]
    barrier = threading.Barrier(len(stores))

    def sense(index: int) -> None:
        barrier.wait(timeout=10)
        fired[index] = stores[index].context.fire(
            "default", [(seq, 0.9, {})], NOW, NOW - timedelta(hours=3)
        )

    threads = [threading.Thread(target=sense, args=(index,)) for index in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sum(len(items) for items in fired) == 1
    assert stores[0].context.counts("default") == (1, 1)


def test_context_with_channel_leaves_out_the_expired_and_other_namespaces(store: Store) -> None:
    # Alone in the file, a namespace's features are read without its rows (SQLite); the
    # answer must be the same as with them: expired memories out, other namespaces out.
    with store.transaction() as tx:
        kept = tx.insert(record(id="k1", content="kept"))
        gone = tx.insert(record(id="k2", content="expired", expires_at=NOW - timedelta(hours=1)))
        later = tx.insert(record(id="k3", content="expires later", expires_at=NOW + timedelta(1)))
        for seq in (kept.seq, gone.seq, later.seq):
            tx.save_signals(seq, {"image": bytes([seq % 256])}, {})
    assert sorted(seq for seq, _ in store.context.with_channel("default", "image", NOW)) == [
        kept.seq,
        later.seq,
    ]
    assert store.context.with_channel("default", "audio", NOW) == []
    assert store.context.with_channel("other", "image", NOW) == []
    with store.transaction() as tx:
        foreign = tx.insert(record(id="k4", content="elsewhere", namespace="other"))
        tx.save_signals(foreign.seq, {"image": b"\x07"}, {})
    assert sorted(seq for seq, _ in store.context.with_channel("default", "image", NOW)) == [
        kept.seq,
        later.seq,
    ]
    assert store.context.with_channel("other", "image", NOW) == [(foreign.seq, b"\x07")]


def test_context_fire_stops_at_the_limit_a_habituated_one_making_room(store: Store) -> None:
    first, second = memories(store)
    since = NOW - timedelta(hours=3)
    assert [m.seq for m in store.context.fire("default", [(second, 0.7, {})], NOW, since)] == [
        second
    ]
    # At most ``limit`` fire, in the order given; the habituated one is passed over.
    limited = store.context.fire(
        "default",
        [(second, 0.9, {}), (first, 0.8, {})],
        NOW + timedelta(minutes=1),
        since + timedelta(minutes=1),
        limit=1,
    )
    assert [memory.seq for memory in limited] == [first]
    assert store.context.fire("default", [(first, 0.9, {})], NOW, since, limit=1) == []
    assert store.context.counts("default") == (2, 2)
