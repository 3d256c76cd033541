"""The REST endpoints: batbox-compatible ``/remember`` ``/recall`` ``/status`` and native ``/v1``.

Request and response bodies are the service's own pydantic models
(:class:`~recalld.model.NewMemory`, :class:`~recalld.model.Receipt`,
:class:`~recalld.model.Memory`, :class:`~recalld.model.Hit` ...); only shapes
the service has no type for (batbox's field names, the key/value write, the
query envelope) are in :mod:`recalld.adapters.http_models`.

Namespaces: every request works in one namespace, named by the
``X-Recalld-Namespace`` header (default: the token's only namespace, else
``settings.namespace``). ``/v1/stats``
and ``/v1/export`` accept a comma-separated list. The authenticated
:class:`~recalld.tokens.Caller` (set by the auth middleware in
:mod:`recalld.adapters.http_api`) must be scoped to each namespace, with
``read+write`` for writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal, cast

from fastapi import APIRouter, Depends, Header, Path, Query, Request, Response, Security
from fastapi.responses import StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, QueryParams

from recalld import _validate as check
from recalld._schema import KEY_PATTERN, NAME_PATTERN, count_default
from recalld.adapters.http_conditions import expected_versions
from recalld.adapters.http_models import (
    BATBOX_RECALL_LIMIT,
    BatboxRecall,
    BatboxRemember,
    BatboxResult,
    BatboxStatus,
    EmbeddingStatus,
    ExplainRequest,
    GraphStatus,
    KeyValueWrite,
    QueryRequest,
    QueueStatus,
    StrictJSONRoute,
    error_responses,
)
from recalld.adapters.http_paths import VERBATIM
from recalld.config import Settings
from recalld.conversations import Conversation, ConversationReport
from recalld.errors import AuthenticationError, NotFoundError, ValidationError
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
from recalld.scoping import ID_PATTERN as SCOPE_ID_PATTERN
from recalld.scoping import mem0_namespace, requested_namespace
from recalld.service import MemoryService
from recalld.tokens import CALLER_STATE_KEY, Caller
from recalld.versions import entity_tag

__all__ = [
    "CALLER_STATE_KEY",
    "NAMESPACE_HEADER",
    "batbox_router",
    "other_namespace",
    "v1_router",
]

NAMESPACE_HEADER = "X-Recalld-Namespace"
NDJSON = "application/x-ndjson"
# The service's field names → batbox's, for error messages.
BATBOX_FIELDS = {"at": "captured_at", "meta": "metadata"}
LIST_LIMIT = 50
COMMON_ERRORS = error_responses(401, 403, 413, 422, 503)
# Time filters in a query string: RFC 3339 date-times (the published schema says so).
TIME_QUERY: dict[str, Any] = {"json_schema_extra": {"format": "date-time"}}
# Name filters in a query string: visible text, as a memory's own (the service checks).
NAME_FILTER_QUERY: dict[str, Any] = {"json_schema_extra": {"pattern": NAME_PATTERN}}
# Tag filters in a query string: as many and as long as a memory's own tags.
TAG_FILTER_QUERY: dict[str, Any] = {
    "json_schema_extra": {"maxItems": TAGS_SCHEMA["maxItems"], "items": TAGS_SCHEMA["items"]}
}


# -- dependencies -------------------------------------------------------------


def _service(request: Request) -> MemoryService:
    return cast(MemoryService, request.app.state.service)


def _settings(request: Request) -> Settings:
    return cast(Settings, request.app.state.settings)


def _caller(request: Request) -> Caller:
    caller = getattr(request.state, CALLER_STATE_KEY, None)
    if not isinstance(caller, Caller):
        raise AuthenticationError("the request was not authenticated")
    return caller


_bearer = HTTPBearer(
    auto_error=False,
    description="A token from `recalld token create` (not needed on loopback without tokens).",
)
Credentials = Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)]
# The header as the server reads it: blank (the default namespace) or one namespace
# (or, for /v1/stats and /v1/export, a comma-separated list), spaces around allowed.
_ONE_NAMESPACE = "[\\w.:@/-]{1,100}"
NamespaceHeader = Annotated[
    str | None,
    Header(
        alias=NAMESPACE_HEADER,
        description="the namespace to work in (default: the token's only namespace, else"
        " the server's RECALLD_NAMESPACE)",
        json_schema_extra={"pattern": f"^\\s*({_ONE_NAMESPACE})?\\s*$"},
    ),
]
NamespacesHeader = Annotated[
    str | None,
    Header(
        alias=NAMESPACE_HEADER,
        description="one namespace, or several separated by commas (default: the token's only"
        " namespace, else the server's RECALLD_NAMESPACE)",
        json_schema_extra={"pattern": f"^\\s*({_ONE_NAMESPACE}\\s*(,\\s*{_ONE_NAMESPACE}\\s*)*)?$"},
    ),
]


# Per-call scope in the query string: ``namespace``, or mem0's ``user_id``/``agent_id``
# (see recalld.scoping), the same on every /v1 route as in the native MCP tools.
NamespaceQuery = Annotated[
    str | None,
    Query(
        alias="namespace",
        description="the namespace to work in (instead of the X-Recalld-Namespace header)",
        json_schema_extra={"pattern": f"^{_ONE_NAMESPACE}$"},
    ),
]
NamespacesQuery = Annotated[
    str | None,
    Query(
        alias="namespace",
        description="one namespace, or several separated by commas (instead of the header)",
        json_schema_extra={"pattern": f"^{_ONE_NAMESPACE}(,{_ONE_NAMESPACE})*$"},
    ),
]
UserQuery = Annotated[
    str | None,
    Query(
        alias="user_id",
        description="mem0-style scope: works in namespace user:<id> (user:<id>/agent:<id>"
        " with agent_id)",
        json_schema_extra={"pattern": f"^{SCOPE_ID_PATTERN}$"},
    ),
]
AgentQuery = Annotated[
    str | None,
    Query(
        alias="agent_id",
        description="mem0-style scope: works in namespace agent:<id>",
        json_schema_extra={"pattern": f"^{SCOPE_ID_PATTERN}$"},
    ),
]


def other_namespace(headers: Headers, query: QueryParams, namespace: str) -> tuple[str, str] | None:
    """The first way a request names, as the REST API reads it, a namespace other than
    ``namespace``: ``(argument, namespace)`` for the header, the query's ``namespace``,
    or mem0's ``user_id``/``agent_id`` (``user:<id>``, ``agent:<id>``, joined by ``/``)."""
    named: list[tuple[str, str]] = []
    header = (headers.get(NAMESPACE_HEADER) or "").strip()
    if header:
        named.append((NAMESPACE_HEADER, header))
    if "namespace" in query:
        named.append(("namespace", query["namespace"]))
    kinds = [kind for kind in ("user", "agent") if f"{kind}_id" in query]
    if kinds:
        scoped = "/".join(f"{kind}:{query[f'{kind}_id']}" for kind in kinds)
        named.append((f"{kinds[0]}_id", scoped))
    return next((pair for pair in named if pair[1] != namespace), None)


