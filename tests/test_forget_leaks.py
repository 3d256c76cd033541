"""Forgetting and leaking, on both stores (adversarial pass j57).

An update that drops a stored value must record a scrub as forget does, whatever the
field: the scrub is held pending by another reader's older snapshot here, so the count
tells whether the update recorded one at all (a write that records none is never
scrubbed, and its old value stays in the files or dead rows).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.scrub_support import old_snapshot


@pytest.fixture
def memory(any_database: Path | str, clock: FakeClock) -> Iterator[MemoryService]:
    settings = Settings(
        db=any_database,
        synchronous="NORMAL",
        embedder="none",
        graph_extractor="rules",
        scrub_wait_seconds=0.05,
        postgres_pool_min=0,
    )
    with MemoryService.open(settings, clock=clock) as opened:
        yield opened


@pytest.mark.parametrize(
    ("written", "changes"),
    [
        ({"speaker": "Dr Okonkwo"}, {"speaker": "someone else"}),
        ({"speaker": "Dr Okonkwo"}, {"speaker": None}),
        ({"place": {"lat": 48.8642, "lon": 2.3475}}, {"place": {"lat": 1.5, "lon": 2.5}}),
        ({"place": {"geohash": "u09tvrmq"}}, {"place": None}),
        ({"at": "2026-03-01T10:00:00+01:00"}, {"at": "2026-05-02T09:00:00+02:00"}),
    ],
    ids=["speaker", "speaker cleared", "place", "place cleared", "at"],
)
def test_an_update_of_speaker_place_or_time_records_a_scrub(
    memory: MemoryService,
    any_database: Path | str,
    written: dict[str, Any],
    changes: dict[str, Any],
) -> None:
    receipt = memory.remember("said at the clinic", **written)
    with old_snapshot(any_database):
        memory.update(receipt.id, **changes)
        assert memory.stats().pending_scrubs == 1
    assert memory.scrubber.wait_until_done(timeout=30)
    assert memory.stats().pending_scrubs == 0


def test_an_update_that_keeps_every_value_records_no_scrub(
    memory: MemoryService, any_database: Path | str
) -> None:
    receipt = memory.remember(
        "said at the clinic", speaker="Dr Okonkwo", place={"lat": 48.8642, "lon": 2.3475}
    )
    with old_snapshot(any_database):
        memory.update(receipt.id, salience=0.5)
        assert memory.stats().pending_scrubs == 0


def _send(memory: MemoryService, text: str) -> list[str]:
    report = memory.remember_conversation(
        [
            {"id": "m1", "speaker": "Ann", "content": text},
            {"id": "m2", "speaker": "Bo", "content": "ok"},
        ],
        conversation="chat-1",
    )
    return [turn.receipt.scrub for turn in report.turns]


def test_an_edited_turn_says_its_old_text_is_scrubbed(memory: MemoryService) -> None:
    # The Receipt's scrub says whether an overwrite's old value left the files: an edited
    # turn's receipt said "none" although its old text was dropped (and scrubbed).
    assert _send(memory, "my pin is 4471") == ["none", "none"]
    assert _send(memory, "my pin is secret") == ["done", "none"]
    assert _send(memory, "my pin is secret") == ["none", "none"]  # unchanged


def test_an_edited_turn_behind_a_reader_says_pending(
    memory: MemoryService, any_database: Path | str
) -> None:
    _send(memory, "my pin is 4471")
    with old_snapshot(any_database):
        assert _send(memory, "my pin is secret") == ["pending", "none"]
        assert memory.stats().pending_scrubs == 1
    assert memory.scrubber.wait_until_done(timeout=30)
