"""REST routes for core memory (issue 7) and involuntary recall (issue 6).

- ``GET /v1/core`` — both targets and the rendered block; ``POST /v1/core/{target}``
  — one operation or an ``operations`` batch, applied atomically.
- ``POST /v1/experiences`` — remember with context; ``POST /v1/context/recall``
  — pull recall over the context channels (no side effects).
- ``POST /v1/sense`` — the webhook for phones, hubs and sensors: strong matches
  fire and are queued; ``GET /v1/recollections/pending?drain=`` — delivery
  (``POST /v1/recollections/drain`` drains without a state-changing GET).

Media arrive as base64 only: a remote caller never makes the server read its files.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from recalld.adapters.http_models import StrictJSONRoute, error_responses
from recalld.adapters.http_routes import (
    COMMON_ERRORS,
    Credentials,
    NamespaceHeader,
    ReadNamespace,
    Service,
    WriteNamespace,
    authorized_namespaces,
)
from recalld.core_memory import (
    CoreEditResult,
    CoreMemoryFullError,
    CoreOperation,
    CoreTargetState,
    requested_operations,
)
from recalld.model import Hit, Memory
from recalld.recollection import Cue, Recollection, flat_place
from recalld.service import MemoryService

__all__ = ["context_router", "core_router"]

core_router = APIRouter(
    prefix="/v1/core", tags=["core memory"], route_class=StrictJSONRoute, responses=COMMON_ERRORS
)
context_router = APIRouter(
    prefix="/v1", tags=["involuntary recall"], route_class=StrictJSONRoute, responses=COMMON_ERRORS
)

Target = Annotated[Literal["user", "memory"], Path(description="user or memory")]
Base64 = Annotated[str | None, Field(max_length=40_000_000, description="base64 data")]


class CoreView(BaseModel):
    """Both targets of the core memory and the block injected into prompts."""

    user: CoreTargetState
    memory: CoreTargetState
    block: str


class CoreEdit(BaseModel):
    """One operation (action, content/new_text, old_text) or an ``operations`` batch."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["add", "patch", "remove"] | None = None
    content: str | None = None
    new_text: str | None = None
    old_text: str | None = None
    operations: list[CoreOperation] | None = None


class ContextFields(BaseModel):
    """The context of a cue or an experience (flat, as in the madeleine tools)."""

    model_config = ConfigDict(extra="forbid")

    geohash: str | None = Field(default=None, max_length=12)
    lat: float | None = Field(default=None, ge=-90, le=90)
    lon: float | None = Field(default=None, ge=-180, le=180)
    at: str | None = Field(default=None, max_length=64, description="ISO 8601 with offset")
    image: Base64 = None
    audio: Base64 = None
    biometrics: dict[str, float] | None = None

    def place(self) -> dict[str, Any] | None:
        """The place as the engine takes it, or None."""
        return flat_place(self.geohash, self.lat, self.lon)

    def cue(self, service: MemoryService, text: str | None, tags: list[str]) -> Cue:
        """This context, with ``text`` and ``tags``, as a validated cue (base64 media only)."""
        return service.recollections.cue(
            text=text,
            place=self.place(),
            at=self.at,
            tags=tags,
            image=self.image,
            audio=self.audio,
            biometrics=self.biometrics,
            allow_paths=False,
        )


class Experience(ContextFields):
    """A memory with the context it happened in."""

    content: str
    tags: list[str] = Field(default_factory=list)
    salience: float | None = Field(default=None, ge=0, le=1)
    title: str | None = None


class ContextRecall(ContextFields):
    """A pull query: only the cues given are compared."""

    query: str | None = Field(default=None, max_length=10_000)
    tags: list[str] = Field(default_factory=list)
    k: int = Field(default=5, ge=1, le=100)


class Sense(ContextFields):
    """What is perceived now; the current time is always part of the cue."""

    text: str | None = Field(default=None, max_length=10_000)
    tags: list[str] = Field(
        default_factory=list, description="labels of the situation (for intentions' tag triggers)"
    )


