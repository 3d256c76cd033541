"""Recall's store protocol (issue 11) on every store: candidates, rows, neighbours, counts.

The same observable behaviour on SQLite (FTS5) and PostgreSQL (tsvector): the
speaker is a searched field, keyword candidates come best first under the
scope's namespaces, filters and expiry, a query without words is a substring
match, neighbours are the same source's memories in (at, seq) order, term
counts stay inside the namespace and stop at the cap (so a name the namespace
never met is unseen on both), and the reranker's terms are the same. Recall
itself ranks a small corpus the same way on both.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from recalld._text import query_terms
from recalld._time import from_storage
from recalld.config import Settings
from recalld.model import Place
from recalld.retrieval.keyword import KeywordParameters, prepare_query
from recalld.retrieval.temporal import time_terms
from recalld.service import MemoryService
from recalld.store import postgres_retrieval, sqlite_retrieval
from recalld.store.base import FULL_TEXT_BACKENDS, Scope, Store
from tests.store.contract.conftest import NOW, record


def _scope(*namespaces: str, now=NOW, **filters: object) -> Scope:  # type: ignore[no-untyped-def]
    return Scope(namespaces=namespaces or ("default",), now=now, **filters)  # type: ignore[arg-type]


def test_retrieval_speaker_is_stored_and_searched(store: Store) -> None:
    with store.transaction() as tx:
        said = tx.insert(record(id="a", content="see you at the bakery", speaker="Caroline"))
        tx.insert(record(id="b", content="Caroline said hi", speaker="Melanie"))
        tx.insert(record(id="c", content="nothing to do with her"))
    assert said.speaker == "Caroline"
    found = store.retrieval.keyword_candidates(_scope(), "caroline", ["caroline"], 10)
    assert {candidate.row.id for candidate in found} == {"a", "b"}
    assert {candidate.row.speaker for candidate in found} == {"Caroline", "Melanie"}
    assert {candidate.backend for candidate in found} <= FULL_TEXT_BACKENDS
    with store.transaction() as tx:
        tx.replace(said.seq, record(id="a", content="see you at the bakery", speaker="Dana"))
    assert [c.row.id for c in store.retrieval.keyword_candidates(_scope(), "", ["dana"], 5)] == [
        "a"
    ]
    assert [match.memory.id for match in store.search(_scope(), "dana", ["dana"], 5)] == ["a"]


def test_retrieval_place_name_is_stored_and_searched(store: Store) -> None:
    # An experience's place name is a searched field (migration 18), counted in the
    # namespace like any word (so a question naming the place does not name a stranger),
    # found by substring too, and re-indexed when the place changes.
    cafe = Place(lat=37.776, lon=-122.423, geohash="9q8yyk", name="Blue Bottle Cafe")
    with store.transaction() as tx:
        visit = tx.insert(record(id="visit", content="ordered a cortado", place=cafe))
        tx.insert(record(id="plain", content="a bottle of water on the desk"))
        tx.insert(record(id="walled", content="went out", place=cafe, namespace="other"))
    retrieval = store.retrieval
    found = retrieval.keyword_candidates(_scope(), "bottle cafe", ["bottle", "cafe"], 10)
    assert [c.row.id for c in found] == ["visit", "plain"]
    assert found[0].row.place_name == "Blue Bottle Cafe"
    assert retrieval.document_counts(("default",), ["cafe"], 10) == {"cafe": 1}
    substring = retrieval.keyword_candidates(_scope(), "Bottle Cafe", [], 10)
    assert [(c.row.id, c.backend) for c in substring] == [("visit", "like")]
    assert [m.memory.id for m in store.search(_scope(), "cafe", ["cafe"], 5)] == ["visit"]
    moved = Place(lat=48.857, lon=2.352, geohash="u09tvw", name="Louvre")
    with store.transaction() as tx:
        tx.replace(visit.seq, record(id="visit", content="ordered a cortado", place=moved))
    assert retrieval.keyword_candidates(_scope(), "", ["cafe"], 5) == []
    assert [c.row.id for c in retrieval.keyword_candidates(_scope(), "", ["louvre"], 5)] == [
        "visit"
    ]


def test_retrieval_a_keys_words_are_searched(store: Store) -> None:
    # chaoscore's own example keeps the topic in the key: "staging region" must find it.
    with store.transaction() as tx:
        kept = tx.insert(
            record(id="kv", key="staging.region", content="Melbourne (australiaeast)", kind="kv")
        )
        tx.insert(record(id="other", content="the region of the garden"))
    retrieval = store.retrieval
    found = retrieval.keyword_candidates(_scope(), "staging region", ["staging", "region"], 10)
    assert (found[0].row.id, found[0].row.key) == ("kv", "staging.region")
    assert retrieval.document_counts(("default",), ["staging"], 10) == {"staging": 1}
    assert [m.memory.id for m in store.search(_scope(), "staging", ["staging"], 5)] == ["kv"]
    with store.transaction() as tx:
        tx.replace(kept.seq, record(id="kv", key="prod.region", content="Melbourne", kind="kv"))
    assert retrieval.keyword_candidates(_scope(), "", ["staging"], 5) == []
    # Words beyond ASCII too, whatever the database's locale (PostgreSQL under C took
    # every such letter for punctuation).
    with store.transaction() as tx:
        tx.insert(record(id="menu", key="café.menü", content="espresso two euros", kind="kv"))
        tx.insert(record(id="snow", key="город.погода", content="minus five", kind="kv"))
    for word, expected in (("menü", "menu"), ("café", "menu"), ("погода", "snow")):
        found = retrieval.keyword_candidates(_scope(), word, [word], 5)
        assert [c.row.id for c in found] == [expected], word


def test_retrieval_keyword_candidates_rank_and_respect_the_scope(store: Store) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="title", title="Staging region", content="runs in Melbourne"))
        tx.insert(record(id="body", content="the staging box is small", tags=("infra",)))
        tx.insert(record(id="none", content="lunch at the station"))
        tx.insert(record(id="walled", content="staging elsewhere", namespace="other"))
        tx.insert(
            record(id="old", content="staging expired", expires_at=NOW - timedelta(seconds=1))
        )
    retrieval = store.retrieval
    found = [c.row.id for c in retrieval.keyword_candidates(_scope(), "staging", ["staging"], 10)]
    assert found == ["title", "body"]  # the title weighs more than the content
    assert [
        c.row.id for c in retrieval.keyword_candidates(_scope("other"), "", ["staging"], 10)
    ] == ["walled"]
    assert [
        c.row.id
        for c in retrieval.keyword_candidates(_scope(tags_any=("infra",)), "", ["staging"], 10)
    ] == ["body"]
    expired_too = retrieval.keyword_candidates(_scope(include_expired=True), "", ["staging"], 10)
    assert {c.row.id for c in expired_too} == {"title", "body", "old"}
    assert len(retrieval.keyword_candidates(_scope(), "", ["staging"], 1)) == 1


def test_retrieval_without_words_is_a_substring_match(store: Store) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="sym", content="the ratio was 3:2 again"))
        tx.insert(record(id="other", content="nothing like it"))
    found = store.retrieval.keyword_candidates(_scope(), "3:2", [], 10)
    assert [(c.row.id, c.backend, c.like_share) for c in found] == [("sym", "like", 1.0)]
    # Only stop words (or nothing) to look for: no error, and no flood of unrelated rows.
    assert store.retrieval.keyword_candidates(_scope(), "\x00", [], 10) == []


def test_retrieval_punctuation_alone_is_no_substring_to_look_for(store: Store) -> None:
    # Leftover of review 58c: "?" found every memory holding a question mark (and "-"
    # every dash) as a substring, scoring above the default min_score on a store without
    # an embedder. Punctuation names nothing; a symbol is still looked for.
    with store.transaction() as tx:
        tx.insert(record(id="asks", content="what? really? yes!"))
        tx.insert(record(id="cake", content="birthday \U0001f382 at 3-4 p.m."))
    for query in ("?", "...", "-", " ?! ", "\u00bf\u00a1", "\u300c\u300d"):
        assert store.retrieval.keyword_candidates(_scope(), query, [], 10) == [], query
        assert store.search(_scope(), query, [], 10) == [], query
    for symbol in ("\U0001f382", "3-4"):
        found = store.retrieval.keyword_candidates(_scope(), symbol, [], 10)
        assert [c.row.id for c in found] == ["cake"], symbol


def test_retrieval_earliest_matches_walk_the_time_range_in_order(store: Store) -> None:
    start = NOW - timedelta(days=5)
    with store.transaction() as tx:
        for day, content in enumerate(
            (
                "Yesterday we hiked",  # before the range
                "YESTERDAY I fixed the bike",
                "a plain note",
                "went out last night",
                "yesterday again",
            )
        ):
            tx.insert(record(id=f"d{day}", content=content, at=start + timedelta(days=day)))
        tx.insert(record(id="walled", content="yesterday", namespace="other", at=start))
        tx.insert(record(id="timeless", content="yesterday, whenever that was"))
        tx.insert(
            record(
                id="old",
                content="yesterday",
                at=start + timedelta(days=1, hours=1),
                expires_at=NOW - timedelta(seconds=1),
            )
        )
    scope = _scope(since=start + timedelta(hours=1), until=start + timedelta(days=4))
    found = store.retrieval.earliest_matches(scope, ["yesterday", "night"], 10)
    assert [candidate.row.id for candidate in found] == ["d1", "d3"]
    assert store.retrieval.earliest_matches(scope, ["yesterday", "night"], 1)[0].row.id == "d1"
    assert store.retrieval.earliest_matches(scope, [], 10) == []
    # An empty word or a NUL would match every memory: they are dropped.
    assert store.retrieval.earliest_matches(scope, ["", "\x00"], 10) == []
    # A memory without a time is in no time range, nor first in an unbounded one.
    unbounded = store.retrieval.earliest_matches(_scope(), ["yesterday"], 10)
    assert [candidate.row.id for candidate in unbounded] == ["d0", "d1", "d4"]


def test_retrieval_rows_apply_the_scope(store: Store) -> None:
    with store.transaction() as tx:
        mine = tx.insert(record(id="m", content="mine", tags=("t1", "t2"), source="chat://1"))
        theirs = tx.insert(record(id="t", content="theirs", namespace="other"))
    rows = store.retrieval.rows(_scope(), [mine.seq, theirs.seq])
    assert list(rows) == [mine.seq]
    row = rows[mine.seq]
    assert (row.id, row.content, row.tags, row.source, row.index_state) == (
        "m",
        "mine",
        ("t1", "t2"),
        "chat://1",
        "indexed",
    )
    assert store.retrieval.rows(_scope(), []) == {}


def test_retrieval_neighbours_are_the_same_source_in_order(store: Store) -> None:
    with store.transaction() as tx:
        turns = [
            tx.insert(
                record(
                    id=f"t{index}",
                    content=f"turn {index}?" if index == 2 else f"turn {index}",
                    source="chat://1",
                    at=NOW + timedelta(minutes=index),
                )
            )
            for index in range(4)
        ]
        tx.insert(record(id="x", content="another chat", source="chat://2", at=NOW))
        tx.insert(record(id="y", content="no source", at=NOW + timedelta(minutes=1)))
        tx.insert(record(id="z", content="other tenant", namespace="other", source="chat://1"))
        # Inserted last but timed between t1 and t2: the order is by time, then seq.
        late = tx.insert(
            record(id="late", content="late", source="chat://1", at=NOW + timedelta(minutes=1))
        )
    names = {turn.seq: turn.id for turn in turns} | {late.seq: "late"}
    found = store.retrieval.neighbours(_scope(), [*names])

    def ids(seq: int) -> tuple[str | None, str | None]:
        pair = found[seq]
        return (
            None if pair.previous is None else names[pair.previous.seq],
            None if pair.next is None else names[pair.next.seq],
        )

    assert {names[seq]: ids(seq) for seq in found} == {
        "t0": (None, "t1"),
        "t1": ("t0", "late"),
        "late": ("t1", "t2"),
        "t2": ("late", "t3"),
        "t3": ("t2", None),
    }
    after_question = found[turns[3].seq].previous
    assert after_question is not None
    assert after_question.asks
    before_question = found[turns[2].seq].previous
    assert before_question is not None
    assert not before_question.asks
    assert store.retrieval.neighbours(_scope("other"), [*names]) == {}


def test_retrieval_neighbours_ask_without_a_question_mark(store: Store) -> None:
    # People text questions without "?": "what did u name him" asks, "what a day" does not.
    texts = ["Jess: what did u name him", "biscuit", "what a day", "did you get the job", "yes"]
    with store.transaction() as tx:
        written = [
            tx.insert(
                record(id=f"m{index}", content=text, source="chat://1", at=NOW + timedelta(index))
            )
            for index, text in enumerate(texts)
        ]
    found = store.retrieval.neighbours(_scope(), [memory.seq for memory in written])
    asked = {}
    for position in (1, 3, 4):
        previous = found[written[position].seq].previous
        assert previous is not None
        asked[texts[position - 1]] = previous.asks
    assert asked == {
        "Jess: what did u name him": True,
        "what a day": False,
        "did you get the job": True,
    }


def test_retrieval_neighbours_give_their_speaker_and_time(store: Store) -> None:
    # What tells a chat message that goes on from the one before it (retrieval.turns).
    with store.transaction() as tx:
        first = tx.insert(
            record(
                id="a", content="ran my first 5k", speaker="Jess", source="c", at=NOW, kind="turn"
            )
        )
        second = tx.insert(
            record(id="b", content="31 mins", source="c", at=NOW + timedelta(minutes=1, seconds=5))
        )
    found = store.retrieval.neighbours(_scope(), [first.seq, second.seq])
    before, after = found[second.seq].previous, found[first.seq].next
    assert before is not None
    assert after is not None
    assert (before.speaker, after.speaker) == ("Jess", None)
    # Whether each is a conversation's turn, as a neighbour and as the memory itself.
    assert (before.turn, after.turn) == (True, False)
    assert (found[first.seq].turn, found[second.seq].turn) == (True, False)
    assert before.at_utc is not None
    assert after.at_utc is not None
    assert from_storage(before.at_utc) == NOW
    assert from_storage(after.at_utc) == NOW + timedelta(minutes=1, seconds=5)


def test_retrieval_neighbours_skip_expired_memories(store: Store) -> None:
    with store.transaction() as tx:
        first = tx.insert(record(id="a", content="first", source="s", at=NOW))
        tx.insert(
            record(
                id="b",
                content="gone",
                source="s",
                at=NOW + timedelta(minutes=1),
                expires_at=NOW + timedelta(hours=1),
            )
        )
        third = tx.insert(
            record(id="c", content="third", source="s", at=NOW + timedelta(minutes=2))
        )
    later = _scope(now=NOW + timedelta(hours=2))
    following = store.retrieval.neighbours(later, [first.seq])[first.seq].next
    assert following is not None
    assert following.seq == third.seq


def test_retrieval_document_counts_stay_inside_the_namespace_and_cap(store: Store) -> None:
    with store.transaction() as tx:
        for index in range(12):
            tx.insert(record(id=f"d{index}", content="shared word apple"))
        tx.insert(record(id="o", content="apple apple", namespace="other"))
    retrieval = store.retrieval
    assert retrieval.document_counts(["default"], ["apple", "pear"], 1_000) == {
        "apple": 12,
        "pear": 0,
    }
    assert retrieval.document_counts(["default"], ["apple"], 5) == {"apple": 5}
    assert retrieval.document_counts(["other"], ["apple"], 1_000) == {"apple": 1}
    assert retrieval.document_counts(["default", "other"], ["apple"], 1_000) == {"apple": 13}
    assert retrieval.document_counts([], ["apple"], 1_000) == {}


def test_retrieval_document_counts_tell_look_alike_namespaces_apart(store: Store) -> None:
    # Names a word tokenizer would split into the same words, or that start alike.
    namespaces = ["team-a", "team_a", "team a", "team", "team/alice", "Café", "cafe"]
    with store.transaction() as tx:
        for position, namespace in enumerate(namespaces):
            for index in range(position + 1):
                tx.insert(record(id=f"{position}-{index}", content="apple", namespace=namespace))
    retrieval = store.retrieval
    for position, namespace in enumerate(namespaces):
        assert retrieval.document_counts([namespace], ["apple"], 1_000) == {"apple": position + 1}
    assert retrieval.document_counts(["team", "cafe"], ["apple"], 1_000) == {"apple": 4 + 7}
    # A namespace's own name is no word of its memories.
    assert retrieval.document_counts(["team"], ["team"], 1_000) == {"team": 0}


def test_retrieval_tokenizes_like_the_index(store: Store) -> None:
    assert store.retrieval.tokenize("Running Zürich") == ["run", "zurich"]
    assert store.retrieval.tokenize("") == []


def test_recall_ranks_a_small_corpus_the_same_on_every_store(
    store_settings: Settings, tmp_path: Path
) -> None:
    corpus = [
        ("I bought sourdough at the bakery on Elm Street", "Caroline"),
        ("The bakery closes at six on Sundays", "Melanie"),
        ("We talked about the hiking trip to the lake", "Caroline"),
        ("My sister adopted a second cat", "Melanie"),
        ("Bread prices went up again this month", "Caroline"),
    ]
    queries = ["where does Caroline buy bread", "when does the bakery close", "cat"]
    reference = Settings(db=tmp_path / "reference.db", embedder="none", graph_extractor="rules")

    def rankings(settings: Settings) -> list[list[tuple[float, str]]]:
        with MemoryService.open(settings) as service:
            for content, speaker in corpus:
                service.remember(content, speaker=speaker, source="chat://1")
            # Compared to 4 decimals, so scores that round alike are sorted by text (exact
            # ties go oldest first on every store: the test below).
            return [
                sorted(
                    ((round(hit.score, 4), hit.memory.content) for hit in service.recall(query)),
                    key=lambda item: (-item[0], item[1]),
                )
                for query in queries
            ]

    expected = rankings(reference)
    assert expected[0]
    assert expected[1][0][1] == corpus[1][0]
    assert rankings(store_settings) == expected


def test_recall_breaks_equal_scores_by_seq_on_every_store(store_settings: Settings) -> None:
    # Equal scores come back oldest first (by seq) and a repeated text is answered by its
    # oldest memory, whatever order the index handed the candidates over in (SQLite's
    # order under a filter follows its plan).
    with MemoryService.open(store_settings) as service:
        for number in range(8):
            service.remember(
                f"event number {number % 4} at the boundary",
                id=f"tie-{number}",
                at=f"2026-01-0{9 - number}T00:00:00Z",  # the later written, the earlier
            )
        for filters in (None, {"since": "2025-12-31T00:00:00Z"}, {"kind": "note"}):
            hits = service.search("event boundary", filters=filters, min_score=0, limit=10)
            assert len({hit.score for hit in hits}) == 1
            assert [hit.memory.id for hit in hits] == [f"tie-{number}" for number in range(4)]
            assert all(hit.channels["duplicates"] == 1.0 for hit in hits)
            first = service.search("event boundary", filters=filters, min_score=0, limit=1)
            assert [hit.memory.id for hit in first] == ["tie-0"]
        explained = service.explain("event boundary", "tie-2", min_score=0, limit=2)
        assert (explained.stage, explained.rank) == ("beyond_limit", 3)


def test_equal_keyword_scores_keep_the_oldest_at_the_candidate_cut_on_every_store(
    store_settings: Settings,
) -> None:
    # More tied matches than the keyword channel takes: each store cuts its candidates
    # oldest first too, so the same memory answers on both (PostgreSQL kept the newest,
    # SQLite the oldest, and the final order could not mend what the cut left out).
    settings = store_settings.model_copy(update={"keyword_candidates": 2})
    with MemoryService.open(settings) as service:
        for number, word in enumerate(["alpha", "bravo", "charlie", "delta"]):
            service.remember(f"event {word} at the boundary", id=f"cut-{number}")
        hits = service.search("event boundary", mode="keyword", min_score=0, limit=4)
        assert [hit.memory.id for hit in hits] == ["cut-0", "cut-1"]
        left_out = service.explain("event boundary", "cut-3", mode="keyword", min_score=0)
        assert left_out.stage == "not_in_pool"
        assert left_out.rank == 3  # after both tied hits recall found


def test_retrieval_leaves_common_words_to_the_rarer_ones(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A word in COMMON_WORD_MEMORIES memories is common: 4 here instead of 1,000.
    monkeypatch.setattr(sqlite_retrieval, "COMMON_WORD_MEMORIES", 4)
    monkeypatch.setattr(postgres_retrieval, "COMMON_WORD_MEMORIES", 4)
    with store.transaction() as tx:
        for index in range(5):
            tx.insert(record(id=f"tea{index}", content=f"green tea number {index}"))
        tx.insert(record(id="kettle", content="the kettle for the tea"))

    def found(words: list[str], limit: int = 50) -> list[str]:
        candidates = store.retrieval.keyword_candidates(_scope(), "", words, limit)
        return [candidate.row.id for candidate in candidates]

    # "tea" is in 6 memories: the rarer "kettle" finds the candidates on its own.
    assert found(["tea", "kettle"]) == ["kettle"]
    # Only common words: the memories holding all of them first, then the newest of the rest.
    both = found(["green", "tea"], 7)
    assert set(both[:5]) == {f"tea{index}" for index in range(5)}
    assert both[5:] == ["kettle"]
    with store.transaction() as tx:
        for index in range(4):
            tx.insert(record(id=f"cup{index}", content=f"a cup {index}"))
    assert found(["cup", "tea"], 3) == ["cup3", "cup2", "cup1"]
    # A word that no memory holds is not a rarer word: the others still find candidates.
    assert found(["xyzzy", "kettle"]) == ["kettle"]
    assert set(found(["xyzzy", "green", "tea"], 5)) == {f"tea{index}" for index in range(5)}
    assert found(["xyzzy", "plugh"]) == []


def test_retrieval_keyword_candidates_of_a_small_namespace_among_many_matches(
    store: Store,
) -> None:
    # SQLite ranks matches by the index alone and then reads a few more rows than asked
    # for: matches of other namespaces and expired ones must never take the places of
    # the scope's own best matches.
    with store.transaction() as tx:
        for index in range(300):
            tx.insert(record(id=f"big{index}", content=f"apple {index}", namespace="big"))
        tx.insert(record(id="s-short", content="apple tart recipe", namespace="small"))
        tx.insert(
            record(
                id="s-long",
                content="an apple in a long sentence about an orchard visit",
                namespace="small",
            )
        )
        tx.insert(record(id="s-none", content="pear only", namespace="small"))
        for index in range(40):
            tx.insert(
                record(
                    id=f"gone{index}",
                    content=f"plum {index}",
                    expires_at=NOW - timedelta(seconds=1),
                )
            )
        for index in range(5):
            tx.insert(record(id=f"plum{index}", content=f"a plum kept in a longer note {index}"))
    retrieval = store.retrieval

    def found(scope: Scope, word: str, limit: int) -> list[str]:
        return [c.row.id for c in retrieval.keyword_candidates(scope, "", [word], limit)]

    assert found(_scope("small"), "apple", 2) == ["s-short", "s-long"]
    assert found(_scope("small"), "apple", 10) == ["s-short", "s-long"]
    assert len(found(_scope("big"), "apple", 100)) == 100
    assert set(found(_scope("big", "small"), "apple", 400)) == {
        *(f"big{index}" for index in range(300)),
        "s-short",
        "s-long",
    }
    # The 40 expired plums rank above the live ones (shorter): all five live ones come.
    assert sorted(found(_scope(), "plum", 5)) == [f"plum{index}" for index in range(5)]
    assert len(found(_scope(include_expired=True), "plum", 45)) == 45


def test_retrieval_a_name_the_namespace_never_met_is_unseen(store: Store) -> None:
    # The reranker's unseen_name: the same on both stores, inside the query's namespaces,
    # speakers counted (a speaker's name is a searched field).
    with store.transaction() as tx:
        tx.insert(record(id="a", content="adopted a dog called Rex", speaker="Caroline"))
        tx.insert(record(id="b", content="Jean-Luc plays chess", namespace="club"))
    retrieval = store.retrieval
    lexicon = time_terms(retrieval.tokenize)

    def unseen(text: str, *namespaces: str) -> bool:
        keywords = prepare_query(
            retrieval,
            namespaces or ("default",),
            text,
            query_terms(text, 64),
            KeywordParameters(),
            lexicon,
        )
        return keywords.unseen_name

    assert not unseen("What dog did Caroline adopt?")
    assert unseen("What dog did Jean-Luc adopt?")
    assert not unseen("What dog did Jean-Luc adopt?", "club")
    assert not unseen("What did Caroline's dog do in May?")
