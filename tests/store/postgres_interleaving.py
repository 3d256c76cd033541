"""Two PostgreSQL transactions interleaved by a test (never by sleeps): a call run in a
thread, a bounded wait until it finished or waits for a lock, and a probe of whether
another session holds a row."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any, Literal

import psycopg

from recalld.config import Settings
from recalld.store.factory import open_store
from recalld.store.postgres import PostgresStore

WAIT_SECONDS = 30.0


def opened_store(
    url: str, graph_extractor: Literal["spacy", "rules", "none"] = "none"
) -> Iterator[PostgresStore]:
    """A keyword-only store on ``url``, closed after the test (a fixture's body)."""
    opened = open_store(Settings(db=url, embedder="none", graph_extractor=graph_extractor))
    assert isinstance(opened, PostgresStore)
    try:
        yield opened
    finally:
        opened.close()


class Running:
    """A call run in a thread; its result or error, once it is done."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None

        def run() -> None:
            try:
                self.result = call()
            except BaseException as error:  # noqa: BLE001 - handed to the test
                self.error = error
            finally:
                self.done.set()

        self.thread = threading.Thread(target=run)
        self.thread.start()

    def outcome(self) -> Any:
        assert self.done.wait(WAIT_SECONDS)
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.result


def waiting_on_a_lock(url: str) -> bool:
    """Whether some session of the database at ``url`` waits for a lock (a writer held off)."""
    with psycopg.connect(url, autocommit=True) as watcher:
        return _waiting_for_a_lock(watcher)


def _waiting_for_a_lock(watcher: psycopg.Connection[Any]) -> bool:
    row = watcher.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        " AND wait_event_type = 'Lock'"
    ).fetchone()
    return row is not None and int(row[0]) > 0


def finished_or_blocked(running: Running, url: str) -> str:
    """Wait (bounded) until ``running`` is done or some backend waits for a lock."""
    with psycopg.connect(url, autocommit=True) as watcher:
        stop = threading.Event()
        timer = threading.Timer(WAIT_SECONDS, stop.set)
        timer.start()
        try:
            while not stop.is_set():
                if running.done.is_set():
                    return "finished"
                if _waiting_for_a_lock(watcher):
                    return "blocked"
                running.done.wait(0.01)
        finally:
            timer.cancel()
    raise AssertionError("neither finished nor blocked")


def held_elsewhere(url: str, sql: str, params: tuple[Any, ...]) -> bool:
    """Whether another transaction holds the row ``sql`` selects (a NOWAIT lock fails)."""
    with psycopg.connect(url) as probe:
        try:
            probe.execute(f"{sql} FOR UPDATE NOWAIT", params)
        except psycopg.errors.LockNotAvailable:
            return True
        return False
