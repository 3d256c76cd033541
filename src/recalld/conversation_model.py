"""The shapes of a transcript to remember and of the report of remembering it.

:class:`Conversation` (``POST /v1/conversations``, ``remember_conversation``) holds
:class:`ConversationMessage` objects; :class:`ConversationReport` says what happened to
each. What is done with them: :mod:`recalld.conversations`, which re-exports them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictBool, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError
from pydantic_core import ValidationError as PydanticValidationError

from recalld import _validate as check
from recalld._schema import DATE_TIME, NAME_PATTERN, NO_NUL_PATTERN, extra, nullable, replaced
from recalld.errors import ValidationError
from recalld.model import TAGS_SCHEMA, Moment, Receipt

__all__ = [
    "MAX_MESSAGES",
    "OPENAI_FIELDS",
    "OPENAI_SAYS_OR_CALLS",
    "SAYS_OR_CALLS",
    "Conversation",
    "ConversationMessage",
    "ConversationReport",
    "SkippedMessage",
    "ToolCall",
    "ToolFunction",
    "TurnReceipt",
    "conversation_of",
    "message_kind",
    "openai_message_schema",
    "role_kind",
    "role_name",
    "role_speaker",
    "speaker_key",
    "turn_text",
]

MAX_MESSAGES = 10_000
ID_MAX_CHARS = 200
SPEAKER_MAX_CHARS = 200
ROLE_MAX_CHARS = 100
MAX_TOOL_CALLS = 128

RoleKind = Literal["speech", "system", "tool"]
# Role names of the common chat formats, by what they are.
SYSTEM_ROLES = frozenset({"system", "developer"})
TOOL_ROLES = frozenset({"tool", "function", "tool_use", "tool_result", "tool_call", "ipython"})
ROLE_SPEAKERS = {"human": "user", "ai": "assistant", "model": "assistant", "bot": "assistant"}


# The roles whose name, in any case, is one speaker (the name of another "role", a person's
# in some transcripts, is kept as given).
KNOWN_ROLES = frozenset({"user", "assistant", *ROLE_SPEAKERS, *SYSTEM_ROLES, *TOOL_ROLES})


def role_name(role: str) -> str:
    """``role`` as a turn's ``meta.role`` keeps it: a known role's name in lower case (its
    case says nothing: ``User`` is ``user``), any other name as given."""
    folded = role.strip().lower()
    return folded if folded in KNOWN_ROLES else role


def role_speaker(role: str) -> str:
    """The speaker of a message that gives ``role`` and no speaker: a known role's name in
    lower case (``User`` and ``user`` are one speaker, ``human`` is ``user``), any other
    name as given."""
    name = role_name(role)
    return ROLE_SPEAKERS.get(name, name)


def speaker_key(speaker: str | None) -> str | None:
    """``speaker`` as a message is matched with a stored turn: a known role's name in any
    case is that role in lower case, so a turn stored as ``User`` (before roles were
    folded) is the turn a re-sent ``user`` message says again. An alias is no key of its
    role: a role ``bot`` was always stored as ``assistant``, so a speaker named ``Bot``
    is someone else, as it was."""
    if speaker is None:
        return None
    folded = speaker.strip().lower()
    return folded if folded in KNOWN_ROLES and folded not in ROLE_SPEAKERS else speaker


def role_kind(role: str | None) -> RoleKind:
    """Whether a role speaks (kept), is the system (skipped unless asked) or a tool."""
    folded = (role or "").strip().lower()
    if folded in SYSTEM_ROLES:
        return "system"
    if folded in TOOL_ROLES:
        return "tool"
    return "speech"


# A message's schema says what Conversations._check does: it says something (content
# given, not null), or it calls a tool (tool_calls, not empty).
SAYS_OR_CALLS: dict[str, JsonValue] = {
    "anyOf": [
        {"required": ["content"], "properties": {"content": {"type": "string"}}},
        {
            "required": ["tool_calls"],
            "properties": {"tool_calls": {"type": "array", "minItems": 1}},
        },
    ]
}
# The same, with the OpenAI chat format's ways of saying something (content parts, a
# refusal, an audio answer's transcript) and of calling a tool (function_call).
OPENAI_SAYS_OR_CALLS: dict[str, JsonValue] = {
    "anyOf": [
        {"required": ["content"], "properties": {"content": {"type": ["string", "array"]}}},
        {"required": ["refusal"], "properties": {"refusal": {"type": "string"}}},
        {
            "required": ["audio"],
            "properties": {"audio": {"type": "object", "required": ["transcript"]}},
        },
        {
            "required": ["tool_calls"],
            "properties": {"tool_calls": {"type": "array", "minItems": 1}},
        },
        {"required": ["function_call"], "properties": {"function_call": {"type": "object"}}},
    ]
}
# The fields of an OpenAI chat message _openai_message reads (they are not the model's own
# fields: each becomes one of them before it is checked), as the message's schema lists them.
CONTENT_PART: dict[str, JsonValue] = {
    "type": "object",
    "description": "a content part: a text part's text and a refusal part's refusal are what"
    " was said (one per line); other parts (images, audio) say nothing",
    "properties": {
        "type": {"type": "string", "description": "text, refusal, image_url …"},
        "text": {"type": "string"},
        "refusal": {"type": "string"},
    },
    "required": ["type"],
}
OPENAI_FIELDS: dict[str, JsonValue] = {
    "name": {
        "type": "string",
        "description": "who said it (OpenAI chat format): the speaker, when speaker is not given",
    },
    "refusal": {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "description": "an assistant's refusal: what it said, when content is null",
    },
    "audio": {
        "anyOf": [
            {"type": "object", "properties": {"transcript": {"type": "string"}}},
            {"type": "null"},
        ],
        "description": "a spoken answer: its transcript is what it said, when content is null",
    },
    "annotations": {"type": "array", "description": "left out"},
    "function_call": {
        "anyOf": [
            {
                "type": "object",
                "properties": {"name": {"type": "string"}, "arguments": {"type": "string"}},
                "required": ["name"],
            },
            {"type": "null"},
        ],
        "description": "the legacy form of one tool call (its result has role function)",
    },
}


def openai_message_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (:class:`ConversationMessage`'s) with the fields of the OpenAI chat format
    that the model reads before its own (``content`` as a list of parts too), for a client
    that sends such messages as they are (the MCP tool ``remember_conversation``).

    The OpenAPI schema of REST leaves them out: JSON Schema cannot say what the model
    refuses of them (``name`` beside ``speaker``, a ``refusal`` beside ``content``, …),
    and that schema is held to say exactly what is accepted."""
    message = copy.deepcopy(dict(schema))
    message.update(copy.deepcopy(OPENAI_SAYS_OR_CALLS))
    properties = message["properties"]
    content = properties["content"]
    # Its text (a schema that leaves nullable fields plain has no anyOf for it).
    options = content.pop("anyOf", None) or [
        {key: content.pop(key) for key in ("type", "pattern") if key in content}
    ]
    said = [option for option in options if option != {"type": "null"}]
    parts = {"type": "array", "items": copy.deepcopy(CONTENT_PART)}
    content["anyOf"] = [*said, parts, {"type": "null"}]
    properties.update(copy.deepcopy(OPENAI_FIELDS))
    return message


