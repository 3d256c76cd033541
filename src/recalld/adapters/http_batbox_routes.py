"""batbox's REST endpoints, with batbox's shapes: ``/remember``, ``/recall`` and ``/status``."""

from __future__ import annotations

from fastapi import APIRouter

from recalld import _validate as check
from recalld.adapters.http_dependencies import (
    COMMON_ERRORS,
    BatboxReadNamespace,
    BatboxWriteNamespace,
    Service,
)
from recalld.adapters.http_models import (
    BATBOX_RECALL_LIMIT,
    BatboxRecall,
    BatboxRemember,
    BatboxResult,
    BatboxStatus,
    EmbeddingStatus,
    GraphStatus,
    QueueStatus,
    StrictJSONRoute,
    error_responses,
)
from recalld.errors import ValidationError
from recalld.model import Receipt

__all__ = ["batbox_router"]

# The service's field names → batbox's, for error messages.
BATBOX_FIELDS = {"at": "captured_at", "meta": "metadata"}

batbox_router = APIRouter(tags=["batbox"], route_class=StrictJSONRoute, responses=COMMON_ERRORS)


@batbox_router.post(
    "/remember", response_model=Receipt, responses=error_responses(409), summary="Remember"
)
def batbox_remember(
    body: BatboxRemember, service: Service, namespace: BatboxWriteNamespace
) -> Receipt:
    """Store a memory durably; the receipt means "durably written", not "indexed"."""
    try:
        return service.remember(
            body.content,
            namespace=namespace,
            id=body.id,
            kind=body.kind or "note",
            source=body.source,
            at=body.captured_at,
            meta=body.metadata,
        )
    except ValidationError as error:
        # Name the field as batbox callers spelled it.
        field = _batbox_field(error.field)
        raise ValidationError(field, error.message) from None


def _batbox_field(name: str) -> str:
    """A service field name (``meta.ocr``, ``at``) as batbox spells it (``metadata.ocr``)."""
    for ours, theirs in BATBOX_FIELDS.items():
        if name == ours or name.startswith((f"{ours}.", f"{ours}[")):
            return theirs + name[len(ours) :]
    return name


@batbox_router.post("/recall", response_model=list[BatboxResult], summary="Recall")
def batbox_recall(
    body: BatboxRecall, service: Service, namespace: BatboxReadNamespace
) -> list[BatboxResult]:
    """Memories relevant to ``query``, each with source, kind, captured_at and backend.

    A pull, like batbox's ``MemoryRecall`` tool: it changes nothing (promise 4), so
    access counts do not move.
    """
    limit = check.limit(body.limit, service.settings, default=BATBOX_RECALL_LIMIT)
    hits = service.search(body.query, limit=limit, namespace=namespace)
    return [
        BatboxResult(
            id=hit.memory.id,
            content=hit.memory.content,
            score=hit.score,
            source=hit.memory.source,
            kind=hit.memory.kind,
            captured_at=hit.memory.at,
            backend=hit.backends[0] if hit.backends else "none",
            backends=hit.backends,
            metadata=hit.memory.meta,
            prompt_line=hit.prompt_line,
        )
        for hit in hits
    ]


@batbox_router.get("/status", response_model=BatboxStatus, summary="Status")
def batbox_status(service: Service, namespace: BatboxReadNamespace) -> BatboxStatus:
    """Counts and the state of the background queue, embeddings and the knowledge graph."""
    stats = service.stats([namespace])
    status = service.status([namespace])
    return BatboxStatus(
        namespace=namespace,
        memories=stats.count,
        search_backend=stats.search_backend,
        schema_version=stats.schema_version,
        queue=QueueStatus(
            depth=status.queue.get("queued", 0) + status.queue.get("running", 0),
            failed=status.queue.get("failed", 0),
        ),
        embeddings=EmbeddingStatus(
            model=status.embedder,
            embedded=0 if status.embedder is None else status.embeddings.get(status.embedder, 0),
            pending=status.memories_by_index_state.get("queued", 0),
        ),
        graph=GraphStatus(
            state="disabled" if status.graph is None else status.graph.state,
            entities=0 if status.graph is None else status.graph.entities,
            relations=0 if status.graph is None else status.graph.relations,
            mentions=0 if status.graph is None else status.graph.mentions,
            extractor=None if status.graph is None else status.graph.extractor,
            pending=0
            if status.graph is None
            else status.graph.jobs.get("queued", 0) + status.graph.jobs.get("running", 0),
            failed=0 if status.graph is None else status.graph.jobs.get("failed", 0),
            warning=None if status.graph is None else status.graph.warning,
        ),
        retry_errors=[f"{job.memory_id}: {job.error}" for job in status.failed_jobs],
    )
