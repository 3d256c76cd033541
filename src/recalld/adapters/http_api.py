"""The REST API: a FastAPI app over one :class:`~recalld.service.MemoryService`.

``create_app`` builds the app (routes in :mod:`recalld.adapters.http_routes`,
shapes in :mod:`recalld.adapters.http_models`);
``serve`` runs it on uvicorn after checking the bind policy.

Layers of every request, outermost first:

1. metrics: request counts and latency by route template (Prometheus, ``/metrics``);
2. CORS, only when ``settings.cors_origins`` is set;
3. security headers (Content-Security-Policy, nosniff, no framing) on every
   response (:mod:`recalld.adapters.http_web`);
4. authentication: ``Authorization: Bearer <token>`` turned into a
   :class:`~recalld.tokens.Caller` (401 otherwise). Without any token
   configured, requests from loopback are trusted with every namespace; a
   server bound to a non-loopback address always requires a token. The memory
   browser's pages and assets (``/``, ``/ui/...``, ``/docs``) hold no data and
   are served without one;
5. the body size cap (413), ``max_import_bytes`` for ``/v1/import``, and the stall limit (408);
6. the routes, whose dependencies check the caller's scope (403).

Errors are translated once, here: :class:`ValidationError` → 422,
:class:`NotFoundError` → 404, :class:`ConflictError` → 409 (412 for
:class:`PreconditionFailedError`: an ``If-Match`` that no longer matches, an
``If-None-Match: *`` on a key that holds a memory),
:class:`DiskFullError` → 503 ``disk_full`` (saying so),
:class:`DatabaseUnavailableError` → 503 ``database_unavailable``,
:class:`DatabaseBusyError` → 503 ``database_busy``, :class:`DatabaseReadOnlyError` → 503
``database_read_only`` (each with ``Retry-After``; a
SQLite write lock held past ``RECALLD_LOCK_RETRY_SECONDS`` is ``database_busy`` too),
:class:`StorageError` → 503, :class:`EmbeddingError` → 503 (a server fault, not the caller's),
:class:`AuthenticationError` → 401, :class:`PermissionDeniedError` → 403,
FastAPI's own validation → 422; every error body is ``{"error": {"type",
"field", "message"}}``.

The OpenAPI document says what the server does: ``Authorization`` is optional
while the server trusts loopback callers (no token exists and it is bound to
loopback), required otherwise; ``limit`` fields carry ``RECALLD_MAX_LIMIT``.

Other ASGI apps (the MCP streamable-HTTP endpoint) join through
``extra_mounts``: each is mounted under its path behind the same
authentication and metrics, and its lifespan runs inside the app's.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote_to_bytes

from fastapi import FastAPI, Request
from fastapi.exceptions import HTTPException, RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CollectorRegistry, generate_latest
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, QueryParams
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from recalld import _validate as check
from recalld._version import __version__
from recalld.adapters._network import KEEP_ALIVE_SECONDS, bind_address, host_name, is_loopback
from recalld.adapters.dialects.failures import (
    READ_ONLY_MESSAGE,
    REPLACED_CAUSE,
    busy_message,
    replaced_message,
    stopped_send,
)
from recalld.adapters.http_access_log import RedactSecrets
from recalld.adapters.http_admin_routes import admin_router
from recalld.adapters.http_body import BodyLimit, BodyStalled, BodyTooLarge
from recalld.adapters.http_body_type import body_type_problem
from recalld.adapters.http_conditions import IF_MATCH, IF_NONE_MATCH
from recalld.adapters.http_connections import BoundedRequestHead
from recalld.adapters.http_context_routes import context_router, core_router
from recalld.adapters.http_graph_routes import graph_router
from recalld.adapters.http_head import HeadAsGet
from recalld.adapters.http_intention_routes import intentions_router
from recalld.adapters.http_mcp_sessions import owned_by
from recalld.adapters.http_metrics import RequestMetrics, StoreCollector
from recalld.adapters.http_models import BodyFieldError
from recalld.adapters.http_openapi import truthful_openapi
from recalld.adapters.http_origin import foreign_page
from recalld.adapters.http_paths import route_methods
from recalld.adapters.http_routes import CALLER_STATE_KEY, batbox_router, other_namespace, v1_router
from recalld.adapters.http_shutdown import AnswerInFlight, answering_server, replaced_under
from recalld.adapters.http_streams import (
    BoundedSend,
    StreamCut,
    abort_response,
    cut_when_revoked,
    end_when_revoked,
)
from recalld.adapters.http_token_share import TokenShare
from recalld.adapters.http_web import SecurityHeaders, is_public_asset, mount_browser
from recalld.config import Settings
from recalld.errors import (
    AuthenticationError,
    ConflictError,
    DatabaseBusyError,
    DatabaseLockedError,
    DatabaseReadOnlyError,
    DatabaseReplacedError,
    DatabaseUnavailableError,
    DiskFullError,
    EmbeddingError,
    NotFoundError,
    PermissionDeniedError,
    PreconditionFailedError,
    RecalldError,
    StorageError,
    ValidationError,
    WriteConflictError,
)
from recalld.service import MemoryService
from recalld.tokens import Caller, TokenRegistry
from recalld.transfer_lines import stopped_import_told

__all__ = ["ExtraMount", "check_bind", "create_app", "is_loopback", "mcp_mount", "serve"]

logger = logging.getLogger(__name__)

# Where recalld serve mounts the MCP endpoint (mcp_mount).
MCP_PATH = "/mcp"
PUBLIC_PATHS = frozenset({"/healthz", "/openapi.json"})
IMPORT_PATH = "/v1/import"
PARAMETER_SOURCES = frozenset({"body", "query", "path", "header", "cookie"})


@dataclass(frozen=True)
class ExtraMount:
    """Another ASGI app served under ``path`` (e.g. ``/mcp``), sharing the app's lifespan.

    ``lifespan`` (if given) is entered when the server starts and left when it
    stops, e.g. the MCP SDK's session manager ``run()``. The authenticated
    caller is in ``scope["state"]["recalld_caller"]``.
    """

    path: str
    app: ASGIApp
    lifespan: Callable[[], AbstractAsyncContextManager[Any]] | None = None
    exact: bool = False
    """Serve ``app`` at exactly ``path`` (an ASGI endpoint) instead of under it."""


def check_bind(host: str, tokens: TokenRegistry | None) -> None:
    """Refuse (:class:`ValidationError` on ``host``) a non-loopback bind without any token
    (``tokens`` None: there is no database yet, so no token either)."""
    if is_loopback(host) or (tokens is not None and tokens.any_active()):
        return
    raise ValidationError(
        "host",
        f"refusing to listen on {host}: no API token exists, so anyone who can reach this"
        " address could read and write every memory. Create one with"
        " `recalld token create NAME --scope NAMESPACE:read+write`, or bind 127.0.0.1.",
    )


# -- errors ----------------------------------------------------------------------


def _error(
    status: int,
    type_: str,
    message: str,
    field: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body = {"error": {"type": type_, "field": field, "message": message}}
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


HTTP_ERROR_TYPES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    409: "conflict",
    412: "precondition_failed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    503: "unavailable",
}
UNAUTHORIZED_HEADERS = {"WWW-Authenticate": "Bearer"}
# Headers by which a proxy names the client it forwarded for. The address uvicorn gives a
# request is rewritten from X-Forwarded-For by a peer in FORWARDED_ALLOW_IPS (read from
# the environment; with `*`, the first address named, which the client wrote), so a
# request carrying any of them is never trusted without a token: recalld decides who is
# on this machine by the connection alone (review of pass c67).
FORWARDING_HEADERS = ("X-Forwarded-For", "Forwarded", "X-Real-IP")


UNAVAILABLE_MESSAGE = "the database is unavailable; retry shortly"
UNAVAILABLE_HEADERS = {"Retry-After": "1"}
STORAGE_MESSAGE = "the database could not serve the request"
# What an import an unreachable server or another storage failure stopped says in place
# of the error's own (which may name the host or the file: the log's).
UNAVAILABLE_CAUSE = (
    "the database is unavailable (the server could not be reached): nothing of that"
    " line's chunk was written; retry shortly"
)
STORAGE_CAUSE = "the database failed: nothing of that line's chunk was written"
READ_ONLY_CAUSE = (
    "the database takes no writes (a hot standby, or default_transaction_read_only set):"
    " nothing of that line's chunk was written"
)
# A standby a failover is promoting takes writes in seconds; one named by mistake never.
READ_ONLY_HEADERS = {"Retry-After": "5"}
# An import a busy database stopped after some chunks: the cause, then where it stopped
# and what it kept (failures.busy_message, the MCP dialects' too, otherwise).
BUSY_CAUSE = (
    "the database is busy (a lock another client holds, a statement timeout, or every"
    " connection in use): nothing of that line's chunk was written; retry shortly"
)
LOCKED_CAUSE = (
    "the database stayed locked by another connection's write past"
    " RECALLD_LOCK_RETRY_SECONDS: nothing of that line's chunk was written; retry shortly"
)
# PostgreSQL's deadlock or serialization failure, still there after the import ran its
# chunk again: told as the conflict it is, not as a lock (review of pass c69).
CONFLICT_CAUSE = (
    "the write conflicted with other clients' writes at the same moment (a deadlock or"
    " serialization failure): nothing of that line's chunk was written; send it again"
)
# A disk is freed by someone, not by waiting: a client told when to come back need not
# poll (SQLite or PostgreSQL alike).
DISK_FULL_HEADERS = {"Retry-After": "60"}


def _unavailable(error: BaseException | None = None) -> JSONResponse:
    """503 for a database server that cannot be reached now (it may come back); for an
    import it stopped, where and what it kept."""
    told = None if error is None else stopped_import_told(error, UNAVAILABLE_CAUSE)
    stopped = None if error is None else stopped_send("database_unavailable", error)
    message = told or stopped or UNAVAILABLE_MESSAGE
    return _error(503, "database_unavailable", message, headers=UNAVAILABLE_HEADERS)


def _recalld_error(request: Request, error: Exception) -> JSONResponse:
    if isinstance(error, ValidationError):
        return _error(422, "validation_error", error.message, error.field)
    if isinstance(error, PreconditionFailedError):
        # Over HTTP the expected version is a header: If-None-Match where the request
        # gives it (then it gives no If-Match: http_conditions), else If-Match.
        header = IF_NONE_MATCH if IF_NONE_MATCH in request.headers else IF_MATCH
        return _error(412, "precondition_failed", error.message, header)
    if isinstance(error, ConflictError):
        return _error(409, "conflict", error.message, error.field)
    if isinstance(error, NotFoundError):
        return _error(404, "not_found", str(error))
    if isinstance(error, AuthenticationError):
        return _error(401, "unauthorized", str(error), headers=UNAUTHORIZED_HEADERS)
    if isinstance(error, PermissionDeniedError):
        return _error(403, "forbidden", str(error), error.field)
    if isinstance(error, DatabaseUnavailableError):
        logger.error("database unavailable: %s", error)
        return _unavailable(error)
    if isinstance(error, DatabaseBusyError):
        logger.error("database busy: %s", error)
        # SQLite's write lock says so; neither says where the database is (the log's).
        cause = (
            LOCKED_CAUSE
            if isinstance(error, DatabaseLockedError)
            else CONFLICT_CAUSE
            if isinstance(error, WriteConflictError)
            else BUSY_CAUSE
        )
        message = stopped_import_told(error, cause) or busy_message(error)
        return _error(503, "database_busy", message, headers=UNAVAILABLE_HEADERS)
    if isinstance(error, DiskFullError):
        logger.error("disk full: %s", error)
        return _error(503, "disk_full", str(error), headers=DISK_FULL_HEADERS)
    if isinstance(error, DatabaseReadOnlyError):
        logger.error("database read-only: %s", error)
        stopped = stopped_send("database_read_only", error)
        message = stopped_import_told(error, READ_ONLY_CAUSE) or stopped or READ_ONLY_MESSAGE
        return _error(503, "database_read_only", message, headers=READ_ONLY_HEADERS)
    if isinstance(error, StorageError):
        logger.error("storage error: %s", error)
        if isinstance(error, DatabaseReplacedError):
            # Only a restart helps, a stopped import or send included (integration read).
            cause = f"{REPLACED_CAUSE}: nothing of that line's chunk was written"
            message = stopped_import_told(error, cause) or replaced_message(error)
            return _error(503, "storage_error", message)
        stopped = stopped_send("storage_error", error)
        message = stopped_import_told(error, STORAGE_CAUSE) or stopped or STORAGE_MESSAGE
        return _error(503, "storage_error", message)
    if isinstance(error, EmbeddingError):
        logger.error("embedding error: %s", error)
        return _error(503, "embedding_error", "the embedding model could not serve the request")
    return _error(400, "bad_request", str(error))


def _request_validation_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    problems = error.errors()
    if not problems:
        return _error(422, "validation_error", "the request is invalid")
    first = problems[0]
    location = list(first.get("loc", ()))
    # A time field given a number: "at.datetime: Input should be a valid datetime".
    union = check.union_problem(problems)
    if union is not None:
        location, first = list(union[0]), {**first, "msg": union[1]}
    if (unread := body_type_problem(first, request.headers)) is not None:
        return _error(422, "validation_error", unread, "body")
    if first.get("type") == "json_invalid":
        reason = check.json_reason(str((first.get("ctx") or {}).get("error", "")))
        return _error(422, "validation_error", f"the body is not valid JSON: {reason}", "body")
    if len(location) > 1 and location[0] in PARAMETER_SOURCES:
        location = location[1:]
    field = check.field_path(location) or "body"
    if first.get("type") == "string_pattern_mismatch" and isinstance(first.get("input"), str):
        # The framework's message quotes the pattern (a graph route's entity name).
        problem = check.name_problem(first["input"])
        if problem is not None:
            return _error(422, "validation_error", problem, field)
    # A validator's ValueError reads "Value error, must be an integer" in pydantic's words.
    message = str(first.get("msg", "is invalid")).removeprefix("Value error, ")
    return _error(422, "validation_error", message, field)


def _allowed_methods(request: Request) -> str:
    """Every method some route serves at this path (each method is its own route, so
    Starlette's own ``Allow`` names only the first route's)."""
    methods: set[str] = set()
    for pattern, served in getattr(request.app.state, "route_methods", []):
        if pattern.match(request.url.path):
            methods.update(served)
    # HEAD is served wherever GET is (recalld.adapters.http_head), and nowhere else.
    if "GET" in methods:
        methods.add("HEAD")
    else:
        methods.discard("HEAD")
    return ", ".join(sorted(methods))


def _http_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, StarletteHTTPException)
    status = error.status_code
    if status == 400 and isinstance(error.__cause__, ValueError):
        # FastAPI's answer when decoding the body raised something other than a JSON
        # syntax error: a number past Python's 4,300 digits, for one. Malformed as well.
        reason = str(error.__cause__)
        return _error(422, "validation_error", f"the body is not valid JSON: {reason}", "body")
    field = error.field if isinstance(error, BodyFieldError) else None
    headers = dict(error.headers or {})
    if status == 401:
        headers.update(UNAUTHORIZED_HEADERS)
    if status == 405:
        headers["Allow"] = _allowed_methods(request)
    if request.scope["path"] == MCP_PATH and isinstance(error, BodyTooLarge | BodyStalled):
        # A chunked body over the cap is only found out inside /mcp: answered as at its door.
        return _too_large(request.scope, error)
    return _error(status, HTTP_ERROR_TYPES.get(status, "error"), str(error.detail), field, headers)


def _unexpected_error(_request: Request, error: Exception) -> JSONResponse:
    logger.exception("unexpected error", exc_info=error)
    return _error(500, "internal_error", "an unexpected error occurred")


# -- middleware ------------------------------------------------------------------


class _UrlText:
    """Refuse (422) a path or query whose percent-escapes are not UTF-8: decoded with
    replacement, ``/v1/kv/a%FFb`` and ``/v1/kv/a%FEb`` were the same key, so one PUT
    overwrote the other's value (a body's bytes are refused the same way)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            # Without raw_path (the servers recalld runs under send it) the path is already
            # decoded: nothing left to tell.
            given = (("path", scope.get("raw_path")), ("query", scope.get("query_string")))
            for field, raw in ((name, value) for name, value in given if value):
                try:
                    unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
                except UnicodeDecodeError as error:
                    message = f"is not valid UTF-8 (a %-escaped byte at offset {error.start})"
                    refusal = _refusal(scope, 422, "validation_error", message, field=field)
                    await refusal(scope, receive, send)
                    return
        await self.app(scope, receive, send)


