"""Numbered schema migrations for the PostgreSQL store (the same numbers as SQLite's).

Migration ``n`` here builds what SQLite's ``migration_<n>`` builds, in
PostgreSQL's own types: ``timestamptz`` instants, ``jsonb`` tags and meta,
``halfvec`` vectors (pgvector), a generated, weighted ``tsvector`` for full-text
search. Each runs in its own transaction under an advisory lock (several servers
may start at once), and the version is recorded in ``schema_migrations``.

Where SQLite polls, PostgreSQL pushes: migrations 4 and 5 add triggers that
``NOTIFY`` :data:`CHANGES_CHANNEL` when core memory or a pending queue changes,
so a subscriber on any server hears of a change made on any other.

When another issue adds a SQLite migration, the same number is added here (an
empty one if PostgreSQL needs nothing), so both stores report one version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from recalld._text import content_hash
from recalld.store.migrations_spelling import postgres_migration_28, postgres_migration_29
from recalld.store.migrations_trimmed import postgres_migration_31
from recalld.store.postgres_migrations_counters import migration_15, migration_16, migration_17
from recalld.store.postgres_migrations_entities import migration_30
from recalld.store.postgres_migrations_graph import migration_24
from recalld.store.postgres_migrations_jobs import queue_again
from recalld.store.postgres_migrations_ledger import migration_25, migration_27
from recalld.store.postgres_migrations_words import (
    SEARCH_CONFIGURATION,
    migration_26,
    migration_32,
)

__all__ = ["CHANGES_CHANNEL", "MIGRATIONS", "SEARCH_CONFIG", "SEARCH_CONFIGURATION"]

Execute = Callable[[str], Any]
CHANGES_CHANNEL = "recalld_changes"
# Snowball English stemming (the Porter family, like the SQLite index) for content and
# titles; tags are matched with the same configuration so "meeting" finds "meetings".
SEARCH_CONFIG = "english"
# SEARCH_CONFIGURATION (recalld_search, from migration 23 on) is defined with migration 26.


def migration_1(execute: Execute) -> None:
    """Memories, their tags, the weighted full-text vector, and the indexes every query needs.

    ``at`` is stored as its instant (``at_utc``) and the offset it was given
    (``at_offset``, seconds east of UTC), so its local time of day survives.
    ``search`` weighs the title (A) over content (B) and tags (C).
    """
    execute(
        f"""
        CREATE TABLE memories (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            namespace TEXT NOT NULL,
            key TEXT,
            title TEXT,
            content TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'note',
            category TEXT,
            tags JSONB NOT NULL DEFAULT '[]',
            salience DOUBLE PRECISION,
            source TEXT,
            at_utc TIMESTAMPTZ,
            at_offset INTEGER,
            created_at TIMESTAMPTZ NOT NULL,
            updated_at TIMESTAMPTZ NOT NULL,
            expires_at TIMESTAMPTZ,
            lat DOUBLE PRECISION,
            lon DOUBLE PRECISION,
            geohash TEXT,
            place_name TEXT,
            meta JSONB NOT NULL DEFAULT '{{}}',
            access_count INTEGER NOT NULL DEFAULT 0,
            last_accessed_at TIMESTAMPTZ,
            index_state TEXT NOT NULL DEFAULT 'queued',
            search TSVECTOR GENERATED ALWAYS AS (
                setweight(to_tsvector('{SEARCH_CONFIG}', coalesce(title, '')), 'A')
                || setweight(to_tsvector('{SEARCH_CONFIG}', content), 'B')
                || setweight(jsonb_to_tsvector('{SEARCH_CONFIG}', tags, '["string"]'), 'C')
            ) STORED
        )
        """
    )
    execute("CREATE UNIQUE INDEX memories_namespace_key ON memories(namespace, key)")
    execute("CREATE INDEX memories_namespace_created ON memories(namespace, created_at, seq)")
    execute("CREATE INDEX memories_namespace_updated ON memories(namespace, updated_at, seq)")
    execute("CREATE INDEX memories_namespace_at ON memories(namespace, at_utc)")
    execute("CREATE INDEX memories_expires ON memories(expires_at) WHERE expires_at IS NOT NULL")
    execute("CREATE INDEX memories_geohash ON memories(namespace, geohash text_pattern_ops)")
    execute("CREATE INDEX memories_search ON memories USING gin(search)")
    execute(
        """
        CREATE TABLE memory_tags (
            seq BIGINT NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (seq, tag)
        )
        """
    )
    execute("CREATE INDEX memory_tags_tag ON memory_tags(tag, seq)")


def migration_2(execute: Execute) -> None:
    """API tokens: only a SHA-256 of each token is kept, with its namespace scopes."""
    execute(
        """
        CREATE TABLE tokens (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            token_hash TEXT NOT NULL,
            scopes JSONB NOT NULL,
            created_at TIMESTAMPTZ NOT NULL,
            last_used_at TIMESTAMPTZ,
            revoked_at TIMESTAMPTZ
        )
        """
    )
    execute("CREATE INDEX tokens_active ON tokens(revoked_at)")


def migration_3(execute: Execute) -> None:
    """Semantic recall: jobs, vectors (``halfvec``, with their model), their change log, workers.

    Vectors of every model share one table; each model gets its own partial
    HNSW index over ``embedding::halfvec(<dimension>)`` (cosine) when its first
    vector is stored (:mod:`recalld.store.postgres_semantic`). ``vector_log``
    keeps the change sequence a process-local index may catch up from.
    """
    execute(
        """
        CREATE TABLE jobs (
            id TEXT PRIMARY KEY,
            seq BIGINT NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            kind TEXT NOT NULL DEFAULT 'embed',
            model TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'queued',
            attempts INTEGER NOT NULL DEFAULT 0,
            run_after TIMESTAMPTZ NOT NULL,
            lease_owner TEXT,
            lease_until TIMESTAMPTZ,
            last_error TEXT,
            created_at TIMESTAMPTZ NOT NULL,
            updated_at TIMESTAMPTZ NOT NULL,
            completed_at TIMESTAMPTZ
        )
        """
    )
    execute("CREATE INDEX jobs_claim ON jobs(state, run_after)")
    execute("CREATE INDEX jobs_seq ON jobs(seq, model, state)")
    execute(
        """
        CREATE TABLE vectors (
            seq BIGINT NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            model TEXT NOT NULL,
            dimension INTEGER NOT NULL,
            text_hash TEXT NOT NULL,
            embedding HALFVEC NOT NULL,
            PRIMARY KEY (seq, model)
        )
        """
    )
    execute(
        """
        CREATE TABLE vector_log (
            change BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            seq BIGINT NOT NULL,
            model TEXT NOT NULL
        )
        """
    )
    execute("CREATE INDEX vector_log_model ON vector_log(model, change)")
    execute(
        """
        CREATE FUNCTION recalld_vector_logged() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                INSERT INTO vector_log(seq, model) VALUES (OLD.seq, OLD.model);
                RETURN OLD;
            END IF;
            INSERT INTO vector_log(seq, model) VALUES (NEW.seq, NEW.model);
            RETURN NEW;
        END $$
        """
    )
    execute(
        "CREATE TRIGGER vectors_logged AFTER INSERT OR UPDATE OR DELETE ON vectors"
        " FOR EACH ROW EXECUTE FUNCTION recalld_vector_logged()"
    )
    execute(
        """
        CREATE TABLE workers (
            id TEXT PRIMARY KEY,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            model TEXT NOT NULL,
            state TEXT NOT NULL,
            started_at TIMESTAMPTZ NOT NULL,
            heartbeat_at TIMESTAMPTZ NOT NULL,
            processed INTEGER NOT NULL DEFAULT 0,
            failed INTEGER NOT NULL DEFAULT 0
        )
        """
    )


def migration_4(execute: Execute) -> None:
    """Core memory: the ordered entries of each (namespace, target), with a change counter.

    A trigger notifies :data:`CHANGES_CHANNEL` (``core:<namespace>``) on every change.
    """
    execute(
        """
        CREATE TABLE core_memory (
            namespace TEXT NOT NULL,
            target TEXT NOT NULL,
            entries JSONB NOT NULL DEFAULT '[]',
            version BIGINT NOT NULL DEFAULT 0,
            updated_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (namespace, target)
        )
        """
    )
    execute(
        f"""
        CREATE FUNCTION recalld_core_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('{CHANGES_CHANNEL}', 'core:' || NEW.namespace);
            RETURN NEW;
        END $$
        """
    )
    execute(
        "CREATE TRIGGER core_memory_changed AFTER INSERT OR UPDATE ON core_memory"
        " FOR EACH ROW EXECUTE FUNCTION recalld_core_changed()"
    )


def migration_5(execute: Execute) -> None:
    """Involuntary recall: signal features and readings, trigger history, the pending queue.

    A trigger notifies :data:`CHANGES_CHANNEL` (``pending:<namespace>``) whenever a
    queued item is added or removed (drained, forgotten, cancelled).
    """
    execute(
        """
        CREATE TABLE memory_signals (
            seq BIGINT NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            channel TEXT NOT NULL,
            features BYTEA NOT NULL,
            PRIMARY KEY (seq, channel)
        )
        """
    )
    execute("CREATE INDEX memory_signals_channel ON memory_signals(channel, seq)")
    execute(
        """
        CREATE TABLE memory_biometrics (
            seq BIGINT NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            name TEXT NOT NULL,
            value DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (seq, name)
        )
        """
    )
    execute(
        """
        CREATE TABLE recollection_triggers (
            seq BIGINT NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            fired_at TIMESTAMPTZ NOT NULL,
            score DOUBLE PRECISION NOT NULL
        )
        """
    )
    execute("CREATE INDEX recollection_triggers_seq ON recollection_triggers(seq, fired_at)")
    execute(
        """
        CREATE TABLE pending_recollections (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            namespace TEXT NOT NULL,
            seq BIGINT NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            score DOUBLE PRECISION NOT NULL,
            channels JSONB NOT NULL,
            prompt_line TEXT NOT NULL,
            fired_at TIMESTAMPTZ NOT NULL
        )
        """
    )
    execute("CREATE INDEX pending_recollections_namespace ON pending_recollections(namespace, id)")
    execute("CREATE INDEX pending_recollections_seq ON pending_recollections(seq)")
    execute(
        f"""
        CREATE FUNCTION recalld_pending_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                PERFORM pg_notify('{CHANGES_CHANNEL}', 'pending:' || OLD.namespace);
                RETURN OLD;
            END IF;
            PERFORM pg_notify('{CHANGES_CHANNEL}', 'pending:' || NEW.namespace);
            RETURN NEW;
        END $$
        """
    )
    execute(
        "CREATE TRIGGER pending_recollections_changed"
        " AFTER INSERT OR DELETE ON pending_recollections"
        " FOR EACH ROW EXECUTE FUNCTION recalld_pending_changed()"
    )


def migration_6(execute: Execute) -> None:
    """Prospective memory: intentions, their triggers and signal streaks; reminders queued."""
    execute(
        """
        CREATE TABLE intentions (
            seq BIGINT PRIMARY KEY REFERENCES memories(seq) ON DELETE CASCADE,
            namespace TEXT NOT NULL,
            state TEXT NOT NULL,
            repeat TEXT NOT NULL,
            min_interval_seconds DOUBLE PRECISION NOT NULL DEFAULT 0,
            zone TEXT NOT NULL,
            scheduled BOOLEAN NOT NULL,
            expires_at TIMESTAMPTZ,
            next_due TIMESTAMPTZ,
            last_fired_at TIMESTAMPTZ,
            fire_count INTEGER NOT NULL DEFAULT 0,
            created_at TIMESTAMPTZ NOT NULL,
            updated_at TIMESTAMPTZ NOT NULL
        )
        """
    )
    execute(
        "CREATE INDEX intentions_due ON intentions(next_due)"
        " WHERE state = 'active' AND next_due IS NOT NULL"
    )
    execute("CREATE INDEX intentions_namespace ON intentions(namespace, state, seq)")
    execute(
        """
        CREATE TABLE intention_triggers (
            seq BIGINT NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            namespace TEXT NOT NULL,
            type TEXT NOT NULL,
            term TEXT,
            low_lat DOUBLE PRECISION,
            high_lat DOUBLE PRECISION,
            low_lon DOUBLE PRECISION,
            high_lon DOUBLE PRECISION,
            spec JSONB NOT NULL,
            PRIMARY KEY (seq, position)
        )
        """
    )
    execute(
        "CREATE INDEX intention_triggers_term ON intention_triggers(namespace, type, term)"
        " WHERE term IS NOT NULL"
    )
    execute(
        "CREATE INDEX intention_triggers_place ON intention_triggers(namespace, low_lat, high_lat)"
        " WHERE low_lat IS NOT NULL"
    )
    execute(
        """
        CREATE TABLE intention_streaks (
            seq BIGINT NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            count INTEGER NOT NULL,
            last_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (seq, position)
        )
        """
    )
    execute(
        "ALTER TABLE pending_recollections ADD COLUMN kind TEXT NOT NULL DEFAULT 'recollection'"
    )
    execute("ALTER TABLE pending_recollections ADD COLUMN details JSONB")


def migration_7(execute: Execute) -> None:
    """Knowledge graph: entities, mentions, observations, relations and their sources.

    As on SQLite, triggers drop an undeclared entity once its last mention goes
    and an undeclared relation once its last source goes (forget cascades fire them).
    """
    execute(
        """
        CREATE TABLE graph_entities (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            name TEXT NOT NULL,
            type TEXT NOT NULL,
            declared BOOLEAN NOT NULL DEFAULT FALSE,
            created_at TIMESTAMPTZ NOT NULL,
            updated_at TIMESTAMPTZ NOT NULL
        )
        """
    )
    execute("CREATE UNIQUE INDEX graph_entities_key ON graph_entities(namespace, key)")
    execute("CREATE INDEX graph_entities_type ON graph_entities(namespace, lower(type), key)")
    execute(
        """
        CREATE TABLE graph_mentions (
            entity_id BIGINT NOT NULL REFERENCES graph_entities(id) ON DELETE CASCADE,
            seq BIGINT NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            surface TEXT NOT NULL,
            count INTEGER NOT NULL DEFAULT 1,
            PRIMARY KEY (entity_id, seq)
        )
        """
    )
    execute("CREATE INDEX graph_mentions_seq ON graph_mentions(seq, entity_id)")
    execute(
        """
        CREATE TABLE graph_observations (
            entity_id BIGINT NOT NULL REFERENCES graph_entities(id) ON DELETE CASCADE,
            seq BIGINT NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            PRIMARY KEY (entity_id, seq)
        )
        """
    )
    execute("CREATE INDEX graph_observations_seq ON graph_observations(seq, entity_id)")
    execute(
        """
        CREATE TABLE graph_relations (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            namespace TEXT NOT NULL,
            subject_id BIGINT NOT NULL REFERENCES graph_entities(id) ON DELETE CASCADE,
            predicate TEXT NOT NULL,
            object_id BIGINT NOT NULL REFERENCES graph_entities(id) ON DELETE CASCADE,
            declared BOOLEAN NOT NULL DEFAULT FALSE,
            created_at TIMESTAMPTZ NOT NULL
        )
        """
    )
    execute(
        "CREATE UNIQUE INDEX graph_relations_triple"
        " ON graph_relations(subject_id, predicate, object_id)"
    )
    execute("CREATE INDEX graph_relations_object ON graph_relations(object_id, predicate)")
    execute("CREATE INDEX graph_relations_namespace ON graph_relations(namespace, predicate)")
    execute(
        """
        CREATE TABLE graph_relation_sources (
            relation_id BIGINT NOT NULL REFERENCES graph_relations(id) ON DELETE CASCADE,
            seq BIGINT NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            at TIMESTAMPTZ,
            PRIMARY KEY (relation_id, seq)
        )
        """
    )
    execute("CREATE INDEX graph_relation_sources_seq ON graph_relation_sources(seq, relation_id)")
    execute(
        """
        CREATE TABLE graph_extracted (
            seq BIGINT PRIMARY KEY REFERENCES memories(seq) ON DELETE CASCADE,
            model TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            extracted_at TIMESTAMPTZ NOT NULL
        )
        """
    )
    execute("CREATE INDEX graph_extracted_model ON graph_extracted(model, seq)")
    execute("CREATE INDEX jobs_kind ON jobs(kind, model, state, run_after, id)")
    execute(
        """
        CREATE FUNCTION recalld_mention_orphan() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM graph_entities WHERE id = OLD.entity_id AND NOT declared
                AND NOT EXISTS (SELECT 1 FROM graph_mentions WHERE entity_id = OLD.entity_id);
            RETURN OLD;
        END $$
        """
    )
    execute(
        "CREATE TRIGGER graph_mentions_orphan AFTER DELETE ON graph_mentions"
        " FOR EACH ROW EXECUTE FUNCTION recalld_mention_orphan()"
    )
    execute(
        """
        CREATE FUNCTION recalld_source_orphan() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM graph_relations WHERE id = OLD.relation_id AND NOT declared
                AND NOT EXISTS
                (SELECT 1 FROM graph_relation_sources WHERE relation_id = OLD.relation_id);
            RETURN OLD;
        END $$
        """
    )
    execute(
        "CREATE TRIGGER graph_sources_orphan AFTER DELETE ON graph_relation_sources"
        " FOR EACH ROW EXECUTE FUNCTION recalld_source_orphan()"
    )


def migration_8(execute: Execute) -> None:
    """Compact vectors (issue 13). Vectors were ``halfvec`` from the start here, so only
    the biometric value index of the same SQLite migration is needed."""
    execute("CREATE INDEX memory_biometrics_value ON memory_biometrics(name, value, seq)")


def migration_9(execute: Execute) -> None:
    """Ids are unique per namespace, no longer across the whole database (issue 10).

    PostgreSQL drops the column's UNIQUE constraint in place (SQLite rebuilds
    the table); the constraint has PostgreSQL's default name.
    """
    execute("ALTER TABLE memories DROP CONSTRAINT IF EXISTS memories_id_key")
    execute("CREATE UNIQUE INDEX memories_namespace_id ON memories(namespace, id)")


def migration_10(execute: Execute) -> None:
    """Pending scrubs: content-dropping writes whose dead row versions may still be on disk.

    As on SQLite a forget, an overwrite or a purge records a row in its own
    transaction, here with that transaction's id (``xact``): the dead row
    versions it left can only be vacuumed away once no snapshot older than it
    is open anywhere (:mod:`recalld.store.postgres_scrub`). A row holds only
    why and when, never anything of the memory.
    """
    execute(
        """
        CREATE TABLE pending_scrubs (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            reason TEXT NOT NULL,
            recorded_at TIMESTAMPTZ NOT NULL,
            xact XID8 NOT NULL DEFAULT pg_current_xact_id()
        )
        """
    )


def migration_11(execute: Execute) -> None:
    """Speaker as a field (searchable), and the index that finds a memory's source neighbours.

    The generated ``search`` vector gains the speaker at weight D (PostgreSQL
    before 17 cannot change a generated column's expression, so the column and
    its GIN index are dropped and added again: the table is rewritten once).
    ``memories_source_order`` serves recall's neighbour lookup, as on SQLite.
    """
    execute("ALTER TABLE memories ADD COLUMN speaker TEXT")
    execute("ALTER TABLE memories DROP COLUMN search")
    execute(
        f"""
        ALTER TABLE memories ADD COLUMN search TSVECTOR GENERATED ALWAYS AS (
            setweight(to_tsvector('{SEARCH_CONFIG}', coalesce(title, '')), 'A')
            || setweight(to_tsvector('{SEARCH_CONFIG}', content), 'B')
            || setweight(jsonb_to_tsvector('{SEARCH_CONFIG}', tags, '["string"]'), 'C')
            || setweight(to_tsvector('{SEARCH_CONFIG}', coalesce(speaker, '')), 'D')
        ) STORED
        """
    )
    execute("CREATE INDEX memories_search ON memories USING gin(search)")
    execute(
        "CREATE INDEX memories_source_order ON memories(namespace, source, at_utc, seq)"
        " WHERE source IS NOT NULL"
    )


def migration_12(execute: Execute) -> None:
    """No silent duplicates (issue 14), as on SQLite.

    ``content_hash`` is the SHA-256 of a memory's content with its white space
    normalised (:func:`recalld._text.content_hash`, computed in Python so both
    stores hash exactly alike), indexed per namespace. Existing rows are hashed
    here, in pages by ``seq`` so a large table is not read into memory at once.
    """
    execute("ALTER TABLE memories ADD COLUMN content_hash TEXT")
    last = 0
    while True:
        rows = execute(
            f"SELECT seq, content FROM memories WHERE seq > {last} ORDER BY seq LIMIT 1000"
        ).fetchall()
        if not rows:
            break
        for seq, content in rows:
            # The digest is hexadecimal and the seq an integer: nothing to quote.
            execute(
                f"UPDATE memories SET content_hash = '{content_hash(content)}' WHERE seq = {seq}"
            )
        last = int(rows[-1][0])
    execute("CREATE INDEX memories_content_hash ON memories(namespace, content_hash)")


def migration_13(execute: Execute) -> None:
    """Nothing to do here: SQLite's migration 13 puts a namespace term in its FTS5 index
    so it can count a namespace's documents without row lookups. PostgreSQL's full-text
    index is a GIN over ``search`` with the namespace filtered by its B-tree in the same
    plan, so it needs no such column. The step exists so both stores' numbers stay equal.
    """
    del execute


def migration_14(execute: Execute) -> None:
    """Nothing to do here: SQLite's migration 14 stores each vector's model as a small id
    so five rows fit one of its pages; PostgreSQL keeps the name. The step exists so
    both stores' numbers stay equal.
    """
    del execute


def migration_18(execute: Execute) -> None:
    """As SQLite's migration 18: an experience's place name is searchable, at weight D
    with the speaker. The generated ``search`` column and its GIN index are dropped and
    added again (as in migration 11: the table is rewritten once)."""
    execute("ALTER TABLE memories DROP COLUMN search")
    execute(
        f"""
        ALTER TABLE memories ADD COLUMN search TSVECTOR GENERATED ALWAYS AS (
            setweight(to_tsvector('{SEARCH_CONFIG}', coalesce(title, '')), 'A')
            || setweight(to_tsvector('{SEARCH_CONFIG}', content), 'B')
            || setweight(jsonb_to_tsvector('{SEARCH_CONFIG}', tags, '["string"]'), 'C')
            || setweight(to_tsvector('{SEARCH_CONFIG}', coalesce(speaker, '')), 'D')
            || setweight(to_tsvector('{SEARCH_CONFIG}', coalesce(place_name, '')), 'D')
        ) STORED
        """
    )
    execute("CREATE INDEX memories_search ON memories USING gin(search)")


def migration_19(execute: Execute) -> None:
    """As SQLite's migration 19: an experience's place name is part of the text it is
    embedded from, so each model that has a vector of a memory with a place name queues
    it again, and the old vector goes now (``vector_log`` records it)."""
    queue_again(execute, "SELECT seq FROM memories WHERE coalesce(place_name, '') <> ''")


def migration_20(execute: Execute) -> None:
    """Nothing to do here: SQLite's migration 20 pads the years before 1000 an older
    version wrote as text; PostgreSQL keeps times as ``timestamptz``. The step exists so
    both stores' numbers stay equal.
    """
    del execute


def migration_21(execute: Execute) -> None:
    """As SQLite's migration 21: a key's words are searched, at weight A with the title
    (its separators ``.``, ``_``, ``-``, ``/`` and ``:`` read as spaces, so
    ``staging.region`` is two words, not a host name; by ``translate``, which reads
    characters whatever the database's locale, where a ``[:alnum:]`` class under the C
    locale took every letter beyond ASCII for punctuation); a place name's ``.``, ``/``,
    ``:`` and ``~`` too ("St.Kilda", "Pier39/Wharf"). The generated ``search`` column
    and its GIN index are added again."""
    execute("ALTER TABLE memories DROP COLUMN search")
    execute(
        f"""
        ALTER TABLE memories ADD COLUMN search TSVECTOR GENERATED ALWAYS AS (
            setweight(to_tsvector('{SEARCH_CONFIG}', coalesce(title, '')), 'A')
            || setweight(to_tsvector('{SEARCH_CONFIG}',
                translate(coalesce(key, ''), '._-/:', '     ')), 'A')
            || setweight(to_tsvector('{SEARCH_CONFIG}', content), 'B')
            || setweight(jsonb_to_tsvector('{SEARCH_CONFIG}', tags, '["string"]'), 'C')
            || setweight(to_tsvector('{SEARCH_CONFIG}', coalesce(speaker, '')), 'D')
            || setweight(to_tsvector('{SEARCH_CONFIG}',
                translate(coalesce(place_name, ''), './:~', '    ')), 'D')
        ) STORED
        """
    )
    execute("CREATE INDEX memories_search ON memories USING gin(search)")


def migration_22(execute: Execute) -> None:
    """As SQLite's migration 22: a key's words are part of the text a memory is embedded
    from, so memories with a key are queued again."""
    queue_again(execute, "SELECT seq FROM memories WHERE key IS NOT NULL")


def migration_23(execute: Execute) -> None:
    """Accents are folded by keyword search, as SQLite's index folds them ("Munchen" finds
    "München"): the search column is made again with :data:`SEARCH_CONFIGURATION`,
    English with the ``unaccent`` dictionary in front for words beyond ASCII. Without the
    ``unaccent`` extension (PostgreSQL's contrib; trusted, so a database owner may create
    it) the configuration is English alone and the server logs a warning; running
    ``CREATE EXTENSION unaccent`` and this mapping later adds the folding (README)."""
    execute(
        """
        DO $$
        BEGIN
            CREATE EXTENSION IF NOT EXISTS unaccent;
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'recalld: keyword search will not fold accents: %', SQLERRM;
        END $$
        """
    )
    execute(
        f"""
        DO $$
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = '{SEARCH_CONFIGURATION}'
                           AND cfgnamespace = current_schema()::regnamespace) THEN
                CREATE TEXT SEARCH CONFIGURATION {SEARCH_CONFIGURATION} (COPY = english);
            END IF;
        END $$
        """
    )
    execute(
        f"""
        DO $$
        DECLARE
            place TEXT;
        BEGIN
            -- The dictionary by its schema: the extension may live outside the search path.
            SELECT n.nspname INTO place FROM pg_ts_dict d
                JOIN pg_namespace n ON n.oid = d.dictnamespace
                WHERE d.dictname = 'unaccent' ORDER BY n.nspname = 'public' DESC LIMIT 1;
            IF place IS NOT NULL THEN
                EXECUTE format(
                    'ALTER TEXT SEARCH CONFIGURATION {SEARCH_CONFIGURATION} ALTER MAPPING'
                    ' FOR hword, hword_part, word WITH %I.unaccent, english_stem', place);
            END IF;
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'recalld: keyword search will not fold accents: %', SQLERRM;
        END $$
        """
    )
    config = SEARCH_CONFIGURATION
    execute("ALTER TABLE memories DROP COLUMN search")
    execute(
        f"""
        ALTER TABLE memories ADD COLUMN search TSVECTOR GENERATED ALWAYS AS (
            setweight(to_tsvector('{config}', coalesce(title, '')), 'A')
            || setweight(to_tsvector('{config}',
                translate(coalesce(key, ''), '._-/:', '     ')), 'A')
            || setweight(to_tsvector('{config}', content), 'B')
            || setweight(jsonb_to_tsvector('{config}', tags, '["string"]'), 'C')
            || setweight(to_tsvector('{config}', coalesce(speaker, '')), 'D')
            || setweight(to_tsvector('{config}',
                translate(coalesce(place_name, ''), './:~', '    ')), 'D')
        ) STORED
        """
    )
    execute("CREATE INDEX memories_search ON memories USING gin(search)")


MIGRATIONS: list[Callable[[Execute], None]] = [
    migration_1,
    migration_2,
    migration_3,
    migration_4,
    migration_5,
    migration_6,
    migration_7,
    migration_8,
    migration_9,
    migration_10,
    migration_11,
    migration_12,
    migration_13,
    migration_14,
    migration_15,
    migration_16,
    migration_17,
    migration_18,
    migration_19,
    migration_20,
    migration_21,
    migration_22,
    migration_23,
    migration_24,
    migration_25,
    migration_26,
    migration_27,
    postgres_migration_28,
    postgres_migration_29,
    migration_30,
    postgres_migration_31,
    migration_32,
]
