"""A library user recalls by paraphrase right after writing, without starting anything."""

from __future__ import annotations

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