class _Authentication:
    """Turn the bearer token into a Caller (401 when required and missing or invalid)."""

    def __init__(
        self,
        app: ASGIApp,
        tokens: TokenRegistry,
        *,
        require_auth: bool,
        allowed_origins: Sequence[str] = (),
    ) -> None:
        self.app = app
        self.tokens = tokens
        self.require_auth = require_auth
        self.allowed_origins = frozenset(origin.lower() for origin in allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or _is_public(scope):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        authorization = headers.get("authorization")
        given = len(headers.getlist("authorization"))
        if given > 1:
            # Which one would count? The first was taken, so a proxy's own token put
            # before the client's (or after it) decided whose namespaces were reached.
            message = f"give one Authorization header (this request has {given})"
            refusal = _refusal(scope, 401, "unauthorized", message, headers=UNAUTHORIZED_HEADERS)
            await refusal(scope, receive, send)
            return
        client = scope.get("client")
        client_host = client[0] if client else ""
        try:
            caller = await run_in_threadpool(
                self._caller,
                authorization,
                client_host,
                headers.get("host", ""),
                next((name for name in FORWARDING_HEADERS if name in headers), None),
                foreign_page(
                    str(scope.get("method", "")),
                    str(scope["path"]),
                    scope.get("query_string", b""),
                    headers,
                    self.allowed_origins,
                ),
            )
        except AuthenticationError as error:
            response = _refusal(
                scope, 401, "unauthorized", str(error), headers=UNAUTHORIZED_HEADERS
            )
            await response(scope, receive, send)
            return
        except DatabaseUnavailableError as error:
            logger.error("database unavailable while authenticating: %s", error)
            unavailable = _refusal(
                scope,
                503,
                "database_unavailable",
                UNAVAILABLE_MESSAGE,
                headers=UNAVAILABLE_HEADERS,
            )
            await unavailable(scope, receive, send)
            return
        except StorageError as error:
            logger.error("storage error while authenticating: %s", error)
            kind, retry = "storage_error", None
            if isinstance(error, DiskFullError):
                kind, retry = "disk_full", DISK_FULL_HEADERS
            elif isinstance(error, DatabaseBusyError):
                kind, retry = "database_busy", UNAVAILABLE_HEADERS
            elif isinstance(error, DatabaseReadOnlyError):
                kind, retry = "database_read_only", READ_ONLY_HEADERS
            replaced = isinstance(error, DatabaseReplacedError)  # not "the token store"'s fault
            said = DatabaseReplacedError.told if replaced else "the token store is unavailable"
            refusal = _refusal(scope, 503, kind, said, headers=retry)
            await refusal(scope, receive, send)
            return
        scope.setdefault("state", {})[CALLER_STATE_KEY] = caller
        try:
            await self.app(scope, receive, cut_when_revoked(scope, send, caller, self.tokens))
        except StreamCut:
            # Its token was revoked mid-stream (logged there): the body stays without its
            # end, and the connection is closed, so the client's read fails.
            abort_response(scope)

    def _caller(
        self,
        authorization: str | None,
        client_host: str,
        host: str,
        forwarded: str | None,
        foreign: str | None,
    ) -> Caller:
        if authorization is not None:
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise AuthenticationError("expected `Authorization: Bearer <token>`")
            return self.tokens.authenticate(token.strip())
        if self.require_auth or self.tokens.any_active():
            raise AuthenticationError("a bearer token is required")
        if forwarded is not None:
            raise AuthenticationError(
                f"without a token a request a proxy forwarded (it carries {forwarded}) is not"
                " trusted, whatever address it names: create a token (`recalld token create`)"
                " and send it, or reach this server directly"
            )
        if not is_loopback(client_host):
            raise AuthenticationError("a bearer token is required from outside this machine")
        if not is_loopback(host_name(host)):
            # A web page whose name was re-pointed at 127.0.0.1 (DNS rebinding) reaches
            # this server from the browser's loopback with its own name as the Host.
            raise AuthenticationError(
                f"without a token only requests addressed to this machine (Host: localhost,"
                f" 127.0.0.1 or [::1]) are trusted; this one was addressed to {host!r}"
            )
        if foreign is not None:
            # Any page a browser on this machine shows can send a form or a no-cors fetch
            # to 127.0.0.1 (cross-site request forgery): loopback trust is for this
            # server's own pages and for clients that are not web pages.
            raise AuthenticationError(
                f"without a token a request sent by another web page ({foreign}) is not"
                " trusted; the memory browser served here, and clients that are not web"
                " pages, are"
            )
        return Caller.trusted()


def _is_public(scope: Scope) -> bool:
    path = str(scope["path"])
    return path in PUBLIC_PATHS or is_public_asset(str(scope.get("method", "")), path)


def _refusal(
    scope: Scope,
    status: int,
    type_: str,
    message: str,
    headers: Mapping[str, str] | None = None,
    field: str | None = None,
) -> JSONResponse:
    """A refusal before the endpoint runs: the API's error shape, or for ``/mcp`` a
    JSON-RPC error at the same status (the MCP clients read that from an error status;
    anything else they report as a bare "Server returned an error response", hiding
    why: a missing token, one without access to the namespace, a body over the cap)."""
    if scope["path"] == MCP_PATH:
        text = message if field is None else f"{field}: {message}"
        body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": text}}
        return JSONResponse(body, status_code=status, headers=dict(headers or {}))
    return _error(status, type_, message, field, headers)


def _too_large(scope: Scope, error: HTTPException) -> JSONResponse:
    """The 413 or 408 answer of :class:`BodyLimit` (a JSON-RPC error for ``/mcp``, see
    :func:`_refusal`)."""
    if scope["path"] == MCP_PATH and isinstance(error, BodyTooLarge):
        return _refusal(scope, 413, "payload_too_large", f"{error.detail} (RECALLD_MAX_BODY_BYTES)")
    if scope["path"] == MCP_PATH:
        return _refusal(scope, 408, "request_timeout", str(error.detail), error.headers)
    return _http_error(Request(scope), error)


# -- the app ---------------------------------------------------------------------


def create_app(
    service: MemoryService,
    settings: Settings,
    *,
    tokens: TokenRegistry | None = None,
    require_auth: bool = False,
    extra_mounts: Sequence[ExtraMount] = (),
    on_shutdown: Callable[[], None] | None = None,
) -> FastAPI:
    """Build the REST app over ``service``.

    ``require_auth`` makes every request need a valid token even when none is
    configured (``serve`` sets it for non-loopback binds). The caller owns
    ``service``; ``on_shutdown`` (``serve`` passes ``service.close``) runs when
    the server stops gracefully, e.g. on SIGTERM, before uvicorn re-raises the
    signal and the process ends.
    """
    registry = tokens or TokenRegistry.for_store(service.store)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for mount in extra_mounts:
                if mount.lifespan is not None:
                    await stack.enter_async_context(mount.lifespan())
            yield
        if on_shutdown is not None:
            await run_in_threadpool(on_shutdown)

    app = FastAPI(
        title="recalld",
        version=__version__,
        summary="Long-term memory for AI agents.",
        lifespan=lifespan,
        # /docs is served from the package's own copy of Swagger UI (works offline).
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
    )
    app.state.service = service
    app.state.settings = settings
    app.state.tokens = registry
    truthful_openapi(app, settings, registry, require_auth=require_auth)
    routers = (
        batbox_router,
        v1_router,
        core_router,
        context_router,
        admin_router,
        intentions_router,
        graph_router,
    )
    for router in routers:
        app.include_router(router)
    mount_browser(app)
    metrics_registry = CollectorRegistry(auto_describe=True)
    metrics_registry.register(StoreCollector(service))

    @app.get("/healthz", tags=["admin"], summary="Health")
    async def healthz() -> dict[str, str]:
        """Liveness: the process is up (no database access, no authentication)."""
        return {"status": "ok"}

    @app.get("/metrics", include_in_schema=False, response_class=PlainTextResponse)
    def metrics(request: Request) -> PlainTextResponse:
        """Prometheus metrics; needs a token scoped to every namespace (``*``)."""
        caller = getattr(request.state, CALLER_STATE_KEY, None)
        if not isinstance(caller, Caller) or not caller.all_namespaces:
            raise PermissionDeniedError("metrics need a token scoped to every namespace (*)")
        return PlainTextResponse(
            generate_latest(metrics_registry), media_type="text/plain; version=0.0.4"
        )

    for mount in extra_mounts:
        if mount.exact:
            # A Route whose endpoint is not a function is served as a raw ASGI app.
            app.router.routes.append(Route(mount.path, endpoint=mount.app))
        else:
            app.mount(mount.path, mount.app)
    included = [route for router in routers for route in router.routes]
    app.state.route_methods = route_methods([*included, *app.router.routes])

    app.add_exception_handler(RecalldError, _recalld_error)
    app.add_exception_handler(RequestValidationError, _request_validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected_error)
    # add_middleware wraps what is there, so the last added runs first.
    app.add_middleware(
        BodyLimit,
        default_limit=settings.max_body_bytes,
        import_limit=settings.max_import_bytes,
        import_path=IMPORT_PATH,
        refuse=_too_large,
    )
    app.add_middleware(_UrlText)  # after the token is checked, before any route
    app.add_middleware(TokenShare)  # after the token is checked: its requests at once
    app.add_middleware(
        _Authentication,
        tokens=registry,
        require_auth=require_auth,
        allowed_origins=settings.cors_origins,
    )
    app.add_middleware(SecurityHeaders)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
            # /mcp's streamable HTTP: its session and protocol headers, and the session id
            # the page must read back from the initialize answer.
            allow_headers=[
                "Authorization",
                "Content-Type",
                "X-Recalld-Namespace",
                "Accept",
                "Last-Event-ID",
                "Mcp-Session-Id",
                "Mcp-Protocol-Version",
                # A conditional edit: the ETag read from a memory, sent back (http_conditions).
                "If-Match",
            ],
            # Retry-After: how long a 429 or 503 asks to wait, which a page could not read.
            expose_headers=["Mcp-Session-Id", "ETag", "Retry-After"],
        )
    app.add_middleware(RequestMetrics, registry=metrics_registry)
    # Outermost: a HEAD is then a GET to every layer (its token, its metrics, its route).
    app.add_middleware(HeadAsGet, exclude=[mount.path for mount in extra_mounts])
    return app


