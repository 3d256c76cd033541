"""The chaoscore dialect: key/value memories with tags and TTLs (seed 001).

``chaoscore_remember`` upserts by key; ``chaoscore_recall`` finds records by
exact key, by query text or by tags (all given tags must match), or lists the
newest when given none. Added because a key/value user needs it:
``chaoscore_forget`` deletes a key. Failures come back as text starting
``Error: `` with the underlying message (and the MCP error flag set).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from recalld.adapters.dialects.base import Dialect, ToolSpec, state_of
from recalld.errors import NotFoundError, RecalldError
from recalld.model import Filters, Forgotten, Memory

__all__ = ["DIALECT"]

ResponseFormat = Annotated[
    Literal["markdown", "json"],
    Field(
        description="Output format: 'markdown' for human-readable or 'json' for machine-readable"
    ),
]


def _record(memory: Memory) -> dict[str, Any]:
    return {
        "key": memory.key,
        "value": memory.content,
        "tags": memory.tags,
        "createdAt": memory.created_at.isoformat(),
        "updatedAt": memory.updated_at.isoformat(),
        "expiresAt": None if memory.expires_at is None else memory.expires_at.isoformat(),
    }


def _markdown(record: dict[str, Any]) -> str:
    tags = ", ".join(record["tags"]) or "none"
    expires = record["expiresAt"] or "never"
    return (
        f"### {record['key'] or '(no key)'}\n\n{record['value']}\n\n"
        f"- tags: {tags}\n- created: {record['createdAt']}\n"
        f"- updated: {record['updatedAt']}\n- expires: {expires}"
    )


def _text(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


def _error(error: Exception) -> CallToolResult:
    message = getattr(error, "message", None) or str(error)
    field = getattr(error, "field", None)
    text = f"Error: {field}: {message}" if field else f"Error: {message}"
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def chaoscore_remember(
    ctx: Context,
    key: Annotated[
        str,
        Field(
            min_length=1,
            max_length=200,
            description="Unique key for this memory. Writing an existing key overwrites its value.",
        ),
    ],
    value: Annotated[str, Field(description="The content to remember")],
    tags: Annotated[
        list[str], Field(description="Optional tags for later filtering with chaoscore_recall")
    ] = [],  # noqa: B006 - the published default is []
    ttl_seconds: Annotated[
        float | None,
        Field(
            description="Optional time-to-live in seconds. Omit for a record that never expires."
        ),
    ] = None,
    response_format: ResponseFormat = "markdown",
) -> CallToolResult:
    service = state_of(ctx).service
    try:
        receipt, memory = service.put(
            {"content": value, "key": key, "kind": "kv", "tags": tags, "ttl_seconds": ttl_seconds}
        )
        record = _record(memory)
    except RecalldError as error:
        return _error(error)
    if response_format == "json":
        return _text(json.dumps(record))
    verb = "Saved" if receipt.created else "Updated"
    return _text(f"{verb} memory `{key}`.\n\n{_markdown(record)}")


def chaoscore_recall(
    ctx: Context,
    key: Annotated[str | None, Field(min_length=1, max_length=200, description="Exact key")] = None,
    query: Annotated[str | None, Field(description="Free text to search values for")] = None,
    tags: Annotated[list[str], Field(description="Only records with all of these tags")] = [],  # noqa: B006
    limit: Annotated[int, Field(ge=1, le=100, description="At most this many records")] = 10,
    response_format: ResponseFormat = "markdown",
) -> CallToolResult:
    service = state_of(ctx).service
    filters = Filters(tags_all=tags)
    try:
        if key is not None:
            try:
                memories = [service.get(key=key)]
            except NotFoundError:
                memories = []
            memories = [m for m in memories if set(tags) <= set(m.tags)]
        elif query is not None and query.strip():
            memories = [hit.memory for hit in service.search(query, filters=filters, limit=limit)]
        else:
            memories = service.recent(filters=filters, limit=limit).memories
    except RecalldError as error:
        return _error(error)
    records = [_record(memory) for memory in memories]
    if response_format == "json":
        return _text(json.dumps(records))
    if not records:
        return _text("No memories found.")
    return _text(f"Found {len(records)} memories.\n\n" + "\n\n".join(map(_markdown, records)))


def chaoscore_forget(
    ctx: Context,
    key: Annotated[str, Field(min_length=1, max_length=200, description="Key to delete")],
    response_format: ResponseFormat = "markdown",
) -> CallToolResult:
    service = state_of(ctx).service
    try:
        memory = service.get(key=key)
        forgotten = service.forget(memory.id)
    except NotFoundError:
        forgotten = Forgotten.of(False, "none")
    except RecalldError as error:
        return _error(error)
    if response_format == "json":
        return _text(json.dumps({"key": key, **forgotten.model_dump()}))
    if not forgotten.deleted:
        return _text(f"No memory with key `{key}`.")
    if forgotten.scrub == "pending":
        return _text(
            f"Deleted memory `{key}`. Scrubbing its old bytes from the database files is"
            " pending (another reader holds an older snapshot); it finishes in the background."
        )
    return _text(f"Deleted memory `{key}`.")


DIALECT = Dialect(
    name="chaoscore",
    tools=(
        ToolSpec(
            "chaoscore_remember",
            chaoscore_remember,
            "Save key-value data to persistent memory, overwriting an existing key and updating "
            "its timestamp; optionally add tags, or a TTL after which the record is treated as "
            "expired and left out of chaoscore_recall. The record is durable and shared: it can "
            "be read later in this or a future session, after a restart, and over either "
            "transport, as long as both use the same database file. Example: 'remember that "
            "staging uses the Melbourne region' -> key='staging.region', value='Melbourne "
            "(australiaeast)'. To look records up, use chaoscore_recall instead. Returns the "
            "record (JSON: key, value, tags, createdAt, updatedAt, expiresAt) or 'Error: ...'.",
        ),
        ToolSpec(
            "chaoscore_recall",
            chaoscore_recall,
            "Read key-value memories: by exact key, by free-text query, or by tags (records must "
            "carry all given tags); with none of them, the newest records. Expired records are "
            "never returned. Returns markdown, or JSON records (key, value, tags, createdAt, "
            "updatedAt, expiresAt), or 'Error: ...'.",
            read_only=True,
        ),
        ToolSpec(
            "chaoscore_forget",
            chaoscore_forget,
            "Permanently delete the record stored under a key. Returns whether it existed.",
            destructive=True,
        ),
    ),
)