class ToolFunction(BaseModel):
    """The function a tool call calls (OpenAI chat format): its name and arguments."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        min_length=1, max_length=ROLE_MAX_CHARS, json_schema_extra=extra(pattern=NAME_PATTERN)
    )
    arguments: str = Field(
        default="",
        description="its arguments, as a JSON text",
        json_schema_extra=extra(pattern=NO_NUL_PATTERN),
    )


class ToolCall(BaseModel):
    """One tool call of an assistant message (OpenAI chat format ``tool_calls``)."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(
        default=None,
        min_length=1,
        max_length=ID_MAX_CHARS,
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    type: Literal["function"] = "function"
    function: ToolFunction


# Fields of an OpenAI chat message that say nothing recalld keeps (as the SDK returns an
# assistant message: ``refusal`` null, ``annotations`` [], ``audio`` null).
OPENAI_PASSING = ("annotations", "audio")


def _both(field: str, other: str, value: Any) -> PydanticValidationError:
    """The refusal of ``field`` given beside ``other``, which says the same: raised as
    pydantic's own error so that it names ``messages[i].<field>`` on every surface (an
    error of the validator would name the message)."""
    return PydanticValidationError.from_exception_data(
        "ConversationMessage",
        [
            InitErrorDetails(
                type=PydanticCustomError(
                    f"{field}_and_{other}", f'give "{field}" or "{other}", not both'
                ),
                loc=(field,),
                input=value,
            )
        ],
    )


