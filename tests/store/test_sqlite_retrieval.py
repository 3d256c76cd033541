"""The store's side of recall: speaker in FTS, neighbours by source, capped term counts."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import apsw
import pytest

from recalld.errors import StorageError
from recalld.store import sqlite_fts_query, sqlite_retrieval
from recalld.store.base import MemoryRecord, Scope
from recalld.store.migrations import (
    FTS_TABLE,
    MIGRATIONS,
    fts_namespace_token,
    migration_11,
    migration_13,
)
from recalld.store.sqlite import SQLiteStore

START = datetime(2026, 1, 1, tzinfo=UTC)


def _record(
    id: str,
    content: str,
    *,
    namespace: str = "default",
    source: str | None = None,
    at: datetime | None = None,
    speaker: str | None = None,
    expires_at: datetime | None = None,
) -> MemoryRecord:
    return MemoryRecord(
        id=id,
        namespace=namespace,
        content=content,
        created_at=START,
        updated_at=START,
        source=source,
        at=at or START,
        speaker=speaker,
        expires_at=expires_at,
    )


@pytest.fixture
def two_connections(tmp_path: Path) -> Iterator[tuple[SQLiteStore, SQLiteStore]]:
    """Two stores on one file: the one under test and another connection that writes."""
    path = tmp_path / "shared.db"
    store, other = SQLiteStore(path), SQLiteStore(path)
    yield store, other
    other.close()
    store.close()


def _scope(namespace: str = "default", now: datetime = START) -> Scope:
    return Scope(namespaces=(namespace,), now=now)


def _candidate_ids(
    store: SQLiteStore, words: list[str], limit: int, scope: Scope | None = None
) -> list[str]:
    """The ids of the keyword candidates of ``words``, in their order."""
    found = store.retrieval.keyword_candidates(scope or _scope(), "", words, limit)
    return [candidate.row.id for candidate in found]


def test_sqlite_speaker_is_stored_and_searched(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    with store.transaction() as tx:
        memory = tx.insert(_record("a", "see you at the bakery", speaker="Caroline"))
        tx.insert(_record("b", "Caroline said hi", speaker="Melanie"))
    assert memory.speaker == "Caroline"
    found = store.retrieval.keyword_candidates(_scope(), "", ["caroline"], 10)
    assert {candidate.row.id for candidate in found} == {"a", "b"}
    assert {candidate.row.speaker for candidate in found} == {"Caroline", "Melanie"}
    columns = [row[1] for row in store._connection().execute(f"PRAGMA table_info({FTS_TABLE})")]
    assert columns == [
        "title",
        "content",
        "tags",
        "speaker",
        "place_name",
        "key",
        "fts_namespace",
        "fts_grams",
    ]
    with store.transaction() as tx:
        tx.replace(memory.seq, _record("a", "see you at the bakery", speaker="Dana"))
    assert [c.row.id for c in store.retrieval.keyword_candidates(_scope(), "", ["dana"], 5)] == [
        "a"
    ]
    store._connection().execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES('integrity-check')")
    store.close()


def _old_fts_layout(path: Path, text_columns: str) -> apsw.Connection:
    """Replace the file's FTS table with an older layout of ``text_columns`` (triggers gone)."""
    connection = apsw.Connection(str(path))
    for trigger in ("memories_fts_insert", "memories_fts_delete", "memories_fts_update"):
        connection.execute(f"DROP TRIGGER {trigger}")
    connection.execute(f"DROP TABLE {FTS_TABLE}")
    connection.execute(
        f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5({text_columns},"
        " content='memories', content_rowid='seq')"
    )
    return connection


def test_sqlite_old_fts_layout_is_rebuilt_with_speaker(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store = SQLiteStore(path)
    with store.transaction() as tx:
        tx.insert(_record("a", "written before the speaker column", speaker="Ana"))
    store.close()
    # The layout before the speaker migration: three columns; its record removed.
    connection = _old_fts_layout(path, "title, content, tags")
    speaker_version = MIGRATIONS.index(migration_11) + 1
    connection.execute("DELETE FROM schema_migrations WHERE version = ?", (speaker_version,))
    connection.execute("ALTER TABLE memories DROP COLUMN speaker")
    connection.execute("DROP INDEX memories_source_order")
    connection.close()
    store = SQLiteStore(path)
    assert store.schema_version == len(MIGRATIONS)
    hits = store.retrieval.keyword_candidates(_scope(), "", ["written"], 5)
    assert [candidate.row.id for candidate in hits] == ["a"]
    assert hits[0].row.speaker is None
    store.close()


def test_sqlite_common_words_rank_only_the_newest_memories_holding_them_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_retrieval, "COMMON_WORD_MEMORIES", 2)
    monkeypatch.setattr(sqlite_retrieval, "COMMON_MATCH_WINDOW", 3)
    store = SQLiteStore(tmp_path / "w.db")
    with store.transaction() as tx:
        # The oldest holds both words most often: BM25's favourite, outside the window.
        tx.insert(_record("old", "green tea green tea green tea"))
        for index in range(4):
            tx.insert(_record(f"new{index}", f"green tea and a long sentence number {index}"))
        # Newer matches of another namespace do not narrow this namespace's window.
        for index in range(3):
            tx.insert(_record(f"far{index}", "green tea", namespace="elsewhere"))
    assert set(_candidate_ids(store, ["green", "tea"], 3)) == {"new1", "new2", "new3"}
    monkeypatch.setattr(sqlite_retrieval, "COMMON_MATCH_WINDOW", 1_000)
    assert _candidate_ids(store, ["green", "tea"], 1) == ["old"]
    store.close()


def test_sqlite_common_words_rank_by_frequency_and_skip_what_the_scope_hides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_retrieval, "COMMON_WORD_MEMORIES", 2)
    store = SQLiteStore(tmp_path / "r.db")
    with store.transaction() as tx:
        once = _record("once", "green tea, once, in a sentence of some length")
        tx.insert(dataclasses.replace(once, kind="fact"))
        tx.insert(_record("twice", "green tea green tea"))
        tx.insert(
            _record("gone", "green tea green tea green tea", expires_at=START - timedelta(days=1))
        )
        for index in range(20):
            tx.insert(_record(f"plain{index}", f"green tea and sentence {index} of the day"))

    def found(limit: int, scope: Scope | None = None) -> list[str]:
        return _candidate_ids(store, ["green", "tea"], limit, scope)

    # More occurrences in a shorter memory rank first; the expired one never shows.
    assert found(2) == ["twice", "plain19"]
    assert "gone" not in found(30)
    assert len(found(30)) == 22
    # A kind filter that only the lowest-ranked match passes: rows are read further down
    # the ranking until it is found (past the first chunk of limit + 8).
    assert found(22)[-1] == "once"
    assert found(1, Scope(namespaces=("default",), now=START, kind="fact")) == ["once"]
    store.close()


