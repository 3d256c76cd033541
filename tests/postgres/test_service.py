"""The service on PostgreSQL: worker, hybrid recall in the database, recollections, forget."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from recalld.config import Settings
from recalld.errors import NotFoundError, ValidationError
from recalld.model import Filters
from recalld.service import MemoryService
from recalld.store import postgres_migrations
from recalld.store.postgres_migrations_graph import migration_24
from recalld.store.semantic import text_hash
from tests.conftest import FakeClock
from tests.postgres_server import LocalPostgres
from tests.semantic_support import (
    assert_another_namespace_changes_nothing,
    assert_another_namespace_keeps_the_best_match,
)

pytestmark = pytest.mark.postgres


@pytest.fixture
def memory(postgres_url: str, clock: FakeClock) -> Iterator[MemoryService]:
    # No catch-up before recall: these tests look at the queue before the worker runs
    # (test_postgres_recall_embeds_a_short_queue_first covers the catch-up).
    settings = Settings(
        db=postgres_url, embedder="hashing", graph_extractor="rules", recall_catch_up=0
    )
    with MemoryService.open(settings, clock=clock) as service:
        yield service


def test_postgres_recall_embeds_a_short_queue_first(postgres_url: str, clock: FakeClock) -> None:
    settings = Settings(db=postgres_url, embedder="hashing", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as service:
        service.remember("The staging database runs in Melbourne")
        assert service.status().queue["queued"] == 1
        hits = service.search("staging database Melbourne", limit=5)
        # The vector went to the database, and this very recall found it there.
        assert "vector" in hits[0].backends
        assert service.status().queue["queued"] == 0
        assert service.status().embeddings == {"hashing-256": 1}


def test_postgres_a_refused_explain_embeds_nothing(postgres_url: str, clock: FakeClock) -> None:
    # Review of stop 57, on the other store: explain refused for swapped bounds or a
    # memory not visible embeds nothing; a good one catches up and reports the new state.
    settings = Settings(db=postgres_url, embedder="hashing", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as service:
        queued = service.remember("The staging database runs in Melbourne")
        swapped = {"since": "2026-10-26T00:00:00Z", "until": "2026-10-25T00:00:00Z"}
        with pytest.raises(ValidationError):
            service.explain("staging", queued.id, filters=swapped)
        with pytest.raises(NotFoundError):
            service.explain("staging", "01NOTAMEMORYATALL0000000000")
        assert service.status().queue["queued"] == 1
        assert service.explain("staging", queued.id).index_state == "indexed"
        assert service.status().queue["queued"] == 0


def test_postgres_another_namespaces_common_word_changes_nothing_here(
    memory: MemoryService,
) -> None:
    # Fewer "crew" rows than the pool holds: ts_rank has no IDF, so 150 of them would
    # crowd the kayaking memory out of the candidates before "b" writes anything.
    assert_another_namespace_changes_nothing(memory, crew=60)
    assert_another_namespace_keeps_the_best_match(memory, mentions=300)


def test_postgres_worker_and_hybrid_recall_in_the_database(memory: MemoryService) -> None:
    memory.remember("The staging database runs in Melbourne", tags=["infra"], kind="fact")
    memory.remember("Grandma's apple pie needs cinnamon", tags=["food"])
    memory.remember("Production is in Sydney", namespace="other")
    before = memory.search("staging database", limit=5)
    assert before[0].backends == ["fts"]  # found by keyword before it is embedded
    report = memory.new_worker().run_until_idle()
    assert report.processed == 3
    assert memory.indexing.retriever.loaded_index() is None  # no per-process matrix
    hits = memory.search("staging database Melbourne", limit=5)
    assert hits[0].backends[:2] == ["fts", "vector"]
    assert 0.0 <= hits[-1].score <= hits[0].score <= 1.0
    # The fake embedder's cosines are weak evidence: the reranker's threshold is lifted.
    vector_only = memory.search("cinnamon apple", mode="vector", limit=5, min_score=0)
    assert vector_only[0].memory.content.startswith("Grandma")
    filtered = memory.search(
        "cinnamon apple", mode="vector", filters=Filters(tags_any=["infra"]), min_score=0
    )
    assert [hit.memory.content for hit in filtered] == ["The staging database runs in Melbourne"]
    assert all(hit.memory.namespace == "default" for hit in memory.search("Sydney", limit=5))
    status = memory.status()
    assert status.vector_backend == "database"
    assert status.keyword_backend == "postgres-fts"
    assert status.embeddings == {"hashing-256": 2}


def test_postgres_recollections_fire_once_and_drain(memory: MemoryService) -> None:
    experience = memory.recollections.remember(
        "Croissant with Léa; she is moving to Lyon",
        place={"lat": 48.8642, "lon": 2.3475},
        at="2026-11-04T08:10:00+01:00",
    )
    cue = memory.recollections.cue(text="Croissant with Léa", place={"lat": 48.8642, "lon": 2.3475})
    fired = memory.recollections.sense(cue)
    assert [item.memory.id for item in fired] == [experience.id]
    assert memory.recollections.sense(cue) == []  # habituated
    stored = memory.get(experience.id)
    assert stored.at is not None
    assert stored.at.isoformat() == "2026-11-04T08:10:00+01:00"
    (pending,) = memory.recollections.pending()
    assert pending.memory.id == experience.id
    assert memory.recollections.pending() == []


def test_postgres_forget_leaves_no_row_and_vacuum_full_rewrites_the_files(
    postgres_server: LocalPostgres, postgres_url: str, clock: FakeClock
) -> None:
    secret = "ZEBRA-CONTENT-4711 never to be found again"
    settings = Settings(
        db=postgres_url,
        embedder="hashing",
        graph_extractor="rules",
        postgres_vacuum_after_forget="full",
    )
    with MemoryService.open(settings, clock=clock) as service:
        kept = service.remember("an ordinary memory that stays")
        gone = service.remember(secret, tags=["zebra-tag"], meta={"note": secret})
        felt = service.recollections.remember(secret, place={"lat": 1.0, "lon": 1.0})
        service.new_worker().run_until_idle()
        assert service.forget(gone.id).deleted is True
        assert service.forget(felt.id).deleted is True
        with psycopg.connect(postgres_url) as connection:
            for table in ("memories", "memory_tags", "vectors", "jobs", "graph_mentions"):
                rows = connection.execute(f"SELECT * FROM {table}").fetchall()
                assert secret not in repr(rows)
            database_oid = connection.execute(
                "SELECT oid FROM pg_database WHERE datname = current_database()"
            ).fetchone()
            assert database_oid is not None
        assert service.get(kept.id).content.startswith("an ordinary")
    # VACUUM FULL rewrote every touched table into new files: the database's files hold
    # no byte of the forgotten content (the write-ahead log is the server's; see README).
    directory = Path(postgres_server.data) / "base" / str(database_oid[0])
    needle = secret.encode()
    for path in directory.iterdir():
        if path.is_file():
            assert needle not in path.read_bytes(), path


def test_postgres_a_nul_character_is_bad_input_not_a_storage_error(
    memory: MemoryService,
) -> None:
    # PostgreSQL's text and jsonb cannot hold U+0000: refused naming the field, and the
    # transaction stays usable, so an import goes on with its other lines. In meta it is
    # refused where every store refuses it (the service), naming its path.
    with pytest.raises(ValidationError) as meta:
        memory.remember("hello", meta={"a": "x\u0000y"})
    assert meta.value.field == "meta.a"
    report = memory.import_lines(
        [
            '{"content": "first", "meta": {"a": "\\u0000"}}',
            '{"content": "second"}',
        ]
    )
    assert report.created == 1
    assert [error.line for error in report.errors] == [1]
    # A lookup or a filter holding one is bad input too, not a 503.
    with pytest.raises(ValidationError):
        memory.get("abc\u0000def")
    with pytest.raises(ValidationError):
        memory.list_memories(filters=Filters(category="\u0000"))
    assert [m.content for m in memory.list_memories().memories] == ["second"]


def test_postgres_recall_searches_the_period_a_question_names(
    postgres_url: str, clock: FakeClock
) -> None:
    # clock: Sunday 2026-10-25, so "last weekend" is October 17-18. One vector candidate
    # only: the hike (no word in common with the question) joins through the database's
    # own nearest-neighbour query narrowed to the period.
    settings = Settings(
        db=postgres_url,
        embedder="hashing",
        graph_extractor="rules",
        recall_catch_up=0,
        vector_candidates=1,
    )
    with MemoryService.open(settings, clock=clock) as service:
        service.remember_many(
            [
                {
                    "content": f"Paid the bills, week {number}",
                    "at": f"2026-09-{number + 1:02d}T10:00:00Z",
                }
                for number in range(12)
            ]
        )
        hiked = service.remember("Hiked Mount Tamalpais with Sam", at="2026-10-17T11:00:00Z")
        service.new_worker().run_until_idle()
        explained = service.explain("What did I do last weekend?", hiked.id)
        assert explained.stage != "not_in_pool"
        assert "vector" in explained.found_by
        assert explained.features["in_period"] == 1.0
        hits = service.recall("What did I do last weekend?", limit=20, min_score=0)
        assert {hit.channels["period"] for hit in hits if hit.memory.id != hiked.id} == {0.0}
        # A month named without a year is the latest one the database holds a memory of.
        camping = service.remember("Went camping by the lake", at="2023-06-20T10:00:00Z")
        service.new_worker().run_until_idle()
        assert service.explain("Where did I go in June?", camping.id).features["in_period"] == 1.0


def test_postgres_place_name_migration_queues_those_memories_again(
    memory: MemoryService, postgres_url: str, clock: FakeClock
) -> None:
    # As SQLite's migration 19: vectors made before it lack the place's name.
    kyoto = memory.recollections.remember(
        "Ate ramen with Ken", place={"lat": 35.0116, "lon": 135.7681, "name": "Kyoto"}
    )
    plain = memory.remember("The staging database runs in Melbourne")
    memory.new_worker().run_until_idle()
    assert memory.status().embeddings == {"hashing-256": 2}
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        postgres_migrations.migration_19(connection.execute)
        jobs = connection.execute(
            "SELECT seq, model, state FROM jobs WHERE kind = 'embed'"
        ).fetchall()
        kept = connection.execute("SELECT seq FROM vectors").fetchall()
    assert jobs == [(kyoto.seq, "hashing-256", "queued")]
    assert kept == [(plain.seq,)]
    assert memory.get(kyoto.id).index_state == "queued"
    # The migration queued its jobs on the server's clock, after this test's.
    clock.advance((datetime.now(UTC) - clock()).total_seconds() + 60)
    memory.new_worker().run_until_idle()
    assert memory.status().embeddings == {"hashing-256": 2}
    assert memory.get(kyoto.id).index_state == "indexed"


def test_postgres_a_vector_an_older_worker_made_without_the_key_is_made_again(
    memory: MemoryService, postgres_url: str
) -> None:
    colour = memory.remember("blue", key="user.favourite_colour")
    memory.new_worker().run_until_idle()
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(
            "UPDATE vectors SET text_hash = %s WHERE seq = %s",
            (text_hash(None, "blue"), colour.seq),
        )
    assert memory.new_worker().run_until_idle().processed == 1
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        stored = connection.execute(
            "SELECT text_hash FROM vectors WHERE seq = %s", (colour.seq,)
        ).fetchone()
    assert stored == (text_hash(None, "blue", None, "user.favourite_colour"),)


def test_postgres_without_unaccent_keyword_search_says_it_does_not_fold_accents(
    memory: MemoryService, postgres_url: str, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    # Migration 23 folds accents through the unaccent dictionary; a server without the
    # extension keeps English alone, and every store that opens it says so.
    memory.remember("Flew to München")
    assert [hit.memory.content for hit in memory.search("munchen", mode="keyword")] == [
        "Flew to München"
    ]
    config = postgres_migrations.SEARCH_CONFIGURATION
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(
            f"ALTER TEXT SEARCH CONFIGURATION {config}"
            " ALTER MAPPING FOR hword, hword_part, word WITH english_stem"
        )
    settings = Settings(db=postgres_url, embedder="none")
    with caplog.at_level("WARNING"), MemoryService.open(settings, clock=clock):
        pass
    assert any("does not fold accents" in record.getMessage() for record in caplog.records)

    # Restoring the mapping restores the folding for new writes (and rewritten rows).
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(
            f"ALTER TEXT SEARCH CONFIGURATION {config}"
            " ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem"
        )
    memory.remember("Drove to Zürich")
    assert [hit.memory.content for hit in memory.search("zurich", mode="keyword")] == [
        "Drove to Zürich"
    ]


def test_postgres_keyword_search_splits_words_at_a_no_break_space_or_dash(
    memory: MemoryService, caplog: pytest.LogCaptureFixture
) -> None:
    # The test server's databases are C.UTF-8, as a server's usually are: PostgreSQL's
    # parser then splits at non-ASCII punctuation as SQLite's index does.
    memory.remember("hello\u00a0world")
    memory.remember("coffee\u2014tea")
    assert [hit.memory.content for hit in memory.search("hello", mode="keyword")] == [
        "hello\u00a0world"
    ]
    assert [hit.memory.content for hit in memory.search("tea", mode="keyword")] == [
        "coffee\u2014tea"
    ]
    assert not any("ASCII characters only" in record.getMessage() for record in caplog.records)


def test_postgres_in_a_c_locale_database_says_words_split_at_ascii_only(
    postgres_server: LocalPostgres, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    # LC_CTYPE C: every non-ASCII character is a letter to the parser ("hello\u00a0world"
    # is one word). Search still works; every store that opens such a database says so.
    with psycopg.connect(postgres_server.url(), autocommit=True) as connection:
        connection.execute(
            "CREATE DATABASE ascii_ctype TEMPLATE template0 LC_CTYPE 'C' LC_COLLATE 'C'"
        )
    settings = Settings(db=postgres_server.url("ascii_ctype"), embedder="none")
    with caplog.at_level("WARNING"), MemoryService.open(settings, clock=clock) as memory:
        memory.remember("hello there")
        assert [hit.memory.content for hit in memory.search("hello", mode="keyword")] == [
            "hello there"
        ]
    warnings = [record.getMessage() for record in caplog.records]
    assert any("ASCII characters only" in text and "LC_CTYPE is C" in text for text in warnings)


def test_postgres_graph_names_migration_gives_each_name_a_memory_that_says_it(
    postgres_server: LocalPostgres,
) -> None:
    # As SQLite's migration 24, on a database an older version left at 23.
    url = postgres_server.create_database("graph_names_before_24")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
        for step in postgres_migrations.MIGRATIONS[:23]:
            step(connection.execute)
        for seq in (1, 2):
            connection.execute(
                "INSERT INTO memories(seq, id, namespace, content, created_at, updated_at,"
                " index_state) OVERRIDING SYSTEM VALUE"
                " VALUES (%s, %s, 'default', %s, now(), now(), 'indexed')",
                (seq, f"m{seq}", f"Kate, memory {seq}"),
            )
        # "KATE" was the spelling of a memory forgotten before names were re-derived.
        connection.execute(
            "INSERT INTO graph_entities(id, namespace, key, name, type, declared, created_at,"
            " updated_at) OVERRIDING SYSTEM VALUE"
            " VALUES (1, 'default', 'kate', 'KATE', 'person', FALSE, now(), now()),"
            " (2, 'default', 'ann', 'Ann (declared)', 'friend', TRUE, now(), now())"
        )
        connection.execute(
            "INSERT INTO graph_mentions(entity_id, seq, surface, count)"
            " VALUES (1, 2, 'kate', 1), (1, 1, 'Kate', 1), (2, 1, 'ann', 1)"
        )
        migration_24(connection.execute)
        entities = "SELECT id, name, type FROM graph_entities ORDER BY id"
        assert connection.execute(entities).fetchall() == [
            (1, "Kate", "person"),  # the earliest memory's spelling
            (2, "Ann (declared)", "friend"),
        ]
        assert connection.execute(
            "SELECT entity_id, seq, type FROM graph_mentions ORDER BY entity_id, seq"
        ).fetchall() == [(1, 1, "person"), (1, 2, "person"), (2, 1, "friend")]
        # From now on the trigger keeps it so: memory 1 goes, memory 2's spelling stays.
        connection.execute("DELETE FROM memories WHERE seq = 1")
        assert connection.execute(entities).fetchall() == [
            (1, "kate", "person"),
            (2, "Ann (declared)", "friend"),
        ]


def test_postgres_unaccent_installed_outside_the_search_path_still_folds(
    postgres_server: LocalPostgres, clock: FakeClock
) -> None:
    # A DBA's "extensions" schema: migration 23 named the dictionary unqualified, failed,
    # and the database could not be opened at all.
    url = postgres_server.create_database("unaccent_elsewhere")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
        connection.execute("CREATE SCHEMA extensions")
        connection.execute("CREATE EXTENSION unaccent SCHEMA extensions")
    settings = Settings(db=url, embedder="none")
    with MemoryService.open(settings, clock=clock) as service:
        service.remember("We met in München")
        hits = service.search("Munchen", mode="keyword")
        assert [hit.memory.content for hit in hits] == ["We met in München"]


@pytest.mark.slow
def test_postgres_scrub_vacuums_the_indexes_of_a_large_table(
    postgres_url: str, clock: FakeClock
) -> None:
    # PostgreSQL 14+ skips a VACUUM's index cleanup when under 2 % of a table's pages
    # hold dead rows: after one forget in a table of more than 50 pages, the forgotten
    # key stayed in its b-tree index though the scrub said "done" (review 52c).
    key = "zebra.scrub.4711"
    settings = Settings(db=postgres_url, embedder="none", graph_extractor="none")
    with MemoryService.open(settings, clock=clock) as service:
        filler = "an ordinary memory that stays, long enough to fill pages " * 4
        for start in range(0, 3_000, 500):
            service.remember_many(
                [{"content": f"{filler} {number}"} for number in range(start, start + 500)]
            )
        gone = service.remember("the code of the back gate", key=key)
        forgotten = service.forget(gone.id)
    assert (forgotten.deleted, forgotten.scrub) == (True, "done")
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
        row = connection.execute("SELECT pg_relation_size('memories') / 8192").fetchone()
        assert row is not None
        assert row[0] > 50  # where the bypass applies
        indexes = connection.execute(
            "SELECT i.indexrelid::regclass::text FROM pg_index i JOIN pg_class c"
            " ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam"
            " WHERE i.indrelid = 'memories'::regclass AND a.amname = 'btree'"
        ).fetchall()
        assert "memories_namespace_key" in {name for (name,) in indexes}
        # The index items, as bt_page_items shows their keys (hex bytes); the freed bytes
        # of a page are not overwritten (README: weaker than SQLite's "no byte left").
        needle = " ".join(f"{byte:02x}" for byte in key.encode())
        for (index,) in indexes:
            size = connection.execute("SELECT pg_relation_size(%s::regclass) / 8192", (index,))
            pages = size.fetchone()
            assert pages is not None
            for page in range(1, pages[0]):  # page 0 is the metapage
                items = connection.execute(
                    "SELECT data FROM bt_page_items(%s, %s)", (index, page)
                ).fetchall()
                assert not any(needle in (data or "") for (data,) in items), (index, page)


def test_postgres_explain_names_only_the_searches_that_ran(
    postgres_url: str, clock: FakeClock
) -> None:
    # Review of pass c58, on the other store: a stop-word query finds nothing without an
    # embedder, vector mode is refused there, and explain names only the channels asked.
    settings = Settings(db=postgres_url, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as service:
        cat = service.remember("The cat sleeps on the sofa in the living room").id
        service.remember("Staging database runs in the Melbourne region")
        assert service.search("the", min_score=0) == []
        assert service.search("the", mode="keyword", min_score=0)
        with pytest.raises(ValidationError) as refused:
            service.search("cat", mode="vector")
        assert refused.value.field == "mode"
        stop_words = service.explain("the", cat)
        assert stop_words.stage == "not_in_pool"
        assert "only stop words" in stop_words.reason
        assert "no embedder is configured" in stop_words.reason
    settings = Settings(db=postgres_url, embedder="hashing", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as service:
        keyword = service.explain("Melbourne staging", cat, mode="keyword")
        assert keyword.stage == "not_in_pool"
        assert "vectors are not searched in keyword mode" in keyword.reason
        assert "nearest vectors" not in keyword.reason


def test_postgres_a_model_served_at_another_dimension_under_its_name_is_re_embedded(
    postgres_url: str, clock: FakeClock
) -> None:
    # The old dimension's HNSW index refused every new vector (its cast), so each new
    # memory failed for good, and the old vectors stayed.
    from recalld.store.factory import open_store
    from tests.semantic_support import NamedEmbedder

    settings = Settings(
        db=postgres_url, embedder="hashing", graph_extractor="rules", recall_catch_up=0
    )

    def opened(dimension: int) -> MemoryService:
        embedder = NamedEmbedder("alias", dimension)
        return MemoryService(open_store(settings), settings, clock=clock, embedder=embedder)

    with opened(64) as service:
        first = service.remember("the kitchen is through the second door")
        service.new_worker().run_until_idle()
    with opened(32) as service:
        second = service.remember("the garden shed is behind the roses")
        report = service.new_worker().run_until_idle()
        assert (report.processed, report.failed_attempts) == (2, 0)
        kitchen = service.search("kitchen door", mode="vector", min_score=0)
        assert kitchen[0].memory.id == first.id
        shed = service.search("garden shed roses", mode="vector", min_score=0)
        assert shed[0].memory.id == second.id


def test_postgres_a_wrong_dimension_setting_keeps_the_stored_vectors(
    postgres_url: str, clock: FakeClock
) -> None:
    # A worker whose RECALLD_EMBEDDER_DIMENSION was wrong deleted every vector (and the
    # HNSW index) the rightly configured server had made, then failed every job.
    from recalld.store.factory import open_store
    from tests.semantic_support import MisstatedEmbedder, NamedEmbedder

    settings = Settings(
        db=postgres_url, embedder="hashing", graph_extractor="rules", recall_catch_up=0
    )

    def opened(embedder: NamedEmbedder) -> MemoryService:
        return MemoryService(open_store(settings), settings, clock=clock, embedder=embedder)

    with opened(NamedEmbedder("alias", 64)) as service:
        first = service.remember("the kitchen is through the second door")
        service.new_worker().run_until_idle()
    with opened(MisstatedEmbedder("alias", 64, says=32)) as service:
        assert service.new_worker().run_until_idle().processed == 0
        assert service.status().embeddings == {"alias": 1}
    with opened(NamedEmbedder("alias", 64)) as service:
        kitchen = service.search("kitchen door", mode="vector", min_score=0)
        assert [hit.memory.id for hit in kitchen] == [first.id]


def test_postgres_a_server_finds_the_vectors_another_process_re_embedded_at_a_new_dimension(
    postgres_url: str, clock: FakeClock
) -> None:
    # A server that had read the old dimension kept it: once a `recalld worker` process
    # had re-embedded the model at its new dimension, every query of the server's (of
    # that new dimension) was taken for a mismatch and found nothing until a restart.
    from recalld.store.factory import open_store
    from tests.semantic_support import NamedEmbedder

    settings = Settings(
        db=postgres_url, embedder="hashing", graph_extractor="rules", recall_catch_up=0
    )

    def opened(dimension: int) -> MemoryService:
        embedder = NamedEmbedder("alias", dimension)
        return MemoryService(open_store(settings), settings, clock=clock, embedder=embedder)

    with opened(64) as service:
        first = service.remember("the kitchen is through the second door")
        service.new_worker().run_until_idle()
    with opened(32) as server, opened(32) as worker:
        assert server.search("kitchen door", mode="vector", min_score=0) == []
        assert worker.new_worker().run_until_idle().processed == 1
        kitchen = server.search("kitchen door", mode="vector", min_score=0)
        assert [hit.memory.id for hit in kitchen] == [first.id]
