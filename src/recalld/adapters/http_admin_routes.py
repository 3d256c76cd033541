"""REST routes that describe the caller and the store: who am I, status, memories over time.

The memory browser (:mod:`recalld.web`) is built on these like any other client:

- ``GET /v1/session`` — the namespaces the bearer token may read, and whether
  it may write each (a trusted loopback caller without tokens may do
  everything), and the cap on every limit (``RECALLD_MAX_LIMIT``). Any
  authenticated caller may ask; it reveals only its own scopes, plus the names
  of existing namespaces to a caller scoped to every namespace.
- ``GET /v1/status`` — indexing health: the queue by state, embeddings per model,
  memories by index state, failed jobs with their errors, worker heartbeats (what
  moves with other namespaces' activity only for a caller of every namespace).
- ``GET /v1/stats/timeline`` — visible memories per day, week or month (UTC).

Every route checks the token's scope like the rest of ``/v1`` and changes nothing.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from recalld._time import parse_instant, utc_now
from recalld.adapters.http_dependencies import (
    CALLER_STATE_KEY,
    COMMON_ERRORS,
    Credentials,
    ReadNamespaces,
    Service,
)
from recalld.adapters.http_models import StrictJSONRoute
from recalld.config import Settings
from recalld.errors import AuthenticationError
from recalld.model import Status
from recalld.timeline import (
    MAX_BUCKETS,
    Timeline,
    TimelineField,
    TimelineUnit,
    memories_over_time,
)
from recalld.tokens import ALL_NAMESPACES, Caller

__all__ = ["NamespaceAccess", "SessionInfo", "admin_router"]

admin_router = APIRouter(prefix="/v1", route_class=StrictJSONRoute, responses=COMMON_ERRORS)


class NamespaceAccess(BaseModel):
    """A namespace the caller may read, and whether it may also write there."""

    namespace: str
    write: bool


class SessionInfo(BaseModel):
    """What the calling token may do (the memory browser builds its menus from this)."""

    authenticated: bool = Field(
        description="a bearer token was given (false: a trusted loopback caller, no tokens exist)"
    )
    token_id: str | None = Field(description="the token's public id, never its secret")
    default_namespace: str = Field(description="the namespace used when a request names none")
    all_namespaces: bool = Field(description="scoped to every namespace (*)")
    namespaces: list[NamespaceAccess] = Field(
        description="readable namespaces, sorted; with *, the namespaces that hold memories"
    )
    max_limit: int = Field(
        description="the largest limit (or k) a route accepts: RECALLD_MAX_LIMIT (the"
        " browser holds its own page sizes to it)"
    )


def _current_caller(request: Request) -> Caller:
    caller = getattr(request.state, CALLER_STATE_KEY, None)
    if not isinstance(caller, Caller):
        raise AuthenticationError("the request was not authenticated")
    return caller


@admin_router.get("/session", response_model=SessionInfo, tags=["admin"])
def session(request: Request, service: Service, _credentials: Credentials) -> SessionInfo:
    """The namespaces this token may read and write (no namespace header needed)."""
    caller = _current_caller(request)
    settings: Settings = request.app.state.settings
    names = {name for name in (caller.scopes or {}) if name != ALL_NAMESPACES}
    if caller.all_namespaces:
        names.update(service.namespaces())
        names.add(settings.namespace)
    return SessionInfo(
        authenticated=caller.token_id is not None,
        token_id=caller.token_id,
        default_namespace=caller.only_namespace or settings.namespace,
        all_namespaces=caller.all_namespaces,
        namespaces=[
            NamespaceAccess(namespace=name, write=caller.can(name, write=True))
            for name in sorted(names)
            if caller.can(name, write=False)
        ],
        max_limit=settings.max_limit,
    )


@admin_router.get("/status", response_model=Status, tags=["admin"])
def status(request: Request, service: Service, namespaces: ReadNamespaces) -> Status:
    """Indexing health of the namespaces in the header (comma-separated allowed).

    The queue by state, embeddings per model, memories by index state, the
    latest failed jobs with their errors, and every worker's heartbeat. What moves
    with every namespace's activity (``pending_scrubs``, each worker's ``state``,
    ``processed`` and ``failed``, the process's loaded index) is reported only to a
    caller of every namespace, else it is ``null``.
    """
    return service.status(namespaces, confined=not _current_caller(request).all_namespaces)


@admin_router.get("/stats/timeline", response_model=Timeline, tags=["admin"])
def timeline(
    service: Service,
    namespaces: ReadNamespaces,
    unit: Annotated[TimelineUnit, Query(description="bucket size (UTC calendar)")] = "day",
    buckets: Annotated[int, Query(ge=1, le=MAX_BUCKETS, description="how many buckets")] = 30,
    field: Annotated[
        TimelineField, Query(description="count by created_at (stored) or at (happened)")
    ] = "created",
    end: Annotated[
        str | None,
        Query(
            max_length=64,
            description="RFC 3339 date-time; the last bucket holds it (default now)",
            json_schema_extra={"format": "date-time"},
        ),
    ] = None,
) -> Timeline:
    """Visible memories per bucket, oldest first, over the namespaces in the header."""
    now = utc_now()
    until = now if end is None else parse_instant("end", end)
    return memories_over_time(
        service.store, namespaces, now=now, end=until, unit=unit, buckets=buckets, field=field
    )