class _NamespaceGuard:
    """Let through only callers who may read and write ``namespace`` (403 otherwise), and
    requests that name no other namespace the REST way (422): /mcp works in the server's,
    and a client configured with the REST header would otherwise write there unawares.
    A stream its caller opened ends once the caller's token is revoked, and a session
    serves only the token that opened it (:mod:`recalld.adapters.http_mcp_sessions`)."""

    def __init__(self, app: ASGIApp, namespace: str, tokens: TokenRegistry) -> None:
        self.app = app
        self.namespace = namespace
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller = scope.get("state", {}).get(CALLER_STATE_KEY)
        if not isinstance(caller, Caller) or not caller.can(self.namespace, write=True):
            message = f"the MCP endpoint serves namespace {self.namespace!r}: this token may not"
            refusal = _refusal(scope, 403, "forbidden", message + " read and write it")
            await refusal(scope, receive, send)
            return
        query = QueryParams(scope.get("query_string", b""))
        other = other_namespace(Headers(scope=scope), query, self.namespace)
        if other is not None:
            message = f"{other[0]}: the MCP endpoint works in namespace {self.namespace!r} (the"
            message += f" server's), not {other[1]!r}; native tools take a namespace per call"
            await _refusal(scope, 422, "validation_error", message)(scope, receive, send)
            return
        owned = owned_by(scope, caller)  # a session answers only the token that opened it
        await self.app(owned, receive, end_when_revoked(send, caller, self.tokens))


