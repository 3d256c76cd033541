"""The rover dialect: one action-style ``rover_memory`` tool (seed 004).

Actions: remember, recall, search, list, recent, update, forget, stats.
``memory_id`` is recalld's integer ``seq``; importance 1-5 maps to salience
(i-1)/4 and back; tags travel as a comma-separated string. ``recall`` bumps
access counts (the seed's specification), ``search`` does not. Every answer is
the envelope ``{"status": "success"|"error", "content": [{"text": ...}]}`` with
memory rows inlined as JSON text; every failure (a mistyped or unknown
argument, a refused value) comes in the same envelope, naming the argument in
the tool's own terms (``memory_id``, ``importance``). The seed's signature is a
Python function, so arguments it does not list are refused. An argument that
would select or narrow what an action acts on, given to an action that does not
take it (other than at its default), is refused rather than ignored, since the
answer would be to another question: ``memory_id`` outside update and forget
(``remember`` with one would store a new memory, not change that one), ``query``
on list and recent, ``category`` on recent, ``tags`` on recall, search, list and
recent (no action filters by tags). A descriptive argument an action does not
take (``title`` with forget, ``category`` with stats) changes no answer and is
ignored.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from recalld import _validate as check
from recalld._schema import count_default
from recalld._text import shown
from recalld.adapters.dialects.base import Dialect, ToolSpec, state_of
from recalld.adapters.dialects.failures import ToolCall, ToolFailure, Wording
from recalld.errors import NotFoundError, ValidationError
from recalld.model import WHOLE_COUNT, Filters, Memory, WholeNumber
from recalld.service import MemoryService

__all__ = ["CATEGORIES", "DIALECT"]

CATEGORIES = ("spatial", "preference", "hazard", "fact", "goal", "person", "object", "other")
ACTIONS = ("remember", "recall", "search", "list", "recent", "update", "forget", "stats")
# limit when not given (the seed's default), for every action that lists.
RECALL_LIMIT = 10
# The arguments each action takes besides action (the seed's "required"/"optional"
# lists), named in the message that refuses one.
TAKES = {
    "remember": ("title", "content", "category", "tags", "importance", "meta"),
    "recall": ("query", "category", "limit"),
    "search": ("query", "category", "limit"),
    "list": ("category", "limit"),
    "recent": ("limit",),
    "update": ("memory_id", "title", "content", "category", "tags", "importance", "meta"),
    "forget": ("memory_id",),
    "stats": (),
}
# The arguments that select or narrow what an action acts on, refused (not ignored) by an
# action that does not take them: ignoring one would answer another question than the one
# asked. Descriptive ones (title, content, importance, meta, and category or tags where
# they filter nothing: forget, stats) change no answer and are ignored.
NARROWING = {
    "remember": ("memory_id",),
    "recall": ("memory_id", "tags"),
    "search": ("memory_id", "tags"),
    "list": ("memory_id", "query", "tags"),
    "recent": ("memory_id", "query", "category", "tags"),
    "update": (),
    "forget": (),
    "stats": ("memory_id",),
}
# Where to go instead, for each refused argument.
HINTS = {
    "memory_id": "to change a memory use update, to delete one forget",
    "query": "to search use recall or search",
    "category": "to list one category use list",
    "tags": "no action filters by tags (recall, search and list filter by category)",
}


def _importance(salience: float | None) -> int | None:
    return None if salience is None else round(salience * 4) + 1


def _row(memory: Memory) -> dict[str, Any]:
    return {
        "memory_id": memory.seq,
        "id": memory.id,
        "title": memory.title,
        "content": memory.content,
        "category": memory.category,
        "tags": ",".join(memory.tags),
        "importance": _importance(memory.salience),
        "meta": memory.meta,
        "created_at": memory.created_at.isoformat(),
        "updated_at": memory.updated_at.isoformat(),
        "access_count": memory.access_count,
        "last_accessed_at": (
            None if memory.last_accessed_at is None else memory.last_accessed_at.isoformat()
        ),
    }


def _envelope(status: str, text: str) -> CallToolResult:
    body = {"status": status, "content": [{"text": text}]}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=status != "success",
    )


def _error(failure: ToolFailure, _call: ToolCall) -> CallToolResult:
    """rover's error shape: the envelope with ``status: error`` naming the argument."""
    return _envelope("error", failure.text())


