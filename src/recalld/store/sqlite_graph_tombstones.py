"""The SQLite graph's tombstones (migration 30): an entity the knowledge tools deleted does
not come back from the memories written before its deletion (moved out of
:mod:`recalld.store.sqlite_graph`, which is at its size limit)."""

from __future__ import annotations

import apsw

from recalld.store.graph import STALE_TOMBSTONES, GraphJob, entity_key_hash

__all__ = ["buried", "drop_stale_tombstones"]


def buried(connection: apsw.Connection, job: GraphJob, key: str) -> bool:
    """Whether the knowledge tools deleted entity ``key`` of ``job``'s namespace after the
    job's memory was written: its extraction must not bring the entity back."""
    found = connection.execute(
        "SELECT 1 FROM graph_entity_tombstones WHERE namespace = ? AND key_hash = ?"
        " AND up_to_seq >= ?",
        (job.namespace, entity_key_hash(key), job.seq),
    ).fetchone()
    return found is not None


def drop_stale_tombstones(connection: apsw.Connection, namespace: str, seq: int = 0) -> None:
    """Drop the tombstones that deleting memory ``seq`` of ``namespace`` (``seq`` 0: any of
    it, as a purge deletes) left protecting nothing (:data:`STALE_TOMBSTONES`)."""
    connection.execute(STALE_TOMBSTONES, {"namespace": namespace, "seq": seq})
