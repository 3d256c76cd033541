"""A reminder (or a recollection) that fires while its memory is being edited is queued
with the edit, on PostgreSQL, where the two are not one writer's."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.postgres_transaction import PostgresTransaction
from tests.conftest import FakeClock
from tests.store.postgres_interleaving import waiting_on_a_lock

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize("firing", ["sense", "scheduler", "recollection"])
def test_a_reminder_fired_during_an_edit_of_its_action_is_queued_with_the_edit(
    postgres_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch, firing: str
) -> None:
    # On PostgreSQL a firing locked the intention's row, not its memory's: it read the
    # action an edit in flight was replacing, and queued it after the edit had rewritten
    # the queue's copies, so pending delivered the text the edit removed.
    settings = Settings(db=postgres_url, synchronous="NORMAL", embedder="none")
    with MemoryService.open(settings, clock=clock) as memory:
        if firing == "sense":
            memory_id = memory.remind("tell Anna the door code 4821", mention=["Anna"]).id
        elif firing == "recollection":
            memory_id = memory.recollections.remember("tell Anna the door code 4821").id
        else:
            memory_id = memory.remind("tell Anna the door code 4821", at="in 1 hour").id
            clock.advance(3600)
        edited = threading.Event()
        fired = threading.Event()
        replace = PostgresTransaction.replace

        def replace_then_hold(self: PostgresTransaction, *arguments: Any) -> Any:
            # Keep the edit's transaction open until the firing has run, or waits for it.
            result = replace(self, *arguments)
            edited.set()
            for _ in range(200):
                if fired.wait(0.05) or waiting_on_a_lock(postgres_url):
                    break
            return result

        monkeypatch.setattr(PostgresTransaction, "replace", replace_then_hold)
        editing = threading.Thread(
            target=lambda: memory.update(memory_id, content="tell Anna the door code")
        )
        editing.start()
        assert edited.wait(10)

        def fire() -> None:
            if firing == "sense":
                memory.recollections.sense(memory.recollections.cue(text="Anna is here"))
            elif firing == "recollection":
                cue = memory.recollections.cue(text="tell Anna the door code 4821")
                memory.recollections.sense(cue)
            else:
                memory.intentions.run_due()
            fired.set()

        firer = threading.Thread(target=fire)
        firer.start()
        editing.join(30)
        firer.join(30)
        assert not editing.is_alive()
        assert not firer.is_alive()
        memory.intentions.run_due()  # what the scheduler left for its next step
        queued = memory.recollections.pending()
        assert [item.memory.content for item in queued] == ["tell Anna the door code"]
        assert "4821" not in queued[0].prompt_line
        if firing != "recollection":
            assert queued[0].reminder is not None
            assert queued[0].reminder.action == "tell Anna the door code"
