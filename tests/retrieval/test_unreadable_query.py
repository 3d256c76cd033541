"""A query the default model cannot read (mostly its unknown token) gets no vector channel
(:class:`recalld.embeddings.base.Reading`; review of pass a69)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld.embeddings.minilm import MiniLMEmbedder
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

NOTES = (
    "ลูกสาวเรียนเปียโนทุกวันเสาร์",
    "明天下午三点开会讨论预算",
    "我昨天在北京吃了烤鸭",
    "東京で寿司を食べました",
    "서울에서 친구를 만났다",
)


@pytest.mark.model
def test_minilm_unreadable_is_a_text_of_mostly_unknown_tokens() -> None:
    embedder = MiniLMEmbedder()
    assert embedder.unreadable("飞机")  # both ideographs are [UNK]
    assert embedder.unreadable("ลูกสาวเรียนเปียโน")
    assert embedder.unreadable("北京")  # lone ideographs, in the vocabulary
    assert embedder.unreadable("서울에서 친구를 만났다")  # lone jamo
    assert not embedder.unreadable("meeting with 田中さん at 3pm")  # 4 tokens of 9
    assert not embedder.unreadable("Где мой паспорт?")
    assert not embedder.unreadable("")
    # A model that does not load says nothing here: the query's embedding reports it.
    missing = MiniLMEmbedder(model_path=Path("/nonexistent/model.onnx"))
    assert not missing.unreadable("飞机")


@pytest.mark.model
def test_recall_of_an_unreadable_query_about_nothing_stored_returns_nothing(
    db_path: Path, clock: FakeClock
) -> None:
    # Before: "飞机" (aeroplane) found the Thai note at 0.63, "股票市场" (stock market) at
    # 0.13: texts of unknown tokens have a cosine of 0.9-1.0 whatever they say; a
    # Japanese or Korean question about nothing stored found the note in its script.
    with MemoryService.open(semantic_settings(db_path, embedder="minilm"), clock=clock) as service:
        ids = [service.remember(note).id for note in NOTES]
        service.new_worker().run_until_idle()
        for query in ("飞机", "股票市场", "ภูเขาไฟ", "量子计算机", "富士山に登った", "화산 폭발"):
            assert service.recall(query, limit=3) == [], query
        # A word the note holds is still found, by its characters.
        assert [hit.memory.id for hit in service.recall("烤鸭", limit=3)] == [ids[2]]
        assert [hit.memory.id for hit in service.recall("เปียโน", limit=3)] == [ids[0]]
        assert [hit.memory.id for hit in service.recall("친구", limit=3)] == [ids[4]]