def _openai_message(data: Any) -> Any:
    """An OpenAI chat message in this model's terms: ``name`` is the speaker, a ``refusal``
    is what the assistant said, ``content`` as a list of parts is the text of its text and
    refusal parts (one per line; none: no text), and the legacy ``function_call`` is a
    tool call. Each is read only where the message does not say the same otherwise
    (``name`` beside ``speaker``, and ``refusal`` beside ``content``, are refused, naming
    ``name`` or ``refusal``: which one is meant cannot be told), and a part whose text
    is not text is left for the content's own check to refuse."""
    if not isinstance(data, dict):
        return data
    data = dict(data)
    audio = data.get("audio")
    # A spoken answer says what it said in its transcript.
    if (
        data.get("content") is None
        and isinstance(audio, dict)
        and isinstance(audio.get("transcript"), str)
    ):
        data["content"] = audio["transcript"]
    for name in OPENAI_PASSING:
        data.pop(name, None)
    if data.get("speaker") is None and "name" in data:
        data["speaker"] = data.pop("name")
    elif "name" in data:
        if data["name"] is not None:
            raise _both("name", "speaker", data["name"])
        del data["name"]  # null: not given (as the SDK dumps an unset field)
    if data.get("refusal") is None:
        data.pop("refusal", None)
    elif data.get("content") is None:
        data["content"] = data.pop("refusal")
    else:
        raise _both("refusal", "content", data["refusal"])
    parts = data.get("content")
    if isinstance(parts, list) and all(_readable(part) for part in parts):
        data["content"] = "\n".join(
            part["text"] if part["type"] == "text" else part["refusal"]
            for part in parts
            if part["type"] in ("text", "refusal")
        )
    if "function_call" in data and data["function_call"] is None:
        # As the SDK dumps every assistant message that calls no function (beside
        # "tool_calls": null, which the model takes as none).
        del data["function_call"]
    if data.get("tool_calls") is None and data.get("function_call") is not None:
        data["tool_calls"] = [{"type": "function", "function": data.pop("function_call")}]
    return data


def _readable(part: Any) -> bool:
    """Whether ``part`` of a content list is one this reads: a text or refusal part holding
    text, or another kind (an image, audio: no text)."""
    if not isinstance(part, dict) or not isinstance(part.get("type"), str):
        return False
    field = {"text": "text", "refusal": "refusal"}.get(part["type"])
    return field is None or isinstance(part.get(field), str)


