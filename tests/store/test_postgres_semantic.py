"""The PostgreSQL job queue under concurrency: what two transactions interleaved by the test
(never by sleeps) leave behind.

A :class:`PausedDatabase` runs one side's write up to its commit and holds it there; the
test then starts the other side and waits, with a bound, until it either finished or
waits for a lock the first one holds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import TypeVar

import psycopg
import pytest

from recalld.model import Memory
from recalld.store.postgres import PostgresStore
from recalld.store.postgres_connection import Connection, PostgresDatabase
from recalld.store.postgres_semantic import PostgresSemantic
from recalld.store.semantic import Job, text_hash
from tests.store.contract.conftest import NOW, record
from tests.store.contract.test_jobs import vector
from tests.store.postgres_interleaving import (
    WAIT_SECONDS,
    Running,
    finished_or_blocked,
    held_elsewhere,
    opened_store,
)

pytestmark = pytest.mark.postgres

T = TypeVar("T")
MODEL = "test-model"
LEASE = NOW + timedelta(minutes=2)


class PausedDatabase(PostgresDatabase):
    """A database whose writes, once :attr:`armed` is set, stop before their commit until
    :attr:`release` is set."""

    def __init__(self, url: str) -> None:
        super().__init__(url, min_size=0, max_size=1, retry_seconds=5)
        self.armed = threading.Event()
        self.inside = threading.Event()
        self.release = threading.Event()

    def write(self, operation: Callable[[Connection], T]) -> T:
        def held(connection: Connection) -> T:
            result = operation(connection)
            if self.armed.is_set():
                self.inside.set()
                assert self.release.wait(WAIT_SECONDS)
            return result

        return super().write(held)


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresStore]:
    yield from opened_store(postgres_url)


@pytest.fixture
def paused(postgres_url: str) -> Iterator[PausedDatabase]:
    database = PausedDatabase(postgres_url)
    try:
        yield database
    finally:
        database.release.set()
        database.close()


def _results(jobs: list[Job]) -> list[tuple[Job, str, bytes]]:
    return [(job, text_hash(job.title, job.content), vector(job.seq)) for job in jobs]


def _edited_with_two_jobs(store: PostgresStore) -> tuple[Memory, list[Job], list[Job]]:
    """A queued memory with its first text's job and the newer one an edit queued while
    the first ran (an edit while its job still waits reuses that job), each claimed by its
    own worker ("first", "second")."""
    with store.transaction() as tx:
        memory = tx.insert(record(id="edited", content="the edited text", index_state="queued"))
        tx.enqueue_embedding(memory.seq, MODEL, NOW - timedelta(seconds=1))
    first = store.semantic.claim_jobs("first", MODEL, 1, NOW, LEASE, 5)
    with store.transaction() as tx:
        tx.enqueue_embedding(memory.seq, MODEL, NOW)
    second = store.semantic.claim_jobs("second", MODEL, 1, NOW, LEASE, 5)
    return memory, first, second


def test_postgres_semantic_the_last_completion_of_a_memory_marks_it_indexed(
    store: PostgresStore, paused: PausedDatabase, postgres_url: str
) -> None:
    memory, first, second = _edited_with_two_jobs(store)
    assert len(first) == len(second) == 1
    semantic = PostgresSemantic(paused)
    semantic.ensure_index(MODEL, 8)
    store.semantic.ensure_index(MODEL, 8)
    paused.armed.set()
    # The first job embedded the text before the edit: no vector, only its job goes.
    stale = [(first[0], "the text before the edit", vector(1))]
    completing = Running(lambda: semantic.complete_jobs("first", MODEL, stale, 8, NOW))
    assert paused.inside.wait(WAIT_SECONDS)
    other = Running(lambda: store.semantic.complete_jobs("second", MODEL, _results(second), 8, NOW))
    # The second completion waits for the first (it must see its job gone to decide).
    assert finished_or_blocked(other, postgres_url) == "blocked"
    paused.release.set()
    assert completing.outcome() == 1
    assert other.outcome() == 1
    with psycopg.connect(postgres_url) as connection:
        states = connection.execute(
            "SELECT m.index_state, (SELECT count(*) FROM jobs j WHERE j.seq = m.seq)"
            " FROM memories m WHERE m.seq = %s",
            (memory.seq,),
        ).fetchall()
    assert states == [("indexed", 0)]


def test_postgres_semantic_a_failure_beside_a_completion_leaves_no_memory_queued(
    store: PostgresStore, paused: PausedDatabase, postgres_url: str
) -> None:
    memory, first, second = _edited_with_two_jobs(store)
    store.semantic.ensure_index(MODEL, 8)
    paused.armed.set()
    # The older job fails for good while the newer one completes.
    failing = Running(
        lambda: PostgresSemantic(paused).retry_job("first", first[0], "broken", NOW, None)
    )
    assert paused.inside.wait(WAIT_SECONDS)
    other = Running(lambda: store.semantic.complete_jobs("second", MODEL, _results(second), 8, NOW))
    assert finished_or_blocked(other, postgres_url) == "blocked"
    paused.release.set()
    failing.outcome()
    assert other.outcome() == 1
    with psycopg.connect(postgres_url) as connection:
        state = connection.execute(
            "SELECT index_state FROM memories WHERE seq = %s", (memory.seq,)
        ).fetchone()
    assert state == ("indexed",)


def _two_queued_memories(store: PostgresStore) -> tuple[int, int]:
    seqs = []
    with store.transaction() as tx:
        # The older memory in the namespace that sorts last: an index on (namespace, seq)
        # would hand the younger one over first.
        for namespace in ("zz", "aa"):
            memory = tx.insert(
                record(id=namespace, namespace=namespace, content="queued", index_state="queued")
            )
            tx.enqueue_embedding(memory.seq, MODEL, NOW)
            seqs.append(memory.seq)
    older, younger = seqs
    return older, younger


def test_postgres_semantic_recall_locks_jobs_in_seq_order_across_namespaces(
    store: PostgresStore, postgres_url: str
) -> None:
    # Review of pass a64: a job row another transaction holds briefly (a worker completing
    # it) is waited for, a second at most, not skipped at once: skipped, a recall beside
    # the server's own worker searched before that vector was committed.
    older, younger = _two_queued_memories(store)
    with psycopg.connect(postgres_url) as holder:
        holder.execute("SELECT 1 FROM jobs WHERE seq = %s FOR UPDATE", (younger,))
        claiming = Running(
            lambda: store.semantic.claim_for_recall("recall", MODEL, ["aa", "zz"], 5, NOW, LEASE)
        )
        assert finished_or_blocked(claiming, postgres_url) == "blocked"
        # Waiting for the younger memory's job, the claim already holds the older one's.
        assert held_elsewhere(postgres_url, "SELECT 1 FROM jobs WHERE seq = %s", (older,))
        holder.rollback()
    claimed = claiming.outcome()
    assert sorted(job.seq for job in claimed) == [older, younger]


def test_postgres_semantic_recall_skips_a_job_another_transaction_holds(
    store: PostgresStore, postgres_url: str
) -> None:
    # Adversarial pass a64: the recall's claim waited for a job row another transaction
    # held (a long write), so the recall, a read, waited with it. Past a second it now
    # skips that job (the recall answers without its vector) and claims the rest.
    older, younger = _two_queued_memories(store)
    with psycopg.connect(postgres_url) as holder:
        holder.execute("SELECT 1 FROM jobs WHERE seq = %s FOR UPDATE", (younger,))
        claiming = Running(
            lambda: store.semantic.claim_for_recall("recall", MODEL, ["aa", "zz"], 5, NOW, LEASE)
        )
        claimed = claiming.outcome()  # while the holder still holds the row
        assert [job.seq for job in claimed] == [older]
        holder.rollback()
    with psycopg.connect(postgres_url) as connection:
        state = connection.execute("SELECT state FROM jobs WHERE seq = %s", (younger,)).fetchone()
    assert state == ("queued",)
