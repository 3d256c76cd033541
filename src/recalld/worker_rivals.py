"""Two embedding models on one database: the worker started later waits.

Every worker queues the memories its model has not embedded, drops the jobs other models
left queued, and deletes their vectors once its own queue is empty (a model switch). Two
workers of different models on one database (a server restarted with a new
``RECALLD_EMBEDDER_MODEL`` beside a ``recalld worker`` still running the old one) undid each
other's work without a word: each re-queued every memory the other had just embedded and
deleted the other's vectors, for ever. Now the worker that started later does nothing
while the earlier one is alive (a heartbeat within ``worker_lease_seconds``, not stopped)
and says why once; it takes over when that one stops. Workers of the same model share
the queue as before, and a worker with no embedder (graph extraction only) is no rival.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from recalld.store.semantic import WorkerRecord

__all__ = ["EXTRACTOR_NAME_PREFIXES", "rival"]

# A worker's heartbeat names its embedder and its extractor joined by "+", the embedder
# first; one with no embedder names only its extractor, which starts with one of these.
EXTRACTOR_NAME_PREFIXES = ("rules/", "spacy/")


def _embeds_with_another(models: str, embedder: str) -> bool:
    """Whether a heartbeat's ``models`` name an embedder other than ``embedder``."""
    if models == embedder or models.startswith(embedder + "+"):
        return False
    return not models.startswith(EXTRACTOR_NAME_PREFIXES)


def rival(
    workers: Iterable[WorkerRecord],
    *,
    me: str,
    started_at: datetime,
    embedder: str,
    now: datetime,
    alive_within: timedelta,
) -> WorkerRecord | None:
    """The live worker started before ``me`` (ties: the smaller id) that embeds with
    another model than ``embedder``; None when there is none."""
    for record in workers:
        if record.id == me or record.state == "stopped":
            continue
        if now - record.heartbeat_at > alive_within:
            continue
        if not _embeds_with_another(record.model, embedder):
            continue
        if (record.started_at, record.id) < (started_at, me):
            return record
    return None
