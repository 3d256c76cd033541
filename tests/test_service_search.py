"""search and recall: BM25 ranking, filters before the limit, no state change, any string safe."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recalld._validate import NOT_SPACE
from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.model import Filters
from recalld.service import MemoryService
from tests.conftest import FakeClock


@pytest.fixture
def filled(service: MemoryService) -> MemoryService:
    service.remember(
        "Through the second door on the left from the hallway; a step-down of 5 cm.",
        title="kitchen entrance",
        category="spatial",
        tags=["indoor", "kitchen"],
    )
    service.remember("The cat sleeps on the sofa in the living room.", category="object")
    service.remember("Staging database runs in the Melbourne region.", tags=["infra"])
    service.remember("Crème brûlée recipe from the café near the station.", tags=["food"])
    return service


@pytest.fixture
def filled_export(filled: MemoryService) -> list[str]:
    """What ``filled`` holds, exported once: a fuzz test compares every example's state
    with it (a search that changed anything shows, and stays shown, against the start)
    without exporting the store twice per example (two thirds of its time, test speed
    pass d66)."""
    return list(filled.export())


def test_search_ranks_best_match_first(filled: MemoryService) -> None:
    hits = filled.search("where is the kitchen?")
    assert hits
    assert hits[0].memory.title == "kitchen entrance"
    assert hits[0].backends == ["fts"]
    assert 0 < hits[0].score <= 1
    # The score is the reranker's probability; the channel keeps normalised BM25F.
    assert 0 < hits[0].channels["keyword"] < 1
    assert all(hit.score < hits[0].score for hit in hits[1:])
    assert hits[0].prompt_line.startswith("[")


def test_search_stems_and_folds_diacritics(filled: MemoryService) -> None:
    assert filled.search("creme brulee")[0].memory.content.startswith("Crème")
    assert filled.search("sleeping cats")[0].memory.content.startswith("The cat")


def test_keyword_search_folds_accents_on_every_store(
    any_database: Path | str, clock: FakeClock
) -> None:
    # PostgreSQL's index did not: "Munchen" found "München" by its vector alone.
    settings = Settings(db=any_database, embedder="none", synchronous="NORMAL")
    with MemoryService.open(settings, clock=clock) as service:
        service.remember("Flew to München for the Oktoberfest", tags=["travel"])
        service.remember("Crème brûlée at the café", title="Désert")
        service.remember("Nothing to see here")
        for query, found in (
            ("munchen oktoberfest", "Flew to München"),
            ("MÜNCHEN", "Flew to München"),
            ("creme brulee", "Crème brûlée"),
            ("desert", "Crème brûlée"),
        ):
            hits = service.search(query, mode="keyword", min_score=0.0)
            assert [hit.memory.content[: len(found)] for hit in hits] == [found], query


def test_search_applies_filters_before_limit(filled: MemoryService) -> None:
    for index in range(20):
        filled.remember(f"kitchen note {index}", category="fact")
    hits = filled.search("kitchen", filters=Filters(category="spatial"), limit=1)
    assert [hit.memory.title for hit in hits] == ["kitchen entrance"]
    tagged = filled.search("kitchen", filters=Filters(tags_all=["indoor", "kitchen"]), limit=1)
    assert [hit.memory.title for hit in tagged] == ["kitchen entrance"]


@pytest.mark.parametrize("field", ["tags_any", "tags_all"])
def test_search_tag_filters_are_held_to_the_tags_limits(filled: MemoryService, field: str) -> None:
    many = Filters.model_validate({field: [f"tag{index}" for index in range(1000)]})
    long = Filters.model_validate({field: ["x" * 500]})
    calls: list[Callable[[Filters], object]] = [
        lambda filters: filled.search("kitchen", filters=filters),
        lambda filters: filled.recall("kitchen", filters=filters),
        lambda filters: filled.list_memories(filters=filters),
    ]
    for filters in (many, long):
        for run in calls:
            with pytest.raises(ValidationError) as raised:
                run(filters)
            assert raised.value.field == field
            assert "the limit is" in str(raised.value)
    assert filled.get(filled.search("kitchen")[0].memory.id).access_count == 0


@pytest.mark.parametrize("field", ["kind", "category", "speaker"])
def test_search_name_filters_are_held_to_the_names_limits(
    filled: MemoryService, field: str
) -> None:
    # Adversarial pass a65: a 10 MB kind, category or speaker filter was composed, scanned
    # and sent to the database whole, to match nothing (no stored name is past 200).
    long = Filters.model_validate({field: "x" * 10_000_000})
    calls: list[Callable[[Filters], object]] = [
        lambda filters: filled.search("kitchen", filters=filters),
        lambda filters: filled.recall("kitchen", filters=filters),
        lambda filters: filled.list_memories(filters=filters),
        lambda filters: filled.explain("kitchen", "no-such-id", filters=filters),
    ]
    for run in calls:
        with pytest.raises(ValidationError) as raised:
            run(long)
        assert raised.value.field == field
        assert raised.value.message == ("is 10000000 characters; the limit is 200 characters")
    # As long as a stored name may be is a filter still.
    longest = Filters.model_validate({field: "x" * 200})
    assert filled.list_memories(filters=longest).memories == []
    assert filled.get(filled.search("kitchen")[0].memory.id).access_count == 0


def test_search_changes_nothing_recall_counts_access(
    filled: MemoryService, clock: FakeClock
) -> None:
    before = filled.search("kitchen")[0].memory
    assert before.access_count == 0
    filled.search("kitchen")
    assert filled.get(before.id).access_count == 0
    assert filled.get(before.id).last_accessed_at is None
    clock.advance(5)
    recalled = filled.recall("kitchen")
    assert recalled[0].memory.access_count == 1
    stored = filled.get(before.id)
    assert stored.access_count == 1
    assert stored.last_accessed_at == clock.now
    assert stored.updated_at == before.updated_at


def test_search_limit_is_bounded(filled: MemoryService) -> None:
    with pytest.raises(ValidationError) as caught:
        filled.search("kitchen", limit=0)
    assert caught.value.field == "limit"
    with pytest.raises(ValidationError):
        filled.search("kitchen", limit=100_000)


def test_search_punctuation_only_query_uses_substring(filled: MemoryService) -> None:
    filled.remember("party time 🎉 tonight")
    hits = filled.search("🎉")
    assert [hit.memory.content for hit in hits] == ["party time 🎉 tonight"]
    assert hits[0].backends == ["like"]


def test_search_like_fallback_when_fts_disabled(db_path: Path, clock: FakeClock) -> None:
    settings = Settings(db=db_path, fts=False, embedder="none")
    with MemoryService.open(settings, clock=clock) as service:
        service.remember("The kitchen is through the second door", title="kitchen")
        service.remember("The garage is outside")
        stats = service.stats()
        assert stats.fts is False
        assert stats.search_backend == "like"
        hits = service.search("kitchen door")
        assert [hit.memory.title for hit in hits] == ["kitchen"]
        assert hits[0].backends == ["like"]
        assert 0 < hits[0].channels["keyword"] < 1
        assert 0 < hits[0].score <= 1
        assert service.search('50% "off" _x_ \\') == []


NASTY = [
    '"',
    '""',
    "*",
    "NEAR",
    "AND",
    "OR NOT",
    "(",
    "((kitchen",
    'kitchen" OR "x',
    "title:kitchen",
    "^kitchen",
    "NEAR(kitchen hallway, 2)",
    "-",
    "🎉🎉",
    "\x00",
    "kitchen " * 1250,  # the longest query accepted: 10,000 characters
]


@pytest.mark.parametrize("query", NASTY)
def test_search_hostile_strings_never_raise(filled: MemoryService, query: str) -> None:
    before = list(filled.export())
    hits = filled.search(query, limit=5)
    assert len(hits) <= 5
    if "kitchen" in query:
        # The operator characters are not syntax: the word around them still finds its memory.
        assert hits[0].memory.title == "kitchen entrance"
    if query in ('"', '""', "\x00"):
        # No memory holds a quote or a NUL: a substring search for one finds nothing.
        assert hits == []
    assert list(filled.export()) == before  # a search changes nothing


def test_search_ten_thousand_characters_of_text(filled: MemoryService) -> None:
    query = ("where is the kitchen? " * 500)[:10_000]
    assert filled.search(query)[0].memory.title == "kitchen entrance"


@pytest.mark.slow
@settings(
    max_examples=10_000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(query=st.text(max_size=200))
def test_search_fuzz_any_string_is_safe(
    filled: MemoryService, filled_export: list[str], query: str
) -> None:
    before = filled_export
    if NOT_SPACE.search(query) is None:  # blank as the published schema's `\S` reads it
        # A blank query matches nothing: refused, not answered no hits (review of e69).
        with pytest.raises(ValidationError):
            filled.search(query, limit=3)
        return
    hits = filled.search(query, limit=3)
    assert len(hits) <= 3
    assert all(0 <= hit.score <= 1 for hit in hits)
    # Whatever follows a real word, that word still finds its memory (nothing else in the
    # query can turn into search syntax that hides it).
    found = filled.search(f"kitchen {query}", limit=5, min_score=0)
    assert "kitchen entrance" in [hit.memory.title for hit in found]
    assert list(filled.export()) == before


def test_search_of_stop_words_alone_without_an_embedder_returns_nothing(
    filled: MemoryService,
) -> None:
    """Adversarial pass c58: a query of stop words alone names nothing (the README), yet a
    store without an embedder answered "the" with hits scoring up to 0.35 from BM25 alone,
    as if it had meant something. Hybrid recall compares only such a query's meaning, and
    such a store has none to compare; keyword mode still matches the words."""
    for query in ("the", "is it", "who is she?", "The the THE"):
        assert filled.search(query) == [], query
        assert filled.recall(query, min_score=0) == [], query
    assert filled.search("the", mode="keyword", min_score=0)
    cat = filled.search("cat")[0].memory.id
    explained = filled.explain("the", cat)
    assert explained.stage == "not_in_pool"
    assert "only stop words" in explained.reason
    assert "no embedder is configured" in explained.reason


def test_search_of_punctuation_alone_returns_nothing(filled: MemoryService) -> None:
    """Leftover of review 58c: a query of punctuation alone ("?") has no word, so it was
    looked for as a substring and found any memory holding one, at a score (0.029) above
    the default min_score on a store without an embedder."""
    filled.remember("what? really? yes!")
    filled.remember("the new standing desk - finally")
    for query in ("?", "-", "...", "?!"):
        assert filled.search(query) == [], query
        assert filled.search(query, mode="keyword", min_score=0) == [], query


def test_search_in_vector_mode_without_an_embedder_is_refused(filled: MemoryService) -> None:
    """Adversarial pass c58: ``mode="vector"`` on a store without an embedder searched no
    vectors and answered an empty list, read as "nothing similar is stored"; explain
    blamed the memory. Both now refuse the mode, naming it."""
    cat = filled.search("cat")[0].memory.id
    for call in (
        lambda: filled.search("cat", mode="vector"),
        lambda: filled.recall("cat", mode="vector"),
        lambda: filled.explain("cat", cat, mode="vector"),
    ):
        with pytest.raises(ValidationError) as refused:
            call()
        assert refused.value.field == "mode"
        assert "needs an embedder" in refused.value.message
    assert filled.get(cat).access_count == 0
