"""Two embedding models on one database: the worker started later waits.

Every worker queues the memories its model has not embedded, drops the jobs other models
left queued, and deletes their vectors once its own queue is empty (a model switch). Two
workers of different models on one database (a server restarted with a new
``RECALLD_EMBEDDER_MODEL`` beside a ``recalld worker`` still running the old one) undid each
other's work without a word: each re-queued every memory the other had just embedded and
deleted the other's vectors, for ever. Now a worker does nothing while the live worker that
embeds and started first (a heartbeat within ``worker_lease_seconds``, not stopped) has
another model, and says why once; it takes over when that one stops. Only that first
worker decides: every worker of its model works, even one started after a waiting
worker of another model. Workers of the same model share the queue as before, and a
worker with no embedder (graph extraction only) is no rival.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from recalld.store.semantic import WorkerRecord

__all__ = ["EXTRACTOR_NAME_PREFIXES", "graph_only_models", "rival", "rival_message"]

# A worker's heartbeat names its embedder and its extractor joined by "+", the embedder
# first; one with no embedder names "+" and its extractor (see graph_only_models). Older
# versions named the extractor alone, told apart by these prefixes: a library user's own
# extractor ("mine/1") was taken for an embedder then, and an embedding worker started
# after its graph-only worker waited for it for ever.
EXTRACTOR_NAME_PREFIXES = ("rules/", "spacy/")


def graph_only_models(extractor: str) -> str:
    """The heartbeat's ``models`` of a worker with an extractor and no embedder: a
    built-in extractor's name alone, as older versions wrote and read it (one of them,
    beside this one on the database in a rolling upgrade, took "+rules/..." for a rival
    embedding model and waited for it for ever); any other behind a "+"."""
    if extractor.startswith(EXTRACTOR_NAME_PREFIXES):
        return extractor
    return "+" + extractor


def _embeds(models: str) -> bool:
    """Whether a heartbeat's ``models`` name an embedder (not an extractor alone)."""
    return not models.startswith(("+", *EXTRACTOR_NAME_PREFIXES))


def _embeds_with(models: str, embedder: str) -> bool:
    """Whether a heartbeat's ``models`` name ``embedder`` (with an extractor or not)."""
    return models == embedder or models.startswith(embedder + "+")


def rival(
    workers: Iterable[WorkerRecord],
    *,
    me: str,
    started_at: datetime,
    embedder: str,
    now: datetime,
    alive_within: timedelta,
) -> WorkerRecord | None:
    """The live embedding worker started first (ties: the smaller id) when it started
    before ``me`` and embeds with another model than ``embedder``; None when there is
    none. Only the first decides: a worker of its model never waits for one started in
    between that itself waits (it would idle beside the worker doing the work)."""
    first: WorkerRecord | None = None
    for record in workers:
        if record.id == me or record.state == "stopped":
            continue
        if now - record.heartbeat_at > alive_within or not _embeds(record.model):
            continue
        if first is None or (record.started_at, record.id) < (first.started_at, first.id):
            first = record
    if first is None or (first.started_at, first.id) >= (started_at, me):
        return None
    return None if _embeds_with(first.model, embedder) else first


def rival_message(found: WorkerRecord, embedder: str) -> str:
    """What a worker waiting for ``found`` (see :func:`rival`) says of it."""
    return (
        f"worker {found.id} (pid {found.pid} on {found.host}) embeds with {found.model} on"
        f" this database, and this worker with {embedder}: two embedding models undo each"
        " other's work (each queues again what the other embedded and deletes its vectors)"
    )
