"""PostgreSQL reminders under concurrency: the locks a firing claim takes on an intention
and its memory, in the order forget and an edit take them (the memory first)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from recalld.store.intentions import IntentionRecord, TriggerRecord
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


def _reminder(store: PostgresStore) -> int:
    """A stored intention on a mention of Anna: its seq."""
    with store.transaction() as tx:
        memory = tx.insert(record(id="reminder", content="ask Anna", kind="intention"))
        mention = {"type": "mention", "text": "Anna"}
        tx.save_intention(
            memory.seq,
            IntentionRecord(
                namespace="default",
                repeat="once",
                min_interval_seconds=0.0,
                zone="UTC",
                scheduled=False,
                triggers=[TriggerRecord(type="mention", spec=mention, term="anna")],
                created_at=NOW,
            ),
        )
    return memory.seq


def _intention_locked_elsewhere(url: str, seq: int) -> bool:
    """Whether another session holds a lock on the intention ``seq``."""
    return held_elsewhere(url, "SELECT 1 FROM intentions WHERE seq = %s", (seq,))


def test_postgres_intentions_a_claim_waits_for_a_forget_holding_nothing_it_deletes(
    store: PostgresStore, postgres_url: str
) -> None:
    # A sense's claim locked the intention, then waited to share-lock its memory, which a
    # forget held (it finds the memory FOR UPDATE first); the forget's delete then
    # cascaded to the intention the claim held: each waited for the other (a deadlock).
    seq = _reminder(store)
    with psycopg.connect(postgres_url) as forgetting:
        forgetting.execute("SELECT 1 FROM memories WHERE seq = %s FOR UPDATE", (seq,))
        claiming = Running(lambda: store.intentions.session(lambda session: session.load([seq])))
        assert finished_or_blocked(claiming, postgres_url) == "blocked"
        assert not _intention_locked_elsewhere(postgres_url, seq)
        forgetting.execute("DELETE FROM memories WHERE seq = %s", (seq,))
        forgetting.commit()
    assert claiming.outcome() == []
