"""What an embedder answers is checked before it is stored or searched: a NaN, an
infinity or a vector of the wrong shape is an EmbeddingError, never a vector."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from recalld.embeddings.base import Vectors
from recalld.embeddings.hashing import HashingEmbedder
from recalld.errors import EmbeddingError
from recalld.retrieval.hybrid import VECTOR_UNAVAILABLE
from recalld.service import MemoryService
from recalld.store.factory import open_store
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings


class _SpoiltEmbedder(HashingEmbedder):
    """The hashing embedder whose vector of any text holding ``spoilt`` is ``value``
    everywhere (NaN, an infinity), or has one number too many (``value`` None)."""

    def __init__(self, spoilt: str, value: float | None) -> None:
        super().__init__(64)
        self.spoilt = spoilt
        self.value = value

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        vectors = super().embed_batch(texts)
        if self.value is None:
            if any(self.spoilt in text for text in texts):
                return np.zeros((len(texts), 65), dtype=np.float32)
            return vectors
        for row, text in enumerate(texts):
            if self.spoilt in text:
                vectors[row] = self.value
        return vectors


# 1e5: finite in float32, an infinity once stored in float16 (a custom embedder that does
# not normalise its rows).
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, None, 1e5])
def test_the_worker_stores_no_vector_an_embedder_spoilt(
    db_path: Path, clock: FakeClock, value: float | None
) -> None:
    embedder = _SpoiltEmbedder("poison", value)
    settings = semantic_settings(db_path, worker_retry_seconds=5.0)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        good = service.remember("the cat sleeps on the sofa")
        bad = service.remember("the poison cat sleeps on the sofa")
        service.new_worker().run_until_idle()
        assert service.get(good.id).index_state == "indexed"
        # Its job failed and waits for its retry; no vector of it was kept.
        assert service.get(bad.id).index_state == "queued"
        status = service.status()
        assert status.embeddings == {embedder.name: 1}
        [failed] = status.failed_jobs
        assert failed.memory_id == bad.id
        assert failed.error is not None
        assert failed.error.startswith("EmbeddingError: embedder")
        hits = service.search("poison cat sofa", min_score=0)
        # Every cosine is a number: the recall's JSON is JSON.
        assert {hit.memory.id for hit in hits} == {good.id, bad.id}
        for hit in hits:
            assert all(math.isfinite(score) for score in hit.channels.values())
            json.loads(json.dumps(hit.channels, allow_nan=False))


def test_a_query_vector_holding_nan_answers_by_keyword_and_says_so(
    db_path: Path, clock: FakeClock
) -> None:
    embedder = _SpoiltEmbedder("sofa", math.nan)
    settings = semantic_settings(db_path)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("the cat sleeps on the couch")
        service.new_worker().run_until_idle()
        hits = service.search("cat sleeps sofa")
        assert [hit.memory.id for hit in hits] == [receipt.id]
        assert hits[0].backends == ["fts", VECTOR_UNAVAILABLE]
        assert all(math.isfinite(score) for score in hits[0].channels.values())


def test_checked_vectors_names_the_model_and_the_text() -> None:
    from recalld.embeddings.base import checked_vectors

    embedder = HashingEmbedder(8)
    vectors = embedder.embed_batch(["a", "b", "c"])
    assert checked_vectors(vectors, 3, embedder) is not None
    vectors[1, 2] = math.nan
    with pytest.raises(EmbeddingError, match=r"hashing-8 .*NaN or infinity \(text 2 of 3\)"):
        checked_vectors(vectors, 3, embedder)
    with pytest.raises(EmbeddingError, match=r"shape \(3, 8\) for 2 texts of dimension 8"):
        checked_vectors(embedder.embed_batch(["a", "b", "c"]), 2, embedder)
    vectors[1] = -70_000.0
    with pytest.raises(EmbeddingError, match=r"hashing-8 .*beyond 65504, .*\(text 2 of 3;"):
        checked_vectors(vectors, 3, embedder)
