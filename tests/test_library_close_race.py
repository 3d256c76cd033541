"""close() waits for a write transaction another thread is inside.

The transaction's body ran outside the operations close() counts, so close()
closed the connection under it: that thread's remember failed with a raw
``apsw.ConnectionClosedError`` (seen with 8 threads writing and recalling while
the main thread closed). Now close() waits for it; the write is rolled back and
its caller told ``StorageError: the store is closed``.
"""

from __future__ import annotations

import threading
from typing import Any

import apsw
import pytest

from recalld.errors import StorageError
from recalld.service import MemoryService
from recalld.store import sqlite
from recalld.store.sqlite_connection import SQLiteDatabase


def test_close_waits_for_a_transaction_under_way(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.remember("written before")
    inside, closing = threading.Event(), threading.Event()
    running_when_closing: list[int] = []
    find_duplicate = sqlite._Transaction.find_duplicate
    wait_for_statements = SQLiteDatabase._wait_for_statements

    def paused(self: Any, *arguments: Any, **options: Any) -> Any:
        inside.set()  # the writer is inside its transaction: let close() begin
        assert closing.wait(30)
        return find_duplicate(self, *arguments, **options)

    def waiting(self: SQLiteDatabase, timeout: float) -> bool:
        running_when_closing.append(self._running)
        closing.set()
        return wait_for_statements(self, timeout)

    monkeypatch.setattr(sqlite._Transaction, "find_duplicate", paused)
    monkeypatch.setattr(SQLiteDatabase, "_wait_for_statements", waiting)
    outcome: list[BaseException | None] = []

    def write() -> None:
        try:
            service.remember("written while closing")
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - the test reports what it was
            outcome.append(error)

    writer = threading.Thread(target=write)
    writer.start()
    assert inside.wait(30)
    service.close()
    writer.join()
    assert running_when_closing == [1]  # close() counted, and so waited for, the transaction
    assert len(outcome) == 1
    assert isinstance(outcome[0], StorageError), repr(outcome[0])
    assert "the store is closed" in str(outcome[0])


def test_a_threads_first_write_waits_out_a_lock_on_opening(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A new thread's connection meets another process's lock while it opens (two servers
    # starting on one file): the write waits and opens again, as every other statement
    # does. Since the transaction ran inside use(), it got a bare apsw.BusyError.
    connect = SQLiteDatabase._connect
    refused: list[bool] = []

    def locked_once(self: SQLiteDatabase) -> Any:
        if getattr(self._local, "connection", None) is None and not refused:
            refused.append(True)
            raise apsw.BusyError("database is locked")
        return connect(self)

    monkeypatch.setattr(SQLiteDatabase, "_connect", locked_once)
    outcome: list[object] = []

    def write() -> None:
        try:
            outcome.append(service.remember("a new thread's first write").status)
        except BaseException as error:  # noqa: BLE001 - the test reports what it was
            outcome.append(error)

    writer = threading.Thread(target=write)
    writer.start()
    writer.join()
    assert refused
    assert outcome == ["created"]