def authorized_namespaces(
    request: Request,
    header: str | None,
    *,
    write: bool,
    several: bool,
    query: str | None = None,
    user_id: str | None = None,
    agent_id: str | None = None,
) -> list[str]:
    """The namespaces the request names (the query's ``namespace``/``user_id``/``agent_id``,
    else the header, else the token's only namespace or the server's default), checked
    against its token.

    Naming the namespace both in the header and in the query is allowed only when they
    agree; a namespace the token may not use is refused naming the argument that named it.
    """
    caller = _caller(request)
    text = header.strip() if header is not None and header.strip() else None
    from_header = None if text is None else [name.strip() for name in text.split(",")]
    field = "namespace"
    names = from_header or [caller.only_namespace or _settings(request).namespace]
    if query is not None or user_id is not None or agent_id is not None:
        for value, argument in ((query, "namespace"), (user_id, "user_id"), (agent_id, "agent_id")):
            if value is not None and not value.isascii():
                # What the published pattern says (\w is ASCII in JSON Schema's regexes).
                raise ValidationError(
                    argument, f"in the query string, give ASCII letters and digits (got {value!r})"
                )
        if query is not None and (user_id is not None or agent_id is not None):
            requested_namespace(query, user_id, agent_id)  # raises, naming the arguments
        if query is not None:
            named = query.split(",")  # exactly as given: the pattern allows no spaces
        else:
            mapped = mem0_namespace(user_id, agent_id)
            assert mapped is not None
            named = [mapped]
            field = "user_id" if user_id is not None else "agent_id"
        if from_header is not None and from_header != named:
            raise ValidationError(
                field,
                f"names {', '.join(named)!r} but the {NAMESPACE_HEADER} header names"
                f" {', '.join(from_header)!r}; give one of them",
            )
        names = named
    if len(names) > 1 and not several:
        raise ValidationError(field, "this endpoint works in exactly one namespace")
    namespaces = [check.namespace(name) for name in names]
    for namespace in namespaces:
        caller.authorize(namespace, write=write, field=field)
    return list(dict.fromkeys(namespaces))


