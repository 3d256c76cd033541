"""What the PostgreSQL graph reads show: the SQL of the "shown" rule of
:class:`recalld.store.graph.GraphStore` (as SQLite's,
:mod:`recalld.store.sqlite_graph_shown`), shared by the reads
(:mod:`recalld.store.postgres_graph`) and the knowledge tools' writes
(:mod:`recalld.store.postgres_graph_writes`).

The reads show the graph as the purge will leave it: a memory past its TTL is hidden
from every read until the purge deletes it (and what it said with it), so it neither
counts, nor keeps an entity or a relation shown, nor gives an entity its name or type.
Every fragment binds ``%(now)s``.
"""

from __future__ import annotations

from recalld.graph.types import GENERIC_TYPES
from recalld.store.graph import MENTION_LINES

__all__ = [
    "EXPIRED",
    "GENERIC",
    "LIVE_ENTITY_COLUMNS",
    "OBSERVATIONS_LEFT_OUT",
    "RELATION_COLUMNS",
    "RELATION_FROM",
    "RELATION_SHOWN",
    "mention_lines",
    "shown",
    "shown_name",
    "shown_type",
]

GENERIC = sorted(GENERIC_TYPES)
GENERIC_ARRAY = "ARRAY[" + ", ".join(f"'{name}'" for name in GENERIC) + "]"
# Live is "not among the memories expired at now" (the complement of mentions()' test):
# those are read once per statement off the expiry index into a hashed subplan (the purge
# keeps them few), so a mention is tested without reading its memory's row; a speaker
# with tens of thousands of mentions is still counted off the index.
EXPIRED = "(SELECT x.seq FROM memories x WHERE x.expires_at <= %(now)s)"
# The entities an expired memory mentions, read once per statement (a hashed subplan off
# graph_mentions_seq): only those can show another name or type than their row holds.
TOUCHED = f"(SELECT t.entity_id FROM graph_mentions t WHERE t.seq IN {EXPIRED})"


def _mentioned(alias: str, column: str, value: str, *, live: bool) -> str:
    test = "NOT IN" if live else "IN"
    return (
        f"EXISTS (SELECT 1 FROM graph_mentions k WHERE k.entity_id = {alias}.id"
        f" AND k.{column} = {value} AND k.seq {test} {EXPIRED})"
    )


def _earliest(alias: str, column: str, condition: str = "") -> str:
    return (
        f"(SELECT k.{column} FROM graph_mentions k WHERE k.entity_id = {alias}.id"
        f" AND k.seq NOT IN {EXPIRED}{condition} ORDER BY k.seq LIMIT 1)"
    )


def _following(alias: str, field: str, column: str, replacement: str) -> str:
    """Entity ``alias``'s ``field`` as the purge will leave it (migration 24's trigger, over
    the live mentions): an undeclared entity whose ``field`` only expired memories still
    give (mention ``column``) takes ``replacement``, read off its live mentions."""
    value = f"{alias}.{field}"
    return (
        f"CASE WHEN NOT {alias}.declared AND {alias}.id IN {TOUCHED}"
        f" AND {_mentioned(alias, column, value, live=False)}"
        f" AND NOT {_mentioned(alias, column, value, live=True)}"
        f" THEN coalesce({replacement}, {value}) ELSE {value} END"
    )


def shown_name(alias: str) -> str:
    """The name entity ``alias`` is shown with: the spelling of the earliest live memory
    naming it when only expired ones still spell it as its row does."""
    return _following(alias, "name", "surface", _earliest(alias, "surface"))


def shown_type(alias: str) -> str:
    """The type entity ``alias`` is shown with: the earliest live specific type (else the
    earliest live one) when only expired memories still give the type its row holds."""
    specific = _earliest(alias, "type", f" AND NOT (k.type = ANY({GENERIC_ARRAY}))")
    return _following(alias, "type", "type", f"coalesce({specific}, {_earliest(alias, 'type')})")


LIVE_ENTITY_COLUMNS = (
    f"e.id, e.namespace, e.key, {shown_name('e')}, {shown_type('e')}, e.declared,"
    " (SELECT count(*) FROM graph_mentions gm"
    f" WHERE gm.entity_id = e.id AND gm.seq NOT IN {EXPIRED}),"
    " (SELECT count(*) FROM graph_observations go"
    f" WHERE go.entity_id = e.id AND go.seq NOT IN {EXPIRED}),"
    " e.created_at, e.updated_at"
)
LIVE_SOURCES = f"graph_relation_sources rs WHERE rs.relation_id = r.id AND rs.seq NOT IN {EXPIRED}"
RELATION_COLUMNS = (
    f"r.id, r.namespace, {shown_name('s')}, s.key, r.predicate, {shown_name('o')}, o.key,"
    f" r.declared, (SELECT count(*) FROM {LIVE_SOURCES}), (SELECT max(rs.at) FROM {LIVE_SOURCES})"
)
# Mentions found in the knowledge tools' observation memories (databases extracted them
# before those memories were left out of extraction).
OBSERVATIONS_LEFT_OUT = (
    " AND NOT EXISTS (SELECT 1 FROM graph_observations go WHERE go.seq = gm.seq)"
)
RELATION_FROM = (
    "graph_relations r JOIN graph_entities s ON s.id = r.subject_id"
    " JOIN graph_entities o ON o.id = r.object_id"
)


def shown(alias: str) -> str:
    """Whether entity ``alias`` is shown: declared, or mentioned by a live memory (an
    undeclared entity has no observations: adding one declares it)."""
    # OFFSET 0 keeps the EXISTS a probe of this entity's mentions: else the planner may
    # hash the entity ids of every live mention in the store, to test a page of entities.
    return (
        f"({alias}.declared OR EXISTS (SELECT 1 FROM graph_mentions gm"
        f" WHERE gm.entity_id = {alias}.id AND gm.seq NOT IN {EXPIRED} OFFSET 0))"
    )


# A relation is shown when it is declared or stated by a live memory, and both its entities
# are shown (the purge drops a relation with the entity it leaves orphaned).
RELATION_SHOWN = (
    f"(r.declared OR EXISTS (SELECT 1 FROM {LIVE_SOURCES} OFFSET 0))"
    f" AND {shown('s')} AND {shown('o')}"
)


def mention_lines(entity: str) -> str:
    """The title and content of entity ``entity``'s (an id expression) mention lines: its
    newest :data:`~recalld.store.graph.MENTION_LINES` live memories of ``%(namespace)s``
    that are no knowledge tools' observation (as ``mentions(observations=False)`` reads
    them). A subquery for FROM: newest first off the mentions' key, five rows at most."""
    return (
        "SELECT m.title, m.content FROM graph_mentions gm JOIN memories m ON m.seq = gm.seq"
        f" WHERE gm.entity_id = {entity} AND m.namespace = %(namespace)s"
        f" AND (m.expires_at IS NULL OR m.expires_at > %(now)s){OBSERVATIONS_LEFT_OUT}"
        f" ORDER BY gm.seq DESC LIMIT {MENTION_LINES}"
    )