@core_router.get("", response_model=CoreView)
def read_core(service: Service, namespace: ReadNamespace) -> CoreView:
    """The core memory of the namespace, as stored and as rendered for prompts."""
    core = service.core
    return CoreView(
        user=core.state("user", namespace=namespace),
        memory=core.state("memory", namespace=namespace),
        block=core.render(namespace=namespace),
    )


@core_router.post("/{target}", response_model=CoreEditResult)
def edit_core(
    target: Target, body: CoreEdit, service: Service, namespace: WriteNamespace
) -> CoreEditResult | JSONResponse:
    """Apply one operation or a batch atomically; the limit is checked on the final result.

    A batch that would end over the limit changes nothing and answers 422 with
    the current ``entries`` and ``usage``, so the caller can send one batch
    that frees room.
    """
    operations = requested_operations(
        body.action, body.content, body.new_text, body.old_text, body.operations
    )
    try:
        return service.core.apply(target, operations, namespace=namespace)
    except CoreMemoryFullError as full:
        return JSONResponse(
            status_code=422,
            content={
                "error": {
                    "type": "core_memory_full",
                    "field": full.field,
                    "message": full.message,
                    "entries": full.state.entries,
                    "usage": full.state.usage,
                }
            },
        )


@context_router.post(
    "/experiences",
    response_model=Memory,
    status_code=201,
    responses=error_responses(409),
)
def remember_experience(body: Experience, service: Service, namespace: WriteNamespace) -> Memory:
    """Store a memory with its place, time, tags, salience and signal features."""
    return service.recollections.remember(
        body.content,
        title=body.title,
        place=body.place(),
        at=body.at,
        tags=body.tags,
        salience=body.salience,
        image=body.image,
        audio=body.audio,
        biometrics=body.biometrics,
        namespace=namespace,
        allow_paths=False,
    )


@context_router.post("/context/recall", response_model=list[Hit])
def recall_context(body: ContextRecall, service: Service, namespace: ReadNamespace) -> list[Hit]:
    """Memories whose context matches the cue, best first, with per-channel similarities."""
    cue = body.cue(service, body.query, body.tags)
    return service.recollections.recall(cue, k=body.k, namespace=namespace)


@context_router.post("/sense", response_model=list[Recollection])
def sense(body: Sense, service: Service, namespace: WriteNamespace) -> list[Recollection]:
    """A webhook for phones, smart-home hubs and sensors: report the present context.

    Strongly matching memories fire, and so do intentions whose triggers hold
    (items with ``kind: "reminder"``): they are returned and queued for every
    consumer of the pending queue (MCP subscribers are notified).
    """
    return service.recollections.sense(body.cue(service, body.text, body.tags), namespace=namespace)


@context_router.get("/recollections/pending", response_model=list[Recollection])
def pending_recollections(
    request: Request,
    service: Service,
    _credentials: Credentials,
    namespace_header: NamespaceHeader = None,
    drain: Annotated[bool, Query(description="remove what is returned (false: peek)")] = True,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> list[Recollection]:
    """Queued recollections, oldest first; ``drain=true`` delivers each exactly once.

    Draining changes the queue, so it needs write access; peeking needs read.
    """
    namespace = authorized_namespaces(request, namespace_header, write=drain, several=False)[0]
    return service.recollections.pending(drain=drain, limit=limit, namespace=namespace)


@context_router.post("/recollections/drain", response_model=list[Recollection])
def drain_recollections(
    service: Service,
    namespace: WriteNamespace,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> list[Recollection]:
    """Deliver queued recollections, oldest first, each exactly once.

    The same as ``GET /v1/recollections/pending?drain=true``, as a POST for
    clients that never change state with a GET (the memory browser).
    """
    return service.recollections.pending(drain=True, limit=limit, namespace=namespace)