def test_sqlite_common_words_under_a_tag_filter_look_among_the_tagged_memories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window of memories holding every common word is taken among those the tag
    filters let through: newer untagged ones no longer fill it and leave none."""
    monkeypatch.setattr(sqlite_retrieval, "COMMON_WORD_MEMORIES", 2)
    monkeypatch.setattr(sqlite_retrieval, "COMMON_MATCH_WINDOW", 3)
    store = SQLiteStore(tmp_path / "tags.db")
    with store.transaction() as tx:
        # The only tagged memory holding both words, older than everything else.
        tx.insert(dataclasses.replace(_record("trip", "green tea by the lake"), tags=("trip",)))
        # "rare-trip" holds the phrase "trip" without being the tag: read and left out.
        tx.insert(dataclasses.replace(_record("near", "green tea again"), tags=("rare-trip",)))
        for index in range(4):  # newer memories holding both words, untagged
            tx.insert(_record(f"untagged{index}", f"green tea on day {index}"))
        for index in range(3):  # newer tagged memories holding only one of the words
            tx.insert(dataclasses.replace(_record(f"tea{index}", f"tea {index}"), tags=("trip",)))
    trips = Scope(namespaces=("default",), now=START, tags_any=("trip",))
    assert _candidate_ids(store, ["green", "tea"], 2, trips)[0] == "trip"
    assert "near" not in _candidate_ids(store, ["green", "tea"], 10, trips)
    both = Scope(namespaces=("default",), now=START, tags_all=("trip", "rare-trip"))
    assert _candidate_ids(store, ["green", "tea"], 2, both) == []
    # A tag with no index term cannot be looked up in the index: the rows decide alone.
    with store.transaction() as tx:
        tx.insert(dataclasses.replace(_record("symbol", "green tea"), tags=("%%",)))
    symbols = Scope(namespaces=("default",), now=START, tags_any=("%%",))
    assert _candidate_ids(store, ["green", "tea"], 2, symbols) == ["symbol"]
    store.close()


@pytest.mark.parametrize(
    "tag", ['he said "hi"', "a*b", "x:y", "(paren)", "^caret", "NEAR", "café", "🎉 party", "c++"]
)
def test_sqlite_any_tag_text_is_safe_in_the_full_text_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tag: str
) -> None:
    """A tag is quoted into the FTS5 match: FTS5's syntax in it is text, never an error."""
    monkeypatch.setattr(sqlite_retrieval, "COMMON_WORD_MEMORIES", 1)
    store = SQLiteStore(tmp_path / "quoted.db")
    with store.transaction() as tx:
        tx.insert(dataclasses.replace(_record("tagged", "green tea"), tags=(tag,)))
        tx.insert(_record("plain", "green tea"))
    for scope in (
        Scope(namespaces=("default",), now=START, tags_any=(tag,)),
        Scope(namespaces=("default",), now=START, tags_all=(tag,)),
    ):
        assert _candidate_ids(store, ["green", "tea"], 5, scope) == ["tagged"]
    store.close()


