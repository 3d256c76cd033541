"""The native REST endpoints under ``/v1``: memories, queries, key/value, stats, export, import.

Request and response bodies are the service's own pydantic models
(:class:`~recalld.model.NewMemory`, :class:`~recalld.model.Receipt`,
:class:`~recalld.model.Memory`, :class:`~recalld.model.Hit` ...); only shapes
the service has no type for (the key/value write, the query envelope) are in
:mod:`recalld.adapters.http_models`. The namespace of each request and its
checks against the token are in :mod:`recalld.adapters.http_dependencies`;
batbox's routes are in :mod:`recalld.adapters.http_batbox_routes`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from recalld import _validate as check
from recalld._schema import KEY_PATTERN, NAME_PATTERN, count_default
from recalld.adapters.http_batbox_routes import batbox_router
from recalld.adapters.http_conditions import (
    IF_MATCH,
    IF_NONE_MATCH,
    expected_versions,
    key_condition,
)
from recalld.adapters.http_dependencies import (
    CALLER_STATE_KEY,
    COMMON_ERRORS,
    NAMESPACE_HEADER,
    AgentQuery,
    Credentials,
    NamespaceHeader,
    NamespaceQuery,
    ReadNamespace,
    ReadNamespaces,
    Service,
    UserQuery,
    WriteNamespace,
    caller_of,
    other_namespace,
    service_of,
)
from recalld.adapters.http_models import (
    ExplainRequest,
    KeyValueWrite,
    QueryRequest,
    StrictJSONRoute,
    error_responses,
)
from recalld.adapters.http_paths import VERBATIM
from recalld.conversations import Conversation, ConversationReport
from recalld.errors import NotFoundError, ValidationError
from recalld.model import (
    KEY_MAX_CHARS,
    TAGS_SCHEMA,
    Explanation,
    Filters,
    Forgotten,
    Hit,
    ImportReport,
    Memory,
    MemoryPatch,
    NewMemory,
    Page,
    Receipt,
    Stats,
)
from recalld.service import MemoryService
from recalld.versions import entity_tag

# The dependencies and batbox's router are re-exported: the other route modules and
# the app import them from here.
__all__ = [
    "CALLER_STATE_KEY",
    "COMMON_ERRORS",
    "NAMESPACE_HEADER",
    "AgentQuery",
    "Credentials",
    "NamespaceHeader",
    "NamespaceQuery",
    "ReadNamespace",
    "ReadNamespaces",
    "Service",
    "UserQuery",
    "WriteNamespace",
    "batbox_router",
    "other_namespace",
    "v1_router",
]

NDJSON = "application/x-ndjson"
LIST_LIMIT = 50
# Time filters in a query string: RFC 3339 date-times (the published schema says so).
TIME_QUERY: dict[str, Any] = {"json_schema_extra": {"format": "date-time"}}
# Name filters in a query string: visible text, as a memory's own (the service checks).
NAME_FILTER_QUERY: dict[str, Any] = {"json_schema_extra": {"pattern": NAME_PATTERN}}
# Tag filters in a query string: as many and as long as a memory's own tags.
TAG_FILTER_QUERY: dict[str, Any] = {
    "json_schema_extra": {"maxItems": TAGS_SCHEMA["maxItems"], "items": TAGS_SCHEMA["items"]}
}


# -- /v1 -----------------------------------------------------------------------

v1_router = APIRouter(prefix="/v1", route_class=StrictJSONRoute, responses=COMMON_ERRORS)
MemoryId = Annotated[str, Path(min_length=1, max_length=64)]
Key = Annotated[
    str,
    Path(min_length=1, max_length=KEY_MAX_CHARS, json_schema_extra={"pattern": KEY_PATTERN}),
]
# The rest of the path, newlines included, so a key reaches the routes whole (http_paths).
KV_PATH = f"/kv/{{key:{VERBATIM}}}"


@v1_router.post(
    "/memories", response_model=Receipt, tags=["memories"], responses=error_responses(409, 412)
)
def create_memory(
    body: NewMemory,
    request: Request,
    response: Response,
    service: Service,
    namespace: WriteNamespace,
) -> Receipt:
    """Store a memory (with ``key``: overwrite the memory holding that key)."""
    # A keyed write takes the conditions of PUT /v1/kv/{key} (http_conditions): ignored,
    # If-None-Match: * let a client that meant "create only" overwrite the key's memory.
    condition = key_condition(request.headers)
    if body.key is None:
        if condition is None:
            return service.remember_many([body], namespace=namespace)[0]
        header = IF_NONE_MATCH if IF_NONE_MATCH in request.headers else IF_MATCH
        raise ValidationError(
            header, "applies only to a memory written with a key (the key names what it checks)"
        )
    # As PUT /v1/kv/{key} answers it, with a condition or without: the version an
    # If-Match of the next write names, without a read between.
    receipt, memory = service.put(
        body, namespace=namespace, dedupe=True, expected_version=condition
    )
    response.headers["ETag"] = entity_tag(memory)
    return receipt


# The listing's query parameters for the tag filters, by the filter fields they fill.
TAG_PARAMETERS = {"tags_any": "tag", "tags_all": "all_tag"}


@v1_router.get("/memories", response_model=Page, tags=["memories"])
def list_memories(
    service: Service,
    namespace: ReadNamespace,
    kind: Annotated[str | None, Query(**NAME_FILTER_QUERY)] = None,
    category: Annotated[str | None, Query(**NAME_FILTER_QUERY)] = None,
    speaker: Annotated[
        str | None, Query(description="only what this speaker said", **NAME_FILTER_QUERY)
    ] = None,
    has_key: Annotated[
        bool | None,
        Query(description="true: only memories written with a key; false: only those without"),
    ] = None,
    tag: Annotated[
        list[str] | None, Query(description="has any of these tags", **TAG_FILTER_QUERY)
    ] = None,
    all_tag: Annotated[
        list[str] | None, Query(description="has every one of these", **TAG_FILTER_QUERY)
    ] = None,
    since: Annotated[str | None, Query(description="at >= this time", **TIME_QUERY)] = None,
    until: Annotated[str | None, Query(description="at < this time", **TIME_QUERY)] = None,
    created_since: Annotated[str | None, Query(**TIME_QUERY)] = None,
    created_until: Annotated[str | None, Query(**TIME_QUERY)] = None,
    order: Annotated[
        Literal["created", "updated"], Query(description="newest created, or recently updated")
    ] = "created",
    limit: Annotated[
        int | None,
        Query(
            ge=1,
            description="at most RECALLD_MAX_LIMIT (1000); 50, or the cap when lower, if left out",
            json_schema_extra=count_default(LIST_LIMIT),
        ),
    ] = None,
    cursor: Annotated[
        str | None,
        Query(
            description="next_cursor of the previous page (opaque; any other value is refused)",
            json_schema_extra={"pattern": "^[A-Za-z0-9_-]+$"},
        ),
    ] = None,
) -> Page:
    """Memories newest first, a page at a time (filters apply before the limit)."""
    try:
        filters = Filters(
            kind=kind,
            category=category,
            speaker=speaker,
            has_key=has_key,
            tags_any=tag or [],
            tags_all=all_tag or [],
            since=since,
            until=until,
            created_since=created_since,
            created_until=created_until,
        )
        lister = service.list_memories if order == "created" else service.recent
        # 50 in either order (the library's recent() alone defaults to 10).
        limit = check.limit(limit, service.settings, default=LIST_LIMIT)
        return lister(filters=filters, limit=limit, cursor=cursor, namespace=namespace)
    except ValidationError as error:
        # Name the query parameter the caller sent (tag, all_tag), not the filter's field.
        raise check.renamed(error, TAG_PARAMETERS) from None


@v1_router.get(
    "/memories/{memory_id}",
    response_model=Memory,
    tags=["memories"],
    responses=error_responses(404),
)
def get_memory(
    memory_id: MemoryId, response: Response, service: Service, namespace: ReadNamespace
) -> Memory:
    """One memory by id."""
    # Its ETag is its version, for If-Match on PATCH (http_conditions); the docstring is
    # the OpenAPI description, kept as it was.
    memory = service.get(memory_id, namespace=namespace)
    response.headers["ETag"] = entity_tag(memory)
    return memory


@v1_router.patch(
    "/memories/{memory_id}",
    response_model=Memory,
    tags=["memories"],
    responses=error_responses(404, 409, 412),
)
def patch_memory(
    memory_id: MemoryId,
    body: MemoryPatch,
    request: Request,
    response: Response,
    service: Service,
    namespace: WriteNamespace,
) -> Memory:
    """Change only the fields given; ``null`` clears an optional field."""
    # With If-Match (a GET's ETag): 412, nothing changed, if edited since (http_conditions).
    expected = expected_versions(request.headers)
    changes = body.model_dump(exclude_unset=True)
    memory = service.update(memory_id, namespace=namespace, expected_version=expected, **changes)
    response.headers["ETag"] = entity_tag(memory)
    return memory


@v1_router.delete(
    "/memories/{memory_id}",
    response_model=Forgotten,
    tags=["memories"],
    responses=error_responses(412),
)
def delete_memory(
    memory_id: MemoryId, request: Request, service: Service, namespace: WriteNamespace
) -> Forgotten:
    """Forget a memory and every trace of it; ``deleted`` says whether it existed,
    ``scrub`` whether its bytes are gone from the files (``pending``: a reader still
    holds an older snapshot; it finishes in the background)."""
    expected = expected_versions(request.headers)  # as on PATCH: 412 if edited since
    return service.forget(memory_id, namespace=namespace, expected_version=expected)


@v1_router.post("/recall", response_model=list[Hit], tags=["query"])
def recall(
    request: Request, body: QueryRequest, service: Service, namespace: ReadNamespace
) -> list[Hit]:
    """Ranked memories for ``query``; counts an access of each one returned (with write
    access: a ``read`` token's recall changes nothing, as a search)."""
    answer = service.recall if caller_of(request).can(namespace, write=True) else service.search
    return answer(
        body.query,
        filters=body.filters,
        limit=body.limit,
        namespace=namespace,
        min_score=body.min_score,
    )


@v1_router.post("/search", response_model=list[Hit], tags=["query"])
def search(body: QueryRequest, service: Service, namespace: ReadNamespace) -> list[Hit]:
    """The same ranking as recall; changes nothing."""
    return service.search(
        body.query,
        filters=body.filters,
        limit=body.limit,
        namespace=namespace,
        min_score=body.min_score,
    )


@v1_router.post(
    "/explain", response_model=Explanation, tags=["query"], responses=error_responses(404)
)
def explain(body: ExplainRequest, service: Service, namespace: ReadNamespace) -> Explanation:
    """Why recall of ``query`` does or does not return memory ``id``: the stage that dropped
    it, its rank, score and every feature; a memory of another namespace is not found."""
    return service.explain(
        body.query,
        body.id,
        filters=body.filters,
        limit=body.limit,
        namespace=namespace,
        min_score=body.min_score,
    )


@v1_router.put(
    KV_PATH,
    response_model=Receipt,
    tags=["key/value"],
    responses=error_responses(404, 409, 412),
)
def put_value(
    key: Key,
    body: KeyValueWrite,
    request: Request,
    response: Response,
    service: Service,
    namespace: WriteNamespace,
) -> Receipt:
    """Store ``value`` under ``key`` (overwrites; ``ttl_seconds`` makes it expire)."""
    # With If-Match (a GET's ETag, or *): 412, nothing written, unless the key still
    # holds that version; with If-None-Match: *, unless it holds none (http_conditions).
    # The ETag answered is the stored version.
    condition = key_condition(request.headers)
    try:
        receipt, memory = service.put(
            {
                "content": body.value,
                "key": key,
                "title": body.title,
                "kind": body.kind,
                "tags": body.tags,
                "ttl_seconds": body.ttl_seconds,
                "meta": body.meta,
            },
            namespace=namespace,
            dedupe=True,
            expected_version=condition,
        )
    except ValidationError as error:
        # The body calls the content "value": name the field the caller sent.
        if error.field != "content":
            raise
        raise ValidationError("value", error.message) from None
    response.headers["ETag"] = entity_tag(memory)
    return receipt


@v1_router.get(KV_PATH, response_model=Memory, tags=["key/value"], responses=error_responses(404))
def get_value(key: Key, response: Response, service: Service, namespace: ReadNamespace) -> Memory:
    """The memory stored under ``key`` (expired keys are not found)."""
    memory = _stored_under(key, service, namespace)
    response.headers["ETag"] = entity_tag(memory)  # for If-Match on the PUT
    return memory


@v1_router.delete(
    KV_PATH, response_model=Forgotten, tags=["key/value"], responses=error_responses(404, 412)
)
def delete_value(
    key: Key, request: Request, service: Service, namespace: WriteNamespace
) -> Forgotten:
    """Forget the memory stored under ``key`` (the answer is as for a memory's delete)."""
    expected = expected_versions(request.headers)  # as on a memory's DELETE: 412 if stale
    try:
        memory = _stored_under(key, service, namespace)
    except NotFoundError:
        return Forgotten.of(False, "none")
    return service.forget(memory.id, namespace=namespace, expected_version=expected)


def _stored_under(key: str, service: MemoryService, namespace: str) -> Memory:
    """The memory under ``key``. A key no write may use (a newline, ``..``: what the PUT
    refuses) that holds no memory is refused as the PUT refuses it, naming ``key`` and the
    rule; one stored under such a key by an older version is still found."""
    try:
        return service.get(key=key, namespace=namespace)
    except NotFoundError:
        check.key(key)
        raise


@v1_router.get("/stats", response_model=Stats, tags=["admin"])
def stats(request: Request, service: Service, namespaces: ReadNamespaces) -> Stats:
    """Counts by category, kind and namespace over the namespaces in the header.

    ``db_size_bytes`` (the whole file's size) and ``pending_scrubs`` (every
    namespace's) move with every namespace's writes: they are reported only to a
    caller of every namespace (a ``*`` token, or a trusted loopback caller when no
    token exists), else they are ``null``.
    """
    return service.stats(namespaces, confined=not caller_of(request).all_namespaces)


@v1_router.get(
    "/export",
    response_class=StreamingResponse,
    tags=["admin"],
    responses={200: {"content": {NDJSON: {"schema": {"type": "string"}}}, "description": "JSONL"}},
)
def export(service: Service, namespaces: ReadNamespaces) -> StreamingResponse:
    """Every live memory of the namespaces as JSON lines, streamed."""
    lines: Iterator[str] = (line + "\n" for line in service.export(namespaces))
    return StreamingResponse(lines, media_type=NDJSON)


ImportFormat = Literal["auto", "recalld", "mcp-memory", "mem0", "hermes", "chatgpt", "claude"]


@v1_router.post(
    "/import",
    response_model=ImportReport,
    tags=["admin"],
    openapi_extra={
        "requestBody": {
            "required": False,
            "content": {NDJSON: {"schema": {"type": "string"}}},
        }
    },
)
async def import_memories(
    request: Request,
    namespace: WriteNamespace,
    format: Annotated[
        ImportFormat,
        Query(description="auto (told by content), or the format of the body (see the README)"),
    ] = "auto",
    name: Annotated[
        str | None,
        Query(
            max_length=255,
            description="the uploaded file's name (Hermes' MEMORY.md and USER.md are told by it)",
            json_schema_extra={"pattern": NAME_PATTERN},
        ),
    ] = None,
    include_tools: Annotated[bool, Query(description="chat exports: keep tool messages")] = False,
    include_system: Annotated[
        bool, Query(description="chat exports: keep system messages")
    ] = False,
) -> ImportReport:
    """Import the body: a `recalld export` (JSON lines), or another tool's export
    (``format``: mcp-memory, mem0, hermes, chatgpt, claude; ``auto`` tells them apart).

    A bad line or item is reported with its number and the rest imports (the first
    1000 refusals are listed; ``errors_total`` counts them all). A record
    without a ``namespace`` goes to the request's namespace; one the token may not
    write is refused (that line or item only).
    """
    service = service_of(request)
    caller = caller_of(request)
    # As bytes: each line, or the whole document, is read as UTF-8 and refused when not.
    body = await request.body()
    if name is not None:
        check.name_text(name, "name")
    return await run_in_threadpool(
        lambda: service.import_text(
            body,
            format=format,
            name=name,
            namespace=namespace,
            may_write=lambda target: caller.can(target, write=True),
            include_tools=include_tools,
            include_system=include_system,
        )
    )


@v1_router.post(
    "/conversations",
    response_model=ConversationReport,
    tags=["memories"],
    responses=error_responses(409),
)
def remember_conversation(
    body: Conversation, service: Service, namespace: WriteNamespace
) -> ConversationReport:
    """Remember a conversation, one memory per message, in order (see the README).

    Messages carry ``role`` or ``speaker``, ``content``, and optionally ``at`` and ``id``
    (or the OpenAI chat format's ``tool_calls`` and ``tool_call_id``); system and tool
    messages are skipped unless ``include_system``/``include_tools``. Sending the same
    conversation again changes nothing; a longer one adds its new turns. Without a
    ``conversation`` id no stored turn is changed (give it to edit turns, and when
    sending only the latest messages); a conflict is a 409 naming the field.
    """
    return service.remember_conversation(body, namespace=namespace)


@v1_router.get(
    "/memories/{memory_id}/turns",
    response_model=Page,
    tags=["memories"],
    responses=error_responses(404),
)
def conversation_turns(
    memory_id: MemoryId,
    service: Service,
    namespace: ReadNamespace,
    before: Annotated[
        int | None,
        Query(ge=0, le=100, description="earlier turns (2)", json_schema_extra=count_default(2)),
    ] = None,
    after: Annotated[
        int | None,
        Query(ge=0, le=100, description="later turns (2)", json_schema_extra=count_default(2)),
    ] = None,
) -> Page:
    """The turns around a conversation turn, in order, itself included (a memory that is
    no conversation turn comes back alone)."""
    turns = service.turns(memory_id, before=before, after=after, namespace=namespace)
    return Page(memories=turns)
