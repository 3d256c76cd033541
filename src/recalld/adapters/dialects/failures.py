"""Tool errors, translated once per dialect into that dialect's own shape.

Every way a tool call can fail is first turned into one :class:`ToolFailure`
(which argument, what kind of failure, why): the MCP SDK's argument validation
(pydantic), an argument the tool does not have, a :class:`~recalld.errors.RecalldError`
from the service, or an unexpected crash. Each dialect then words failures in
the shape its seed documents (chaoscore's ``Error: ...`` text, rover's
``{"status": "error"}`` envelope, hermes' JSON with the current entries, the
``{"error": {"type", "field", "message"}}`` body of the REST API for the
others) through one :data:`ErrorShape` function, its table. Where one tool spells
an engine field unlike the rest of its dialect (madeleine's ``recall`` calls the
cue's text ``query``, its ``sense`` calls it ``text``), or the engine's "give at
least one of" lists arguments the tool does not have, the dialect's shape first
rewords the failure with that tool's :class:`ToolWords` (:func:`worded`).

Where the SDK raises them: ``Tool.run`` validates the arguments with the
tool's generated pydantic model and raises ``ToolError`` caused by the
``pydantic.ValidationError``; an exception in the tool body becomes a
``ToolError``/``UnexpectedToolError`` caused by it. :class:`DialectTool`
overrides ``run`` to catch both by their cause and answer in the dialect's
shape instead of the SDK's raw text, and refuses unknown arguments first when
the dialect's schema is closed (pydantic would silently ignore them).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import pydantic
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from recalld import _validate as check
from recalld._location import without_location
from recalld._text import MAX_ECHO_CHARS, shown
from recalld.conversation_stops import stopped_conversation_told
from recalld.errors import (
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
    RecalldError,
    StorageError,
    ValidationError,
    WriteConflictError,
)

__all__ = [
    "RETRY_AFTER_META",
    "RETRY_AFTER_SECONDS",
    "DialectTool",
    "ErrorShape",
    "FailureKind",
    "ToolCall",
    "ToolFailure",
    "ToolWords",
    "busy_message",
    "error_body",
    "error_result",
    "failure_of",
    "replaced_message",
    "shaped",
    "stopped_send",
    "with_retry_hint",
    "worded",
]

logger = logging.getLogger(__name__)

FailureKind = Literal[
    "validation_error",
    "unknown_argument",
    "not_found",
    "conflict",
    "disk_full",
    "database_unavailable",
    "database_busy",
    "database_read_only",
    "storage_error",
    "embedding_error",
    "forbidden",
    "too_many_requests",
    "internal_error",
]
# How long to wait before sending a refused call again, by kind: what REST's Retry-After
# says for the same failure (http_api, http_token_share.RETRY_SECONDS). A tool error says
# it in the result's _meta under RETRY_AFTER_META, in every dialect, whose own error
# shapes (fixed by their seeds) have no place for it.
RETRY_AFTER_SECONDS: dict[str, int] = {
    "too_many_requests": 1,
    "database_busy": 1,
    "database_unavailable": 1,
    "database_read_only": 5,
    "disk_full": 60,
}
RETRY_AFTER_META = "recalld/retryAfterSeconds"
# What the REST API says for DatabaseUnavailableError (http_api.UNAVAILABLE_MESSAGE).
UNAVAILABLE_MESSAGE = "the database is unavailable; retry shortly"
# What it says for DatabaseReadOnlyError, as REST does: the server's location is the log's.
READ_ONLY_MESSAGE = (
    "the database takes no writes (a hot standby, or default_transaction_read_only set for"
    " the database or role): nothing was written; point recalld at the primary server"
)
# What it says for DatabaseBusyError (REST too, through busy_message).
BUSY_MESSAGE = (
    "the database is busy (a lock another client holds, a statement timeout, or every"
    " connection in use): nothing was written; retry shortly"
)
# SQLite's write lock another process held: the setting that bounds the wait, not the path.
LOCKED_MESSAGE = (
    "the database stayed locked by another connection's write past"
    " RECALLD_LOCK_RETRY_SECONDS; nothing was written; retry shortly"
)
# A deadlock or serialization failure PostgreSQL broke, still there after the service ran
# the write again (WriteConflictError): what happened and what to do, not "a lock another
# client holds", which sent a client looking for one (adversarial pass a68).
CONFLICT_MESSAGE = (
    "the write conflicted with other clients' writes to the same memories or entities at"
    " the same moment, again after recalld ran it again (a deadlock or serialization"
    " failure): nothing was written; send it again"
)
# Each one's cause, for a conversation a busy database stopped after some of its turns.
_BUSY_CAUSES = {
    LOCKED_MESSAGE: "the database stayed locked by another connection's write past"
    " RECALLD_LOCK_RETRY_SECONDS; retry shortly",
    CONFLICT_MESSAGE: "the write conflicted with other clients' writes at the same moment;"
    " send it again",
    BUSY_MESSAGE: "the database is busy (a lock another client holds, a statement timeout,"
    " or every connection in use); retry shortly",
}


# The cause of the other failures a conversation's send may stop at after some chunks,
# as REST and MCP tell it (review of pass a68: they said "nothing was written", or only
# "the database could not serve the request", though the earlier chunks were kept).
_STOP_CAUSES = {
    "database_unavailable": "the database is unavailable (the server could not be"
    " reached); retry shortly",
    "database_read_only": "the database takes no writes (a hot standby, or"
    " default_transaction_read_only set); point recalld at the primary server",
    "storage_error": "the database failed",
}


def stopped_send(
    kind: Literal["database_unavailable", "database_read_only", "storage_error"],
    error: BaseException,
) -> str | None:
    """For a conversation a failure of ``kind`` stopped after some chunks, what REST and MCP
    clients are told: where it stopped and what it kept (see
    :mod:`recalld.conversation_stops`); None for any other error."""
    return stopped_conversation_told(error, _STOP_CAUSES[kind])


# The cause for a send or an import a replaced database file stopped after some chunks:
# the kept turns alone, or "the database failed" alone, left out half of what the client
# must do (integration read, stop 68).
REPLACED_CAUSE = (
    "the database file was moved, deleted or replaced while this server had it open (a"
    " backup restored under it?), and the server still holds the old file; restart the"
    " server to open the one there now"
)


def replaced_message(error: DatabaseReplacedError) -> str:
    """What REST and MCP clients are told for ``error`` (503 ``storage_error``): only a
    restart helps; for a conversation it stopped after some chunks, where it stopped and
    what it kept too. Where the file is stays the log's."""
    return stopped_conversation_told(error, REPLACED_CAUSE) or DatabaseReplacedError.told


