"""Reads while another process holds the write lock (adversarial pass c63): opening a
database purged expired memories in a write transaction and refreshed the planner's
statistics with lock waits retried, so with another process writing for longer than
``lock_retry_seconds`` (a long import through a server) every command, `list` and
`search` too, waited that long and failed "the database stayed locked". In WAL mode a
reader waits for no writer: opening and reading now take no write lock when there is
nothing to purge."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import apsw
import numpy as np
import pytest

from recalld.config import Settings
from recalld.embeddings.hashing import HashingEmbedder
from recalld.errors import DatabaseLockedError, StorageError
from recalld.service import MemoryService
from recalld.store.factory import open_store
from tests.conftest import FakeClock
from tests.lock_support import locked_settings


@pytest.fixture
def locked(db_path: Path, clock: FakeClock) -> Iterator[apsw.Connection]:
    with MemoryService.open(locked_settings(db_path), clock=clock) as service:
        service.remember("Ada wrote the first program.")
        service.remember("the parking code for today", ttl_seconds=3600)
    other = apsw.Connection(str(db_path))  # another process, in the middle of a long write
    other.execute("BEGIN IMMEDIATE")
    try:
        yield other
    finally:
        if not other.get_autocommit():
            other.execute("ROLLBACK")
        other.close()


def test_reads_go_on_while_another_process_writes(
    db_path: Path, clock: FakeClock, locked: apsw.Connection
) -> None:
    with MemoryService.open(locked_settings(db_path), clock=clock) as service:
        assert [hit.memory.content for hit in service.search("first program")] == [
            "Ada wrote the first program."
        ]
        assert service.stats().count == 2
        assert len(service.list_memories().memories) == 2
        with pytest.raises(StorageError, match="stayed locked"):
            service.remember("a write still waits for the writer, and says so")


def test_a_purge_still_waits_for_the_lock_when_something_expired(
    db_path: Path, clock: FakeClock, locked: apsw.Connection
) -> None:
    clock.advance(2 * 3600)  # the parking code's TTL has passed: a write is due
    with pytest.raises(StorageError, match="stayed locked"):
        MemoryService.open(locked_settings(db_path), clock=clock)
    locked.execute("ROLLBACK")  # the other writer is done
    with MemoryService.open(locked_settings(db_path), clock=clock) as service:
        assert service.stats().count == 1


def test_a_write_that_waited_out_the_lock_names_the_file_and_the_setting(
    db_path: Path, clock: FakeClock, locked: apsw.Connection
) -> None:
    # It said "the database stayed locked for 0.05 s: database is locked": no file, no
    # setting to raise, and not whether the write happened.
    with MemoryService.open(locked_settings(db_path), clock=clock) as service:
        with pytest.raises(StorageError) as waited:
            service.remember("waits for the other writer")
        message = str(waited.value)
        assert message.startswith(f"{db_path} stayed locked for 0.05 s"), message
        assert "RECALLD_LOCK_RETRY_SECONDS" in message
        assert "nothing was written" in message
        locked.execute("ROLLBACK")
        assert service.stats().count == 2


def test_opening_waits_no_busy_timeout_behind_another_process_write(
    db_path: Path, clock: FakeClock, locked: apsw.Connection
) -> None:
    # Review of pass c63: the statistics refresh on open was no longer retried, but still
    # waited the connection's busy_timeout (5 s by default) for the write lock it wants
    # whenever a table has no statistics (an empty one: on every open), so every command
    # took that long while another process wrote. A busy_timeout of ten minutes: the open
    # must not wait for it.
    settings = locked_settings(db_path, busy_timeout_ms=600_000)
    counted: list[int] = []
    opened = threading.Event()

    def open_and_count() -> None:
        with MemoryService.open(settings, clock=clock) as service:
            counted.append(service.stats().count)
        opened.set()

    threading.Thread(target=open_and_count, daemon=True).start()
    assert opened.wait(timeout=120), "opening waited for another process's write lock"
    assert counted == [2]


def test_a_search_with_memories_queued_answers_while_another_process_writes(
    db_path: Path, clock: FakeClock
) -> None:
    # Adversarial pass a64: the recall's catch-up (it embeds the few memories still queued
    # first, RECALLD_RECALL_CATCH_UP) claims their jobs, a write, and waited for the lock
    # another process held: `recalld search` failed "stayed locked" after
    # RECALLD_LOCK_RETRY_SECONDS. It now skips the catch-up without waiting (ten minutes
    # of busy_timeout and retries here) and answers from what is indexed.
    settings = locked_settings(
        db_path, embedder="hashing", busy_timeout_ms=600_000, lock_retry_seconds=600
    )
    with MemoryService.open(settings, clock=clock) as service:
        service.remember("Ada wrote the first program.")
        service.remember("Grace found the first bug.")
        other = apsw.Connection(str(db_path))  # another process, in the middle of a write
        other.execute("BEGIN IMMEDIATE")
        found: list[list[tuple[str, str]]] = []
        answered = threading.Event()

        def search() -> None:
            hits = service.search("first program", mode="hybrid")
            found.append([(hit.memory.content, hit.memory.index_state) for hit in hits])
            answered.set()

        threading.Thread(target=search, daemon=True).start()
        try:
            assert answered.wait(timeout=120), "the search waited for another process's write"
        finally:
            other.execute("ROLLBACK")
            other.close()
        # Found by its words; still queued, as it is (its vector is not there yet).
        [hits_while_locked] = found
        assert hits_while_locked[0] == ("Ada wrote the first program.", "queued")
        assert {state for _, state in hits_while_locked} == {"queued"}
        # Once the writer is done, the next search catches up as before.
        hits = service.search("first program")
        assert {hit.memory.index_state for hit in hits} == {"indexed"}
        assert "vector" in hits[0].backends


def test_a_recall_beside_a_busy_writer_still_catches_up(db_path: Path) -> None:
    # Review of pass a64: the catch-up claim took the lock only when free at that instant
    # (busy_timeout 0), so a recall beside any other write (here a thread of the same
    # process writing without pause, as a server's other requests or its worker do)
    # skipped its catch-up: the memory just written was not found by its meaning, still
    # queued, in about a quarter of the recalls. An ordinary write is waited for now.
    settings = Settings(db=db_path, embedder="hashing", graph_extractor="none")
    with MemoryService.open(settings) as service:
        stop = threading.Event()
        written: list[int] = []

        def write_without_pause() -> None:
            while not stop.is_set():
                service.remember(f"background note {len(written)}", namespace="elsewhere")
                written.append(1)

        writer = threading.Thread(target=write_without_pause, daemon=True)
        writer.start()
        try:
            missed = []
            for number in range(20):
                remembered = service.remember(f"zebra unicorn fact {number}")
                hits = service.search(f"zebra unicorn fact {number}")
                states = {hit.memory.id: hit.memory.index_state for hit in hits}
                if states.get(remembered.id) != "indexed":
                    missed.append(number)
        finally:
            stop.set()
            writer.join(timeout=60)
        assert written, "the writer thread never wrote: nothing was tested"
        assert missed == []


def test_a_write_waits_no_longer_than_the_lock_retry_bound(
    db_path: Path, clock: FakeClock, locked: apsw.Connection
) -> None:
    # Review of pass a64: the first lock wait lasted the whole busy_timeout (5 s by
    # default) before RECALLD_LOCK_RETRY_SECONDS was looked at ("stayed locked for 2 s"
    # came after 6.6 s). A busy_timeout of ten minutes and a bound of 0.05 s: the write
    # must fail well before those ten minutes, saying so.
    settings = locked_settings(db_path, busy_timeout_ms=600_000)
    failed: list[BaseException] = []
    ended = threading.Event()

    def remember() -> None:
        try:
            with MemoryService.open(settings, clock=clock) as service:
                service.remember("waits for the other writer at most 0.05 s")
        except StorageError as error:
            failed.append(error)
        ended.set()

    threading.Thread(target=remember, daemon=True).start()
    assert ended.wait(timeout=120), "the write waited busy_timeout, past the retry bound"
    [error] = failed
    assert isinstance(error, DatabaseLockedError)
    assert "stayed locked for 0.05 s (RECALLD_LOCK_RETRY_SECONDS)" in str(error)
    locked.execute("ROLLBACK")
    with MemoryService.open(settings, clock=clock) as service:
        assert service.stats().count == 2  # nothing was written


class _TakesTheLockWhileEmbedding(HashingEmbedder):
    """Another process takes the write lock while a memory's text is being embedded:
    between the catch-up's claim and its vectors' commit."""

    def __init__(self, db_path: Path) -> None:
        super().__init__(64)
        self.db_path = db_path
        self.armed = False
        self.other: apsw.Connection | None = None

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if self.armed and self.other is None and any("program" in text for text in texts):
            self.other = apsw.Connection(str(self.db_path))
            self.other.execute("BEGIN IMMEDIATE")
        return super().embed_batch(texts)


def test_recalls_after_a_catch_up_held_its_vectors_wait_no_lock_retry(
    db_path: Path, clock: FakeClock
) -> None:
    # Review of pass a64: a catch-up whose vectors' commit met another process's lock
    # waited RECALLD_LOCK_RETRY_SECONDS for it, held the vectors, and every later recall
    # flushed them first, waiting as long again, while that lock stayed held.
    settings = Settings(
        db=db_path, graph_extractor="none", busy_timeout_ms=600_000, lock_retry_seconds=600
    )
    embedder = _TakesTheLockWhileEmbedding(db_path)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        service.remember("Ada wrote the first program.")
        embedder.armed = True
        found: list[list[str]] = []
        answered = threading.Event()

        def search_twice() -> None:
            try:
                for _ in range(2):
                    found.append([hit.memory.index_state for hit in service.search("Ada")])
            finally:
                answered.set()

        threading.Thread(target=search_twice, daemon=True).start()
        try:
            assert answered.wait(timeout=120), "a recall waited out the lock retries"
        finally:
            assert embedder.other is not None
            embedder.other.execute("ROLLBACK")
            embedder.other.close()
        assert found == [["queued"], ["queued"]]
        assert [hit.memory.index_state for hit in service.search("Ada")] == ["indexed"]


def test_a_catch_up_commit_finds_the_lock_between_another_writer_s_transactions(
    db_path: Path,
) -> None:
    # CI, stop 65: the catch-up's claim looked at the lock every millisecond, but the
    # commit of its vectors waited with SQLite's own busy handler (up to 100 ms between
    # looks), and beside a writer that frees the lock only between its transactions it
    # missed every gap for its whole second: the memory just written was searched still
    # queued. Here another connection frees the lock for about a millisecond every 30 ms;
    # each of five recalls (one queued memory each, in its own namespace) must catch up.
    settings = Settings(db=db_path, embedder="hashing", graph_extractor="none")
    with MemoryService.open(settings) as service:
        remembered = {
            f"pulse{number}": service.remember(
                f"zebra unicorn fact {number}", namespace=f"pulse{number}"
            )
            for number in range(5)
        }
        stop = threading.Event()
        transactions: list[int] = []

        def write_in_pulses() -> None:
            other = apsw.Connection(str(db_path))
            other.set_busy_timeout(5_000)
            try:
                while not stop.is_set():
                    other.execute("BEGIN IMMEDIATE")
                    stop.wait(0.03)
                    other.execute("COMMIT")
                    transactions.append(1)
                    stop.wait(0.001)
            finally:
                other.close()

        writer = threading.Thread(target=write_in_pulses, daemon=True)
        writer.start()
        try:
            missed = []
            for namespace, memory in remembered.items():
                hits = service.search("zebra unicorn fact", namespace=namespace)
                states = {hit.memory.id: hit.memory.index_state for hit in hits}
                if states.get(memory.id) != "indexed":
                    missed.append(namespace)
        finally:
            stop.set()
            writer.join(timeout=60)
        assert transactions, "the other writer never took the lock: nothing was tested"
        assert missed == []