def _rows_text(label: str, memories: list[Memory]) -> str:
    return f"{label} ({len(memories)}):\n" + json.dumps(
        [_row(m) for m in memories], indent=1, ensure_ascii=False
    )


def _tags(text: str) -> list[str]:
    return [tag.strip() for tag in text.split(",") if tag.strip()]


def _category(value: str | None) -> str | None:
    """One of the seed's categories, or None: also for ``""`` (or blank), which a model
    filling in every argument sends for "no category" (refused on every action before)."""
    if value is not None and not value.strip():
        return None
    if value is not None and value not in CATEGORIES:
        raise ValidationError(
            "category", f"must be one of {', '.join(CATEGORIES)}; got {shown(value)}"
        )
    return value


def _salience(importance: int | None) -> float | None:
    if importance is None:
        return None
    if not 1 <= importance <= 5:
        raise ValidationError("importance", f"must be between 1 and 5, got {importance}")
    return (importance - 1) / 4


def _refuse_unused(action: str, given: dict[str, Any]) -> None:
    """Refuse an argument that would select or narrow what ``action`` acts on
    (:data:`NARROWING`) when the action does not take it, given other than at its default:
    ignoring it would answer another question (``list`` with a ``query`` listing
    everything, ``remember`` with a ``memory_id`` storing a new memory rather than changing
    that one). Defaults (``""``, blank text, null, and tags that are only commas) are no
    request, so a model that sends every argument at its default is served."""
    for name in NARROWING[action]:
        value = given[name]
        if isinstance(value, str):
            value = _tags(value) if name == "tags" else value.strip()
        if value is None or value in ("", []):
            continue
        takes = ", ".join(TAKES[action]) or "no other argument"
        raise ValidationError(name, f"is not used by {action} (it takes {takes}); {HINTS[name]}")


def _by_seq(service: MemoryService, memory_id: int | None) -> Memory:
    if memory_id is None:
        raise ValidationError("memory_id", "is required for this action")
    try:
        return service.get(seq=memory_id)
    except NotFoundError:
        raise NotFoundError(f"no memory with memory_id {memory_id}") from None