def busy_message(error: DatabaseBusyError) -> str:
    """What REST and MCP clients are told for ``error`` (503 ``database_busy``): SQLite's
    lock, a PostgreSQL conflict or a busy server, each with what to do; for a conversation
    it stopped after some chunks, where it stopped and what it kept (see
    :mod:`recalld.conversation_stops`). Where the database is stays the log's."""
    if isinstance(error, DatabaseLockedError):
        message = LOCKED_MESSAGE
    elif isinstance(error, WriteConflictError):
        message = CONFLICT_MESSAGE
    else:
        message = BUSY_MESSAGE
    return stopped_conversation_told(error, _BUSY_CAUSES[message]) or message


# pydantic puts the union member or validator it tried into the error location;
# those are not argument names.
_TYPE_WORDS = frozenset(
    {"str", "int", "float", "bool", "list", "dict", "none", "literal", "datetime", "is-instance"}
)


@dataclass(frozen=True)
class ToolFailure:
    """Why a tool call failed, before a dialect words it.

    ``field`` is the argument at fault in the *tool's* names (service field
    names are renamed by the dialect); ``error`` is the original exception.
    """

    kind: FailureKind
    message: str
    field: str | None = None
    error: BaseException | None = None

    def text(self) -> str:
        """``field: message`` (or just the message)."""
        return f"{self.field}: {self.message}" if self.field else self.message


@dataclass(frozen=True)
class ToolCall:
    """The call that failed: the tool's name, its raw arguments and the server state."""

    name: str
    arguments: Mapping[str, Any]
    state: Any = None


ErrorShape = Callable[[ToolFailure, ToolCall], CallToolResult]


