"""A library user recalls by paraphrase right after writing, without starting anything."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import recalld


@pytest.mark.model
def test_library_paraphrase_recall_right_after_remember(tmp_path: Path) -> None:
    # recalld.open() with its defaults: the real model, no worker thread started.
    with recalld.open(tmp_path / "library.db", graph_extractor="none") as memory:
        birthday = memory.remember("Our daughter's birthday party is on the 14th of March")
        memory.remember("The car needs new tyres before winter")
        memory.remember("The quarterly tax return is due at the end of the month")
        assert memory.worker is None
        hits = memory.recall("When does my kid celebrate turning a year older?", min_score=0)
        assert hits[0].memory.id == birthday.id
        assert "vector" in hits[0].backends  # found by meaning, not by a shared word
        assert memory.get(birthday.id).index_state == "indexed"


def test_library_recall_catch_up_off_leaves_the_queue(tmp_path: Path) -> None:
    with recalld.open(
        tmp_path / "queued.db", embedder="hashing", graph_extractor="none", recall_catch_up=0
    ) as memory:
        written = memory.remember("The staging database runs in Sydney")
        memory.recall("staging database")
        assert memory.get(written.id).index_state != "indexed"


def test_library_recall_catch_up_embeds_a_short_queue(tmp_path: Path) -> None:
    with recalld.open(tmp_path / "fresh.db", embedder="hashing", graph_extractor="none") as memory:
        written = memory.remember("The staging database runs in Sydney")
        memory.recall("staging database")
        assert memory.get(written.id).index_state == "indexed"


def test_context_recall_by_text_catches_up_a_short_queue(tmp_path: Path) -> None:
    # madeleine's recall and sense compare the cue's text by meaning too: as recall does,
    # they embed a short queue first instead of missing what was written a moment ago.
    with recalld.open(tmp_path / "fresh.db", embedder="hashing", graph_extractor="none") as memory:
        written = memory.recollections.remember("Kyoto temple visit in autumn, red maple leaves")
        assert memory.get(written.id).index_state != "indexed"
        recollections = memory.recollections
        recollections.recall(recollections.cue(text="temple visit"))
        assert memory.get(written.id).index_state == "indexed"


def test_recall_embeds_a_memory_a_worker_is_embedding_at_that_moment(tmp_path: Path) -> None:
    # A server's worker claims a job as soon as the write wakes it; a recall that came
    # right after found nothing left to claim and searched without the new vector.
    with recalld.open(tmp_path / "held.db", embedder="hashing", graph_extractor="none") as memory:
        written = memory.remember("The staging database runs in Sydney")
        now = datetime.now(UTC)
        assert memory.embedder is not None
        held = memory.store.semantic.claim_jobs(
            "another-worker", memory.embedder.name, 10, now, now + timedelta(minutes=5), 5
        )
        assert [job.memory_id for job in held] == [written.id]
        hits = memory.recall("staging database", mode="vector", min_score=0)
        assert [hit.memory.id for hit in hits] == [written.id]
        assert memory.get(written.id).index_state == "indexed"


def test_another_namespaces_bulk_load_leaves_the_catch_up_on(tmp_path: Path) -> None:
    with recalld.open(
        tmp_path / "bulk.db", embedder="hashing", graph_extractor="none", recall_catch_up=3
    ) as memory:
        for index in range(5):
            memory.remember(f"bulk import line {index}", namespace="import")
        written = memory.remember("The staging database runs in Sydney")
        memory.recall("staging database")
        assert memory.get(written.id).index_state == "indexed"
        # The bulk load waits for the worker: more than three are queued there.
        page = memory.list_memories(namespace="import")
        assert {found.index_state for found in page.memories} == {"queued"}
