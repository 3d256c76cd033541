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
from pydantic import BaseModel, ConfigDict, Field, StrictFloat

from recalld._schema import (
    DATE_TIME,
    NO_NUL_PATTERN,
    TEXT_PATTERN,
    TRIMMED_NAME_PATTERN,
    count_default,
    extra,
    nullable,
    replaced,
)
from recalld.adapters.http_dependencies import (
    COMMON_ERRORS,
    AgentQuery,
    Credentials,
    NamespaceHeader,
    NamespaceQuery,
    ReadNamespace,
    Service,
    UserQuery,
    WriteNamespace,
    authorized_namespaces,
)
from recalld.adapters.http_models import StrictJSONRoute, error_responses
from recalld.context.signals import MAX_BIOMETRIC_MAGNITUDE
from recalld.core_memory import (
    CoreEditResult,
    CoreMemoryFullError,
    CoreOperation,
    CoreTargetState,
    named_as_given,
    operation_forms,
    requested_operations,
)
from recalld.errors import ValidationError
from recalld.model import (
    GEOHASH_PATTERN,
    LATITUDE_RANGE,
    LONGITUDE_RANGE,
    SALIENCE_RANGE,
    TAGS_SCHEMA,
    WHOLE_COUNT,
    Hit,
    Memory,
)
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
# No fixed maximum: the service holds it to RECALLD_MAX_LIMIT (published in /openapi.json).
PendingLimit = Annotated[
    int | None,
    Query(
        ge=1,
        description="at most RECALLD_MAX_LIMIT (1000); 50, or the cap when lower, if left out",
        json_schema_extra=count_default(50),
    ),
]
# Non-empty, padded base64 (what base64.b64decode(validate=True) accepts).
BASE64_PATTERN = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
Base64 = Annotated[
    str | None,
    Field(
        max_length=40_000_000,
        description="base64 data",
        json_schema_extra=extra(pattern=BASE64_PATTERN, contentEncoding="base64"),
    ),
]
# What the engine takes as biometrics: up to 32 named readings, each a bounded number.
BIOMETRICS_SCHEMA = {
    "type": "object",
    "maxProperties": 32,
    "propertyNames": {"minLength": 1, "maxLength": 64, "pattern": TRIMMED_NAME_PATTERN},
    "additionalProperties": {
        "type": "number",
        "minimum": -MAX_BIOMETRIC_MAGNITUDE,
        "maximum": MAX_BIOMETRIC_MAGNITUDE,
    },
}
# A place is a geohash, or lat and lon together (the published form: one or the other).
_NUMBER = {"type": "number"}
_ABSENT = {"type": "null"}  # a property given as null counts as not given
FLAT_PLACE: dict[str, Any] = {
    "anyOf": [
        {"properties": {"lat": _ABSENT, "lon": _ABSENT}},
        {
            "required": ["lat", "lon"],
            "properties": {"lat": _NUMBER, "lon": _NUMBER, "geohash": _ABSENT},
        },
    ]
}


class CoreView(BaseModel):
    """Both targets of the core memory and the block injected into prompts."""

    user: CoreTargetState
    memory: CoreTargetState
    block: str


_UNSET = {"type": "null"}  # absent, or null


def _alone(form: dict[str, Any]) -> dict[str, Any]:
    """A single-operation form, which may not also carry ``operations``."""
    return {**form, "allOf": [{"properties": {"operations": _UNSET}}]}


CORE_EDIT_FORMS: dict[str, Any] = {
    "oneOf": [
        {
            "required": ["operations"],
            "properties": {
                "operations": {"type": "array"},
                **{name: _UNSET for name in ("action", "content", "new_text", "old_text")},
            },
        },
        *(_alone(form) for form in operation_forms()),
    ]
}


