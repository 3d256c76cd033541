"""Transcripts in the OpenAI chat format: an assistant's tool calls (content null,
``tool_calls``) and tool results (role ``tool``, ``tool_call_id``) are tool messages,
skipped unless tools are included, and checked as strictly as any other message (the
outside review of stop 50, finding 7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.importing.transcript import ALIASES, read_transcript
from recalld.service import MemoryService

CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Hobart"}'},
}
OPENAI: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What's the weather in Hobart?"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": "12C, windy"},
    {"role": "assistant", "content": "It is 12C and windy in Hobart."},
]


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    """The keyword-only settings of tests/conftest.py, on SQLite and on PostgreSQL."""
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


def test_conversation_openai_format_skips_tool_messages_unless_asked(
    service: MemoryService,
) -> None:
    # The whole transcript was refused: "messages[2].content: Field required", then
    # "messages[2].tool_calls: Extra inputs are not permitted".
    report = service.remember_conversation(OPENAI, conversation="weather")
    assert (report.created, report.skipped) == (2, 3)
    assert [(skipped.index, skipped.reason) for skipped in report.skipped_messages] == [
        (0, "a system message (include_system keeps them)"),
        (2, "a tool call (include_tools keeps them)"),
        (3, "a tool message (include_tools keeps them)"),
    ]
    # Asked for, the tool call and its result are added; the rest is unchanged.
    tools = service.remember_conversation(OPENAI, conversation="weather", include_tools=True)
    assert (tools.created, tools.unchanged, tools.skipped) == (2, 2, 1)
    call, result = (service.get(turn.receipt.id) for turn in tools.turns[1:3])
    assert call.content == '[tool call: get_weather] {"city": "Hobart"}'
    assert (call.speaker, call.meta["tool_call_ids"]) == ("assistant", ["call_1"])
    assert (result.content, result.meta["tool_call_id"]) == ("12C, windy", "call_1")
    # Kept from the first send, re-sending changes nothing.
    first = service.remember_conversation(OPENAI, conversation="tools", include_tools=True)
    again = service.remember_conversation(OPENAI, conversation="tools", include_tools=True)
    assert (first.created, again.created, again.updated, again.unchanged) == (4, 0, 0, 4)


def test_conversation_openai_file_is_ingested(service: MemoryService) -> None:
    # `recalld ingest chat.json` reads {"messages": [...]} as it is.
    fields = read_transcript(json.dumps({"messages": OPENAI}))
    report = service.conversations.remember({**fields, "include_tools": True})
    assert (report.created, report.skipped) == (4, 1)


def test_conversation_openai_messages_as_clients_send_them(service: MemoryService) -> None:
    # Each shape refused the whole transcript: the optional name, an assistant message as
    # the SDK dumps it (refusal, annotations, audio), content as a list of parts, and the
    # legacy function_call with its role "function" result.
    messages: list[dict[str, Any]] = [
        {"role": "user", "name": "Ana", "content": "Is it windy in Hobart?"},
        {
            "role": "assistant",
            "content": None,
            "refusal": "I cannot look that up.",
            "annotations": [],
            "audio": None,
        },
        {"role": "user", "content": [{"type": "text", "text": "Then guess."}]},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "get_weather", "arguments": '{"city": "Hobart"}'},
        },
        {"role": "function", "name": "get_weather", "content": "12C, windy"},
    ]
    report = service.remember_conversation(messages, conversation="openai", include_tools=True)
    assert report.created == 5, report
    turns = [service.get(turn.receipt.id) for turn in report.turns]
    assert [(turn.speaker, turn.content) for turn in turns[:4]] == [
        ("Ana", "Is it windy in Hobart?"),
        ("assistant", "I cannot look that up."),
        ("user", "Then guess."),
        ("assistant", '[tool call: get_weather] {"city": "Hobart"}'),
    ]
    assert turns[4].content == "12C, windy"
    again = service.remember_conversation(messages, conversation="openai", include_tools=True)
    assert (again.created, again.unchanged) == (0, 5)


def test_conversation_openai_sdk_dump_of_an_assistant_message_is_taken(
    service: MemoryService,
) -> None:
    # ChatCompletionMessage.model_dump() of a plain answer: every optional field present
    # and null (or empty), the legacy function_call included (review 51h).
    dumped: dict[str, Any] = {
        "role": "assistant",
        "content": "Hello!",
        "refusal": None,
        "annotations": [],
        "audio": None,
        "function_call": None,
        "tool_calls": None,
    }
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Hi"}, dumped]
    report = service.remember_conversation(messages, conversation="sdk")
    assert report.created == 2, report
    assert service.get(report.turns[1].receipt.id).content == "Hello!"


def test_conversation_openai_messages_read_only_what_they_say_once(
    service: MemoryService,
) -> None:
    # A part whose text is not text was a TypeError (500 over REST); a message without a
    # text part, or a spoken answer, refused the whole transcript; a field given twice
    # (name beside speaker) was dropped without a word.
    spoken = {"role": "assistant", "content": None, "audio": {"id": "a1", "transcript": "Yes."}}
    image = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}
    report = service.remember_conversation(
        [{"role": "user", "content": "Can you hear me?"}, spoken, image], conversation="voice"
    )
    assert (report.created, report.skipped) == (2, 1)
    assert service.get(report.turns[1].receipt.id).content == "Yes."
    refused: list[tuple[dict[str, Any], str]] = [
        ({"role": "user", "content": [{"type": "text", "text": 5}]}, "messages[0].content"),
        ({"role": "user", "speaker": "Ana", "name": "Bo", "content": "hi"}, "messages[0].name"),
        ({"role": "assistant", "content": "ok", "refusal": "no"}, "messages[0].refusal"),
    ]
    for message, field in refused:
        with pytest.raises(ValidationError) as caught:
            service.remember_conversation([message], conversation="bad")
        assert caught.value.field == field
    assert service.stats().count == 2


def test_conversation_refusal_beside_content_says_to_give_one(service: MemoryService) -> None:
    # It said "messages[0].refusal: Extra inputs are not permitted".
    both = {"role": "assistant", "content": "Here it is.", "refusal": "I cannot."}
    with pytest.raises(ValidationError) as caught:
        service.remember_conversation([both], conversation="bad")
    assert str(caught.value) == 'messages[0].refusal: give "refusal" or "content", not both'
    assert service.stats().count == 0


def test_conversation_name_beside_speaker_says_to_give_one(service: MemoryService) -> None:
    # It said "messages[1].name: Extra inputs are not permitted", as if name were unknown.
    said = {"role": "user", "content": "hi"}
    for both in (
        {**said, "speaker": "Ana", "name": "Bo"},
        {**said, "speaker": "Ana", "name": "Ana"},
    ):
        with pytest.raises(ValidationError) as caught:
            service.remember_conversation([said, both], conversation="bad")
        assert str(caught.value) == 'messages[1].name: give "name" or "speaker", not both'
    assert service.stats().count == 0
    # A null name is no name (as a null refusal is no refusal).
    report = service.remember_conversation(
        [{**said, "speaker": "Ana", "name": None}], conversation="ok"
    )
    assert service.get(report.turns[0].receipt.id).speaker == "Ana"


# Each alias of the ALIASES table beside the field's own name or another alias of it.
TWICE = [
    ("name", "speaker"),
    ("author", "sender"),
    ("speaker", "author"),
    ("text", "content"),
    ("message", "text"),
    ("content", "message"),
    ("timestamp", "at"),
    ("time", "created_at"),
    ("at", "time"),
]
VALUES = {"speaker": "Al", "content": "hello there", "at": "2026-01-02T03:04:05Z"}
OTHERS = {"speaker": "Bo", "content": "goodbye", "at": "2026-01-02T03:04:06Z"}


@pytest.mark.parametrize(("first", "second"), TWICE)
def test_transcript_refuses_a_field_given_under_two_names(first: str, second: str) -> None:
    # The first key was kept and the other dropped without a word (`recalld ingest`).
    assert set(ALIASES) <= {name for pair in TWICE for name in pair}  # every alias tried
    field = ALIASES.get(first, first)
    assert ALIASES.get(second, second) == field
    message = {"role": "user", "id": "m", first: VALUES[field], second: OTHERS[field]}
    expected = f'give "{first}" or "{second}", not both'
    documents = {
        "messages[1]": json.dumps([{"role": "user", "content": "ok"}, message]),
        "messages[0]": json.dumps({"title": "t", "messages": [message]}),
        "line 3": json.dumps({"role": "user", "content": "ok"}) + "\n\n" + json.dumps(message),
    }
    for position, document in documents.items():
        with pytest.raises(ValidationError) as caught:
            read_transcript(document)
        assert (caught.value.field, caught.value.message) == (position, expected)
    # Equal values too: one rule, and no format read here gives a field twice.
    same = {"role": "user", "id": "m", first: VALUES[field], second: VALUES[field]}
    with pytest.raises(ValidationError, match=r"^messages\[0\]: give "):
        read_transcript(json.dumps([same]))


def test_transcript_reads_a_null_alias_as_not_given() -> None:
    # Either order: the null key neither refuses the message nor hides the other.
    for message in (
        {"content": None, "text": "hello", "name": None, "speaker": "Ana"},
        {"text": "hello", "content": None, "speaker": "Ana", "name": None},
    ):
        assert read_transcript(json.dumps([message])) == {
            "messages": [{"content": "hello", "speaker": "Ana"}]
        }


def test_conversation_assistant_text_beside_tool_calls_is_kept(service: MemoryService) -> None:
    said = {"role": "assistant", "content": "Let me check.", "tool_calls": [CALL]}
    plain = service.remember_conversation([said], conversation="a")
    assert service.get(plain.turns[0].receipt.id).content == "Let me check."
    tools = service.remember_conversation([said], conversation="b", include_tools=True)
    assert service.get(tools.turns[0].receipt.id).content == (
        'Let me check.\n[tool call: get_weather] {"city": "Hobart"}'
    )


@pytest.mark.parametrize(
    ("message", "field", "reason"),
    [
        ({"role": "assistant", "content": None}, "messages[1].content", "only a message with"),
        ({"role": "assistant"}, "messages[1].content", "only a message with tool_calls"),
        (
            {"role": "assistant", "content": None, "tool_calls": [{**CALL, "extra": 1}]},
            "messages[1].tool_calls[0].extra",
            "Extra inputs",
        ),
        (
            {
                "role": "assistant",
                "tool_calls": [{**CALL, "function": {"name": "get\nweather", "arguments": ""}}],
            },
            "messages[1].tool_calls[0].function.name",
            "U+000A",
        ),
        (
            {
                "role": "assistant",
                "tool_calls": [{**CALL, "function": {"name": "w", "arguments": "a\x00b"}}],
            },
            "messages[1].tool_calls[0].function.arguments",
            "U+0000",
        ),
        (
            {"role": "tool", "tool_call_id": "call\n1", "content": "ok"},
            "messages[1].tool_call_id",
            "U+000A",
        ),
    ],
)
def test_conversation_refuses_a_malformed_tool_message_writing_nothing(
    service: MemoryService, message: dict[str, Any], field: str, reason: str
) -> None:
    # Accepting the format loosens nothing: a message without content (and no tool calls)
    # and a tool call's malformed field are refused, naming the field; nothing is written.
    messages = [{"role": "user", "content": "Weather?"}, message]
    with pytest.raises(ValidationError) as raised:
        service.remember_conversation(messages, conversation="c")
    assert raised.value.field == field
    assert reason in raised.value.message
    assert service.stats().count == 0


def test_conversation_tool_call_over_the_size_limit_is_refused_when_kept(
    service: MemoryService,
) -> None:
    huge = "x" * service.settings.max_content_bytes
    call = {**CALL, "function": {"name": "upload", "arguments": huge}}
    messages = [{"role": "assistant", "content": None, "tool_calls": [call]}]
    skipped = service.remember_conversation(messages, conversation="c")
    assert (skipped.created, skipped.skipped) == (0, 1)
    with pytest.raises(ValidationError, match=r"^messages\[0\]\.content"):
        service.remember_conversation(messages, conversation="c", include_tools=True)
    assert service.stats().count == 0