async def _read_namespace(
    request: Request,
    _credentials: Credentials,
    namespace: NamespaceHeader = None,
    query: NamespaceQuery = None,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> str:
    return authorized_namespaces(
        request,
        namespace,
        write=False,
        several=False,
        query=query,
        user_id=user_id,
        agent_id=agent_id,
    )[0]


async def _write_namespace(
    request: Request,
    _credentials: Credentials,
    namespace: NamespaceHeader = None,
    query: NamespaceQuery = None,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> str:
    return authorized_namespaces(
        request,
        namespace,
        write=True,
        several=False,
        query=query,
        user_id=user_id,
        agent_id=agent_id,
    )[0]


async def _read_namespaces(
    request: Request,
    _credentials: Credentials,
    namespace: NamespacesHeader = None,
    query: NamespacesQuery = None,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> list[str]:
    return authorized_namespaces(
        request,
        namespace,
        write=False,
        several=True,
        query=query,
        user_id=user_id,
        agent_id=agent_id,
    )


async def _header_read_namespace(
    request: Request, _credentials: Credentials, namespace: NamespaceHeader = None
) -> str:
    return authorized_namespaces(request, namespace, write=False, several=False)[0]


async def _header_write_namespace(
    request: Request, _credentials: Credentials, namespace: NamespaceHeader = None
) -> str:
    return authorized_namespaces(request, namespace, write=True, several=False)[0]


Service = Annotated[MemoryService, Depends(_service)]
# batbox's own routes keep their shapes: the namespace comes from the header only.
BatboxReadNamespace = Annotated[str, Depends(_header_read_namespace)]
BatboxWriteNamespace = Annotated[str, Depends(_header_write_namespace)]
ReadNamespace = Annotated[str, Depends(_read_namespace)]
WriteNamespace = Annotated[str, Depends(_write_namespace)]
ReadNamespaces = Annotated[list[str], Depends(_read_namespaces)]


# -- batbox --------------------------------------------------------------------

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
    "/memories", response_model=Receipt, tags=["memories"], responses=error_responses(409)
)
def create_memory(body: NewMemory, service: Service, namespace: WriteNamespace) -> Receipt:
    """Store a memory (with ``key``: overwrite the memory holding that key)."""
    return service.remember_many([body], namespace=namespace)[0]


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
    answer = service.recall if _caller(request).can(namespace, write=True) else service.search
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
    responses=error_responses(404, 409),
)
def put_value(
    key: Key, body: KeyValueWrite, service: Service, namespace: WriteNamespace
) -> Receipt:
    """Store ``value`` under ``key`` (overwrites; ``ttl_seconds`` makes it expire)."""
    try:
        return service.remember(
            body.value,
            namespace=namespace,
            key=key,
            title=body.title,
            kind=body.kind,
            tags=body.tags,
            ttl_seconds=body.ttl_seconds,
            meta=body.meta,
        )
    except ValidationError as error:
        # The body calls the content "value": name the field the caller sent.
        if error.field != "content":
            raise
        raise ValidationError("value", error.message) from None


@v1_router.get(KV_PATH, response_model=Memory, tags=["key/value"], responses=error_responses(404))
def get_value(key: Key, service: Service, namespace: ReadNamespace) -> Memory:
    """The memory stored under ``key`` (expired keys are not found)."""
    return _stored_under(key, service, namespace)


@v1_router.delete(
    KV_PATH, response_model=Forgotten, tags=["key/value"], responses=error_responses(404)
)
def delete_value(key: Key, service: Service, namespace: WriteNamespace) -> Forgotten:
    """Forget the memory stored under ``key`` (the answer is as for a memory's delete)."""
    try:
        memory = _stored_under(key, service, namespace)
    except NotFoundError:
        return Forgotten.of(False, "none")
    return service.forget(memory.id, namespace=namespace)


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
    return service.stats(namespaces, confined=not _caller(request).all_namespaces)


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

    A bad line or item is reported with its number and the rest imports. A record
    without a ``namespace`` goes to the request's namespace; one the token may not
    write is refused (that line or item only).
    """
    service = _service(request)
    caller = _caller(request)
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
