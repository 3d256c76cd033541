"""A thread that has ended leaves no SQLite connection open behind it.

Each thread using a service gets its own connection, and every one was kept until
``close()``: a program starting a thread per call (an agent framework's tool call, a
``ThreadPoolExecutor`` made per request) held one more connection, two file
descriptors and its page cache per thread it ever ran (1,500 threads: 3,000 descriptors
and 500 MB), until "too many open files" (adversarial pass a66).
"""

from __future__ import annotations

import gc
import os
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import cast

import apsw
import pytest

from recalld.service import MemoryService
from recalld.store.sqlite import SQLiteStore
from recalld.store.sqlite_connection import SQLiteDatabase


def _open_connections(service: MemoryService) -> int:
    return len(cast(SQLiteStore, service.store)._database._connections)


def test_an_ended_threads_connection_is_closed(service: MemoryService) -> None:
    service.remember("written by the thread that opened the service")
    opened = _open_connections(service)
    failures: list[BaseException] = []

    def one_call(number: int) -> None:
        try:
            service.remember(f"written by short-lived thread {number}")
            service.search("short-lived thread")
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            failures.append(error)

    for number in range(40):
        thread = threading.Thread(target=one_call, args=(number,))
        thread.start()
        thread.join(60)
        assert not thread.is_alive()
    assert failures == []
    service.stats()  # an ended thread's connection is closed by the next call of any thread
    assert _open_connections(service) == opened
    # The connections left open keep the write-ahead log in place: writes go on.
    service.remember("written after the threads ended")
    assert service.stats().count == 42


def _in_a_thread(work: Callable[[], object]) -> None:
    failures: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            failures.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    assert not thread.is_alive()
    assert failures == []


def test_a_database_dropped_without_close_frees_its_connections(db_path: Path) -> None:
    # Each connection's end was watched by a weakref.finalize holding the database: the
    # finalizer registry kept every database (a service's store) dropped without close()
    # alive, its connections (three file descriptors each) open for ever; they were freed
    # before (review of pass a66).

    def used_then_dropped() -> weakref.ref[SQLiteDatabase]:
        database = SQLiteDatabase(db_path)
        database.changes("CREATE TABLE t (x)")
        _in_a_thread(lambda: database.changes("INSERT INTO t VALUES (1)"))
        return weakref.ref(database)

    dropped = used_then_dropped()
    gc.collect()
    assert dropped() is None


def test_a_thread_ends_without_waiting_for_the_database_lock(db_path: Path) -> None:
    # An ending thread closed its connection under the database's lock, from wherever its
    # storage was dropped: a thread holding the lock (not re-entrant) when that happened
    # (a garbage collection inside it) waited for itself (review of pass a66). Its end
    # now only queues the connection; the next operation closes it.
    database = SQLiteDatabase(db_path)
    database.changes("CREATE TABLE t (x)")
    used, finish = threading.Event(), threading.Event()

    def use_then_end() -> None:
        database.changes("INSERT INTO t VALUES (1)")
        used.set()
        assert finish.wait(60)

    thread = threading.Thread(target=use_then_end)
    thread.start()
    assert used.wait(60)
    with database._connections_lock:
        finish.set()
        thread.join(60)
        ended = not thread.is_alive()
    assert ended  # before the lock was let go
    assert len(database._connections) == 2
    assert database.read("SELECT count(*) FROM t") == [(1,)]
    assert len(database._connections) == 1
    database.close()


def test_the_last_open_connection_stays_so_the_logs_stay(db_path: Path) -> None:
    # SQLite deletes the -wal and -shm when the process's last connection closes, and the
    # next write would take the new ones for logs deleted by someone else.
    database = SQLiteDatabase(db_path)
    _in_a_thread(lambda: database.changes("CREATE TABLE t (x)"))
    database._close_ended()  # as an operation whose own connection failed to open would
    assert len(database._connections) == 1  # the ended thread's, the only one: kept
    logs = [os.stat(f"{db_path}{suffix}").st_ino for suffix in ("-wal", "-shm")]
    _in_a_thread(lambda: database.changes("INSERT INTO t VALUES (1)"))
    database.changes("INSERT INTO t VALUES (2)")
    assert len(database._connections) == 1
    assert [os.stat(f"{db_path}{suffix}").st_ino for suffix in ("-wal", "-shm")] == logs
    assert database.read("SELECT count(*) FROM t") == [(2,)]
    database.close()


def test_close_while_threads_end_closes_every_connection(db_path: Path) -> None:
    # An ended thread's connection closed by its end raced close(): closed after close()
    # had closed the others, it was the last, and folded in a log close() leaves unread.
    threads = 8
    database = SQLiteDatabase(db_path)
    database.changes("CREATE TABLE t (x)")
    opened: list[apsw.Connection] = []
    used = threading.Barrier(threads + 1, timeout=60)

    def use_then_end() -> None:
        opened.append(database.run(lambda connection: connection))
        used.wait()

    workers = [threading.Thread(target=use_then_end) for _ in range(threads)]
    for worker in workers:
        worker.start()
    used.wait()  # every thread has its connection; they end while close() runs
    database.close()
    for worker in workers:
        worker.join(60)
        assert not worker.is_alive()
    for connection in opened:
        with pytest.raises(apsw.ConnectionClosedError):
            connection.execute("SELECT 1")
