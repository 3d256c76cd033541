"""Updates of job rows shared by PostgreSQL's embedding and graph queues: an edit's job
made due again, and jobs a worker hands back (moved out of ``postgres_semantic``, which
grew to its size limit)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from recalld.store.postgres_connection import Connection

__all__ = ["queue_again", "release_leased"]


def queue_again(
    connection: Connection, kind: str, seq: int, model: str, now: datetime
) -> str | None:
    """The id of memory ``seq``'s ``kind`` job of ``model`` that still waits (not claimed),
    made due now with its attempts from zero, inside the caller's transaction; None when
    there is none (one a worker is claiming at this moment is skipped: its claim reads the
    old text). An edit queues its memory again: a job beside the waiting one made the
    worker embed (or extract) the same new text once per edit."""
    row = connection.execute(
        "UPDATE jobs SET attempts = 0, last_error = NULL, run_after = LEAST(run_after, %(now)s),"
        " updated_at = %(now)s WHERE id = (SELECT id FROM jobs WHERE seq = %(seq)s"
        " AND model = %(model)s AND state = 'queued' AND kind = %(kind)s LIMIT 1"
        " FOR UPDATE SKIP LOCKED) AND state = 'queued' RETURNING id",
        {"now": now, "seq": seq, "model": model, "kind": kind},
    ).fetchone()
    return None if row is None else str(row[0])


def release_leased(
    connection: Connection, worker_id: str, ids: Sequence[str], now: datetime
) -> int:
    """Queue again the jobs of ``ids`` that ``worker_id`` holds (embedding or graph), with
    the attempt their claim counted taken back: the store's failure was no fault of the
    job, and counting it would fail the job for good after a long enough outage. Returns
    how many were handed back."""
    cursor = connection.execute(
        "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL,"
        " attempts = GREATEST(attempts - 1, 0), run_after = %s, updated_at = %s"
        " WHERE id = ANY(%s) AND lease_owner = %s AND state = 'running'",
        (now, now, list(ids), worker_id),
    )
    return int(cursor.rowcount)
