"""Two ``recalld migrate --to`` runs into one target at once: the second waits for the
first, then copies nothing twice (SQLite → SQLite, SQLite → PostgreSQL and back)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from recalld import moving
from recalld._time import utc_now
from recalld.adapters import cli_migrate
from recalld.adapters.cli import cli
from recalld.config import Settings
from recalld.moving import CopyReport, copy_store
from recalld.service import MemoryService
from recalld.store.base import Scope, Store
from recalld.store.factory import open_store
from recalld.store.tables import COPIED_TABLES
from tests.conftest import FakeClock

MEMORIES = 12
# Bounded waits: a run that never reaches the point it is waited for fails the test.
PATIENCE = 30.0

DIRECTIONS = [
    pytest.param(("sqlite", "sqlite"), id="sqlite-to-sqlite"),
    pytest.param(("sqlite", "postgres"), id="sqlite-to-postgres", marks=pytest.mark.postgres),
    pytest.param(("postgres", "sqlite"), id="postgres-to-sqlite", marks=pytest.mark.postgres),
]


def _settings(db: Path | str) -> Settings:
    return Settings(
        db=db, synchronous="NORMAL", embedder="hashing", graph_extractor="rules", recall_catch_up=0
    )


@pytest.fixture(params=DIRECTIONS)
def ends(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock
) -> tuple[Path | str, Path | str]:
    """(source, target): the source holds MEMORIES embedded memories, the target none."""
    kinds: tuple[str, str] = request.param

    def database(kind: str, name: str) -> Path | str:
        if kind == "postgres":
            url: str = request.getfixturevalue("postgres_database")()
            return url
        return tmp_path / f"{name}.db"

    source, target = database(kinds[0], "source"), database(kinds[1], "target")
    with MemoryService.open(_settings(source), clock=clock) as memory:
        memory.remember_many([{"content": f"Anna met Bob in Paris, {n}"} for n in range(MEMORIES)])
        memory.new_worker().run_until_idle()
    MemoryService.open(_settings(target), clock=clock).close()
    return source, target


class _Paused:
    """Pauses the copy run by the thread called ``first`` until another copy into its
    target waits for it, or reaches its first memory insert (where, without the lock, it
    would race the first's).

    ``in_transaction``: inside its first memory transaction (a memory inserted, not
    committed; the other's stores must be open before, as opening a SQLite store waits
    for the write lock that transaction holds); else after its first batch of memories
    (committed), when it is given :meth:`progress`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, in_transaction: bool) -> None:
        self.inside = threading.Event()
        self.resume = threading.Event()
        insert = moving._Copier._insert
        wait_quietly = getattr(moving, "_wait_quietly", None)

        def paused_insert(copier: Any, tx: Any, memory: Any) -> int:
            first = threading.current_thread().name == "first"
            if not first:
                self.resume.set()
            seq = insert(copier, tx, memory)
            if first and in_transaction and not self.inside.is_set():
                self.pause()
            return seq

        def waiting() -> None:
            if wait_quietly is not None:
                wait_quietly()
            self.resume.set()

        monkeypatch.setattr(moving._Copier, "_insert", paused_insert)
        monkeypatch.setattr(moving, "_wait_quietly", waiting, raising=False)
        # Several memory transactions: the pause leaves the copy half done.
        monkeypatch.setattr(moving, "BATCH_ROWS", 5)

    def pause(self) -> None:
        self.inside.set()
        assert self.resume.wait(PATIENCE), "the other copy neither waited nor wrote"

    def progress(self, table: str, done: int, total: int) -> None:
        if table == "memories" and not self.inside.is_set():
            self.pause()


def _in_thread(name: str, run: Callable[[], CopyReport]) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["report"] = run()
        except BaseException as error:  # noqa: BLE001 - handed to the test, which raises it
            outcome["error"] = error

    thread = threading.Thread(target=target, name=name)
    thread.start()
    return thread, outcome


def _count(store: Store, table: str) -> int:
    """How many rows ``table`` (memories, or a copied table) holds in ``store``."""
    if table == "memories":
        scope = Scope(namespaces=tuple(store.namespaces()), now=utc_now(), include_expired=True)
        return store.counts(scope).count
    return store.tables.count(next(item for item in COPIED_TABLES if item.name == table))


