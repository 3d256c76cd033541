"""Wire shapes of the REST API that the service has no type for, and strict JSON bodies.

Everything else on the wire is a service model from :mod:`recalld.model`.
"""

from __future__ import annotations

import json
from datetime import datetime
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import HTTPException
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field, StrictFloat
from starlette.responses import Response
from starlette.types import Scope

from recalld import _validate as check
from recalld._schema import (
    DATE_TIME,
    ID_PATTERN,
    NAME_PATTERN,
    NO_NUL_PATTERN,
    QUERY_PATTERN,
    TEXT_PATTERN,
    cap_count,
    count_default,
    extra,
    nullable,
    replaced,
)
from recalld._text import MAX_ECHO_CHARS, shown
from recalld._validate import unpaired_surrogate
from recalld.errors import ValidationError
from recalld.model import (
    QUERY_MAX_CHARS,
    SCORE_RANGE,
    SHORT_TEXT_MAX_CHARS,
    SOURCE_MAX_CHARS,
    TAGS_SCHEMA,
    TITLE_MAX_CHARS,
    WHOLE_COUNT,
    Moment,
    QueryFilters,
    TtlSeconds,
)

__all__ = [
    "COMMA_SEPARATED",
    "BatboxRecall",
    "BatboxRemember",
    "BatboxResult",
    "BatboxStatus",
    "BodyFieldError",
    "CommaSeparated",
    "EmbeddingStatus",
    "ErrorBody",
    "ErrorDetail",
    "GraphStatus",
    "KeyValueWrite",
    "QueryRequest",
    "QueueStatus",
    "StrictJSONRoute",
    "cap_request_counts",
    "error_responses",
    "refuse_constant",
    "strict_json_loads",
    "unpaired_surrogate",
]

# The query's length and that it is not blank are published (maxLength, pattern) and
# checked by the service, so every surface refuses such a query with the same message.
QUERY_SCHEMA = extra(maxLength=QUERY_MAX_CHARS, pattern=QUERY_PATTERN)
# batbox's /recall (as its MemoryRecall tool) returns 5 results unless told otherwise.
# A count left out (None) is the route's default held to RECALLD_MAX_LIMIT (check.limit).
Count = Annotated[int | None, Field(ge=1), WHOLE_COUNT]
BATBOX_RECALL_LIMIT = 5
# The counts of request bodies capped by RECALLD_MAX_LIMIT (the spec says so): schema, field.
LIMITED_COUNTS = (
    ("QueryRequest", "limit"),
    ("ExplainRequest", "limit"),
    ("BatboxRecall", "limit"),
    ("ContextRecall", "k"),
)


def cap_request_counts(schemas: dict[str, Any], cap: int) -> None:
    """Publish ``cap`` (``RECALLD_MAX_LIMIT``) in the counts of the request bodies in
    ``schemas`` (``/openapi.json``'s components): their maximum, and a default above it."""
    for name, field in LIMITED_COUNTS:
        count = schemas.get(name, {}).get("properties", {}).get(field)
        if isinstance(count, dict):
            cap_count(count, cap)


# -- error bodies -------------------------------------------------------------


class ErrorDetail(BaseModel):
    """What went wrong: a machine-readable type, the field at fault (if any), and why."""

    type: str
    field: str | None = None
    message: str


class ErrorBody(BaseModel):
    """Every 4xx/5xx response body."""

    error: ErrorDetail


