"""A KeyboardInterrupt during a write leaves no transaction open behind it.

An interrupt that landed just after a write's ``BEGIN IMMEDIATE`` (before its
rollback handler was in place) left the thread's connection inside that
transaction: the file's write lock stayed held, so every other writer waited,
and every later write of the thread failed with "cannot start a transaction
within a transaction" until the process ended.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.sqlite import SQLiteStore
from recalld.store.sqlite_connection import SQLiteDatabase


def _database(service: MemoryService) -> SQLiteDatabase:
    store = service.store
    assert isinstance(store, SQLiteStore)
    database: SQLiteDatabase = store._database
    return database


def test_an_interrupt_just_after_begin_rolls_the_write_back(
    service: MemoryService, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.remember("before the interrupt")
    database = _database(service)
    leave = SQLiteDatabase._leave
    fired: list[bool] = []

    def interrupted(self: SQLiteDatabase, local: Any) -> None:
        leave(self, local)
        # The first operation that returns with a transaction open is the write's BEGIN:
        # the interrupt arrives there, as Ctrl-C can.
        if not fired and not self.connection().get_autocommit():
            fired.append(True)
            raise KeyboardInterrupt

    monkeypatch.setattr(SQLiteDatabase, "_leave", interrupted)
    with pytest.raises(KeyboardInterrupt):
        service.remember("interrupted")
    assert fired
    monkeypatch.setattr(SQLiteDatabase, "_leave", leave)
    assert database.connection().get_autocommit()  # no transaction left open
    # This thread writes again, and so does another connection (no write lock held).
    assert service.remember("after the interrupt").status == "created"
    with MemoryService.open(settings) as other:
        assert other.remember("from another connection").status == "created"
    contents = {memory.content for memory in service.list_memories().memories}
    assert contents == {"before the interrupt", "after the interrupt", "from another connection"}


def test_a_transaction_left_open_is_rolled_back_before_the_next_write(
    service: MemoryService, caplog: pytest.LogCaptureFixture
) -> None:
    database = _database(service)
    connection = database.connection()
    # As an interrupt between a write's BEGIN and its rollback handler leaves it.
    connection.execute("BEGIN IMMEDIATE")
    connection.execute("DELETE FROM memory_tags")
    with caplog.at_level(logging.WARNING, logger="recalld.store.sqlite_connection"):
        receipt = service.remember("after the interrupted write", tags=["kept"])
    assert receipt.status == "created"
    assert "interrupted write left open" in caplog.text
    assert connection.get_autocommit()
    assert service.get(receipt.id).tags == ["kept"]
    assert service.core.apply("user", [{"action": "add", "content": "a fact"}])