def test_copy_store_into_a_target_another_copy_writes_waits_and_copies_nothing_twice(
    ends: tuple[Path | str, Path | str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target = ends
    paused = _Paused(monkeypatch, in_transaction=True)
    # Each run its own stores, as two processes have.
    stores = [open_store(_settings(db)) for db in (source, target, source, target)]
    ticks: list[str] = []
    try:
        first, first_outcome = _in_thread(
            "first",
            lambda: copy_store(
                stores[0], stores[1], progress=lambda table, *_: ticks.append(f"first {table}")
            ),
        )
        assert paused.inside.wait(PATIENCE), first_outcome.get("error")
        second, second_outcome = _in_thread(
            "second",
            lambda: copy_store(
                stores[2], stores[3], progress=lambda table, *_: ticks.append(f"second {table}")
            ),
        )
        for thread in (first, second):
            thread.join(PATIENCE)
            assert not thread.is_alive(), f"the {thread.name} copy did not end"
        for outcome in (first_outcome, second_outcome):
            if "error" in outcome:
                raise outcome["error"]
        before, after = first_outcome["report"], second_outcome["report"]
        # The second ran once the first had ended: every tick of the first comes first.
        assert ticks.index("second tokens") > max(
            index for index, tick in enumerate(ticks) if tick.startswith("first ")
        )
        assert before.complete
        assert after.complete
        assert before.copied["memories"] == before.copied["vectors"] == MEMORIES
        assert sum(after.copied.values()) == 0  # nothing twice
        assert after.skipped["memories"] == after.skipped["vectors"] == MEMORIES
        assert _count(stores[3], "memories") == _count(stores[3], "vectors") == MEMORIES
    finally:
        for store in stores:
            store.close()


def test_migrate_started_while_another_copies_into_its_target_waits_then_exits_0(
    ends: tuple[Path | str, Path | str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target = ends
    paused = _Paused(monkeypatch, in_transaction=False)
    say_waiting = getattr(cli_migrate, "_say_waiting", None)

    def waiting(target: str) -> None:  # the CLI's own: it is what the user sees
        if say_waiting is not None:
            say_waiting(target)
        paused.resume.set()

    monkeypatch.setattr(cli_migrate, "_say_waiting", waiting, raising=False)
    source_store, target_store = open_store(_settings(source)), open_store(_settings(target))
    try:
        first, outcome = _in_thread(
            "first", lambda: copy_store(source_store, target_store, progress=paused.progress)
        )
        assert paused.inside.wait(PATIENCE), outcome.get("error")
        command = ["migrate", "--from", str(source), "--to", str(target), "--json"]
        result = CliRunner().invoke(cli, command)
        first.join(PATIENCE)
        assert not first.is_alive(), "the first copy did not end"
        if "error" in outcome:
            raise outcome["error"]
        assert result.exit_code == 0, result.output
        shown = str(target) if isinstance(target, Path) else target_store.location()
        assert (
            f"waiting: another migrate into {shown} is running; this one starts when it ends"
        ) in result.stderr
        report = json.loads(result.stdout.strip().splitlines()[-1])
        assert sum(report["copied"].values()) == 0  # the first copied everything, once
        assert report["skipped"]["memories"] == MEMORIES
        assert report["refused"] == []
        assert not any(report["left"].values())
        assert outcome["report"].copied["memories"] == MEMORIES
        assert _count(target_store, "memories") == MEMORIES
    finally:
        source_store.close()
        target_store.close()


class _InterruptedCopyError(Exception):
    pass


def test_copy_store_interrupted_releases_the_target_for_the_next_copy(
    ends: tuple[Path | str, Path | str],
) -> None:
    source, target = ends

    def interrupt(table: str, done: int, total: int) -> None:
        if table == "memories":
            raise _InterruptedCopyError

    def never_waits() -> None:
        raise AssertionError("the interrupted copy still holds the target's copy lock")

    source_store, target_store = open_store(_settings(source)), open_store(_settings(target))
    try:
        with pytest.raises(_InterruptedCopyError):
            copy_store(source_store, target_store, progress=interrupt)
        report = copy_store(source_store, target_store, waiting=never_waits)
        assert report.complete
        assert _count(target_store, "memories") == MEMORIES
    finally:
        source_store.close()
        target_store.close()
