"""PostgreSQL migration 24: an extracted entity's name and type follow its remaining
mentions (as SQLite's, :mod:`recalld.store.migrations_graph`). Listed in
:data:`recalld.store.postgres_migrations.MIGRATIONS` with the others.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["migration_24"]

Execute = Callable[[str], Any]


def migration_24(execute: Execute) -> None:
    """As SQLite's migration 24: each mention keeps the type its memory gave, and a trigger
    re-derives an undeclared entity's name and type when the last mention carrying them
    goes or changes (the earliest memory still naming it gives the spelling; the type is
    the earliest specific one left, else the earliest). Existing mentions take their
    entity's type; a name no mention carries is re-derived here."""
    generic = "ARRAY['name', 'tag', 'topic', 'unknown']"  # generic when this was written
    execute("ALTER TABLE graph_mentions ADD COLUMN type TEXT")
    execute(
        "UPDATE graph_mentions m SET type = e.type FROM graph_entities e WHERE e.id = m.entity_id"
    )
    execute("ALTER TABLE graph_mentions ALTER COLUMN type SET NOT NULL")
    execute(
        "UPDATE graph_entities e SET name = (SELECT f.surface FROM graph_mentions f"
        " WHERE f.entity_id = e.id ORDER BY f.seq LIMIT 1)"
        " WHERE NOT e.declared AND EXISTS (SELECT 1 FROM graph_mentions f WHERE f.entity_id = e.id)"
        " AND NOT EXISTS (SELECT 1 FROM graph_mentions k WHERE k.entity_id = e.id"
        " AND k.surface = e.name)"
    )
    mentions = "FROM graph_mentions {0} WHERE {0}.entity_id = OLD.entity_id"
    name_lost = (
        "e.name = OLD.surface AND NOT EXISTS"
        f" (SELECT 1 {mentions.format('k')} AND k.surface = OLD.surface)"
    )
    type_lost = (
        f"e.type = OLD.type AND NOT EXISTS (SELECT 1 {mentions.format('k')} AND k.type = OLD.type)"
    )
    execute(
        f"""
        CREATE FUNCTION recalld_mention_rename() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE graph_entities e SET
                name = CASE WHEN {name_lost}
                    THEN (SELECT f.surface {mentions.format("f")} ORDER BY f.seq LIMIT 1)
                    ELSE e.name END,
                type = CASE WHEN {type_lost}
                    THEN coalesce(
                        (SELECT f.type {mentions.format("f")} AND NOT (f.type = ANY({generic}))
                            ORDER BY f.seq LIMIT 1),
                        (SELECT f.type {mentions.format("f")} ORDER BY f.seq LIMIT 1))
                    ELSE e.type END
            WHERE e.id = OLD.entity_id AND NOT e.declared
                AND EXISTS (SELECT 1 {mentions.format("f")})
                AND (({name_lost}) OR ({type_lost}));
            RETURN NULL;
        END $$
        """
    )
    execute(
        "CREATE TRIGGER graph_mentions_rename AFTER DELETE ON graph_mentions"
        " FOR EACH ROW EXECUTE FUNCTION recalld_mention_rename()"
    )
    execute(
        "CREATE TRIGGER graph_mentions_respelled AFTER UPDATE OF surface, type ON graph_mentions"
        " FOR EACH ROW WHEN (OLD.surface IS DISTINCT FROM NEW.surface"
        " OR OLD.type IS DISTINCT FROM NEW.type) EXECUTE FUNCTION recalld_mention_rename()"
    )