class BodyFieldError(HTTPException):
    """A request body the JSON parser accepted but recalld refuses (NaN, lone surrogates)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(status_code=422, detail=message)
        self.field = field


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries (the :class:`ErrorBody` model) for these status codes."""
    descriptions = {
        401: "no bearer token, or an invalid one (none is needed on loopback while no"
        " token exists)",
        403: "the token is not scoped to this namespace or access",
        404: "no such memory in the namespace (or no such path: a key may not hold a line break)",
        409: "the write conflicts with a stored memory (id or key taken)",
        412: "`If-Match` (the ETag of an earlier read) no longer matches: the memory was"
        " changed since, and nothing was changed now (on `PUT /v1/kv/{key}`, also"
        " `If-Match` on a key holding nothing, or `If-None-Match: *` on one holding a"
        " memory)",
        408: "no byte of the request body arrived for 30 s: nothing was written, and the"
        " connection is closed (send the request again)",
        413: "the request body is larger than the limit",
        422: "the request is invalid; `error.field` names the field",
        503: "the database (or the embedding model) could not serve the request (an import"
        " says where it stopped and what it kept); `error.type` says why:"
        " database_unavailable (the server cannot be reached) and database_busy (a lock"
        " or a timeout), both with `Retry-After`, database_read_only (a hot standby or a"
        " read-only database, `Retry-After: 5`), disk_full, storage_error, embedding_error",
    }
    return {code: {"model": ErrorBody, "description": descriptions[code]} for code in codes}


# -- strict JSON bodies -------------------------------------------------------


def refuse_constant(name: str) -> Any:
    """Refuse ``NaN`` and ``Infinity``, which JSON does not have (``json.loads`` hook)."""
    raise BodyFieldError("body", f"{name} is not valid JSON")


def strict_json_loads(data: bytes | str, content_type: str | None = None) -> Any:
    """Parse JSON refusing ``NaN``/``Infinity``, nesting deep enough to exhaust a parser
    (see :func:`recalld._validate.load_json`) and strings with unpaired surrogates.

    A body that is not UTF-8 is refused saying UTF-8 is the one encoding read (RFC 8259),
    and naming the charset ``content_type`` (the request's header) declared, if any: a
    body sent as ``charset=latin-1`` was refused "is not valid UTF-8", which did not say
    that the charset was the fault nor what to send instead."""
    try:
        value = check.load_json(data, "body")
    except UnicodeDecodeError as error:
        declared = _declared_charset(content_type)
        said = f"the request declares charset {declared[:40]!r}, " if declared else ""
        raise BodyFieldError(
            "body",
            f"is not valid UTF-8 (byte {error.start}): {said}a JSON body is read as UTF-8"
            " only; send it encoded as UTF-8 with Content-Type: application/json",
        ) from None
    except ValidationError as error:
        if error.message.startswith("is not JSON") and "digits" not in error.message:
            # FastAPI words malformed JSON itself (with the position).
            return json.loads(data)
        raise BodyFieldError(error.field, error.message) from None
    field = unpaired_surrogate(value)
    if field is not None:
        raise BodyFieldError(field, "contains an unpaired UTF-16 surrogate (not valid Unicode)")
    # Parsed again to see the keys JSON let repeat (the depth is checked above): the
    # parser kept the last without a word, where a proxy or log reading the first saw
    # another body; MCP messages and the CLI's --meta refuse it too.
    json.loads(data, object_pairs_hook=_unique_pairs)
    return value


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict; a 422 naming a key it gives twice."""
    result = dict(pairs)
    if len(result) < len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                # A key is no field name of recalld's: cut as any echoed value is.
                raise BodyFieldError(
                    key[:MAX_ECHO_CHARS],
                    f"{shown(key)} is given twice in one JSON object of the body:"
                    " give each key once",
                )
            seen.add(key)
    return result


def _declared_charset(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a ``Content-Type`` header, without quotes; None if none."""
    for parameter in (content_type or "").split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip('"')
    return None


class _StrictJSONRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            given = self.headers.get("content-type")
            self._json = strict_json_loads(await self.body(), given)
        return self._json