def _field_of(location: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for part in location:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        elif part.split("[", 1)[0] in _TYPE_WORDS or "[" in part or "-" in part:
            continue
        else:
            name = check.field_name(part)
            parts.append(f".{name}" if parts else name)
    return "".join(parts) or "arguments"


def _pydantic_message(problem: Mapping[str, Any], text_lists: frozenset[str]) -> str:
    if problem.get("type") == "missing":
        return "is required"
    message = str(problem.get("msg", "is invalid")).removeprefix("Value error, ")
    given = problem.get("input")
    if not isinstance(given, str):
        return message
    kind = str(problem.get("type"))
    if kind in _WANTED:
        of_text = len(problem["loc"]) == 1 and problem["loc"][0] in text_lists
        return _text_for_type(kind, given, of_text)
    if message.startswith(_NUMBER_REFUSALS):
        return _send_unquoted(message, given, whole=True)
    # Any other refusal of text (too long, a pattern) is about text: "send 111 as a JSON
    # number" would be wrong advice for a 300-digit speaker.
    return message


# pydantic's error types for a value of the wrong JSON type, as what the argument must be.
_WANTED = {
    "list_type": "a list (a JSON array)",
    "bool_type": "true or false (a JSON boolean)",
    "bool_parsing": "true or false (a JSON boolean)",
    "float_type": "a number",
    "float_parsing": "a number",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "dict_type": "an object (JSON)",
    "model_type": "an object (JSON)",
}
# recalld's own refusals of text where a count belongs (model._whole_number,
# _arguments.whole_in): the fix for "5" is the number 5.
_NUMBER_REFUSALS = ("must be an integer",)


def _text_for_type(kind: str, given: str, of_text: bool) -> str:
    """The message for text sent where a list, boolean, number or object belongs (an LLM's
    ``"tags": "work"``, ``"verbose": "true"``, ``"salience": "0.5"``): what the argument
    must be and the exact value to send instead, where one can be told ("Input should be
    a valid list" left a model guessing). The text is never read as that value: ``"a,b"``
    could be one tag or two, and REST and the library refuse text there too. ``of_text``:
    the argument is a list of strings, so the text wrapped in a list is one."""
    message = f"must be {_WANTED[kind]}, got the text {shown(given)}"
    if kind == "list_type" and of_text:
        listed = json.dumps([given], ensure_ascii=False)
        # The text is repeated whole only while it is short: a 1 MB text sent for tags
        # would otherwise come back twice over, once cut by shown() and once whole.
        if len(listed) <= MAX_ECHO_CHARS:
            return f"{message}: for one item send {listed}"
        return f'{message}: for one item send it inside a list, ["..."]'
    if kind.startswith("bool") and given.strip().lower() in ("true", "false"):
        return f"{message}: send {given.strip().lower()} without quotes"
    return _send_unquoted(message, given, whole=kind.startswith("int"))


def _send_unquoted(message: str, given: str, *, whole: bool) -> str:
    """``message`` (a refusal of the text ``given``) with the fix when the text is a JSON
    number (``whole``: an integer, as the argument takes): send it without quotes. ``NaN``
    and ``Infinity`` are no JSON numbers (Python's json module reads them), and "5.5"
    sent for a count would only be refused again: no advice to send them."""
    try:
        number = json.loads(given, parse_constant=_no_constant)
    except ValueError:  # not JSON, or an integer past Python's 4,300 digits
        return message
    if not isinstance(number, int | float) or isinstance(number, bool):
        return message
    if whole and not (isinstance(number, int) or number.is_integer()):
        return message
    written = given.strip()
    if len(written) > MAX_ECHO_CHARS:
        return f"{message}: send it as a JSON number, without quotes"
    return f"{message}: send {written} as a JSON number, without quotes"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _renamed(name: str | None, renames: Mapping[str, str]) -> str | None:
    """``name`` in the tool's words: a whole name that ``renames`` lists (``place.geohash``
    → ``geohash``), else its first part renamed (``meta.a`` → ``metadata.a``)."""
    if name is None:
        return None
    if name in renames:
        return renames[name]
    head, dot, rest = name.partition(".")
    bracket = head.find("[")
    if bracket > 0:
        head, rest, dot = head[:bracket], head[bracket:] + dot + rest, ""
    return renames.get(head, head) + dot + rest


def failure_of(
    error: BaseException,
    renames: Mapping[str, str] | None = None,
    text_lists: frozenset[str] = frozenset(),
) -> ToolFailure:
    """The :class:`ToolFailure` for an exception raised by argument validation or a tool.

    ``renames`` maps service field names (``at``, ``meta`` …) to the tool's own
    argument names (``captured_at``, ``metadata`` …), prefix by prefix; a whole
    dotted name may be listed too (``place.geohash`` → ``geohash`` where the tool's
    place is flat). ``text_lists``: the tool's arguments that are lists of strings
    (the fix for one given as text is to send it in a list).
    """
    renames = renames or {}
    if isinstance(error, pydantic.ValidationError):
        problem = error.errors()[0]
        union = check.union_problem(error.errors())
        if union is not None:  # a time field given a number, named as itself
            return ToolFailure("validation_error", union[1], _field_of(union[0]), error)
        return ToolFailure(
            "validation_error",
            _pydantic_message(problem, text_lists),
            _field_of(problem["loc"]),
            error,
        )
    if isinstance(error, ValidationError | ConflictError):
        kind: FailureKind = "validation_error" if isinstance(error, ValidationError) else "conflict"
        return ToolFailure(kind, error.message, _renamed(error.field, renames), error)
    if isinstance(error, NotFoundError):
        return ToolFailure("not_found", str(error), None, error)
    if isinstance(error, PermissionDeniedError):
        return ToolFailure("forbidden", error.message, _renamed(error.field, renames), error)
    if isinstance(error, DiskFullError):
        return ToolFailure("disk_full", _unlocated(error), None, error)
    if isinstance(error, DatabaseUnavailableError):
        # As the REST API answers it (503 database_unavailable): the kind a client retries
        # on, and the server's location (user, host, database) only in the server's log.
        logger.error("database unavailable: %s", error)
        unavailable = stopped_send("database_unavailable", error)
        return ToolFailure("database_unavailable", unavailable or UNAVAILABLE_MESSAGE, None, error)
    if isinstance(error, DatabaseBusyError):
        logger.error("database busy: %s", error)
        return ToolFailure("database_busy", busy_message(error), None, error)
    if isinstance(error, DatabaseReadOnlyError):
        logger.error("database read-only: %s", error)
        read_only = stopped_send("database_read_only", error)
        return ToolFailure("database_read_only", read_only or READ_ONLY_MESSAGE, None, error)
    if isinstance(error, DatabaseReplacedError):
        logger.error("database replaced: %s", error)
        return ToolFailure("storage_error", replaced_message(error), None, error)
    if isinstance(error, StorageError):
        return ToolFailure(
            "storage_error", f"the database failed: {_unlocated(error)}", None, error
        )
    if isinstance(error, EmbeddingError):
        return ToolFailure("embedding_error", f"the embedding model failed: {error}", None, error)
    if isinstance(error, RecalldError):
        return ToolFailure("validation_error", str(error), None, error)
    return ToolFailure("internal_error", "an unexpected error occurred", None, error)


# The role a PostgreSQL permission error names, twice ("the role app may not do what
# recalld needs ...; GRANT ... TO app (and the tables' privileges)"): any text up to the
# words that follow it, as a role's name may hold spaces ("payroll writer").
_ROLE = re.compile(r"\bthe role (.+?) may not do what recalld needs\b")


def _unlocated(error: StorageError) -> str:
    """The error's message without the PostgreSQL location it names (its role, host and
    database: a client of ``/mcp`` may be anywhere), which the server logs instead, as
    the REST API keeps every storage error's detail in the log."""
    message = str(error)
    unlocated = without_location(message)
    named = _ROLE.search(unlocated)
    if named is not None:
        # The URL's user, kept in the message when the URL was taken out of it.
        role = named.group(1)
        unlocated = unlocated.replace(
            named.group(0), "the role recalld connects as may not do what recalld needs"
        )
        unlocated = unlocated.replace(f" TO {role} (", " TO <role> (")
    if unlocated != message:
        logger.error("database failed: %s", message)
    return unlocated


def unknown_argument(name: str, accepted: frozenset[str]) -> ToolFailure:
    """The failure for an argument the tool does not have."""
    known = ", ".join(sorted(accepted)) or "none"
    wrapped = (
        f": send the arguments themselves, not wrapped in {name}"
        if name in _WRAPPERS and name not in accepted
        else ""
    )
    return ToolFailure(
        "unknown_argument",
        f"is not an argument of this tool{wrapped} (it takes {known})",
        check.field_name(name),
    )


# Names under which frameworks and models wrap a call's arguments ({"input": {...}}).
_WRAPPERS = frozenset({"input", "arguments", "args", "params", "parameters", "kwargs"})


def error_body(failure: ToolFailure) -> dict[str, Any]:
    """The REST API's error body: ``{"error": {"type", "field", "message"}}``."""
    return {"error": {"type": failure.kind, "field": failure.field, "message": failure.message}}


def error_result(failure: ToolFailure, _call: ToolCall) -> CallToolResult:
    """The default shape (native, batbox, madeleine): the REST error body, as JSON text
    and as structured content, with the MCP error flag set."""
    body = error_body(failure)
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


def shaped(shape: ErrorShape, failure: ToolFailure, call: ToolCall) -> CallToolResult:
    """``failure`` in ``shape``, with the seconds to wait before sending the call again
    in its ``_meta`` when it is worth sending again (:data:`RETRY_AFTER_SECONDS`)."""
    return with_retry_hint(shape(failure, call), failure.kind)


def with_retry_hint(result: CallToolResult, kind: str) -> CallToolResult:
    """``result``, a failure of ``kind``, saying in its ``_meta`` how long to wait
    before sending the call again, if it is worth sending again."""
    retry = RETRY_AFTER_SECONDS.get(kind)
    if retry is None:
        return result
    return result.model_copy(update={"meta": {**(result.meta or {}), RETRY_AFTER_META: retry}})


class DialectTool(Tool):
    """An SDK tool whose every failure is answered in its dialect's shape."""

    shape: ErrorShape = Field(default=error_result, exclude=True)
    renames: dict[str, str] = Field(default_factory=dict, exclude=True)
    closed: bool = Field(default=True, exclude=True)
    accepted: frozenset[str] = Field(default_factory=frozenset, exclude=True)
    optional: frozenset[str] = Field(default_factory=frozenset, exclude=True)
    null_is_absent: bool = Field(default=False, exclude=True)
    # Its arguments that take a list of strings (_arguments.text_lists_of), read once when
    # the server's tools are built, where an SDK that hides them fails the start.
    text_lists: frozenset[str] = Field(default_factory=frozenset, exclude=True)
    state_of_context: Callable[[Any], Any] | None = Field(default=None, exclude=True)

    async def run(
        self, arguments: dict[str, Any], context: Any, convert_result: bool = False
    ) -> Any:
        """Refuse unknown arguments (closed schemas), run the tool, translate any failure."""
        if self.null_is_absent:
            # Models send null for the optional arguments they do not use (OpenAI's strict
            # mode makes every argument required and nullable): that is the default.
            arguments = {
                name: value
                for name, value in arguments.items()
                if value is not None or name not in self.optional
            }
        call = ToolCall(self.name, arguments, self._state(context))
        if self.closed:
            for name in arguments:
                if name not in self.accepted:
                    return shaped(self.shape, unknown_argument(name, self.accepted), call)
        try:
            return await super().run(arguments, context, convert_result)
        except ToolError as raised:
            cause = raised.__cause__
            if cause is None:
                raise
            failure = failure_of(cause, self.renames, self.text_lists)
            if failure.kind == "internal_error":
                logger.error("tool %s crashed", self.name, exc_info=cause)
            return shaped(self.shape, failure, call)

    def _state(self, context: Any) -> Any:
        if self.state_of_context is None:
            return None
        try:
            return self.state_of_context(context)
        except (AttributeError, LookupError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class ToolWords:
    """How one tool words the engine's failures where its dialect's renames fall short.

    ``renames``: engine field → this tool's argument, for this tool only (madeleine's
    ``recall`` takes the cue's text as ``query``, its ``sense`` as ``text``).
    ``choices``: the engine field of a "give at least one of …" failure (``cue``,
    ``changes``, ``triggers``) → the message listing this tool's own arguments; no
    one argument is at fault there, so the field becomes null rather than a name
    the tool does not take.
    """

    renames: Mapping[str, str] = field(default_factory=dict)
    choices: Mapping[str, str] = field(default_factory=dict)

    def word(self, failure: ToolFailure) -> ToolFailure:
        """``failure`` in this tool's words. Only the engine's failures are reworded:
        argument validation and unknown arguments already use the tool's names."""
        if not isinstance(failure.error, RecalldError) or failure.field is None:
            return failure
        if failure.field in self.choices:
            return replace(failure, field=None, message=self.choices[failure.field])
        return replace(failure, field=_renamed(failure.field, self.renames))


def worded(tools: Mapping[str, ToolWords], shape: ErrorShape = error_result) -> ErrorShape:
    """An error shape that first rewords a failure with its tool's :class:`ToolWords`
    (tools not in ``tools`` keep the failure as it is), then answers in ``shape``."""

    def answer(failure: ToolFailure, call: ToolCall) -> CallToolResult:
        words = tools.get(call.name)
        return shape(failure if words is None else words.word(failure), call)

    return answer


@dataclass(frozen=True)
class Wording:
    """How a dialect words its failures: its shape, renames, and whether unknown
    arguments are refused (``closed``: the seed's schema lists every argument).

    ``null_is_absent``: an optional argument sent as null is read as left out (recalld's
    own tools; a seed dialect takes null where its seed's server does)."""

    shape: ErrorShape = error_result
    renames: Mapping[str, str] = field(default_factory=dict)
    closed: bool = True
    null_is_absent: bool = False
