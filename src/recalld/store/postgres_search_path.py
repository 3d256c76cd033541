"""Which schema holds recalld's tables, and refusing to start a second, empty store.

recalld names its tables without a schema, so PostgreSQL finds them through the
connections' ``search_path`` and creates them in its first schema
(``current_schema()``). When the first schema holds no recalld tables but a later
one does (a DBA put a new schema in front: ``search_path = app, public``), ``CREATE
TABLE IF NOT EXISTS`` looks in the first schema only: an open would start a new,
empty store there, whose tables then hide the memories behind them, and servers
with different search paths would each write to their own. That is refused instead,
with the way to either end.
"""

from __future__ import annotations

from recalld.errors import StorageError
from recalld.store.postgres_connection import PostgresDatabase

__all__ = ["check_tables_schema"]


def check_tables_schema(database: PostgresDatabase) -> bool:
    """Whether recalld's tables exist where its connections look (``schema_migrations``
    on the search path); a :class:`StorageError` when they exist only in a schema after
    the first, where this open would start an empty store in front of them."""
    rows = database.read(
        "SELECT n.nspname, current_schema(), current_setting('search_path') FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE c.oid = to_regclass('schema_migrations')"
    )
    if not rows:
        return False
    found, first, search_path = (str(value) for value in rows[0])
    if found == first:
        return True
    if not _is_recalld_store(database, found):
        # Another tool's ledger of the same name (Rails' has a text version and no
        # applied_at) in a later schema: no store of recalld's there to hide, and the
        # first schema gets recalld's own ledger (reads find it first from then on).
        return False
    raise StorageError(
        f"recalld's tables in {database.display} are in schema {found!r}, which the"
        f" search_path ({search_path!r}) puts after {first!r}: recalld would start a new,"
        f" empty store in {first!r} and hide them. To use the store in {found!r}, put it"
        f" first on the search_path (ALTER ROLE <role> SET search_path = {found}, ...; or"
        f" options=-csearch_path%3D{found},... in the URL); to start a new store in"
        f" {first!r}, create its ledger first: CREATE TABLE {first}.schema_migrations"
        " (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)"
    )


def _is_recalld_store(database: PostgresDatabase, schema: str) -> bool:
    """Whether ``schema`` holds recalld's ledger (its ``applied_at`` column) and memories."""
    rows = database.read(
        # pg_attribute, not information_schema: that shows only columns this role may use.
        "SELECT to_regclass(format('%%I.memories', %(schema)s::text)) IS NOT NULL AND EXISTS ("
        " SELECT 1 FROM pg_attribute"
        " WHERE attrelid = to_regclass(format('%%I.schema_migrations', %(schema)s::text))"
        " AND attname = 'applied_at' AND NOT attisdropped)",
        {"schema": schema},
    )
    return bool(rows[0][0])
