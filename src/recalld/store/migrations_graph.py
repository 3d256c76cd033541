"""SQLite migration 24: an extracted entity's name and type follow its remaining mentions.

Listed in :data:`recalld.store.migrations.MIGRATIONS` with the others; PostgreSQL's
migration 24 (:mod:`recalld.store.postgres_migrations_graph`) builds the same.
"""

from __future__ import annotations

from recalld.store.sqlite_fts import Execute

__all__ = ["GENERIC_AT_MIGRATION_24", "migration_24"]

# The generic types of recalld.graph.types when this migration was written: a migration
# keeps what it built, whatever later versions call generic.
GENERIC_AT_MIGRATION_24 = "('name', 'tag', 'topic', 'unknown')"


def _mentions(alias: str, condition: str = "") -> str:
    return f"FROM graph_mentions {alias} WHERE {alias}.entity_id = old.entity_id" + (
        f" AND {condition}" if condition else ""
    )


# After a mention of an undeclared entity goes (or changes its spelling or type): when no
# mention left carries the entity's name, the name becomes the spelling of the earliest
# memory still mentioning it; when none carries its type, the type becomes the earliest
# specific type left (else the earliest). So the name and type are always said by a
# memory that still names the entity, never only by one forgotten, updated or purged.
NAME_LOST = (
    f"name = old.surface AND NOT EXISTS (SELECT 1 {_mentions('k', 'k.surface = old.surface')})"
)
TYPE_LOST = f"type = old.type AND NOT EXISTS (SELECT 1 {_mentions('k', 'k.type = old.type')})"
RENAME = f"""
    UPDATE graph_entities SET
        name = CASE WHEN {NAME_LOST}
            THEN (SELECT f.surface {_mentions("f")} ORDER BY f.seq LIMIT 1) ELSE name END,
        type = CASE WHEN {TYPE_LOST}
            THEN coalesce(
                (SELECT f.type {_mentions("f", f"f.type NOT IN {GENERIC_AT_MIGRATION_24}")}
                    ORDER BY f.seq LIMIT 1),
                (SELECT f.type {_mentions("f")} ORDER BY f.seq LIMIT 1))
            ELSE type END
    WHERE id = old.entity_id AND declared = 0 AND EXISTS (SELECT 1 {_mentions("f")})
        AND (({NAME_LOST}) OR ({TYPE_LOST}));
"""


def migration_24(execute: Execute) -> None:
    """An extracted entity's name and type are those of a memory that still mentions it.

    The name was the spelling of the first memory extracted that named the entity,
    and stayed when that memory was forgotten, updated or purged while others still
    named it (review 50a, finding 2). Each mention now keeps the type its memory
    gave, and triggers re-derive an undeclared entity's name and type when the last
    mention carrying them goes or changes (a declared entity keeps what was
    declared). Existing mentions take their entity's type; an existing name no
    mention carries (already left by a forgotten memory) is re-derived here.
    """
    execute("ALTER TABLE graph_mentions ADD COLUMN type TEXT NOT NULL DEFAULT 'unknown'")
    execute(
        "UPDATE graph_mentions SET type ="
        " (SELECT e.type FROM graph_entities e WHERE e.id = graph_mentions.entity_id)"
    )
    execute(
        "UPDATE graph_entities SET name = (SELECT f.surface FROM graph_mentions f"
        " WHERE f.entity_id = graph_entities.id ORDER BY f.seq LIMIT 1)"
        " WHERE declared = 0"
        " AND EXISTS (SELECT 1 FROM graph_mentions f WHERE f.entity_id = graph_entities.id)"
        " AND NOT EXISTS (SELECT 1 FROM graph_mentions k WHERE k.entity_id = graph_entities.id"
        " AND k.surface = graph_entities.name)"
    )
    execute(
        f"CREATE TRIGGER graph_mentions_rename AFTER DELETE ON graph_mentions BEGIN {RENAME} END"
    )
    execute(
        "CREATE TRIGGER graph_mentions_respelled AFTER UPDATE OF surface, type ON graph_mentions"
        " WHEN old.surface IS NOT new.surface OR old.type IS NOT new.type"
        f" BEGIN {RENAME} END"
    )
