"""A recall by time alone ranks the namespace's dated memories by time, not only the
newest (adversarial pass f60: of 8,000 memories, "2026-06-15T16:00" answered October
to December afternoons at 0.79, the newest 2,000 with a time, while June afternoons
matched at 0.92)."""

from __future__ import annotations

import pytest

from recalld.config import Settings
from recalld.recollection import candidates
from recalld.service import MemoryService
from tests.conftest import FakeClock


def test_time_alone_finds_the_best_time_beyond_the_newest(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The newest few stand for the newest 2,000 of a large store.
    monkeypatch.setattr(candidates, "CANDIDATE_LIMIT", 3)
    recollections = service.recollections
    june = recollections.remember("Picnic by the canal", at="2025-06-17T16:05:00+01:00").seq
    for day in range(1, 6):
        recollections.remember(f"Morning meeting {day}", at=f"2026-12-0{day}T09:00:00+01:00")

    hits = recollections.recall(recollections.cue(at="2026-06-16T16:00:00+01:00"), k=2)

    assert hits[0].memory.seq == june
    assert hits[0].channels["time"] > 0.95
    assert hits[0].score > hits[1].score


def test_time_alone_breaks_ties_for_the_newer_memory(service: MemoryService) -> None:
    recollections = service.recollections
    older = recollections.remember("Tea at four", at="2025-11-04T16:00:00+01:00").seq
    newer = recollections.remember("Tea at four again", at="2026-11-04T16:00:00+01:00").seq

    hits = recollections.recall(recollections.cue(at="2026-11-05T16:00:00+01:00"), k=5)

    assert [hit.memory.seq for hit in hits] == [newer, older]


def test_time_alone_weighs_salience_before_keeping_the_best(
    settings: Settings, clock: FakeClock
) -> None:
    # max_limit 2 stands for the 1,000 candidates of a large store: the three plain memories
    # at 16:00 match the time best, but the salient one at 16:30 scores higher (0.88 against
    # 0.85) and must not be cut before it is scored.
    with MemoryService.open(settings.model_copy(update={"max_limit": 2}), clock=clock) as service:
        recollections = service.recollections
        for day in range(3):
            recollections.remember(
                f"Plain afternoon {day}", at=f"2026-06-1{day}T16:00:00+01:00", salience=0.0
            )
        salient = recollections.remember(
            "The afternoon that mattered", at="2026-06-15T16:30:00+01:00", salience=1.0
        ).seq

        hits = recollections.recall(recollections.cue(at="2026-06-15T16:00:00+01:00"), k=2)

    assert hits[0].memory.seq == salient
    assert hits[0].score > hits[1].score
