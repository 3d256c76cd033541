"""The batbox dialect: ``MemoryRemember`` / ``MemoryRecall`` / ``MemoryStatus`` (seed 000).

Exact schemas: MemoryRemember exposes content, source, metadata and captured_at
(never kind or id); MemoryRecall takes query and an integer limit 1-10;
MemoryStatus takes an empty object. With ``source`` omitted, the memory is a
``generated_observation`` whose source is this MCP session's transcript URI
(also recorded in metadata as ``transcript_uri``); with a source it is a
``reference``. A receipt means "durably enqueued", not "indexed". The seed
warns not to pass service-only fields to the tools, so an argument the schema
does not list (``kind``, ``id``) is refused; failures answer the REST API's
``{"error": {"type", "field", "message"}}`` body, naming ``captured_at`` and
``metadata`` as batbox spells them. The seed requires a query: an empty or blank
one is refused naming ``query`` (as rover refuses it), rather than answered with
no results that look like an empty memory.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from recalld import _validate as check
from recalld._schema import count_default
from recalld.adapters.dialects.base import Dialect, ToolSpec, caller_of, state_of
from recalld.adapters.dialects.failures import Wording
from recalld.errors import ValidationError
from recalld.model import WHOLE_COUNT, GraphStatus
from recalld.service import MemoryService

__all__ = ["DIALECT", "status_report"]

# MemoryRecall's limit when not given (the seed's default).
RECALL_LIMIT = 5


def memory_remember(
    ctx: Context,
    content: Annotated[str, Field(description="The finding: what, why it matters, how to apply")],
    source: Annotated[
        str | None, Field(description="URI of the evidence; omit to cite this session")
    ] = None,
    metadata: Annotated[dict[str, Any] | None, Field(description="Extra JSON fields")] = None,
    captured_at: Annotated[
        str | None, Field(description="UTC observation time, ISO 8601; omit for now")
    ] = None,
) -> dict[str, Any]:
    state = state_of(ctx)
    meta = dict(metadata or {})
    if source is None:
        source = state.transcripts.uri_for(ctx)
        meta["transcript_uri"] = source
        kind = "generated_observation"
    else:
        kind = "reference"
    receipt = state.service.remember(content, source=source, kind=kind, at=captured_at, meta=meta)
    if receipt.status == "duplicate":
        # The same finding was stored before: its provenance is the stored one, not this
        # call's (which was not recorded).
        stored = state.service.get(receipt.id)
        source, kind = stored.source, stored.kind
    return {
        "id": receipt.id,
        "receipt": {
            "job_id": receipt.job_id,
            "state": receipt.index_state,
            "status": receipt.status,
            "durable": True,
        },
        "source": source,
        "kind": kind,
    }


def memory_recall(
    ctx: Context,
    query: Annotated[str, Field(description="What to look for")],
    limit: Annotated[
        int | None,
        Field(
            ge=1,
            le=10,
            description="How many results (1-10)",
            json_schema_extra=count_default(RECALL_LIMIT),
        ),
        WHOLE_COUNT,
    ] = None,
) -> dict[str, Any]:
    if not query.strip():
        raise ValidationError("query", "is required: give the text to look for")
    service = state_of(ctx).service
    # 5 when not given, or RECALLD_MAX_LIMIT when that is lower: a default is no request.
    limit = check.limit(limit, service.settings, default=RECALL_LIMIT)
    hits = service.search(query, limit=limit)
    return {
        "results": [
            {
                "id": hit.memory.id,
                "content": hit.memory.content,
                "source": hit.memory.source,
                "kind": hit.memory.kind,
                "captured_at": None if hit.memory.at is None else hit.memory.at.isoformat(),
                "backend": "+".join(hit.backends),
                "score": hit.score,
                "metadata": hit.memory.meta,
            }
            for hit in hits
        ]
    }


def status_report(service: MemoryService, *, confined: bool = False) -> dict[str, Any]:
    """Queue, embedding, knowledge-graph and retry-error figures; ``confined``: as a caller
    confined to the server's namespace sees them (see :meth:`MemoryService.status`)."""
    stats = service.stats()
    status = service.status(confined=confined)
    queue = {state: status.queue.get(state, 0) for state in ("queued", "running", "done", "failed")}
    return {
        "memories": stats.count,
        "queue": queue,
        "embeddings": {
            "model": status.embedder,
            "count": sum(status.embeddings.values()),
            "by_model": status.embeddings,
            "memories_by_index_state": status.memories_by_index_state,
        },
        "workers": [
            {"id": worker.id, "alive": worker.alive, "age_seconds": worker.heartbeat_age_seconds}
            for worker in status.workers
        ],
        "graph": _graph(status.graph),
        "retry_errors": [
            {
                "memory_id": job.memory_id,
                "attempts": job.attempts,
                "state": job.state,
                "error": job.error,
            }
            for job in status.failed_jobs
        ],
        "search_backends": status.search_backends,
        "schema_version": stats.schema_version,
        "pending_scrubs": status.pending_scrubs,
    }


def _graph(graph: GraphStatus | None) -> dict[str, Any]:
    if graph is None:
        return {"state": "disabled", "entities": 0, "relations": 0}
    return {
        "state": graph.state,
        "entities": graph.entities,
        "relations": graph.relations,
        "mentions": graph.mentions,
        "extractor": graph.extractor,
        "jobs": graph.jobs,
        "warning": graph.warning,
        "errors": [
            {"memory_id": job.memory_id, "attempts": job.attempts, "error": job.error}
            for job in graph.last_errors
        ],
    }


def memory_status(ctx: Context) -> dict[str, Any]:
    caller = caller_of(ctx)
    confined = caller is not None and not caller.all_namespaces
    return status_report(state_of(ctx).service, confined=confined)


DIALECT = Dialect(
    name="batbox",
    wording=Wording(renames={"at": "captured_at", "meta": "metadata"}),
    tools=(
        ToolSpec(
            "MemoryRemember",
            memory_remember,
            "Save a verified finding to long-term memory. Write what you found, why it matters "
            "and how to apply it. Give the real source URI and the known UTC observation time "
            "when you have them, and never invent either: without a source the memory cites "
            "this session's transcript and is marked a generated observation; without "
            "captured_at the capture time is recorded. Keep the returned id and job receipt. "
            "The receipt means the write is durably enqueued, not that it is indexed yet.",
        ),
        ToolSpec(
            "MemoryRecall",
            memory_recall,
            "Search long-term memory. Check each result's source, kind, captured_at and backend: "
            "a returned passage is attributed evidence, not automatically current truth.",
            read_only=True,
        ),
        ToolSpec(
            "MemoryStatus",
            memory_status,
            "Report the memory service's background queue, embedding counts, graph state and "
            "retry errors. Use it to interpret receipts: an acknowledged write is durable, but "
            "indexing may still be pending.",
            read_only=True,
        ),
    ),
)