def mcp_mount(service: MemoryService, settings: Settings, dialects: Sequence[str]) -> ExtraMount:
    """The MCP streamable-HTTP endpoint at ``/mcp``, over ``service``, in its namespace.

    It sits behind the API's authentication; a caller needs read+write on
    ``settings.namespace``, the namespace its tools use.
    """
    from contextlib import nullcontext

    from recalld.adapters.mcp_server import build_server, http_endpoint

    # Callers may be remote: media arguments must be base64, never server-side paths.
    server = build_server(lambda: nullcontext(service), dialects, media_paths=False)
    endpoint, lifespan = http_endpoint(
        server, path=MCP_PATH, host=settings.host, origins=settings.cors_origins
    )
    guard = _NamespaceGuard(endpoint, settings.namespace, TokenRegistry.for_store(service.store))
    return ExtraMount(MCP_PATH, guard, lifespan=lifespan, exact=True)


def serve(
    service: MemoryService,
    settings: Settings,
    *,
    extra_mounts: Sequence[ExtraMount] = (),
    log_level: str = "info",
) -> None:
    """Run the API on ``settings.host``:``settings.port`` until interrupted.

    Refuses a non-loopback address while no token exists; on such an address
    every request needs a token, even if all are later revoked.
    """
    import uvicorn

    tokens = TokenRegistry.for_store(service.store)
    check_bind(settings.host, tokens)
    answering = AnswerInFlight()  # a stop answers the MCP requests in flight first
    app = create_app(
        service,
        settings,
        tokens=tokens,
        require_auth=not is_loopback(settings.host),
        extra_mounts=[replace(mount, app=answering.wrap(mount.app)) for mount in extra_mounts],
        on_shutdown=service.close,
    )
    config = uvicorn.Config(
        BoundedSend(app),  # a client that stops reading is disconnected (http_streams)
        host=bind_address(settings.host),
        port=settings.port,
        log_level=log_level,
        server_header=False,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        http=BoundedRequestHead,  # no connection is held without a request (http_connections)
    )
    # Configures uvicorn's loggers; stops (its caller exits 1) once the file was replaced.
    server = answering_server(config, answering, stop_on=replaced_under(service))
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(found, RedactSecrets) for found in access.filters):
        access.addFilter(RedactSecrets())
    server.run()
