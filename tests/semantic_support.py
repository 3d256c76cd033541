"""Helpers for the semantic-recall tests: settings with an embedder, and scripted embedders."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.embeddings.base import Vectors
from recalld.embeddings.hashing import HashingEmbedder
from recalld.errors import DatabaseUnavailableError, EmbeddingError
from recalld.retrieval.pool import Mode
from recalld.service import MemoryService


def semantic_settings(db_path: Path | str, **overrides: Any) -> Settings:
    """Settings for tests that index: the hashing embedder, immediate retries, and no
    embedding at recall time (these tests drive the worker themselves; the catch-up a
    recall does has its own tests)."""
    values: dict[str, Any] = {
        "db": db_path,
        "synchronous": "NORMAL",
        "embedder": "hashing",
        "graph_extractor": "rules",
        "worker_retry_seconds": 0.0,
        "worker_batch_size": 8,
        "recall_catch_up": 0,
    }
    values.update(overrides)
    return Settings(**values)


class RecordingEmbedder(HashingEmbedder):
    """The hashing embedder that remembers every text it embedded (thread-safe)."""

    def __init__(self, dimension: int = 64) -> None:
        super().__init__(dimension)
        self.texts: list[str] = []
        self._lock = threading.Lock()

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            self.texts.extend(texts)
        return super().embed_batch(texts)


class FlakyEmbedder(HashingEmbedder):
    """Fails the first ``failures`` calls that include ``poison`` (or every call, if None)."""

    def __init__(self, failures: int, poison: str | None = None, dimension: int = 64) -> None:
        super().__init__(dimension)
        self.remaining = failures
        self.poison = poison
        self.calls = 0

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        hit = self.poison is None or any(self.poison in text for text in texts)
        if hit and self.remaining > 0:
            self.remaining -= 1
            raise EmbeddingError(f"model exploded on {len(texts)} texts")
        return super().embed_batch(texts)


class NamedEmbedder(HashingEmbedder):
    """A hashing embedder under another model name (to simulate a model switch)."""

    def __init__(self, name: str, dimension: int = 64) -> None:
        super().__init__(dimension)
        self._custom_name = name

    @property
    def name(self) -> str:
        return self._custom_name


class MisstatedEmbedder(NamedEmbedder):
    """Says one dimension and embeds at another: an http or custom model run with a
    wrong RECALLD_EMBEDDER_DIMENSION."""

    def __init__(self, name: str, dimension: int, says: int) -> None:
        super().__init__(name, dimension)
        self._says = says

    @property
    def dimension(self) -> int:
        return self._says


def assert_another_namespace_changes_nothing(service: MemoryService, crew: int = 150) -> None:
    """A word another namespace holds 1,100 times is still namespace ``a``'s only clue to
    its one memory holding it: which words pick candidates is the namespace's business,
    so ``a``'s answers and scores do not move when ``b`` fills up. Beside a word rare in
    ``a`` that fills the pool by itself ("crew", in ``crew`` memories), and beside a word
    common in ``a`` ("meeting")."""
    service.remember_many(
        [{"content": f"Meeting notes {index}: budget review"} for index in range(1_050)],
        namespace="a",
    )
    service.remember_many(
        [{"content": f"The crew rota, week {index}"} for index in range(crew)], namespace="a"
    )
    service.remember("The zebra crew meets on Thursdays", namespace="a")
    kayaking = service.remember("Kayaking season opens in October at the lake", namespace="a")
    questions = (
        "did the zebra crew go kayaking?",
        "when does the crew go kayaking?",
        "the meeting about kayaking",
    )
    modes: tuple[Mode, ...] = ("keyword", "hybrid")

    def answers(question: str, mode: Mode) -> list[tuple[str, float]]:
        hits = service.search(question, namespace="a", mode=mode, min_score=0, limit=10)
        return [(hit.memory.id, hit.score) for hit in hits]

    before = {(question, mode): answers(question, mode) for question in questions for mode in modes}
    for question in questions:
        assert kayaking.id in [found for found, _ in before[question, "keyword"]], question
    service.remember_many(
        [{"content": f"Kayaking log {index}: paddled the bay"} for index in range(1_100)],
        namespace="b",
    )
    after = {(question, mode): answers(question, mode) for question in questions for mode in modes}
    assert after == before


def assert_another_namespace_keeps_the_best_match(service: MemoryService, mentions: int) -> None:
    """Namespace ``a``'s best match of a word it holds ``mentions`` times (more than the
    keyword candidates' room) stays its best, and its scores stay, when ``b`` comes to
    hold the word 1,200 times: the word is then common in the file, and ``a``'s matches
    were picked newest first, which dropped its oldest and best one."""
    best = service.remember(
        "Paddle paddle paddle: the paddle club keeps its paddle rack by the paddle shed",
        namespace="a",
    )
    service.remember_many(
        [{"content": f"Note {index}: bring a paddle"} for index in range(mentions)],
        namespace="a",
    )

    def answers() -> list[tuple[str, float]]:
        hits = service.search("paddle", namespace="a", mode="keyword", min_score=0, limit=5)
        return [(hit.memory.id, hit.score) for hit in hits]

    before = answers()
    assert before[0][0] == best.id
    service.remember_many(
        [{"content": f"Rowing log {index}: lost a paddle"} for index in range(1_200)],
        namespace="b",
    )
    assert answers() == before


class StoreOutage:
    """Makes the store's ``complete_jobs`` fail as a PostgreSQL restart does: while ``on``,
    or (``failures``) for that many calls only. ``calls`` holds how many jobs each call
    was given."""

    def __init__(
        self, service: MemoryService, monkeypatch: pytest.MonkeyPatch, failures: int | None = None
    ) -> None:
        self.on = True
        self.calls: list[int] = []
        semantic = service.store.semantic
        complete = semantic.complete_jobs

        def failing(worker_id: str, model: str, results: Any, dimension: int, now: datetime) -> int:
            self.calls.append(len(results))
            if self.on and (failures is None or len(self.calls) <= failures):
                raise DatabaseUnavailableError("the database at db is unavailable")
            return complete(worker_id, model, results, dimension, now)

        monkeypatch.setattr(semantic, "complete_jobs", failing)