class CoreEdit(BaseModel):
    """One operation (action, content/new_text, old_text) or an ``operations`` batch."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=CORE_EDIT_FORMS)

    action: Literal["add", "patch", "remove"] | None = None
    content: str | None = None
    new_text: str | None = None
    old_text: str | None = None
    operations: list[CoreOperation] | None = Field(
        default=None, min_length=1, json_schema_extra=extra(minItems=1)
    )


class ContextFields(BaseModel):
    """The context of a cue or an experience (flat, as in the madeleine tools)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=FLAT_PLACE)

    geohash: str | None = Field(
        default=None, max_length=12, json_schema_extra=extra(pattern=GEOHASH_PATTERN)
    )
    lat: Annotated[StrictFloat | None, LATITUDE_RANGE] = Field(default=None, ge=-90, le=90)
    lon: Annotated[StrictFloat | None, LONGITUDE_RANGE] = Field(default=None, ge=-180, le=180)
    at: str | None = Field(
        default=None,
        max_length=64,
        description="ISO 8601 with offset",
        json_schema_extra=replaced(nullable({**DATE_TIME, "maxLength": 64})),
    )
    image: Base64 = None
    audio: Base64 = None
    biometrics: dict[str, StrictFloat] | None = Field(
        default=None, json_schema_extra=replaced(nullable(BIOMETRICS_SCHEMA))
    )

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

    content: str = Field(json_schema_extra=extra(pattern=TEXT_PATTERN))
    tags: list[str] = Field(default_factory=list, json_schema_extra=replaced(TAGS_SCHEMA))
    salience: Annotated[StrictFloat | None, SALIENCE_RANGE] = Field(default=None, ge=0, le=1)
    title: str | None = Field(default=None, json_schema_extra=extra(pattern=NO_NUL_PATTERN))


def _needs_one_of(*channels: str) -> dict[str, Any]:
    """A body must give at least one of these cues, and give it for real (a text with a
    word, a non-empty list or set of readings, not null)."""
    forms: list[dict[str, Any]] = []
    for name in channels:
        given: dict[str, Any] = {"not": {"type": "null"}}
        if name in ("query", "text"):
            given = {"type": "string", "pattern": "\\S"}
        elif name == "biometrics":
            given = {"type": "object", "minProperties": 1}
        elif name == "tags":
            given = {"type": "array", "minItems": 1}
        forms.append({"required": [name], "properties": {name: given}})
    return {"anyOf": forms}


class ContextRecall(ContextFields):
    """A pull query: only the cues given are compared."""

    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                FLAT_PLACE,
                _needs_one_of(
                    "query", "geohash", "lat", "at", "tags", "image", "audio", "biometrics"
                ),
            ]
        }
    )

    query: str | None = Field(default=None, max_length=10_000)
    tags: list[str] = Field(default_factory=list, json_schema_extra=replaced(TAGS_SCHEMA))
    k: Annotated[int | None, Field(ge=1, le=100), WHOLE_COUNT] = Field(
        default=None,
        description="at most this many (and RECALLD_MAX_LIMIT); 5, or the cap when lower, if"
        " left out",
        json_schema_extra=count_default(5),
    )


class Sense(ContextFields):
    """What is perceived now; the current time is always part of the cue."""

    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                FLAT_PLACE,
                _needs_one_of("text", "geohash", "lat", "tags", "image", "audio", "biometrics"),
            ]
        }
    )

    text: str | None = Field(default=None, max_length=10_000)
    tags: list[str] = Field(
        default_factory=list,
        description="labels of the situation (for intentions' tag triggers)",
        json_schema_extra=replaced(TAGS_SCHEMA),
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
        return _full(full)
    except ValidationError as error:
        # The single form's fields are the body's own: "content", not "operations[0].content".
        raise (error if body.operations is not None else named_as_given(error)) from None


def _full(full: CoreMemoryFullError) -> JSONResponse:
    """The 422 of a batch that would overflow its target, with the current entries."""
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
    limit: PendingLimit = None,
    query: NamespaceQuery = None,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
) -> list[Recollection]:
    """Queued recollections, oldest first; ``drain=true`` delivers each exactly once.

    Draining changes the queue, so it needs write access; peeking needs read.
    """
    namespace = authorized_namespaces(
        request,
        namespace_header,
        write=drain,
        several=False,
        query=query,
        user_id=user_id,
        agent_id=agent_id,
    )[0]
    return service.recollections.pending(drain=drain, limit=limit, namespace=namespace)


@context_router.post("/recollections/drain", response_model=list[Recollection])
def drain_recollections(
    service: Service,
    namespace: WriteNamespace,
    limit: PendingLimit = None,
) -> list[Recollection]:
    """Deliver queued recollections, oldest first, each exactly once.

    The same as ``GET /v1/recollections/pending?drain=true``, as a POST for
    clients that never change state with a GET (the memory browser).
    """
    return service.recollections.pending(drain=True, limit=limit, namespace=namespace)
