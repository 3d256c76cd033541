"""The REST API's dependencies: the service, the settings, the caller and the namespaces.

Namespaces: every request works in one namespace, named by the
``X-Recalld-Namespace`` header (default: the token's only namespace, else
``settings.namespace``). ``/v1/stats``
and ``/v1/export`` accept a comma-separated list. The authenticated
:class:`~recalld.tokens.Caller` (set by the auth middleware in
:mod:`recalld.adapters.http_api`) must be scoped to each namespace, with
``read+write`` for writes.
"""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import Depends, Header, Query, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.datastructures import Headers, QueryParams

from recalld import _validate as check
from recalld.adapters.http_models import COMMA_SEPARATED, error_responses
from recalld.config import Settings
from recalld.errors import AuthenticationError, ValidationError
from recalld.scoping import ID_PATTERN as SCOPE_ID_PATTERN
from recalld.scoping import mem0_namespace, requested_namespace
from recalld.service import MemoryService
from recalld.tokens import CALLER_STATE_KEY, Caller

__all__ = [
    "CALLER_STATE_KEY",
    "COMMON_ERRORS",
    "NAMESPACE_HEADER",
    "AgentQuery",
    "BatboxReadNamespace",
    "BatboxWriteNamespace",
    "Credentials",
    "NamespaceHeader",
    "NamespaceQuery",
    "ReadNamespace",
    "ReadNamespaces",
    "Service",
    "UserQuery",
    "WriteNamespace",
    "authorized_namespaces",
    "caller_of",
    "other_namespace",
    "service_of",
]

NAMESPACE_HEADER = "X-Recalld-Namespace"
# Every route may answer these: 408 and 413 come from the body checks (http_body).
COMMON_ERRORS = error_responses(401, 403, 408, 413, 422, 503)


# -- dependencies -------------------------------------------------------------


def service_of(request: Request) -> MemoryService:
    """The app's memory service."""
    return cast(MemoryService, request.app.state.service)


def _settings(request: Request) -> Settings:
    return cast(Settings, request.app.state.settings)


def caller_of(request: Request) -> Caller:
    """The authenticated caller (set by the auth middleware); 401 when there is none."""
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
    COMMA_SEPARATED,  # two lines of it are the list of both (RFC 9110), not refused
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
    caller = caller_of(request)
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


Service = Annotated[MemoryService, Depends(service_of)]
# batbox's own routes keep their shapes: the namespace comes from the header only.
BatboxReadNamespace = Annotated[str, Depends(_header_read_namespace)]
BatboxWriteNamespace = Annotated[str, Depends(_header_write_namespace)]
ReadNamespace = Annotated[str, Depends(_read_namespace)]
WriteNamespace = Annotated[str, Depends(_write_namespace)]
ReadNamespaces = Annotated[list[str], Depends(_read_namespaces)]