class StrictJSONRoute(APIRoute):
    """A route whose JSON body goes through :func:`strict_json_loads`, and whose query
    string may hold only the parameters it declares."""

    def get_route_handler(self) -> Any:
        """Wrap FastAPI's handler so it sees a request with the strict ``json()``, after
        refusing a query parameter the route does not take (``?tags=`` for ``?tag=`` was
        ignored, and the whole namespace came back as if unfiltered)."""
        handler = super().get_route_handler()
        declared = _query_names(self.dependant)
        single_query, single_headers, joined_headers = _single_valued(self.dependant)
        path = self.path

        async def strict_handler(request: Request) -> Response:
            for name in request.query_params:
                if name not in declared and name != CACHE_BUSTER:
                    taken = ", ".join(sorted(declared)) or "none"
                    raise ValidationError(
                        name, f"is not a query parameter of {path} (it takes: {taken})"
                    )
            # The body is read as it came: a compressed one was refused as "not valid UTF-8".
            # Every line and list element counts (a second line, gzip, was read past).
            codings = [
                coding.strip().lower()
                for line in request.headers.getlist(CONTENT_ENCODING)
                for coding in line.split(",")
            ]
            compressed = [coding for coding in codings if coding not in ("", "identity")]
            if compressed:
                raise ValidationError(
                    CONTENT_ENCODING,
                    f"{', '.join(compressed)!r} is not supported: send the body uncompressed",
                )
            # FastAPI keeps the last of a repeated parameter (the first of a repeated
            # header) without a word: ?limit=1&limit=500 answered 500 memories.
            for name in single_query:
                if len(request.query_params.getlist(name)) > 1:
                    raise ValidationError(name, "is given more than once: give it once")
            for name in single_headers:
                if len(request.headers.getlist(name)) > 1:
                    raise ValidationError(name, "is given more than once: give it once")
            for name in joined_headers:
                _join_lines(request.scope, name)
            return await handler(_StrictJSONRequest(request.scope, request.receive))

        return strict_handler


CONTENT_ENCODING = "Content-Encoding"
# What some HTTP clients add to a GET so no cache answers it (jQuery's ``cache: false``).
CACHE_BUSTER = "_"


def _query_names(dependant: Dependant) -> frozenset[str]:
    """Every query parameter a route takes, its dependencies' included."""
    names: set[str] = set()
    pending = [dependant]
    while pending:
        current = pending.pop()
        names.update(field.alias for field in current.query_params)
        pending.extend(current.dependencies)
    return frozenset(names)


class CommaSeparated:
    """Marks a header (in its ``Annotated`` metadata) whose value is a comma-separated
    list: its repeated lines mean the list of all their values (RFC 9110 §5.3, as a
    proxy may send them), so they are joined, not refused."""


COMMA_SEPARATED = CommaSeparated()


def _single_valued(
    dependant: Dependant,
) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The query parameters and headers a route (its dependencies included) takes one
    value of: all but those typed as lists (``?tag=a&tag=b``); and the headers marked
    :data:`COMMA_SEPARATED`."""
    query: set[str] = set()
    headers: set[str] = set()
    joined: set[str] = set()
    pending = [dependant]
    while pending:
        current = pending.pop()
        query.update(
            field.alias
            for field in current.query_params
            if not _takes_many(field.field_info.annotation)
        )
        for field in current.header_params:
            if any(isinstance(mark, CommaSeparated) for mark in field.field_info.metadata):
                joined.add(field.alias)
            elif not _takes_many(field.field_info.annotation):
                headers.add(field.alias)
        pending.extend(current.dependencies)
    return frozenset(query), frozenset(headers), frozenset(joined)


def _join_lines(scope: Scope, name: str) -> None:
    """Make the repeated lines of header ``name`` one line, their values joined by commas
    in order, where the first was (FastAPI reads only the first)."""
    wanted = name.lower().encode("latin-1")
    values = [value for header, value in scope["headers"] if header.lower() == wanted]
    if len(values) < 2:
        return
    lines: list[tuple[bytes, bytes]] = []
    joined = False
    for header, value in scope["headers"]:
        if header.lower() != wanted:
            lines.append((header, value))
        elif not joined:
            lines.append((header, b", ".join(values)))
            joined = True
    scope["headers"] = lines


def _takes_many(annotation: Any) -> bool:
    """Whether a parameter's type is a list (or a list or None ...)."""
    origin = get_origin(annotation)
    if origin is Union or origin is UnionType:
        return any(_takes_many(argument) for argument in get_args(annotation))
    return origin in (list, set, frozenset, tuple) or annotation in (list, set, frozenset, tuple)


# -- shapes the service has no type for --------------------------------------


