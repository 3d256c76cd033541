"""PostgreSQL firing under concurrency: the locks a sense takes on the memories it fires,
and the order it takes them in (the order every other writer of several memories takes
them in: seq order)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from recalld.store.postgres import PostgresStore
from tests.store.contract.conftest import NOW, record
from tests.store.postgres_interleaving import (
    Running,
    finished_or_blocked,
    held_elsewhere,
    opened_store,
)

pytestmark = pytest.mark.postgres


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresStore]:
    yield from opened_store(postgres_url)


def _locked_elsewhere(url: str, seq: int) -> bool:
    """Whether another session holds a lock on the memory ``seq`` (an update would wait)."""
    return held_elsewhere(url, "SELECT 1 FROM memories WHERE seq = %s", (seq,))


def test_postgres_context_fire_locks_its_memories_in_seq_order(
    store: PostgresStore, postgres_url: str
) -> None:
    # A sense share-locked its memories as it ranked them (the best first): holding a later
    # one, it waited for an earlier one that a recall's touch (or the purge) held, which
    # took them in seq order and then waited for the later one: a deadlock.
    with store.transaction() as tx:
        older = tx.insert(record(id="older", content="croissant")).seq
        younger = tx.insert(record(id="younger", content="museum")).seq
    candidates: list[tuple[int, float, dict[str, float]]] = [
        (younger, 0.9, {"text": 0.9}),
        (older, 0.8, {"text": 0.8}),
    ]
    with psycopg.connect(postgres_url) as holder:
        holder.execute(
            "UPDATE memories SET access_count = access_count + 1 WHERE seq = %s", (older,)
        )
        firing = Running(
            lambda: store.context.fire("default", candidates, NOW, NOW - timedelta(hours=3))
        )
        assert finished_or_blocked(firing, postgres_url) == "blocked"
        # Waiting for the older memory, the sense holds nothing on the younger one yet.
        assert not _locked_elsewhere(postgres_url, younger)
        holder.execute(
            "UPDATE memories SET access_count = access_count + 1 WHERE seq = %s", (younger,)
        )
        holder.commit()
    fired: list[Any] = firing.outcome()
    assert [memory.seq for memory in fired] == [younger, older]
