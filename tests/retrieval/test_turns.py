"""A chat turn typed in several messages is read as one turn (recalld.retrieval.turns)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from recalld._text import query_terms
from recalld.retrieval.features import FEATURES
from recalld.retrieval.pool import score_pool
from recalld.retrieval.turns import cap_turns, goes_on, take_turns
from recalld.service import MemoryService
from recalld.store.base import Scope
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

QUESTION = "how long did jess take to run the 5k?"
START = datetime(2026, 10, 20, 18, 0, tzinfo=UTC)
# (conversation, second speaker, minutes between the two messages)
CHATS = (
    ("goes-on", "Jess", 1),  # the same speaker a minute later: one turn in two messages
    ("much-later", "Jess", 40),  # the same speaker, but a new turn
    ("answered", "Maya", 1),  # someone else
)


def _write(service: MemoryService, name: str, day: int, speaker: str, minutes: int) -> list[str]:
    at = START + timedelta(days=day)
    report = service.remember_conversation(
        [
            {"speaker": "Maya", "content": "how was the race", "at": at - timedelta(minutes=2)},
            {"speaker": "Jess", "content": "ran my first 5k on saturday!!!!", "at": at},
            {"speaker": speaker, "content": "31 mins", "at": at + timedelta(minutes=minutes)},
        ],
        conversation=name,
    )
    return [turn.receipt.id for turn in report.turns]


def test_a_message_that_goes_on_from_the_last_is_read_as_its_turn(
    db_path: Path, clock: FakeClock
) -> None:
    with MemoryService.open(semantic_settings(db_path), clock=clock) as service:
        ids = {
            name: _write(service, name, day, speaker, minutes)
            for day, (name, speaker, minutes) in enumerate(CHATS)
        }
        service.new_worker().run_until_idle()
        seen = {}
        for name, (_, first, second) in ids.items():
            began = service.explain(QUESTION, first, min_score=0)
            went_on = service.explain(QUESTION, second, min_score=0)
            seen[name] = (began, went_on)
            # What a hit reports in its channels stays its own: "31 mins" holds no "5k".
            assert went_on.channels["keyword"] < began.channels["keyword"]
            assert went_on.channels["text"] < began.channels["text"]
        began, went_on = seen["goes-on"]
        assert went_on.turn_of == began.memory_id
        for name in ("keyword_share", "keyword_rank", "cosine", "cosine_rank"):
            assert went_on.features[name] == began.features[name], name
        # The memory before the turn is its previous one, not the turn's own start.
        assert went_on.features["previous_keyword"] == began.features["previous_keyword"]
        assert went_on.features["previous_question"] == began.features["previous_question"] == 1
        # Under the message it took its features from.
        assert went_on.score < began.score
        for name in ("much-later", "answered"):
            began, other = seen[name]
            assert other.turn_of is None, name
            assert other.features["keyword_share"] < began.features["keyword_share"], name
            assert other.features["cosine"] == other.channels["text"], name
            assert other.features["previous_question"] == 0, name
        # Read as one turn, the answer ranks above the same words said apart.
        assert seen["goes-on"][1].score > seen["much-later"][1].score
        assert seen["goes-on"][1].score > seen["answered"][1].score


def test_the_rest_of_a_turn_joins_the_candidates(db_path: Path, clock: FakeClock) -> None:
    # Three nearest vectors: the turn's start and two closer notes fill them, and "31 mins"
    # shares no word with the question; it is a candidate because its turn's start is.
    settings = semantic_settings(db_path, vector_candidates=3)
    with MemoryService.open(settings, clock=clock) as service:
        _, first, second = _write(service, "goes-on", 0, "Jess", 1)
        service.remember_many(
            [
                {"content": "how long did the 5k run take? long"},
                {"content": "the 5k run, how long did it take"},
            ]
        )
        service.new_worker().run_until_idle()
        question = "how long did the 5k run take?"  # names nobody: no speaker matches
        explained = service.explain(question, second, min_score=0)
        assert explained.found_by == ["turn"]
        assert explained.turn_of == first
        assert explained.stage == "returned"
        assert second in {hit.memory.id for hit in service.recall(question, min_score=0)}


def test_turn_pieces_take_only_what_matches_better_and_score_no_higher() -> None:
    share, cosine = FEATURES.index("keyword_share"), FEATURES.index("cosine")
    previous = FEATURES.index("previous_keyword")
    matrix = np.zeros((4, len(FEATURES)))
    # 0 starts a turn; 1 and 2 go on with it (2 from 1); 3 goes on with 0 but matches
    # better than it on both channels, so it takes nothing.
    matrix[:, share] = [0.6, 0.2, 0.1, 0.8]
    matrix[:, cosine] = [0.5, 0.7, 0.1, 0.9]
    matrix[:, previous] = [0.3, 0.6, 0.2, 0.6]
    taken = take_turns(matrix, {2: 1, 1: 0, 3: 0})
    assert list(taken.items()) == [(1, 0), (2, 1)]  # the first pieces first
    assert list(matrix[:, share]) == [0.6, 0.6, 0.6, 0.8]
    assert list(matrix[:, cosine]) == [0.5, 0.7, 0.7, 0.9]
    assert list(matrix[:, previous]) == [0.3, 0.3, 0.3, 0.6]
    # Scored with what they took: 1 above its start, 2 above both; by their own
    # features 1 scores 0.1 and 2 scores 0.35. A piece keeps the higher of its own
    # score and its turn's kept one step under the piece it took from.
    # It returns the pieces scored as themselves (their own score is as high).
    scores = np.array([0.4, 0.5, 0.45, 0.9])
    assert cap_turns(scores, taken, {1: 0.1, 2: 0.35}, 0.01) == []
    assert np.allclose(scores, [0.4, 0.39, 0.38, 0.9])
    scores = np.array([0.4, 0.5, 0.45, 0.9])
    assert cap_turns(scores, taken, {1: 0.1, 2: 0.395}, 0.01) == [2]
    assert np.allclose(scores, [0.4, 0.39, 0.395, 0.9])
    scores = np.array([0.005, 0.5, 0.45, 0.9])
    assert cap_turns(scores, taken, {1: 0.0, 2: 0.0}, 0.01) == [1, 2]
    assert np.allclose(scores, [0.005, 0.0, 0.0, 0.9])  # never under 0


def test_goes_on_needs_the_same_speaker_within_the_gap() -> None:
    at = "2026-10-20T18:00:00.000000+00:00"
    soon = "2026-10-20T18:10:00.000000+00:00"
    late = "2026-10-20T18:10:00.000001+00:00"
    assert goes_on("Jess", soon, "Jess", at)
    assert not goes_on("Jess", late, "Jess", at)
    assert not goes_on("Jess", soon, "Maya", at)
    assert not goes_on(None, soon, None, at)
    assert not goes_on("", soon, "", at)
    assert not goes_on("Jess", None, "Jess", at)


def test_facts_stored_one_after_another_are_not_a_turn(db_path: Path, clock: FakeClock) -> None:
    # Only a conversation's turns (kind "turn") are read as typed in pieces: facts an
    # agent stores together, with one speaker and source, stay separate memories.
    with MemoryService.open(semantic_settings(db_path), clock=clock) as service:
        receipts = service.remember_many(
            [
                {"content": text, "speaker": "Jess", "source": "notes://jess", "at": START}
                for text in ("Jess adopted a puppy named Rex", "Jess is allergic to peanuts")
            ]
        )
        service.new_worker().run_until_idle()
        explained = service.explain("what did Jess name the puppy?", receipts[1].id, min_score=0)
        assert explained.turn_of is None
        assert explained.found_by != ["turn"]


def test_a_pool_scored_again_gives_what_recall_gave(db_path: Path, clock: FakeClock) -> None:
    # bench/fit_reranker.py scores each held-out pool with a fold's model through the same
    # function recall uses, turn pieces included (pool.score_pool).
    with MemoryService.open(semantic_settings(db_path), clock=clock) as service:
        for day, (name, speaker, minutes) in enumerate(CHATS):
            _write(service, name, day, speaker, minutes)
        service.new_worker().run_until_idle()
        retriever = service.indexing.retriever
        scope = Scope(namespaces=(service.settings.namespace,), now=clock())
        pool, _ = retriever.pool(scope, QUESTION, query_terms(QUESTION, 64), "hybrid")
        assert pool.scoring is not None
        assert pool.turns  # "31 mins" scores as its turn
        assert service.embedder is not None
        scores, models, features, turns = score_pool(
            pool.scoring, retriever.reranker, service.embedder.name
        )
        assert np.array_equal(scores, pool.scores)
        assert models == pool.models
        assert np.array_equal(features, pool.features, equal_nan=True)
        assert {pool.rows[row].seq: pool.rows[start].seq for row, start in turns.items()} == (
            pool.turns
        )
        # Scoring leaves the pool's scoring as it was: a second fold scores the same pool.
        again, _, shown, _ = score_pool(pool.scoring, retriever.reranker, service.embedder.name)
        assert np.array_equal(again, scores)
        assert np.array_equal(shown, features, equal_nan=True)