class QueryRequest(BaseModel):
    """A recall or search: the query text, how many hits, and optional filters."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(json_schema_extra=QUERY_SCHEMA)
    limit: Count = Field(
        default=None,
        description="at most RECALLD_MAX_LIMIT (1000); 10, or the cap when lower, if left out",
        json_schema_extra=count_default(10),
    )
    filters: QueryFilters | None = Field(
        default=None, description="narrowing applied before the limit (expired never match)"
    )
    # The range check states the range for a number no float holds (10**400), after the
    # bounds, so that the published schema keeps them.
    min_score: Annotated[StrictFloat | None, SCORE_RANGE] = Field(
        default=None,
        ge=0,
        le=1,
        description="only hits scoring at least this (default: the server's RECALLD_MIN_SCORE)",
    )


class ExplainRequest(QueryRequest):
    """Why recall of ``query`` (with this limit, threshold and filters) treats memory ``id``
    as it does."""

    id: str = Field(
        min_length=1,
        max_length=64,
        description="the memory to explain",
        json_schema_extra=extra(pattern=ID_PATTERN),
    )


class KeyValueWrite(BaseModel):
    """The value stored under a key (the key is in the path); writing again overwrites."""

    model_config = ConfigDict(extra="forbid")

    value: str = Field(json_schema_extra=extra(pattern=TEXT_PATTERN))
    tags: list[str] = Field(default_factory=list, json_schema_extra=replaced(TAGS_SCHEMA))
    ttl_seconds: TtlSeconds | None = None
    title: str | None = Field(
        default=None, max_length=TITLE_MAX_CHARS, json_schema_extra=extra(pattern=NO_NUL_PATTERN)
    )
    kind: str = Field(
        default="kv",
        min_length=1,
        max_length=SHORT_TEXT_MAX_CHARS,
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    meta: dict[str, Any] = Field(default_factory=dict)


class BatboxRemember(BaseModel):
    """batbox ``POST /remember``: content, source, optional id, kind, captured_at, metadata."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(json_schema_extra=extra(pattern=TEXT_PATTERN))
    source: str | None = Field(
        default=None,
        min_length=1,
        max_length=SOURCE_MAX_CHARS,
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    id: str | None = Field(
        default=None, min_length=1, max_length=64, json_schema_extra=extra(pattern=ID_PATTERN)
    )
    kind: str | None = Field(
        default=None,
        min_length=1,
        max_length=SHORT_TEXT_MAX_CHARS,
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    captured_at: Moment | str | None = Field(
        default=None, json_schema_extra=replaced(nullable(DATE_TIME))
    )
    metadata: dict[str, Any] | None = None


class BatboxRecall(BaseModel):
    """batbox ``POST /recall``: query and limit."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(json_schema_extra=QUERY_SCHEMA)
    limit: Count = Field(
        default=None,
        description="at most RECALLD_MAX_LIMIT (1000); 5, or the cap when lower, if left out",
        json_schema_extra=count_default(BATBOX_RECALL_LIMIT),
    )


class BatboxResult(BaseModel):
    """One recalled passage with its provenance: source, kind, captured_at and backend."""

    id: str
    content: str
    score: float
    source: str | None
    kind: str
    captured_at: datetime | None
    backend: str = Field(description="the index that found it first (fts, like ...)")
    backends: list[str]
    metadata: dict[str, Any]
    prompt_line: str


class QueueStatus(BaseModel):
    """The background embedding queue: jobs waiting or running, and failed for good."""

    depth: int = 0
    failed: int = 0


class EmbeddingStatus(BaseModel):
    """CPU embedding progress: vectors of the configured model, memories still queued."""

    model: str | None = None
    embedded: int = 0
    pending: int = 0


class GraphStatus(BaseModel):
    """The knowledge graph: state, size, extraction jobs pending and failed, the extractor."""

    state: str = "disabled"
    entities: int = 0
    relations: int = 0
    mentions: int = 0
    extractor: str | None = None
    pending: int = 0
    failed: int = 0
    warning: str | None = None


class BatboxStatus(BaseModel):
    """batbox ``GET /status``: counts, queue, embeddings, graph and retry errors."""

    namespace: str
    memories: int
    search_backend: str
    schema_version: int
    queue: QueueStatus
    embeddings: EmbeddingStatus
    graph: GraphStatus
    retry_errors: list[str]