def test_sqlite_newest_walk_of_a_small_namespace_finds_its_own_older_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk over the newest memories holding any word keeps to the scope's namespace
    inside the full-text match: another namespace's newer matches take no place."""
    monkeypatch.setattr(sqlite_retrieval, "COMMON_WORD_MEMORIES", 1)
    monkeypatch.setattr(sqlite_retrieval, "COMMON_MATCH_WINDOW", 1)
    store = SQLiteStore(tmp_path / "small.db")
    with store.transaction() as tx:
        for index in range(3):
            tx.insert(_record(f"mine{index}", f"green {index}", namespace="small"))
        for index in range(30):
            tx.insert(_record(f"theirs{index}", f"green tea {index}", namespace="big"))
    small = Scope(namespaces=("small",), now=START)
    # No memory of "small" holds both words: every candidate comes from the newest walk.
    assert _candidate_ids(store, ["green", "tea"], 5, small) == ["mine2", "mine1", "mine0"]
    store.close()


def test_sqlite_big_namespace_walls_out_the_few_others_by_their_terms(
    two_connections: tuple[SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A namespace holding most memories keeps its matches by the NOT of the few other
    namespaces' terms (their lists are short): the same candidates and counts as with
    its own term, and a namespace another connection adds later is walled out too."""
    monkeypatch.setattr(sqlite_retrieval, "COMMON_WORD_MEMORIES", 2)
    monkeypatch.setattr(sqlite_retrieval, "COMMON_MATCH_WINDOW", 4)
    store, other = two_connections
    with store.transaction() as tx:
        for index in range(12):  # the newest four hold one of the words only
            text = f"green tea {index}" if index < 8 else f"green {index}"
            tx.insert(_record(f"big{index}", text, namespace="big"))
        for index in range(3):  # newer matches of a small namespace
            tx.insert(_record(f"small{index}", "green tea", namespace="small"))
    retrieval = store.retrieval
    big, small = Scope(namespaces=("big",), now=START), Scope(namespaces=("small",), now=START)
    assert retrieval._namespace_narrow(["big"]).startswith(" NOT ")
    assert retrieval._namespace_narrow(["small"]).startswith(" AND ")
    assert retrieval._namespace_narrow(["big", "small"]) == ""

    def seen() -> tuple[list[str], list[str], dict[str, int]]:
        return (
            _candidate_ids(store, ["green", "tea"], 4, big),
            _candidate_ids(store, ["green", "tea"], 4, small),
            retrieval.document_counts(["big"], ["green"], 1_000),
        )

    found = seen()
    # The window of the big namespace's newest memories holding both words is its own.
    assert set(found[0]) == {"big4", "big5", "big6", "big7"}
    assert set(found[1]) == {"small0", "small1", "small2"}
    assert found[2] == {"green": 12}
    # More other namespaces than a NOT may name: each namespace's own term, same answers.
    monkeypatch.setattr(sqlite_fts_query, "NOT_NAMESPACES", 0)
    with store.transaction() as tx:  # (any write: the kept clauses go)
        tx.insert(_record("x", "unrelated", namespace="big"))
    assert retrieval._namespace_narrow(["big"]).startswith(" AND ")
    assert seen() == found
    monkeypatch.setattr(sqlite_fts_query, "NOT_NAMESPACES", 8)
    assert retrieval._namespace_narrow(["big"]).startswith(" AND ")  # kept until a write
    # Another connection adds a namespace: the NOT names it from then on.
    with other.transaction() as tx:
        for index in range(2):
            tx.insert(_record(f"third{index}", "green tea", namespace="third"))
    narrow = retrieval._namespace_narrow(["big"])
    assert fts_namespace_token("small") in narrow
    assert fts_namespace_token("third") in narrow
    assert seen() == found


def test_sqlite_common_words_leave_out_a_word_most_memories_hold(
    two_connections: tuple[SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_retrieval, "COMMON_WORD_MEMORIES", 2)
    monkeypatch.setattr(sqlite_retrieval, "WORD_SAMPLE_ROWS", 10)
    store, other = two_connections
    with store.transaction() as tx:
        tx.insert(_record("old", "green tea"))
        for index in range(2):
            tx.insert(_record(f"both{index}", f"green tea on day {index}"))
        for index in range(12):
            tx.insert(_record(f"day{index}", f"day {index} item"))

    # "day" is in every one of the newest memories: the others decide which memories
    # hold "all" the words, so the oldest one (no "day") is among them.
    assert set(_candidate_ids(store, ["day", "green", "tea"], 3)) == {
        "old",
        "both0",
        "both1",
    }
    # When every word is held by most memories, the least held one is kept.
    assert _candidate_ids(store, ["day", "item"], 1) == ["day11"]

    # Which words most of the newest memories hold is kept between recalls until the
    # file changes: after another connection's writes, "green" and "tea" are those
    # words, and "day" alone narrows the walk (kept shares would still drop "day").
    with other.transaction() as tx:
        for index in range(12):
            tx.insert(_record(f"tea{index}", f"green tea number {index}"))
    assert set(_candidate_ids(store, ["day", "green", "tea"], 3)) == {
        "day9",
        "day10",
        "day11",
    }


def test_sqlite_word_counts_follow_every_write(
    two_connections: tuple[SQLiteStore, SQLiteStore],
) -> None:
    store, other = two_connections
    retrieval = store.retrieval
    assert retrieval.document_counts(["default"], ["appl"], 1_000) == {"appl": 0}
    with store.transaction() as tx:
        tx.insert(_record("a", "apple"))
    # This connection's own write.
    assert retrieval.document_counts(["default"], ["appl"], 1_000) == {"appl": 1}
    with other.transaction() as tx:
        tx.insert(_record("b", "apple pie"))
        tx.insert(_record("c", "apple", namespace="elsewhere"))
    # Another connection's commit.
    assert retrieval.document_counts(["default"], ["appl"], 1_000) == {"appl": 2}
    assert retrieval.document_counts(["elsewhere"], ["appl"], 1_000) == {"appl": 1}
    with other.transaction() as tx:
        tx.delete(2)
    assert retrieval.document_counts(["default"], ["appl"], 1_000) == {"appl": 1}


def test_sqlite_index_without_namespace_terms_is_rebuilt_with_them(tmp_path: Path) -> None:
    path = tmp_path / "twelve.db"
    store = SQLiteStore(path)
    with store.transaction() as tx:
        tx.insert(_record("a", "pear and apple"))
        tx.insert(_record("b", "apple", namespace="other"))
    store.close()
    # The layout of schema version 12: four text columns, no namespace term.
    connection = _old_fts_layout(path, "title, content, tags, speaker")
    connection.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES('rebuild')")
    version = MIGRATIONS.index(migration_13) + 1
    connection.execute("DELETE FROM schema_migrations WHERE version = ?", (version,))
    connection.execute(f"PRAGMA user_version = {version - 1}")
    connection.execute("ALTER TABLE memories DROP COLUMN fts_namespace")
    connection.close()
    store = SQLiteStore(path)
    assert store.schema_version == len(MIGRATIONS)
    retrieval = store.retrieval
    assert retrieval.document_counts(["default"], ["appl"], 1_000) == {"appl": 1}
    assert retrieval.document_counts(["other"], ["appl", "pear"], 1_000) == {"appl": 1, "pear": 0}
    with store.transaction() as tx:
        tx.insert(_record("c", "apple pie", namespace="other"))
    assert retrieval.document_counts(["other"], ["appl"], 1_000) == {"appl": 2}
    store._connection().execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES('integrity-check')")
    store.close()


def test_sqlite_neighbours_are_the_same_source_in_order(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "n.db")
    with store.transaction() as tx:
        rows = [
            tx.insert(
                _record(
                    f"t{index}",
                    f"turn {index}?" if index == 2 else f"turn {index}",
                    source="chat://1",
                    at=START + timedelta(minutes=index),
                )
            )
            for index in range(4)
        ]
        tx.insert(_record("x", "another chat", source="chat://2", at=START + timedelta(minutes=1)))
        tx.insert(_record("y", "no source at all", at=START + timedelta(minutes=1)))
        tx.insert(_record("z", "other tenant", namespace="other", source="chat://1", at=START))
        # Inserted last but timed between t1 and t2: order is by time, then seq.
        late = tx.insert(
            _record("late", "late arrival", source="chat://1", at=START + timedelta(minutes=1))
        )
    found = store.retrieval.neighbours(_scope(), [row.seq for row in rows] + [late.seq])
    order = {row.seq: row.id for row in rows} | {late.seq: "late"}

    def ids(seq: int) -> tuple[str | None, str | None]:
        pair = found[seq]
        return (
            None if pair.previous is None else order[pair.previous.seq],
            None if pair.next is None else order[pair.next.seq],
        )

    assert {order[seq]: ids(seq) for seq in found} == {
        "t0": (None, "t1"),
        "t1": ("t0", "late"),
        "late": ("t1", "t2"),
        "t2": ("late", "t3"),
        "t3": ("t2", None),
    }
    after_question = found[rows[3].seq].previous
    assert after_question is not None
    assert after_question.asks  # "turn 2?" asks a question; the others do not
    before_question = found[rows[2].seq].previous
    assert before_question is not None
    assert not before_question.asks
    plan = " ".join(
        str(row)
        for row in store._connection().execute(
            "EXPLAIN QUERY PLAN SELECT p.seq FROM memories p WHERE p.namespace = 'default'"
            " AND p.source = 'chat://1' AND (p.at_utc, p.seq) < ('2026', 3)"
            " ORDER BY p.at_utc DESC, p.seq DESC LIMIT 1"
        )
    )
    assert "memories_source_order" in plan
    store.close()


def test_sqlite_neighbours_skip_expired_memories(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "e.db")
    with store.transaction() as tx:
        first = tx.insert(_record("a", "first", source="s", at=START))
        tx.insert(
            _record(
                "b",
                "gone",
                source="s",
                at=START + timedelta(minutes=1),
                expires_at=START + timedelta(hours=1),
            )
        )
        tx.insert(_record("c", "third", source="s", at=START + timedelta(minutes=2)))
    later = _scope(now=START + timedelta(hours=2))
    pair = store.retrieval.neighbours(later, [first.seq])[first.seq]
    assert pair.next is not None
    following = store.get(later, seq=pair.next.seq)
    assert following is not None
    assert following.id == "c"
    store.close()


def test_sqlite_document_counts_stay_inside_the_namespace_and_cap(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "c.db")
    with store.transaction() as tx:
        for index in range(12):
            tx.insert(_record(f"d{index}", "shared word apple"))
    # One namespace in the store (counted from the index alone), then two (joined rows).
    alone = store.retrieval.document_counts(["default"], ["apple", "pear"], 1_000)
    with store.transaction() as tx:
        tx.insert(_record("o", "apple apple", namespace="other"))
    assert alone == {"apple": 12, "pear": 0}
    counts = store.retrieval.document_counts(["default"], ["apple", "pear"], 1_000)
    assert counts == {"apple": 12, "pear": 0}
    assert store.retrieval.document_counts(["default"], ["apple"], 5) == {"apple": 5}
    assert store.retrieval.document_counts(["other"], ["apple"], 1_000) == {"apple": 1}
    assert store.retrieval.tokenize("Running Zürich") == ["run", "zurich"]
    store.close()


def test_sqlite_keyword_candidates_leave_common_words_to_the_rarer_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A word in COMMON_WORD_MEMORIES memories is common: 4 here instead of 1,000.
    monkeypatch.setattr(sqlite_retrieval, "COMMON_WORD_MEMORIES", 4)
    store = SQLiteStore(tmp_path / "s.db")
    with store.transaction() as tx:
        for index in range(5):
            tx.insert(_record(f"tea{index}", f"green tea number {index}"))
        tx.insert(_record("kettle", "the kettle for the tea"))
        tx.insert(_record("other", "a kettle in another namespace", namespace="elsewhere"))

    def found(words: list[str]) -> set[str]:
        return {c.row.id for c in store.retrieval.keyword_candidates(_scope(), "", words, 50)}

    # "tea" is in 6 memories: the rarer "kettle" finds the candidates on its own.
    assert found(["tea", "kettle"]) == {"kettle"}
    # Only common words: the memories holding all of them, best first...
    ranked = store.retrieval.keyword_candidates(_scope(), "", ["tea", "green"], 3)
    assert {c.row.id for c in ranked} <= {f"tea{index}" for index in range(5)}
    assert len(ranked) == 3
    # ...then, while there is room, the newest memories holding any of them.
    with store.transaction() as tx:
        for index in range(4):
            tx.insert(_record(f"cup{index}", f"a cup {index}"))
    limited = store.retrieval.keyword_candidates(_scope(), "", ["cup", "tea"], 3)
    assert [c.row.id for c in limited] == ["cup3", "cup2", "cup1"]
    both = store.retrieval.keyword_candidates(_scope(), "", ["green", "tea"], 7)
    assert [c.row.id for c in both][5:] == ["kettle"]  # all five "green tea", then the rest
    assert found(["cup", "green"]) == {f"cup{i}" for i in range(4)} | {f"tea{i}" for i in range(5)}
    # Under the threshold nothing is left out.
    monkeypatch.setattr(sqlite_retrieval, "COMMON_WORD_MEMORIES", 1_000)
    assert found(["tea", "kettle"]) == {"kettle"} | {f"tea{index}" for index in range(5)}
    store.close()


def test_sqlite_visible_seqs_read_a_long_list_and_refuse_one_they_cannot_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteStore(tmp_path / "list.db")
    with store.transaction() as tx:
        seqs = [tx.insert(_record(f"m{index}", f"note {index}")).seq for index in range(1_500)]
        tx.insert(_record("other", "elsewhere", namespace="other"))
    assert sorted(store.semantic.visible_seqs(_scope())) == seqs
    # The seqs come as one comma-separated text: one numpy cannot read to its end is an
    # error, never a shorter list.
    monkeypatch.setattr(store.semantic, "_read", lambda sql, params: [("12,13,x4",)])
    with pytest.raises(StorageError, match="visible memories"):
        store.semantic.visible_seqs(_scope())
    store.close()
