"""Keyword recall in scripts written without spaces (Chinese, Japanese, Korean, Thai): a word
found inside the run that holds it, on both stores, and English left as it was
(migration 32, :mod:`recalld.store.grams`; adversarial pass a69)."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from recalld._text import document_grams, grams_column, query_grams, query_terms
from recalld.config import Settings
from recalld.retrieval.keyword import document_terms
from recalld.service import MemoryService
from recalld.store.factory import open_store
from tests.conftest import FakeClock

NOTES = {
    "zh": "我昨天在北京吃了烤鸭",
    "ja": "東京で寿司を食べました",
    "ko": "서울에서 친구를 만났다",
    "mixed": "meeting with 田中さん at 3pm",
    "th": "ลูกสาวเรียนเปียโนทุกวันเสาร์",
    "de": "Ich habe in Berlin Kaffee getrunken",
    "en": "The cat sat on the mat",
}
# A word each note holds inside a run (or, for the last ones, as a word of its own).
QUERIES = [
    ("北京", "zh"),
    ("烤鸭", "zh"),
    ("北京烤鸭", "zh"),
    ("鸭", "zh"),
    ("寿司", "ja"),
    ("東京", "ja"),
    ("친구", "ko"),
    ("서울", "ko"),
    ("田中", "mixed"),
    ("เปียโน", "th"),
    ("3pm", "mixed"),
    ("meeting", "mixed"),
    ("Kaffee", "de"),
    ("cat", "en"),
]


def _first_hits(settings: Settings, clock: FakeClock) -> dict[str, str | None]:
    with MemoryService.open(settings, clock=clock) as service:
        ids = {service.remember(text).id: name for name, text in NOTES.items()}
        found: dict[str, str | None] = {}
        for query, _ in QUERIES:
            hits = service.search(query, limit=3)
            found[query] = ids[hits[0].memory.id] if hits else None
        return found


@pytest.fixture
def store_settings(any_database: Path | str) -> Settings:
    return Settings(db=any_database, embedder="none", graph_extractor="rules")


def test_recall_finds_a_word_inside_a_chinese_japanese_or_korean_run(
    store_settings: Settings, clock: FakeClock
) -> None:
    # Before: "北京", "寿司", "東京", "친구" found nothing, "烤鸭" found nothing with
    # embedder none (one FTS5 term per run of ideographs, kana or Hangul).
    found = _first_hits(store_settings, clock)
    assert found == {query: note for query, note in QUERIES}


def test_query_terms_split_a_run_into_character_pairs() -> None:
    assert query_terms("北京烤鸭", 16) == ["北京", "京烤", "烤鸭"]
    assert query_terms("meeting with 田中さん at 3pm", 16) == [
        "meeting",
        "田中",
        "中さ",
        "さん",
        "3pm",
    ]
    assert query_terms("서울에서", 16) == ["서울", "울에", "에서"]
    assert query_grams("鸭") == ["鸭"]
    assert query_grams("東京2020") == ["東京", "2020"]
    # Half-width katakana and Hangul typed as jamo are read as their usual spelling.
    assert query_grams("\uff7a\uff70\uff8b\uff70") == ["コー", "ーヒ", "ヒー"]
    assert query_grams("\u110e\u1175\u11ab\u1100\u116e") == ["친구"]
    # Thai's vowel signs and tone marks are left out (unicode61 cut the word at them).
    assert query_terms("เปียโน", 16) == ["เป", "ปย", "ยโ", "โน"]


def test_english_text_keeps_its_terms_and_stores_no_pairs(tmp_path: Path) -> None:
    text = "Caroline\u2019s café meeting at 3pm, naïve résumé; 1.2.3 — done"
    assert query_terms(text, 64) == [
        word.lower()
        for word in ("Caroline", "café", "meeting", "3pm", "naïve", "résumé", "1", "2", "3")
    ] + ["done"]
    assert document_grams(text) == []
    assert grams_column(text, None, "") is None
    store = open_store(Settings(db=tmp_path / "m.db", embedder="none"))
    try:
        assert document_terms(store.retrieval, text) == store.retrieval.tokenize(text)
    finally:
        store.close()


def test_a_memory_holds_its_runs_characters_and_pairs(tmp_path: Path) -> None:
    assert document_grams("東京2020で") == ["東", "京", "東京", "2020", "で"]
    store = open_store(Settings(db=tmp_path / "m.db", embedder="none"))
    try:
        terms = document_terms(store.retrieval, "Meetings in 東京")
        assert terms == ["meet", "in", "東", "京", "東京"]
    finally:
        store.close()


def test_the_file_needs_nothing_registered_to_be_written(db_path: Path, clock: FakeClock) -> None:
    # The pairs are a column the stock tokenizer reads: another SQLite (no recalld) can
    # still write memories (the index's triggers run) and search the file.
    settings = Settings(db=db_path, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as service:
        memory_id = service.remember("我昨天在北京吃了烤鸭").id
    connection = apsw.Connection(str(db_path))
    connection.execute("UPDATE memories SET title = 'trip' WHERE id = ?", (memory_id,))
    found = connection.execute(
        "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'fts_grams : 北京'"
    ).fetchall()
    connection.close()
    assert found == [(1,)]


def test_migration_32_finds_the_words_of_memories_stored_before_it(
    db_path: Path, clock: FakeClock
) -> None:
    settings = Settings(db=db_path, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as service:
        memory_id = service.remember("我昨天在北京吃了烤鸭", tags=["旅行"]).id
        service.remember("plain english note")
    connection = apsw.Connection(str(db_path))  # as a version before migration 32 left it
    for trigger in ("memories_fts_insert", "memories_fts_delete", "memories_fts_update"):
        connection.execute(f"DROP TRIGGER {trigger}")
    connection.execute("DROP TABLE memories_fts")
    connection.execute("ALTER TABLE memories DROP COLUMN fts_grams")
    connection.execute("DELETE FROM schema_migrations WHERE version = 32")
    connection.execute("PRAGMA user_version = 31")
    connection.close()
    with MemoryService.open(settings, clock=clock) as service:
        hits = service.search("北京", limit=3)
        assert [hit.memory.id for hit in hits] == [memory_id]
        assert [hit.memory.id for hit in service.search("旅", limit=3)] == [memory_id]
    connection = apsw.Connection(str(db_path))
    stored = connection.execute("SELECT fts_grams FROM memories ORDER BY seq").fetchall()
    connection.close()
    assert stored[1] == (None,)
    assert str(stored[0][0]).split()[:3] == ["我", "昨", "天"]


@pytest.mark.postgres
def test_postgres_migration_32_finds_the_words_of_memories_stored_before_it(
    postgres_url: str, clock: FakeClock
) -> None:
    import psycopg

    from recalld.store.postgres_migrations_words import migration_26, migration_32

    settings = Settings(db=postgres_url, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as service:
        memory_id = service.remember("서울에서 친구를 만났다").id
        service.remember("plain english note")
        with psycopg.connect(postgres_url, autocommit=True) as connection:
            # As a version before migration 32 left it: no pairs, the search column of 26.
            connection.execute("ALTER TABLE memories DROP COLUMN fts_grams CASCADE")
            connection.execute("ALTER TABLE memories ADD COLUMN search TSVECTOR")
            migration_26(connection.execute)
            assert service.search("친구", limit=3) == []
            migration_32(connection.execute)
        hits = service.search("친구", limit=3)
        assert [hit.memory.id for hit in hits] == [memory_id]


def test_an_edit_moves_the_pairs_with_the_text(any_database: Path | str, clock: FakeClock) -> None:
    settings = Settings(db=any_database, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as service:
        memory_id = service.remember("我昨天在北京吃了烤鸭").id
        service.update(memory_id, content="我今天在上海喝了咖啡")
        assert service.search("北京", limit=3) == []
        assert [hit.memory.id for hit in service.search("上海", limit=3)] == [memory_id]


def test_a_word_ranks_the_memories_holding_it_whole_first(
    store_settings: Settings, clock: FakeClock
) -> None:
    with MemoryService.open(store_settings, clock=clock) as service:
        apart = service.remember("北方的京城很冷").id  # 北 and 京, never side by side
        whole = service.remember("北京很大").id
        both = service.remember("在北京吃烤鸭").id
        assert {hit.memory.id for hit in service.search("北京", limit=5)} == {whole, both}
        ranked = [hit.memory.id for hit in service.search("北京烤鸭", limit=5)]
        assert ranked[0] == both
        assert apart not in ranked
        # One character finds every memory holding it, wherever it stands in its run.
        found = {hit.memory.id for hit in service.search("京", limit=5)}
        assert found == {apart, whole, both}
