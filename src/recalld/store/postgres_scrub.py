"""Scrubbing on PostgreSQL: pending scrubs finished by ``VACUUM``, and only when it can work.

A ``DELETE`` or ``UPDATE`` in PostgreSQL leaves the old row version (a *dead
tuple*) in the table's pages and its entries in the indexes until ``VACUUM``
removes them, and ``VACUUM`` can only remove a dead tuple once no snapshot
that could still see it is open anywhere in the cluster (a long transaction,
an idle-in-transaction session, a replication slot or a prepared transaction
holds it back). So, as on SQLite, every content-dropping write records a
*pending scrub* in its own transaction, here with that transaction's id
(``pending_scrubs.xact``), and :meth:`PostgresScrub.scrub`:

1. finds which pending scrubs no open snapshot holds back: every backend's
   ``backend_xmin``/``backend_xid`` (``pg_stat_activity``, which shows them for
   every role), replication slots' ``xmin`` and prepared transactions must
   all be newer than the deleting transaction; while some are held back it
   looks again every :data:`SNAPSHOT_POLL_SECONDS`, up to ``wait_seconds``
   (PostgreSQL tells no one when a snapshot ends), as SQLite's checkpoint
   waits for its readers;
2. runs ``VACUUM (INDEX_CLEANUP ON)`` (``postgres_vacuum_after_forget =
   vacuum``: without it PostgreSQL 14+ skips the indexes when under 2 % of a
   table's pages hold dead rows, which after one forget is almost always, and a
   forgotten key stayed in its b-tree and the vector in its HNSW index) or
   ``VACUUM (FULL)`` (``full``: the tables are rewritten into new files and the
   old files deleted) on every table a memory's content reaches, waiting for
   table locks at most ``wait_seconds`` (``lock_timeout``), past the database's
   ``statement_timeout`` and ``transaction_timeout``;
3. clears the records of step 1 only when that ``VACUUM`` finished.

With ``off`` nothing is vacuumed by recalld, so nothing is ever reported
scrubbed: the records stay pending (``stats``/``status`` count them) and
autovacuum removes the dead tuples on its own schedule.

What "done" means here is weaker than on SQLite, and the README says so:
the dead tuples are gone from the tables and indexes (no query, and no tool
that reads pages through PostgreSQL's row visibility, can return them), but
``VACUUM`` does not overwrite the freed bytes, which stay in the free space of
the table's pages (with ``full``: in the deleted files' disk blocks) until
reused, and the write-ahead log keeps the inserted content until its segment
is recycled. A page another backend holds pinned at that moment is left for
the next ``VACUUM``; nothing here can see that from SQL.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import Literal

import psycopg

from recalld.store.postgres_connection import Connection, PostgresDatabase

__all__ = ["VACUUM_TABLES", "PostgresScrub", "VacuumMode", "record_drop"]

logger = logging.getLogger(__name__)

VacuumMode = Literal["off", "vacuum", "full"]
# Every table a memory's content (or a forget's cascade) can leave dead rows in: the
# memory itself, its tags, vectors, jobs, features, trigger history, queue items,
# intention triggers, graph rows, and core memory's entries.
VACUUM_TABLES = (
    "memories",
    "memory_tags",
    "vectors",
    "jobs",
    "memory_signals",
    "memory_biometrics",
    "recollection_triggers",
    "pending_recollections",
    "intentions",
    "intention_triggers",
    "intention_streaks",
    "graph_entities",
    "graph_mentions",
    "graph_observations",
    "graph_relations",
    "graph_relation_sources",
    "graph_extracted",
    "core_memory",
)
# The pending scrubs (up to a mark) that no open snapshot holds back. age(x) is how many
# transactions ago x began; the deleting transaction is held back by any snapshot or
# transaction at least as old as it. age() reads the next transaction id at its first
# call, after the snapshot that gave xmax: a race only makes the test stricter.
# How often a scrub looks again for the snapshots that hold it back, while it may wait.
SNAPSHOT_POLL_SECONDS = 0.02
UNBLOCKED = """
WITH horizon AS (
    SELECT max(age(x)) AS oldest FROM (
        SELECT backend_xmin AS x FROM pg_stat_activity
            WHERE backend_xmin IS NOT NULL AND pid <> pg_backend_pid()
        UNION ALL SELECT backend_xid FROM pg_stat_activity
            WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()
        UNION ALL SELECT xmin FROM pg_replication_slots WHERE xmin IS NOT NULL
        UNION ALL SELECT transaction FROM pg_prepared_xacts
    ) AS held
)
SELECT s.id FROM pending_scrubs s, horizon
WHERE s.id <= %(mark)s AND (
    horizon.oldest IS NULL
    OR horizon.oldest < pg_snapshot_xmax(pg_current_snapshot())::text::bigint
        - s.xact::text::bigint
)
"""

# The content tables this role may not VACUUM: PostgreSQL skips those with a WARNING
# (SQLSTATE 01000, a message in the server's language) and VACUUM succeeds. From 17 on
# the MAINTAIN privilege says it (owner, superuser, pg_maintain, or granted); before,
# the owner (or a member) or a superuser. On every version the database's owner may
# vacuum every table of its database but the shared catalogs (the VACUUM page's Notes).
MAY_NOT_VACUUM_17 = """
SELECT name FROM unnest(%(tables)s::text[]) AS name
WHERE NOT has_table_privilege(to_regclass(name), 'MAINTAIN')
AND NOT pg_has_role((SELECT datdba FROM pg_database WHERE datname = current_database()), 'USAGE')
"""
MAY_NOT_VACUUM = """
SELECT name FROM unnest(%(tables)s::text[]) AS name
JOIN pg_class c ON c.oid = to_regclass(name)
WHERE NOT (
    (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
    OR pg_has_role(c.relowner, 'USAGE')
    OR pg_has_role((SELECT datdba FROM pg_database WHERE datname = current_database()), 'USAGE')
)
"""


def record_drop(connection: Connection, reason: str, now: datetime) -> None:
    """Record, inside the caller's write transaction, that content left the database."""
    connection.execute(
        "INSERT INTO pending_scrubs(reason, recorded_at) VALUES (%s, %s)", (reason, now)
    )


class PostgresScrub:
    """Pending scrubs of one PostgreSQL store and the ``VACUUM`` that finishes them."""

    def __init__(self, database: PostgresDatabase, vacuum: VacuumMode) -> None:
        self._database = database
        self._vacuum: VacuumMode = vacuum
        self._refusal_logged = False

    def _may_not_vacuum(self, connection: Connection) -> list[str]:
        """The content tables a ``VACUUM`` by this role would skip (it owns none of them)."""
        version = int(str(connection.execute("SHOW server_version_num").fetchone()[0]))  # type: ignore[index]
        query = MAY_NOT_VACUUM_17 if version >= 170000 else MAY_NOT_VACUUM
        rows = connection.execute(query, {"tables": list(VACUUM_TABLES)}).fetchall()
        skipped = [str(row[0]) for row in rows]
        if skipped and not self._refusal_logged:
            self._refusal_logged = True
            logger.warning(
                "%s: this role may not VACUUM %s (PostgreSQL would skip them and say"
                " nothing to recalld), so no scrub is done: what forget and the other"
                " content-dropping writes remove stays in their dead rows until the tables'"
                " owner or autovacuum vacuums them. Connect as the tables' or the database's"
                " owner, or GRANT MAINTAIN ON them (PostgreSQL 17+)",
                self._database.display,
                ", ".join(skipped),
            )
        return skipped

    def pending(self) -> int:
        """Content-dropping writes (of any server) whose dead rows are not vacuumed yet."""
        return int(self._database.read("SELECT count(*) FROM pending_scrubs")[0][0])

    def vacuum(self, wait_seconds: float | None = None) -> bool:
        """``VACUUM`` (or ``VACUUM (FULL)``) the content tables now, per the configured mode.

        Waits for a table lock at most ``wait_seconds`` (None: as long as it
        takes); returns whether it ran (False with ``off``, after that wait, or when
        this role may not vacuum every table: PostgreSQL would skip those).
        Raises :class:`~recalld.errors.StorageError` when the database failed.
        """
        if self._vacuum == "off":
            return False
        # INDEX_CLEANUP ON: the indexes are vacuumed even when few pages hold dead rows
        # (PostgreSQL bypasses them under 2 % by default, leaving the forgotten entries).
        statement = "VACUUM (FULL)" if self._vacuum == "full" else "VACUUM (INDEX_CLEANUP ON)"
        with self._database.connection() as connection:
            if self._may_not_vacuum(connection):
                return False  # a VACUUM that skips tables is no scrub: they stay pending
            # The pooled connection's own values, put back after (RESET would bring back
            # the database's lock_timeout, which the pool turned off).
            saved = connection.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN"
                " ('lock_timeout', 'statement_timeout', 'transaction_timeout')"
            ).fetchall()
            # A VACUUM (FULL) of a large table takes long: a statement_timeout or
            # transaction_timeout (PostgreSQL 17) the database sets would cut it every
            # time, and what was forgotten would stay in the dead rows.
            connection.execute(
                "SELECT set_config(name, '0', false) FROM pg_settings"
                " WHERE name IN ('statement_timeout', 'transaction_timeout')"
            )
            if wait_seconds is not None:
                milliseconds = max(1, int(wait_seconds * 1000))
                connection.execute(f"SET lock_timeout = {milliseconds}")
            else:  # as long as it takes, past the pool's bound on other clients' locks
                connection.execute(
                    "SELECT set_config('lock_timeout', '0', false) FROM pg_settings"
                    " WHERE name = 'lock_timeout' AND source <> 'client'"
                )
            try:
                connection.execute(f"{statement} {', '.join(VACUUM_TABLES)}")
            except psycopg.errors.LockNotAvailable:
                logger.info("VACUUM waited %g s for a table lock: not now", wait_seconds)
                return False
            finally:
                connection.execute(
                    "SELECT set_config(name, setting, false)"
                    " FROM unnest(%s::text[], %s::text[]) AS saved(name, setting)",
                    ([str(row[0]) for row in saved], [str(row[1]) for row in saved]),
                )
        return True

    def scrub(self, wait_seconds: float) -> bool:
        """Vacuum away what the pending scrubs left, where no open snapshot holds it back.

        Returns whether every scrub pending when it began is done (their records
        are then cleared). Never True with ``off``: recalld did not vacuum.
        """
        deadline = time.monotonic() + wait_seconds
        mark = int(self._database.read("SELECT coalesce(max(id), 0) FROM pending_scrubs")[0][0])
        if mark == 0:
            return True
        if self._vacuum == "off":
            return False
        waiting = int(
            self._database.read("SELECT count(*) FROM pending_scrubs WHERE id <= %s", (mark,))[0][0]
        )
        while True:
            unblocked = [int(row[0]) for row in self._database.read(UNBLOCKED, {"mark": mark})]
            if len(unblocked) >= waiting or time.monotonic() >= deadline:
                break
            time.sleep(SNAPSHOT_POLL_SECONDS)
        if not unblocked:
            return False
        if not self.vacuum(max(0.0, deadline - time.monotonic())):
            return False

        def clear(connection: Connection) -> int:
            connection.execute("DELETE FROM pending_scrubs WHERE id = ANY(%s)", (unblocked,))
            row = connection.execute(
                "SELECT count(*) FROM pending_scrubs WHERE id <= %s", (mark,)
            ).fetchone()
            return 0 if row is None else int(row[0])

        return self._database.write(clear) == 0
