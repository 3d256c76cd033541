"""What PostgreSQL migrations 19 and 22 share (split from
:mod:`recalld.store.postgres_migrations`): memories whose vectors were made from another
text are queued for embedding again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["queue_again"]

Execute = Callable[[str], Any]


def queue_again(execute: Execute, named: str) -> None:
    """As SQLite's: each model with a vector of a memory ``named`` selects queues it again,
    and the old vectors go now (``vector_log`` records it)."""
    execute(
        "INSERT INTO jobs(id, seq, kind, model, state, attempts, run_after, created_at,"
        " updated_at)"
        " SELECT replace(gen_random_uuid()::text, '-', ''), v.seq, 'embed', v.model, 'queued',"
        " 0, now(), now(), now() FROM vectors v"
        f" WHERE v.seq IN ({named}) AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.seq = v.seq"
        " AND j.kind = 'embed' AND j.model = v.model AND j.state IN ('queued', 'running'))"
    )
    execute(f"DELETE FROM vectors WHERE seq IN ({named})")
    execute(
        f"UPDATE memories SET index_state = 'queued' WHERE seq IN ({named}) AND EXISTS"
        " (SELECT 1 FROM jobs j WHERE j.seq = memories.seq AND j.kind = 'embed'"
        " AND j.state IN ('queued', 'running'))"
    )
