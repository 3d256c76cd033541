"""A lock another client holds on recalld's tables is waited for at most
``RECALLD_LOCK_RETRY_SECONDS``, as on SQLite (adversarial pass b64).

``LOCK TABLE memories`` left open in psql, or a long transaction on a row, made every
write wait for ever (the pool's other connections followed it, and each later request
waited out the connect timeout). It now fails as a ``DatabaseBusyError`` naming the
setting, having written nothing; recalld's own long waits (another process's
migration) are not cut.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import psycopg
import pytest

from recalld.config import Settings
from recalld.errors import DatabaseBusyError, StatementTimeoutError
from recalld.service import MemoryService

pytestmark = pytest.mark.postgres

WAIT_SECONDS = 20.0


def _settings(url: str) -> Settings:
    return Settings(db=url, embedder="none", graph_extractor="none", lock_retry_seconds=0.5)


def _outcome_within(call: Callable[[], object], release: Callable[[], object]) -> object:
    """What ``call`` returned or raised, run in a thread while another client holds the
    lock; ``release`` lets it go after at most ``WAIT_SECONDS`` (a call still waiting,
    the old behaviour, ends then). Fails the test when ``call`` was still waiting."""
    outcome: list[object] = []
    ended = threading.Event()

    def run() -> None:
        try:
            outcome.append(call())
        except Exception as error:  # noqa: BLE001 - the test reports what the call raised
            outcome.append(error)
        ended.set()

    thread = threading.Thread(target=run)
    thread.start()
    gave_up = ended.wait(WAIT_SECONDS)
    release()
    thread.join(WAIT_SECONDS)
    assert gave_up, "the call waited for the lock without limit"
    assert len(outcome) == 1
    return outcome[0]


def test_a_write_gives_up_on_a_table_another_client_locked(postgres_url: str) -> None:
    with (
        MemoryService.open(_settings(postgres_url)) as service,
        psycopg.connect(postgres_url, autocommit=True) as other_client,
    ):
        before = service.stats().count
        other_client.execute("BEGIN")
        other_client.execute("LOCK TABLE memories IN EXCLUSIVE MODE")
        error = _outcome_within(
            lambda: service.remember("written while the table was locked"),
            lambda: other_client.execute("COMMIT"),
        )
        assert isinstance(error, DatabaseBusyError), error
        # Another client's doing, not the work's: the worker waits it out uncounted.
        assert not isinstance(error, StatementTimeoutError), error
        message = str(error)
        assert "RECALLD_LOCK_RETRY_SECONDS = 0.5" in message, message
        assert "nothing was written" in message
        assert service.stats().count == before
        # The lock gone, the same write goes through on the same pool.
        assert service.remember("written after the lock").created


def test_a_row_another_transaction_holds_is_waited_for_at_most_the_setting(
    postgres_url: str,
) -> None:
    with (
        MemoryService.open(_settings(postgres_url)) as service,
        psycopg.connect(postgres_url, autocommit=True) as other_client,
    ):
        receipt = service.remember("a memory another client holds", key="held.row")
        other_client.execute("BEGIN")
        other_client.execute("SELECT 1 FROM memories WHERE id = %s FOR UPDATE", (receipt.id,))
        error = _outcome_within(
            lambda: service.update(receipt.id, content="changed while held"),
            lambda: other_client.execute("ROLLBACK"),
        )
        assert isinstance(error, DatabaseBusyError), error
        assert "RECALLD_LOCK_RETRY_SECONDS" in str(error)
        assert service.get(receipt.id).content == "a memory another client holds"
