"""The chaoscore dialect: key/value memories with tags and TTLs (seed 001).

Records are memories of kind ``kv`` (what ``chaoscore_remember`` and
``PUT /v1/kv`` write), so every record has a ``key`` string as the seed's
schema says; other memories are not chaoscore records and never come back
here. ``chaoscore_remember`` upserts by key; ``chaoscore_recall`` finds records
by exact key, by query text or by tags (all given tags must match), or lists
the newest when given none; a key and a query together are refused (naming
``query``), since the exact key would leave the query unused.

A query matches a record's key as well as its value: the seed's own example
stores "the staging DB uses the Melbourne region" as ``key="staging.region"``,
``value="Melbourne (australiaeast)"``, so a search for "staging region" must
find it. Keys are a searched field of every memory (split at ``.``, ``_``,
``-``, ``/``), so the engine's search finds it.

Added because a key/value user needs it: ``chaoscore_forget`` deletes a key.
Every failure (a missing or mistyped argument, an unknown one, a refused value,
a full disk) comes back as text starting ``Error: `` that names the argument
(and the MCP error flag set).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import Field, StrictFloat

from recalld import _validate as check
from recalld._schema import count_default
from recalld.adapters.dialects.base import Dialect, ToolSpec, state_of
from recalld.adapters.dialects.failures import ToolCall, ToolFailure, Wording
from recalld.errors import NotFoundError, ValidationError
from recalld.model import TTL_RANGE, WHOLE_COUNT, Filters, Forgotten, Memory

__all__ = ["DIALECT"]

ResponseFormat = Annotated[
    Literal["markdown", "json"],
    Field(
        description="Output format: 'markdown' for human-readable or 'json' for machine-readable"
    ),
]


def _blank(query: str) -> bool:
    """A query chaoscore answers with the newest records: blank to Python (U+001C-U+001F,
    U+0085, as it always was) or to the service (a BOM: searching it is refused as blank)."""
    return not query.strip() or check.is_blank(query)


KIND = "kv"
# chaoscore_recall's limit when not given (the seed's default).
RECALL_LIMIT = 10
# chaoscore_recall given both a key and a (non-blank) query.
BOTH_KEY_AND_QUERY = (
    "give either key (the record under that exact key) or query (a search of values and"
    " keys), not both"
)
# What a write that dropped a value says while the scrub of its old bytes waits.
SCRUB_PENDING = (
    "Scrubbing its old bytes from the database files is pending (another reader holds"
    " an older snapshot); it finishes in the background."
)


def _record(memory: Memory) -> dict[str, Any]:
    assert memory.key is not None  # only keyed records are rendered
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
        f"### {record['key']}\n\n{record['value']}\n\n"
        f"- tags: {tags}\n- created: {record['createdAt']}\n"
        f"- updated: {record['updatedAt']}\n- expires: {expires}"
    )


def _text(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


def _error(failure: ToolFailure, _call: ToolCall) -> CallToolResult:
    """chaoscore's error shape: ``Error: <argument>: <why>`` (the seed's ``Error: ...``)."""
    return CallToolResult(
        content=[TextContent(type="text", text=f"Error: {failure.text()}")], is_error=True
    )


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
        StrictFloat | None,
        Field(
            description="Optional time-to-live in seconds. Omit for a record that never expires."
        ),
        TTL_RANGE,
    ] = None,
    response_format: ResponseFormat = "markdown",
) -> CallToolResult:
    service = state_of(ctx).service
    receipt, memory = service.put(
        {"content": value, "key": key, "kind": KIND, "tags": tags, "ttl_seconds": ttl_seconds}
    )
    record = _record(memory)
    if response_format == "json":
        return _text(json.dumps(record, ensure_ascii=False))
    verb = "Saved" if receipt.created else "Updated"
    # The seed's JSON record has no field for it, but an overwrite drops the old value:
    # the words say when its bytes are still in the files, as a forget's do.
    pending = f" {SCRUB_PENDING}" if receipt.scrub == "pending" else ""
    return _text(f"{verb} memory `{key}`.{pending}\n\n{_markdown(record)}")


def chaoscore_recall(
    ctx: Context,
    key: Annotated[str | None, Field(min_length=1, max_length=200, description="Exact key")] = None,
    query: Annotated[
        str | None, Field(description="Free text to search values and keys for")
    ] = None,
    tags: Annotated[list[str], Field(description="Only records with all of these tags")] = [],  # noqa: B006
    limit: Annotated[
        int | None,
        Field(
            ge=1,
            le=100,
            description="At most this many records",
            json_schema_extra=count_default(RECALL_LIMIT),
        ),
        WHOLE_COUNT,
    ] = None,
    response_format: ResponseFormat = "markdown",
) -> CallToolResult:
    service = state_of(ctx).service
    if key is not None and query is not None and not _blank(query):
        # A key names one record exactly and the query would not narrow it: answering the
        # key's record would pass the query over in silence.
        raise ValidationError("query", BOTH_KEY_AND_QUERY)
    # 10 when not given, or RECALLD_MAX_LIMIT when that is lower: a default is no request.
    limit = check.limit(limit, service.settings, default=RECALL_LIMIT)
    # Checked here so that an error names this tool's own argument.
    tags = list(check.tags(tags, service.settings))
    # A kv memory written without a key (possible outside chaoscore: REST, native, an
    # import) is no record: left out by the store, before the limit is cut (keyless ones
    # used to take the places of keyed records, leaving "No memories found.").
    filters = Filters(kind=KIND, tags_all=tags, has_key=True)
    if key is not None:
        try:
            memories = [service.get(key=key)]
        except NotFoundError:
            memories = []
        memories = [m for m in memories if m.kind == KIND and set(tags) <= set(m.tags)]
    elif query is not None and not _blank(query):
        memories = [hit.memory for hit in service.search(query, filters=filters, limit=limit)]
    else:
        memories = service.recent(filters=filters, limit=limit).memories
    records = [_record(memory) for memory in memories]
    if response_format == "json":
        return _text(json.dumps(records, ensure_ascii=False))
    if not records:
        return _text("No memories found.")
    noun = "memory" if len(records) == 1 else "memories"
    return _text(f"Found {len(records)} {noun}.\n\n" + "\n\n".join(map(_markdown, records)))


def chaoscore_forget(
    ctx: Context,
    key: Annotated[str, Field(min_length=1, max_length=200, description="Key to delete")],
    response_format: ResponseFormat = "markdown",
) -> CallToolResult:
    service = state_of(ctx).service
    try:
        memory = service.get(key=key)
    except NotFoundError:
        memory = None
    if memory is None or memory.kind != KIND:
        forgotten = Forgotten.of(False, "none")
    else:
        forgotten = service.forget(memory.id)
    if response_format == "json":
        return _text(json.dumps({"key": key, **forgotten.model_dump()}, ensure_ascii=False))
    if not forgotten.deleted:
        return _text(f"No memory with key `{key}`.")
    if forgotten.scrub == "pending":
        return _text(f"Deleted memory `{key}`. {SCRUB_PENDING}")
    return _text(f"Deleted memory `{key}`.")


DIALECT = Dialect(
    name="chaoscore",
    # The seed's input schema lists every argument; the engine calls the value "content".
    wording=Wording(shape=_error, renames={"content": "value"}),
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
            destructive=True,  # a key's earlier value is overwritten
            # Its seed: "making chaoscore_remember idempotent for a given key/value pair".
            idempotent=True,
        ),
        ToolSpec(
            "chaoscore_recall",
            chaoscore_recall,
            "Read key-value memories: by exact key, by free-text query (matching values and the "
            "words of keys: 'staging region' finds key staging.region), or by tags (records must "
            "carry all given tags); with none of them, the newest records. Expired records are "
            "never returned, nor are memories that are not key-value records. Returns markdown, "
            "or JSON records (key, value, tags, createdAt, updatedAt, expiresAt), or "
            "'Error: ...'.",
            read_only=True,
        ),
        ToolSpec(
            "chaoscore_forget",
            chaoscore_forget,
            "Permanently delete the record stored under a key. Returns whether it existed.",
            destructive=True,
            idempotent=True,
        ),
    ),
)
