"""What a dialect is, and the per-server state its tools reach through the MCP context.

A dialect is a named set of MCP tools that translate one existing memory-tool
design onto :class:`~recalld.service.MemoryService`. Dialect modules build
:class:`ToolSpec` objects; the server turns them into MCP tools, so a new
dialect plugs in by adding a module and a line in the registry.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from ulid import ULID

from recalld.adapters.dialects.failures import Wording
from recalld.service import MemoryService
from recalld.tokens import CALLER_STATE_KEY, Caller

__all__ = [
    "TRANSCRIPT_SESSIONS_KEPT",
    "Dialect",
    "McpState",
    "PromptSpec",
    "ResourceSpec",
    "Subscribers",
    "ToolSpec",
    "TranscriptRegistry",
    "caller_of",
    "scoped_namespace",
    "state_of",
    "tidy_schema",
]

# How many sessions' transcript URIs are kept (the ones that wrote last): about 200 bytes
# each, so a few MB at most, whatever a client sends.
TRANSCRIPT_SESSIONS_KEPT = 10_000


class TranscriptRegistry:
    """One transcript URI per MCP session: stable within it, distinct across sessions.

    What a "session" is depends on the transport. A 2025-era streamable-HTTP
    session has an ``Mcp-Session-Id``: one URI per id. The 2026-07-28 protocol
    is sessionless (every request stands alone), so there the session is the
    client as it identifies itself (its declared name and version, its network
    peer and, over ``recalld serve``'s ``/mcp``, its token) for the life of this
    server process. On stdio the registry lives as long as the process, so every
    process start gets a new URI.

    It keeps the ``capacity`` sessions that wrote last (``TRANSCRIPT_SESSIONS_KEPT``): a
    session's key is the client's own text (an ``Mcp-Session-Id`` header, a declared
    name), so a script sending a new one each request would otherwise grow the process's
    memory for its whole life. A session quiet while that many others wrote gets a new URI
    when it writes again. Keys are kept as digests, so a long header costs no more.
    """

    def __init__(self, capacity: int = TRANSCRIPT_SESSIONS_KEPT) -> None:
        self._uris: OrderedDict[bytes, str] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def uri_for(self, context: Context) -> str:
        """The transcript URI of the session that sent this request."""
        key = hashlib.sha256(json.dumps(_session_key(context)).encode()).digest()
        with self._lock:
            uri = self._uris.get(key)
            if uri is None:
                uri = self._uris[key] = _new_transcript_uri()
                while len(self._uris) > self._capacity:
                    self._uris.popitem(last=False)
            self._uris.move_to_end(key)
            return uri


def _session_key(context: Context) -> tuple[str, ...]:
    # Two tokens are two callers even when they run the same client from one address, or
    # send the same Mcp-Session-Id (a sessionless request's header is the client's own
    # text, checked by no one): a session answers only the token that opened it, and so
    # does a transcript.
    caller = caller_of(context)
    token = "" if caller is None or caller.token_id is None else caller.token_id
    headers = context.headers or {}
    session_id = headers.get("mcp-session-id")
    if session_id:
        return ("mcp-session", session_id, token)
    request_context = context.request_context
    params = request_context.session.client_params
    client = params.client_info if params is not None else None
    request = request_context.request
    peer = getattr(getattr(request, "client", None), "host", None)
    return (
        "client",
        "" if client is None else client.name,
        "" if client is None else client.version,
        peer or "local",
        token,
    )


def _new_transcript_uri() -> str:
    return f"recalld://transcript/{ULID()}"


class Subscribers:
    """2025-era ``resources/subscribe`` sessions, by resource URI.

    A subscriber is the session's connection (the SDK's per-client ``Connection``,
    which lives as long as the session), never the per-request ``ServerSession``
    proxy a handler is given: keyed by the proxy, a second ``resources/subscribe`` of
    one session was a second subscriber (two notifications per change, and one more
    entry each time), and ``resources/unsubscribe``, made by yet another proxy,
    removed nothing. A session is forgotten when it ends (:meth:`drop`, from its
    connection's teardown): the SDK's notify never fails for a closed session, so a
    session dropped without ``DELETE`` was otherwise held, and written to, for the
    server's life.
    """

    def __init__(self) -> None:
        # By URI, each subscriber by its identity (in subscription order); and by identity,
        # the URIs it subscribed to. Each was a list searched whole: a subscribe, an
        # unsubscribe or a session's end cost as many steps as there were subscribers (or
        # URIs), so many sessions subscribing took time quadratic in their number.
        self._sessions: dict[str, dict[int, Any]] = {}
        self._uris: dict[int, set[str]] = {}
        self._lock = threading.Lock()

    def add(self, uri: str, session: Any) -> None:
        """Remember that ``session`` wants updates of ``uri`` (once, however often asked)."""
        with self._lock:
            self._sessions.setdefault(uri, {})[id(session)] = session
            self._uris.setdefault(id(session), set()).add(uri)

    def remove(self, uri: str, session: Any) -> None:
        """Forget one subscription (unsubscribe, or a session that stopped reading)."""
        with self._lock:
            self._forget(uri, session)

    def drop(self, session: Any) -> None:
        """Forget every subscription of ``session`` (it ended)."""
        with self._lock:
            for uri in list(self._uris.get(id(session), ())):
                self._forget(uri, session)

    def _forget(self, uri: str, session: Any) -> None:
        """Forget that ``session`` wants ``uri`` (the lock held). An id is the session's only
        while it is held here (the dict keeps it alive), so no other object has it."""
        sessions = self._sessions.get(uri)
        if sessions is None or sessions.get(id(session)) is not session:
            return
        del sessions[id(session)]
        if not sessions:
            del self._sessions[uri]
        uris = self._uris[id(session)]
        uris.discard(uri)
        if not uris:
            del self._uris[id(session)]

    def of(self, uri: str) -> list[Any]:
        """The sessions subscribed to ``uri`` now."""
        with self._lock:
            return list(self._sessions.get(uri, {}).values())

    def count(self) -> int:
        """How many subscriptions are held, over every URI."""
        with self._lock:
            return sum(len(sessions) for sessions in self._sessions.values())


@dataclass
class McpState:
    """What the server's lifespan yields: the one service and per-session bookkeeping."""

    service: MemoryService
    transcripts: TranscriptRegistry = field(default_factory=TranscriptRegistry)
    subscribers: Subscribers = field(default_factory=Subscribers)
    media_paths: bool = True
    """Whether image/audio arguments may name local files (off for remote callers)."""
    namespaces: frozenset[str] = frozenset()
    """Namespaces a native tool may name per call besides the server's (``*``: any);
    a caller authenticated by ``recalld serve`` is held to its token's scopes instead."""


def state_of(context: Context) -> McpState:
    """The lifespan state of the server handling this request."""
    state = context.request_context.lifespan_context
    if not isinstance(state, McpState):  # pragma: no cover - a wiring mistake, not input
        raise TypeError("the MCP server was started without recalld's lifespan")
    return state


def scoped_namespace(
    context: Context,
    namespace: str | None,
    user_id: str | None = None,
    agent_id: str | None = None,
    *,
    write: bool,
) -> str | None:
    """The namespace one native tool call works in (None: the server's own), if allowed.

    ``namespace``, or mem0's ``user_id``/``agent_id`` (``user:<id>``, ``agent:<id>``,
    ``user:<u>/agent:<a>``, see :mod:`recalld.scoping`). Over ``recalld serve``'s
    ``/mcp`` the token's scopes decide; otherwise the server's own namespace and those
    it was started with (``recalld mcp --namespaces a,b``). Anything else is refused
    with :class:`~recalld.errors.PermissionDeniedError` naming the argument.
    """
    from recalld.errors import PermissionDeniedError
    from recalld.scoping import requested_namespace

    chosen = requested_namespace(namespace, user_id, agent_id)
    if chosen is None:
        return None
    field = "namespace" if namespace is not None else ("user_id" if user_id else "agent_id")
    caller = caller_of(context)
    if caller is not None:
        caller.authorize(chosen, write=write, field=field)
        return chosen
    state = state_of(context)
    allowed = state.namespaces | {state.service.settings.namespace}
    if chosen in allowed or "*" in allowed:
        return chosen
    listed = ", ".join(sorted(allowed))
    raise PermissionDeniedError(
        f"{chosen!r} is not a namespace this server serves ({listed}); start it with"
        f" `recalld mcp --namespaces {chosen}` to allow it",
        field,
    )


def caller_of(context: Context) -> Caller | None:
    """The authenticated caller when the request came through ``recalld serve`` (its
    ``/mcp``), else None (stdio, or ``recalld mcp --transport http`` on loopback)."""
    request = getattr(context.request_context, "request", None)
    scope = getattr(request, "scope", None)
    if not isinstance(scope, dict):
        return None
    caller = scope.get("state", {}).get(CALLER_STATE_KEY)
    return caller if isinstance(caller, Caller) else None


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: the Python function, its public name and description.

    ``keep_null`` keeps ``null`` as an allowed value of optional arguments in
    the published schema (for dialects whose original signature is ``Optional``).
    ``idempotent`` says a repeated call changes nothing more (by default only a
    read-only tool says so); ``title`` is the tool's display name, when its
    original has one.
    """

    name: str
    function: Callable[..., Any]
    description: str
    read_only: bool = False
    destructive: bool = False
    keep_null: bool = False
    structured_output: bool | None = None
    idempotent: bool | None = None
    title: str | None = None

    def annotations(self) -> ToolAnnotations:
        """MCP hints about the tool's side effects."""
        return ToolAnnotations(
            read_only_hint=self.read_only,
            destructive_hint=self.destructive,
            idempotent_hint=self.read_only if self.idempotent is None else self.idempotent,
            open_world_hint=False,
        )


@dataclass(frozen=True)
class ResourceSpec:
    """A readable MCP resource; ``version`` (when given) makes it watchable.

    The server polls ``version`` and, whenever it changes (whichever process
    changed the data), sends ``notifications/resources/updated`` to subscribers
    of both protocol eras.
    """

    uri: str
    name: str
    description: str
    read: Callable[[MemoryService], str]
    version: Callable[[MemoryService], int] | None = None
    mime_type: str = "text/plain"
    title: str | None = None


@dataclass(frozen=True)
class PromptSpec:
    """An MCP prompt without arguments whose text is rendered from the service."""

    name: str
    description: str
    render: Callable[[MemoryService], str]


@dataclass(frozen=True)
class Dialect:
    """A named set of tools, plus any resources and prompts that come with them.

    Two dialects may share a resource or prompt by listing the same spec object.
    ``wording`` is how its tools' failures are answered (one table per dialect,
    see :mod:`recalld.adapters.dialects.failures`).
    """

    name: str
    tools: tuple[ToolSpec, ...]
    resources: tuple[ResourceSpec, ...] = ()
    prompts: tuple[PromptSpec, ...] = ()
    wording: Wording = field(default_factory=Wording)

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The MCP names of this dialect's tools."""
        return tuple(tool.name for tool in self.tools)


def tidy_schema(schema: dict[str, Any], *, keep_null: bool = False) -> dict[str, Any]:
    """Turn a pydantic-generated input schema into the plain shape the seeds document.

    Inlines ``$defs``, drops generated ``title`` keys, and (unless ``keep_null``)
    publishes an optional ``X | None = None`` argument as plain ``X`` without a
    default, which is how the seed documents list optional arguments.
    """
    definitions = schema.get("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, list):
            return [resolve(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            target = copy.deepcopy(definitions[node["$ref"].rsplit("/", 1)[-1]])
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return resolve(merged)
        result: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$defs" or (key == "title" and isinstance(value, str)):
                continue
            if key == "properties" and isinstance(value, dict):
                result[key] = {name: resolve(child) for name, child in value.items()}
            else:
                result[key] = resolve(value)
        if not keep_null:
            result = _without_null(result)
        return result

    tidied: dict[str, Any] = resolve(schema)
    return tidied


def _without_null(node: dict[str, Any]) -> dict[str, Any]:
    options = node.get("anyOf")
    if not isinstance(options, list):
        return node
    non_null = [option for option in options if option != {"type": "null"}]
    if len(non_null) == len(options) or len(non_null) != 1:
        return node
    collapsed = {key: value for key, value in node.items() if key != "anyOf"}
    collapsed.update(non_null[0])
    if collapsed.get("default", "absent") is None:
        del collapsed["default"]
    return collapsed