class ConversationMessage(BaseModel):
    """One message of a transcript: who said it (``role`` or ``speaker``), what, when.

    Messages of the OpenAI chat format are read as they are: an assistant's tool calls
    (``tool_calls``, its ``content`` then null; or the legacy ``function_call``) and a
    tool's result (role ``tool`` or ``function``, ``tool_call_id``) are tool messages,
    skipped unless tools are included; ``name`` is the speaker, a ``refusal`` what the
    assistant said, ``content`` as parts the text of its text parts, and ``annotations``
    and ``audio`` are left out."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=SAYS_OR_CALLS)

    @model_validator(mode="before")
    @classmethod
    def _openai(cls, data: Any) -> Any:
        return _openai_message(data)

    content: str | None = Field(
        default=None,
        description="what was said (a message with no text is skipped; only one with"
        " tool_calls may have none)",
        json_schema_extra=extra(pattern=NO_NUL_PATTERN),
    )
    role: str | None = Field(
        default=None,
        min_length=1,
        max_length=ROLE_MAX_CHARS,
        description="user, assistant, system, tool … (system and tool messages are skipped"
        " unless asked for)",
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    speaker: str | None = Field(
        default=None,
        min_length=1,
        max_length=SPEAKER_MAX_CHARS,
        description="who said it, e.g. a person's name (default: the role)",
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    at: Moment | str | None = Field(
        default=None,
        description="when it was said (default: when other messages have a time, the one"
        " before it's, else the one after it's; else the conversation's at, else now)",
        json_schema_extra=replaced(nullable(DATE_TIME)),
    )
    id: str | None = Field(
        default=None,
        min_length=1,
        max_length=ID_MAX_CHARS,
        description="the message's id in its source, for idempotent re-ingestion (unique"
        " within the transcript, not starting with '#')",
        json_schema_extra=extra(pattern="^(?!#)" + NAME_PATTERN[1:]),
    )
    tool_calls: list[ToolCall] | None = Field(
        default=None,
        max_length=MAX_TOOL_CALLS,
        description="the tools an assistant message calls (kept with include_tools)",
    )
    tool_call_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=ID_MAX_CHARS,
        description="the tool call a tool message answers",
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )


def message_kind(message: ConversationMessage) -> RoleKind:
    """What ``message`` is: its role's kind (:func:`role_kind`), and a tool call when it
    calls tools and says nothing (an assistant's tool call, content null)."""
    if message.tool_calls and not (message.content or "").strip():
        return "tool"
    return role_kind(message.role)


def turn_text(message: ConversationMessage, include_tools: bool) -> str:
    """The text of the turn ``message`` becomes: what it says, then (when tools are
    included) one line per tool it calls, ``[tool call: name] arguments``."""
    lines = [message.content] if message.content else []
    if include_tools:
        for call in message.tool_calls or ():
            lines.append(f"[tool call: {call.function.name}] {call.function.arguments}".rstrip())
    return "\n".join(lines)


class Conversation(BaseModel):
    """A transcript to remember (``POST /v1/conversations``, ``remember_conversation``)."""

    model_config = ConfigDict(extra="forbid")

    messages: list[ConversationMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    conversation: str | None = Field(
        default=None,
        min_length=1,
        max_length=ID_MAX_CHARS,
        description="the conversation's id (default: derived from the transcript's start; give it"
        " to edit turns and when sending only the latest messages)",
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    title: str | None = Field(
        default=None,
        max_length=500,
        description="the conversation's title",
        json_schema_extra=extra(pattern=NO_NUL_PATTERN),
    )
    at: Moment | str | None = Field(
        default=None,
        description="when the conversation happened (the default of its messages' at)",
        json_schema_extra=replaced(nullable(DATE_TIME)),
    )
    source: str | None = Field(
        default=None,
        min_length=1,
        max_length=2048,
        description="URI of the transcript (default recalld://conversation/<id>)",
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    tags: list[str] = Field(default_factory=list, json_schema_extra=replaced(TAGS_SCHEMA))
    include_system: StrictBool = Field(default=False, description="keep system/developer messages")
    include_tools: StrictBool = Field(default=False, description="keep tool calls and tool results")


class TurnReceipt(BaseModel):
    """What happened to one kept message: its position, its memory and the write's status."""

    index: int = Field(description="the message's position in the transcript (from 0)")
    receipt: Receipt


class SkippedMessage(BaseModel):
    """A message left out, and why."""

    index: int
    reason: str


class ConversationReport(BaseModel):
    """What remembering a conversation did, turn by turn."""

    conversation: str
    source: str
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    turns: list[TurnReceipt] = Field(default_factory=list)
    skipped_messages: list[SkippedMessage] = Field(default_factory=list)


def conversation_of(
    messages: Any,
    *,
    conversation: str | None = None,
    title: str | None = None,
    at: datetime | str | None = None,
    source: str | None = None,
    tags: Sequence[str] = (),
    include_system: bool = False,
    include_tools: bool = False,
) -> Conversation | dict[str, Any]:
    """The arguments of ``MemoryService.remember_conversation`` as one conversation.

    ``messages`` is a list of messages (dicts or :class:`ConversationMessage`) with
    the other fields as keywords, or a whole :class:`Conversation` alone. Anything
    else is a :class:`ValidationError` naming the argument (a ``{"messages": [...]}``
    dict is a request body: ``Conversation.model_validate`` reads it).
    """
    if isinstance(messages, Conversation):
        given = {
            "conversation": conversation is not None,
            "title": title is not None,
            "at": at is not None,
            "source": source is not None,
            "tags": bool(check.listed(tags, "tags")),
            "include_system": include_system is not False,
            "include_tools": include_tools is not False,
        }
        for name, is_given in given.items():
            if is_given:
                raise ValidationError(name, "is set on the Conversation given; set it there")
        return messages
    if isinstance(messages, Mapping):
        raise ValidationError(
            "messages",
            "give a list of messages and the other fields as arguments, not a"
            f" {type(messages).__name__} (a whole conversation: Conversation.model_validate)",
        )
    if isinstance(messages, str | bytes) or not isinstance(messages, Iterable):
        raise ValidationError(
            "messages", f"give a list of messages, not a {type(messages).__name__}"
        )
    listed: list[Any] = []
    for index, item in enumerate(messages):
        if isinstance(item, ConversationMessage):
            listed.append(item.model_dump(exclude_none=True))
        elif isinstance(item, Mapping):
            listed.append(dict(item))
        else:
            raise ValidationError(
                f"messages[{index}]",
                "give a message ({'content', 'role' or 'speaker', 'at'?, 'id'?}),"
                f" not a {type(item).__name__}",
            )
    return {
        "messages": listed,
        "conversation": conversation,
        "title": title,
        "at": at,
        "source": source,
        "tags": check.listed(tags, "tags"),
        "include_system": include_system,
        "include_tools": include_tools,
    }