def rover_memory(
    ctx: Context,
    # The seed documents each argument in its docstring only: the descriptions say it.
    action: Annotated[
        str,
        Field(description="remember, recall, search, list, recent, update, forget or stats"),
    ] = "list",
    title: Annotated[str, Field(description="Short label (remember; update)")] = "",
    content: Annotated[str, Field(description="The memory body (remember; update)")] = "",
    category: Annotated[
        str | None,
        Field(
            description="spatial, preference, hazard, fact, goal, person, object or other"
            " (remember, update; a filter for recall, search, list)"
        ),
    ] = None,
    tags: Annotated[
        str, Field(description="Comma-separated tags, e.g. indoor,kitchen (remember; update)")
    ] = "",
    importance: Annotated[
        WholeNumber | None, Field(description="1 (low) to 5 (high) (remember; update)")
    ] = None,
    meta: Annotated[
        dict[str, Any] | None, Field(description="Any extra JSON fields (remember; update)")
    ] = None,
    memory_id: Annotated[
        WholeNumber | None, Field(description="The memory's id (update and forget)")
    ] = None,
    query: Annotated[str, Field(description="Free text to look for (recall and search)")] = "",
    limit: Annotated[
        int | None,
        Field(
            json_schema_extra=count_default(RECALL_LIMIT),
            description="How many to return (recall, search, list, recent)",
        ),
        WHOLE_COUNT,
    ] = None,
) -> CallToolResult:
    service = state_of(ctx).service
    if action not in ACTIONS:
        raise ValidationError("action", f"must be one of {', '.join(ACTIONS)}; got {action!r}")
    _refuse_unused(
        action, {"memory_id": memory_id, "query": query, "category": category, "tags": tags}
    )
    # 10 when not given, or RECALLD_MAX_LIMIT when that is lower: a default is no request.
    limit = check.limit(limit, service.settings, default=RECALL_LIMIT)
    filters = Filters(category=_category(category))
    if action == "remember":
        if not title.strip():
            raise ValidationError("title", "is required for remember")
        receipt = service.remember(
            content,
            title=title,
            category=_category(category),
            tags=_tags(tags),
            salience=_salience(importance),
            meta=meta,
        )
        memory = service.get(receipt.id)
        if receipt.status == "duplicate":
            # The same text is already stored: say so, and which memory it is.
            heading = f"Already remembered as memory {memory.seq} (duplicate; nothing stored):\n"
            return _envelope("success", heading + json.dumps(_row(memory), ensure_ascii=False))
        return _envelope(
            "success",
            f"Remembered memory {memory.seq}:\n" + json.dumps(_row(memory), ensure_ascii=False),
        )
    if action in ("recall", "search"):
        if not query.strip():
            raise ValidationError("query", f"is required for {action}")
        find = service.recall if action == "recall" else service.search
        hits = find(query, filters=filters, limit=limit)
        return _envelope("success", _rows_text("Memories", [hit.memory for hit in hits]))
    if action == "list":
        page = service.list_memories(filters=filters, limit=limit)
        return _envelope("success", _rows_text("Memories", page.memories))
    if action == "recent":
        page = service.recent(limit=limit)
        return _envelope("success", _rows_text("Recent memories", page.memories))
    if action == "update":
        memory = _by_seq(service, memory_id)
        changes: dict[str, Any] = {}
        if title:
            # An empty title means "keep it" (the seed's default); spaces are no label,
            # refused here as remember refuses them.
            if not title.strip():
                raise ValidationError("title", "must not be blank (leave it empty to keep it)")
            changes["title"] = title
        if content:
            changes["content"] = content
        if _category(category) is not None:  # "" keeps it, as an empty title does
            changes["category"] = _category(category)
        if tags:
            changes["tags"] = _tags(tags)
        if importance is not None:
            changes["salience"] = _salience(importance)
        if meta is not None:
            changes["meta"] = meta
        if not changes:
            raise ValidationError(
                "update",
                "give at least one of title, content, category, tags, importance or meta to change",
            )
        updated = service.update(memory.id, **changes)
        return _envelope(
            "success",
            f"Updated memory {updated.seq}:\n" + json.dumps(_row(updated), ensure_ascii=False),
        )
    if action == "forget":
        memory = _by_seq(service, memory_id)
        forgotten = service.forget(memory.id)
        note = ""
        if forgotten.scrub == "pending":
            note = (
                " Scrubbing its old bytes from the database files is pending (another"
                " reader holds an older snapshot); it finishes in the background."
            )
        return _envelope("success", f"Forgot memory {memory.seq}.{note}")
    stats = service.stats()
    body = {
        "count": stats.count,
        "by_category": stats.by_category,
        "fts": stats.fts,
        "search_backend": stats.search_backend,
    }
    return _envelope("success", json.dumps(body, ensure_ascii=False))


DIALECT = Dialect(
    name="rover",
    wording=Wording(
        shape=_error, renames={"seq": "memory_id", "salience": "importance", "changes": "update"}
    ),
    tools=(
        ToolSpec(
            "rover_memory",
            rover_memory,
            "Long-term SQLite memory: remember, recall, update, forget. Use it to keep knowledge "
            "across sessions: maps of places explored, operator preferences, hazards to avoid, "
            "standing goals, observations about people, objects and pets.\n\n"
            "Actions:\n"
            "- remember: store a memory. Needs title (short label) and content; optional "
            "category (spatial, preference, hazard, fact, goal, person, object, other), tags "
            "(comma-separated), importance (1-5), meta (object).\n"
            "- recall: memories most relevant to a free-text query (optional category, limit); "
            "counts an access of each.\n"
            "- search: like recall, without counting accesses.\n"
            "- list: newest first (optional category, limit).\n"
            "- recent: most recently created or updated (optional limit).\n"
            "- update: change a memory by memory_id (any of title, content, category, tags, "
            "importance, meta).\n"
            "- forget: delete a memory by memory_id.\n"
            "- stats: count, count by category, full-text search status.\n\n"
            'Returns {"status": "success", "content": [{"text": ...}]} with memory rows as '
            "JSON in the text; errors come in the same envelope with status 'error'.",
            keep_null=True,
            destructive=True,  # its update and forget actions
        ),
    ),
)
