"""The reranker's scores: abstention, stability as the store grows, bounds, duplicates."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.model import Hit
from recalld.retrieval.rerank import Reranker
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

NOTES = [
    "The staging database lives in the Melbourne region",
    "Grandma grows roses in her garden",
    "The production database runs in Sydney",
    "Ana prefers window seats on long flights",
    "The spare house key is under the blue flower pot",
    "Our daughter's birthday party is on the 14th of March",
    "The car needs new tyres before winter",
]

# Words that share no letters' worth of meaning with any query below (made-up syllables).
SYLLABLES = "zor vek quil mab tef nox prel durn ghil wask yob frin toz kelv uml brax".split()


def _unrelated(count: int, seed: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    return [
        {"content": " ".join(rng.choice(SYLLABLES) + rng.choice(SYLLABLES) for _ in range(8))}
        for _ in range(count)
    ]


def _indexed(path: Path, clock: FakeClock, **overrides: object) -> MemoryService:
    service = MemoryService.open(semantic_settings(path, **overrides), clock=clock)
    service.remember_many([{"content": text} for text in NOTES])
    if service.embedder is not None:
        service.new_worker().run_until_idle()
    return service


@pytest.mark.parametrize("embedder", ["hashing", "none"])
def test_rerank_unrelated_query_returns_nothing_with_default_min_score(
    db_path: Path, clock: FakeClock, embedder: str
) -> None:
    with _indexed(db_path, clock, embedder=embedder) as service:
        assert service.settings.min_score > 0
        for query in ("xyzzy plugh", "my favourite football team", "capital of Kazakhstan"):
            assert service.search(query) == [], query
            assert service.recall(query) == [], query
            # Without the threshold the same query does get candidates: abstention is the score.
            if service.embedder is not None:
                assert service.search(query, min_score=0)
        hits = service.search("where does the staging database live?")
        assert hits
        assert hits[0].memory.content == NOTES[0]


def test_rerank_same_score_with_one_or_a_thousand_other_memories(
    tmp_path: Path, clock: FakeClock
) -> None:
    target = "The staging database lives in the Melbourne region"
    scores: dict[int, dict[str, float]] = {}
    for others in (1, 1_000):
        settings = semantic_settings(tmp_path / f"grow-{others}.db", worker_batch_size=256)
        with MemoryService.open(settings, clock=clock) as service:
            service.remember_many([{"content": target}, *_unrelated(others, seed=others)])
            service.new_worker().run_until_idle()
            scores[others] = {}
            for mode in ("hybrid", "keyword", "vector"):
                hits = service.search("staging database region", limit=3, mode=mode, min_score=0)
                assert hits[0].memory.content == target, mode
                scores[others][mode] = hits[0].score
    assert scores[1] == scores[1_000]
    default = Settings(db=tmp_path / "x.db").min_score
    assert scores[1]["hybrid"] >= default
    assert scores[1]["keyword"] >= default


def test_rerank_scores_stay_in_the_unit_interval(db_path: Path, clock: FakeClock) -> None:
    with _indexed(db_path, clock) as service:
        service.remember("🎉 party 🎉", tags=["fun"])
        service.remember("database " * 500)
        service.new_worker().run_until_idle()
        for query in ("database", "🎉", "the the the", "Sydney Melbourne database region"):
            for mode in ("hybrid", "keyword", "vector"):
                hits = service.search(query, limit=50, mode=mode, min_score=0)
                assert all(0.0 <= hit.score <= 1.0 for hit in hits), (query, mode)
                assert [hit.score for hit in hits] == sorted(
                    (hit.score for hit in hits), reverse=True
                )


def test_rerank_min_score_filters_and_is_validated(db_path: Path, clock: FakeClock) -> None:
    with _indexed(db_path, clock) as service:
        everything = service.search("database", limit=20, min_score=0)
        assert len(everything) == len(NOTES)
        top = everything[0].score
        strict = service.search("database", limit=20, min_score=top)
        assert [hit.score for hit in strict] == [top]
        assert service.search("database", limit=20, min_score=1.0) == [] or top == 1.0
        for bad in (-0.01, 1.5, math.nan, True):
            with pytest.raises(ValidationError) as caught:
                service.recall("database", min_score=bad)
            assert caught.value.field == "min_score"
        assert all(service.get(hit.memory.id).access_count == 0 for hit in everything)


def test_rerank_min_score_setting_is_the_default(tmp_path: Path, clock: FakeClock) -> None:
    with _indexed(tmp_path / "open.db", clock, min_score=0.0) as service:
        assert len(service.search("xyzzy plugh", limit=20)) == len(NOTES)
    with _indexed(tmp_path / "strict.db", clock, min_score=1.0) as service:
        assert service.search("where does the staging database live?") == []
        assert service.search("where does the staging database live?", min_score=0)


def test_rerank_near_duplicates_collapse_into_one_hit(db_path: Path, clock: FakeClock) -> None:
    with _indexed(db_path, clock) as service:
        first = service.remember("The office wifi password is on the fridge")
        second = service.remember("The office wifi password is on the fridge.")
        third = service.remember("the office WiFi password is on the fridge!")
        other = service.remember("The office printer is on the second floor")
        service.new_worker().run_until_idle()
        hits = service.search("office wifi password", limit=10, min_score=0)
        ids = [hit.memory.id for hit in hits]
        assert len({first.id, second.id, third.id} & set(ids)) == 1
        kept = next(hit for hit in hits if hit.memory.id in {first.id, second.id, third.id})
        assert kept.channels["duplicates"] == 2.0
        assert other.id in ids
        assert "duplicates" not in next(h for h in hits if h.memory.id == other.id).channels
        collapsed = next(m for m in (first, second, third) if m.id != kept.memory.id)
        explained = service.explain("office wifi password", collapsed.id, min_score=0)
        assert explained.stage == "collapsed"
        assert explained.duplicate_of == kept.memory.id


def test_rerank_duplicates_across_namespaces_stay_apart(db_path: Path, clock: FakeClock) -> None:
    with _indexed(db_path, clock) as service:
        service.remember("The office wifi password is on the fridge")
        service.remember("The office wifi password is on the fridge", namespace="other")
        service.new_worker().run_until_idle()
        hits = service.search("office wifi password")
        assert len(hits) == 1
        assert "duplicates" not in hits[0].channels
        assert hits[0].memory.namespace == "default"


def test_rerank_shipped_data_names_known_features() -> None:
    reranker = Reranker.default()
    assert "keyword" in reranker.models
    assert reranker.fallback_embedder in {name.split("/")[0] for name in reranker.models}
    for model in reranker.models.values():
        assert len(model.features) == len(model.coef)
    assert reranker.model("some-other-model", "hybrid").name.startswith(reranker.fallback_embedder)
    assert reranker.model(None, "hybrid").name == "keyword"
    # Hybrid recall without the graph (the default) is scored by a model without the
    # graph features; with it, by one fitted on the graph's pools.
    embedders = {name.split("/")[0] for name in reranker.models if "/" in name} - {"keyword"}
    for name in embedders:
        plain, graph = reranker.models[f"{name}/hybrid"], reranker.models[f"{name}/hybrid+graph"]
        assert "graph_score" not in plain.features, name
        assert {"graph_score", "entity_overlap"} <= set(graph.features), name


def test_rerank_shipped_models_weigh_a_name_the_store_never_met() -> None:
    # Fitted in a second stage (bench/fit_reranker.py): a weight in log-odds, standing
    # for "the query names someone or something no memory holds" (mean 0, scale 1).
    for model in Reranker.default().models.values():
        assert "unseen_name" in model.features, model.name
        index = model.features.index("unseen_name")
        assert (model.mean[index], model.scale[index]) == (0.0, 1.0), model.name
        assert model.coef[index] < 0, model.name


def test_rerank_a_name_the_store_never_met_lowers_the_score(
    db_path: Path, clock: FakeClock
) -> None:
    question = "Where does Priya keep the spare house key?"
    key = NOTES[4]
    with _indexed(db_path, clock) as service:
        unseen = service.search(question, min_score=0, limit=3)
        assert unseen[0].memory.content == key
        assert service.explain(question, unseen[0].memory.id).features["unseen_name"] == 1.0
        service.remember("Priya moved in next door")
        service.new_worker().run_until_idle()
        seen = next(
            hit
            for hit in service.search(question, min_score=0, limit=3)
            if hit.memory.content == key
        )
        assert service.explain(question, seen.memory.id).features["unseen_name"] == 0.0
        # The same memory for the same question, once the store knows who Priya is.
        assert unseen[0].score < 0.5 * seen.score, (unseen[0].score, seen.score)


def test_rerank_a_question_naming_an_experience_s_place_finds_it(
    db_path: Path, clock: FakeClock
) -> None:
    # The place's name is a searched field: the question names no stranger, and the
    # experience is found above the default min_score though its text never says where.
    question = "What did I order at Blue Bottle?"
    with _indexed(db_path, clock) as service:
        visit = service.remember(
            "Ordered a cortado and read the paper by the window",
            place={"geohash": "9q8yyk", "name": "Blue Bottle Cafe"},
        )
        service.new_worker().run_until_idle()
        hits = service.search(question, limit=3)
        assert [hit.memory.id for hit in hits][:1] == [visit.id]
        explained = service.explain(question, visit.id)
        assert explained.features["unseen_name"] == 0.0
        assert hits[0].channels["keyword"] > 0


def _model(features: list[str]) -> dict[str, object]:
    count = len(features)
    return {
        "features": features,
        "mean": [0.0] * count,
        "scale": [1.0] * count,
        "coef": [0.0] * count,
        "intercept": 0.0,
    }


def test_rerank_graph_channel_picks_its_model_then_the_plain_hybrid_one() -> None:
    reranker = Reranker(
        {
            "fallback_embedder": "base",
            "models": {
                "keyword": _model(["keyword"]),
                "base/hybrid": _model(["keyword", "cosine"]),
                "base/hybrid+graph": _model(["keyword", "cosine", "graph_score"]),
                "own/hybrid": _model(["keyword", "cosine"]),
            },
        }
    )
    assert reranker.model("base", "hybrid+graph").name == "base/hybrid+graph"
    assert reranker.model("base", "hybrid").name == "base/hybrid"
    # An embedder's own hybrid model beats the fallback's graph model: its cosines are
    # what it was calibrated on.
    assert reranker.model("own", "hybrid+graph").name == "own/hybrid"
    assert reranker.model("unknown", "hybrid+graph").name == "base/hybrid+graph"
    assert reranker.model("unknown", "keyword").name == "keyword"


def test_rerank_notes_twins_score_memories_without_speaker_or_source() -> None:
    import numpy as np

    reranker = Reranker(
        {
            "fallback_embedder": "base",
            "models": {
                "keyword": _model(["keyword"]),
                "keyword/notes": _model(["keyword"]),
                "base/hybrid": _model(["keyword", "cosine"]),
                "base/hybrid/notes": _model(["keyword", "cosine"]),
                "own/hybrid": _model(["keyword", "cosine"]),
            },
        }
    )
    assert reranker.model("base", "hybrid", notes=True).name == "base/hybrid/notes"
    assert reranker.model("base", "hybrid+graph", notes=True).name == "base/hybrid/notes"
    assert reranker.model("base", "hybrid").name == "base/hybrid"
    # A model without a twin scores notes too (files written before the twins).
    assert reranker.model("own", "hybrid", notes=True).name == "own/hybrid"
    assert reranker.model(None, "hybrid", notes=True).name == "keyword/notes"
    matrix = np.zeros((4, 28))
    _, names = reranker.score(
        matrix, "base", "hybrid", [True, True, False, False], [False, True, False, True]
    )
    assert names == ["base/hybrid", "base/hybrid/notes", "keyword", "keyword/notes"]
    _, names = reranker.score(matrix, "base", "keyword", [True] * 4, [True, False, True, False])
    assert names == ["keyword/notes", "keyword", "keyword/notes", "keyword"]


def test_rerank_shipped_notes_twins_use_only_what_a_note_has() -> None:
    reranker = Reranker.default()
    structure = {"speaker_named", "other_speaker_named", "previous_cosine", "source_keyword_gap"}
    twins = [name for name in reranker.models if name.endswith("/notes")]
    assert "keyword/notes" in twins
    for name in {name.split("/")[0] for name in reranker.models if "/" in name} - {"keyword"}:
        for channels in ("hybrid", "vector", "hybrid+graph"):
            assert f"{name}/{channels}/notes" in twins, (name, channels)
    for name in twins:
        assert not structure & set(reranker.models[name].features), name


def test_rerank_explain_names_the_model_of_each_kind_of_memory(
    db_path: Path, clock: FakeClock
) -> None:
    question = "where is the spare house key?"
    with MemoryService.open(semantic_settings(db_path), clock=clock) as service:
        note = service.remember("The spare house key is under the blue flower pot")
        alone = service.remember("A spare house key hangs in the garage", source="file:///keys.md")
        turns = service.remember_conversation(
            [
                {"speaker": "Ana", "content": "I keep the spare house key in the shed"},
                {"speaker": "Ben", "content": "Good to know, thanks"},
            ],
            conversation="chat-1",
        )
        service.new_worker().run_until_idle()
        models = {
            name: service.explain(question, memory_id).model
            for name, memory_id in (
                ("note", note.id),
                ("alone in its source", alone.id),
                ("turn", turns.turns[0].receipt.id),
            )
        }
    assert models["note"].endswith("/notes")
    assert models["alone in its source"].endswith("/notes")
    assert not models["turn"].endswith("/notes")


# An agent's chat log: the speakers are roles, the user asks about "my" things.
CHAT = (
    ("user", "We finally adopted a dog last weekend, a beagle called Biscuit"),
    ("assistant", "Congratulations! Beagles are great company."),
    ("user", "My sister Jane is visiting from Perth in March"),
    ("assistant", "That sounds lovely, I hope the weather is kind."),
    ("user", "I switched my phone plan to the cheaper prepaid one"),
    ("assistant", "Good idea, it should save you a few dollars a month."),
)
CHAT_QUESTIONS = (("what is the name of our dog?", 0), ("when is my sister visiting?", 2))


def _chat_hits(service: MemoryService) -> list[tuple[str, str, list[Hit]]]:
    report = service.remember_conversation(
        [{"role": role, "content": text} for role, text in CHAT], conversation="chat-1"
    )
    service.new_worker().run_until_idle()
    ids = [turn.receipt.id for turn in report.turns]
    return [
        (question, ids[answer], service.search(question, limit=3))
        for question, answer in CHAT_QUESTIONS
    ]


def test_rerank_chat_turns_answer_a_question_that_names_nobody(
    db_path: Path, clock: FakeClock
) -> None:
    with MemoryService.open(semantic_settings(db_path), clock=clock) as service:
        for question, answer, hits in _chat_hits(service):
            assert hits, question
            assert hits[0].memory.id == answer, question
            # Naming no speaker must not read as "about somebody else": the speaker
            # features are missing (neutral), not 0.
            assert "speaker_named" not in service.explain(question, answer).features


@pytest.mark.model
def test_rerank_real_model_chat_answer_is_likely_when_the_question_names_nobody(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = semantic_settings(tmp_path / "chat.db", embedder="minilm")
    with MemoryService.open(settings, clock=clock) as service:
        for question, answer, hits in _chat_hits(service):
            assert hits[0].memory.id == answer, question
            # With "nobody named" read as "somebody else" these scored 0.04 and 0.06.
            assert hits[0].score >= 0.1, (question, hits[0].score)


@pytest.mark.model
def test_rerank_real_model_finds_a_note_asked_in_other_words(
    tmp_path: Path, clock: FakeClock
) -> None:
    with _indexed(tmp_path / "notes.db", clock, embedder="minilm") as service:
        # Asked in other words, a note is a likely answer (the turns' model, whose
        # cosine coefficient is about zero, gave these 0.07-0.10).
        for question, note in (
            ("Which seat does Ana like on planes?", NOTES[3]),
            ("Where do we hide the extra key to the house?", NOTES[4]),
            ("What does the car need before the cold season?", NOTES[6]),
        ):
            hits = service.search(question, limit=3)
            assert hits[0].memory.content == note, question
            assert hits[0].score >= 0.2, (question, hits[0].score)
        # No content word in common: still the first candidate, if a weak one.
        hits = service.search("What does my grandmother cultivate?", limit=3, min_score=0)
        assert hits[0].memory.content == "Grandma grows roses in her garden"


@pytest.mark.model
def test_rerank_real_model_doubts_a_question_about_someone_never_met(
    tmp_path: Path, clock: FakeClock
) -> None:
    with _indexed(tmp_path / "names.db", clock, embedder="minilm") as service:
        known = service.search("Which seat does Ana like on planes?", limit=1)
        unknown = service.search("Which seat does Bob like on planes?", limit=1, min_score=0)
        assert known[0].memory.content == unknown[0].memory.content == NOTES[3]
        # Bob is nobody this store knows: Ana's seat is a far weaker answer for him, partly
        # because "Ana" matches the note, and by the doubt an unseen name adds.
        assert unknown[0].score < known[0].score / 5, (unknown[0].score, known[0].score)
        doubt = service.explain("Which seat does Bob like on planes?", unknown[0].memory.id)
        assert doubt.features["unseen_name"] == 1.0
        assert doubt.contributions["unseen_name"] <= -1.0
        named = service.explain("Which seat does Ana like on planes?", known[0].memory.id)
        assert named.contributions["unseen_name"] == 0.0


@pytest.mark.model
def test_rerank_real_model_abstains_and_keeps_scores_stable(
    tmp_path: Path, clock: FakeClock
) -> None:
    target = "Our daughter's birthday party is on the 14th of March"
    scores = []
    for others in (1, 1_000):
        settings = semantic_settings(
            tmp_path / f"real-{others}.db", embedder="minilm", worker_batch_size=64
        )
        with MemoryService.open(settings, clock=clock) as service:
            service.remember_many(
                [{"content": text} for text in NOTES] + _unrelated(others, seed=others)
            )
            service.new_worker().run_until_idle()
            assert service.search("xyzzy plugh") == []
            assert service.search("Which port does PostgreSQL listen on?") == []
            hits = service.search("When is the birthday party?")
            assert hits[0].memory.content == target
            scores.append(hits[0].score)
    assert scores[0] == scores[1]


@pytest.mark.model
def test_rerank_a_query_of_stop_words_alone_returns_nothing(
    tmp_path: Path, clock: FakeClock
) -> None:
    with _indexed(tmp_path / "stop.db", clock, embedder="minilm") as service:
        for query in ("the", "is it", "who is she?"):
            # BM25 alone finds these words "relevant" to some note...
            assert service.search(query, mode="keyword", min_score=0), query
            # ...but they name nothing, so recall compares only what the query means.
            assert service.search(query) == [], query
            explained = service.explain(query, service.search(query, mode="keyword")[0].memory.id)
            assert explained.found_by in ([], ["vector"]), query
