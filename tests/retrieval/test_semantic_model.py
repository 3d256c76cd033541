"""Paraphrase recall with the real default model (offline; marked ``model``, runs in CI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld._text import query_terms
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings


@pytest.mark.model
def test_semantic_paraphrase_without_shared_keywords_is_recalled(
    db_path: Path, clock: FakeClock
) -> None:
    with MemoryService.open(semantic_settings(db_path, embedder="minilm"), clock=clock) as service:
        birthday = service.remember("Our daughter's birthday party is on the 14th of March")
        service.remember("The car needs new tyres before winter")
        service.remember("The quarterly tax return is due at the end of the month")
        query = "When does my kid celebrate turning a year older?"
        # No keyword in common: the keyword index alone finds nothing.
        assert not set(query_terms(query, 64)) & set(
            query_terms("Our daughter's birthday party is on the 14th of March", 64)
        )
        assert service.recall(query, min_score=0) == []
        service.new_worker().run_until_idle()
        hits = service.recall(query, limit=3, min_score=0)
        assert hits[0].memory.id == birthday.id
        assert hits[0].backends == ["vector"]
        assert hits[0].channels["text"] > 0.3
        # A paraphrase sharing no word is weak evidence for the reranker: it ranks first,
        # well above the others, but under the default min_score (see the README).
        assert all(hit.score < hits[0].score for hit in hits[1:])
        asked_plainly = service.recall("When is the birthday party?", limit=3)
        assert [hit.memory.id for hit in asked_plainly] == [birthday.id]
