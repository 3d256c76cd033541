"""Chat exports (ChatGPT, Claude) at their edges: times, ids and errors that name the
export's own fields."""

from __future__ import annotations

import json
from typing import Any

import pytest

from recalld.service import MemoryService


def _chatgpt(conversation_id: str, text: str, create_time: Any = 1700000000) -> dict[str, Any]:
    """A ChatGPT conversation of one user message (node ``m``)."""
    message = {
        "id": "m",
        "author": {"role": "user"},
        "create_time": create_time,
        "content": {"content_type": "text", "parts": [text]},
    }
    return {
        "title": "t",
        "id": conversation_id,
        "create_time": 1700000000,
        "current_node": "m",
        "mapping": {"m": {"id": "m", "parent": None, "children": [], "message": message}},
    }


def _sources(service: MemoryService) -> list[str]:
    return sorted(str(memory.source) for memory in service.list_memories(limit=100).memories)


@pytest.mark.parametrize(
    "create_time",
    # Review 56d: a negative time, NaN, -Infinity, text and true were dropped silently.
    [1700000000000, 1e300, "Infinity", "-Infinity", "NaN", -1, '"1700000000"', "true", "9" * 400],
)
def test_chatgpt_time_past_year_9999_refuses_its_conversation_only(
    service: MemoryService, create_time: Any
) -> None:
    # Milliseconds (or Infinity, which Python's JSON reads) made fromtimestamp raise:
    # the whole import ended with a traceback.
    bad = _chatgpt("bad", "hello", 0)
    text = json.dumps([bad, _chatgpt("good", "hi")]).replace(
        '"create_time": 0', f'"create_time": {create_time}', 1
    )
    report = service.import_text(text, format="chatgpt")
    assert [error.item for error in report.errors] == [1]
    assert report.errors[0].error.startswith("mapping['m'].message.create_time: ")
    assert "Unix seconds" in report.errors[0].error
    assert len(report.errors[0].error) < 150  # a 400-digit time is not echoed whole
    assert report.created == 1
    assert _sources(service) == ["chatgpt://conversation/good"]


def test_chatgpt_conversation_time_past_year_9999_names_create_time(
    service: MemoryService,
) -> None:
    conversation = _chatgpt("bad", "hello") | {"create_time": 1700000000000}
    report = service.import_text(json.dumps([conversation]), format="chatgpt")
    assert [(error.item, error.error.split(":")[0]) for error in report.errors] == [
        (1, "create_time")
    ]
    assert _sources(service) == []


def _claude(conversation_id: str, sender: str, text: str) -> dict[str, Any]:
    """A Claude conversation of one message (``m1``) from ``sender``."""
    message = {
        "uuid": "m1",
        "sender": sender,
        "text": text,
        "content": [{"type": "text", "text": text}],
        "created_at": "2024-03-01T10:00:00Z",
    }
    return {
        "uuid": conversation_id,
        "name": "n",
        "created_at": "2024-03-01T09:00:00Z",
        "chat_messages": [message],
    }


def test_claude_message_over_a_limit_names_the_field_and_the_limit(
    service: MemoryService,
) -> None:
    # The error's text was pydantic's last line: "For further information visit https://..."
    document = [_claude("bad", "s" * 101, "hello"), _claude("good", "human", "hi")]
    report = service.import_text(json.dumps(document), format="claude")
    assert [error.item for error in report.errors] == [1]
    assert report.errors[0].error.startswith("chat_messages[0].sender: ")
    assert "100 characters" in report.errors[0].error
    assert "pydantic.dev" not in report.errors[0].error
    assert _sources(service) == ["claude://conversation/good"]


def test_chatgpt_ids_past_the_limit_are_refused_not_cut_to_one(service: MemoryService) -> None:
    # Cut to 200 characters, the two ids named one conversation: the second was refused
    # as "repeats item 1", naming an id that is in neither.
    first, second = "x" * 250 + "1", "x" * 250 + "2"
    document = [_chatgpt(first, "hello"), _chatgpt("short", "hi"), _chatgpt(second, "bye")]
    report = service.import_text(json.dumps(document), format="chatgpt")
    assert [error.item for error in report.errors] == [1, 3]
    for error in report.errors:
        assert error.error.startswith("id: is 251 characters; ")
        assert "at most 192" in error.error
    assert _sources(service) == ["chatgpt://conversation/short"]


def test_claude_bad_time_names_the_exports_message(service: MemoryService) -> None:
    # The error said messages[2].at: the first message's attachment was turn 1, so the
    # export's second message (chat_messages[1]) was not where it pointed.
    conversation = _claude("c1", "human", "see the file")
    conversation["chat_messages"][0]["attachments"] = [
        {"file_name": "notes.txt", "extracted_content": "the notes"}
    ]
    conversation["chat_messages"].append(
        {"uuid": "m2", "sender": "assistant", "text": "ok", "created_at": "yesterday"}
    )
    report = service.import_text(json.dumps([conversation]), format="claude")
    assert [error.item for error in report.errors] == [1]
    assert report.errors[0].error.startswith("chat_messages[1].created_at: ")
    assert "'yesterday'" in report.errors[0].error
    assert _sources(service) == []


def test_chatgpt_time_absent_or_zero_takes_the_conversations_time(
    service: MemoryService,
) -> None:
    # null and 0 are how exports leave a node without a time: no error.
    for number, create_time in enumerate(["null", "0"]):
        text = json.dumps([_chatgpt(f"c{number}", "hello", 0)]).replace(
            '"create_time": 0', f'"create_time": {create_time}', 1
        )
        report = service.import_text(text, format="chatgpt")
        assert (report.errors, report.created) == ([], 1)


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("text", "chat_messages[1].text: contains a NUL character"),
        ("sender", "chat_messages[1].sender: String should have at most"),
    ],
)
def test_claude_refused_message_is_named_as_the_export_names_it(
    service: MemoryService, where: str, says: str
) -> None:
    # It said messages[2].content / messages[2].role: recalld's count, in which the first
    # message's attachment was turn 1, and its own field names.
    conversation = _claude("c1", "human", "see the file")
    conversation["chat_messages"][0]["attachments"] = [
        {"file_name": "notes.txt", "extracted_content": "the notes"}
    ]
    second = {"uuid": "m2", "sender": "assistant", "text": "ok", "created_at": None}
    second[where] = "x\x00y" if where == "text" else "x" * 300
    conversation["chat_messages"].append(second)
    report = service.import_text(json.dumps([conversation]), format="claude")
    assert [error.item for error in report.errors] == [1]
    assert report.errors[0].error.startswith(says)
    assert _sources(service) == []


def test_chatgpt_refused_message_is_named_by_its_node(service: MemoryService) -> None:
    # It said messages[0].content: recalld's count and field, no place in the export.
    report = service.import_text(json.dumps([_chatgpt("g1", "x\x00y")]), format="chatgpt")
    assert [error.item for error in report.errors] == [1]
    assert report.errors[0].error.startswith(
        "mapping['m'].message.content.parts[0]: contains a NUL character (U+0000) at position 1"
    )
    assert _sources(service) == []


def test_claude_refused_tool_block_is_named_by_its_place_in_content(
    service: MemoryService,
) -> None:
    # Review of stop 57: a tool block's turn kept recalld's count (messages[1].content),
    # though every other turn was named as the export names it.
    conversation = _claude("c1", "assistant", "ok")
    conversation["chat_messages"][0]["content"].append(
        {"type": "tool_use", "name": "search", "input": {"q": "a\ud800b"}}
    )
    for include_tools in (False, True):
        report = service.import_text(
            json.dumps([conversation]), format="claude", include_tools=include_tools
        )
        assert [error.item for error in report.errors] == [1]
        assert report.errors[0].error.startswith(
            "chat_messages[0].content[1].input.q: contains an unpaired UTF-16 surrogate"
        )
    assert _sources(service) == []


def test_claude_attachment_turn_names_its_message_uuid(service: MemoryService) -> None:
    # Review of stop 57: an attachment's turn id (the message's uuid and a suffix) too long
    # was named chat_messages[0].attachments[0].uuid, a field no attachment has.
    conversation = _claude("c1", "human", "see the file")
    conversation["chat_messages"][0]["uuid"] = "u" * 195
    conversation["chat_messages"][0]["attachments"] = [
        {"file_name": "notes.txt", "extracted_content": "the notes"}
    ]
    report = service.import_text(json.dumps([conversation]), format="claude")
    assert [error.item for error in report.errors] == [1]
    assert report.errors[0].error.startswith("chat_messages[0].uuid: ")
    assert _sources(service) == []


@pytest.mark.parametrize("export", ["chatgpt", "text", "content", "attachment"])
def test_a_nul_in_a_long_message_is_placed_in_the_export_text(
    service: MemoryService, export: str
) -> None:
    # Review of stop 57: a message longer than a memory comes in parts, and its NUL was
    # placed in its part ("at position 4504" of "[part 2 of 2]\n..."), an attachment's
    # after the "[attachment: name]" header recalld adds, and an attachment was counted
    # among those with text only (attachments[0], though an image came first).
    text = "word " * 14_000 + "\x00"
    if export == "chatgpt":
        report = service.import_text(json.dumps([_chatgpt("g1", text)]), format="chatgpt")
        field = "mapping['m'].message.content.parts[0]"
    else:
        conversation = _claude("c1", "human", "see the file")
        message = conversation["chat_messages"][0]
        if export == "text":
            del message["content"]
            message["text"] = text
            field = "chat_messages[0].text"
        elif export == "content":
            message["content"] = [{"type": "text", "text": "first"}, {"type": "text", "text": text}]
            field = "chat_messages[0].content[1].text"
        else:
            message["attachments"] = [
                {"file_name": "photo.png"},
                {"file_name": "log.txt", "extracted_content": text},
            ]
            field = "chat_messages[0].attachments[1].extracted_content"
        report = service.import_text(json.dumps([conversation]), format="claude")
    assert [error.item for error in report.errors] == [1]
    assert report.errors[0].error == f"{field}: contains a NUL character (U+0000) at position 70000"
    assert _sources(service) == []


def test_claude_conversation_without_messages_is_skipped_not_refused(
    service: MemoryService,
) -> None:
    # Adversarial pass e60: Claude's exports hold every chat opened and never sent, with
    # "chat_messages": []; each was an error (pydantic's "List should have at least 1
    # item after validation, not 0") and a real export's import exited 1.
    empty = {"uuid": "e1", "name": "", "created_at": "2024-03-01T09:00:00Z", "chat_messages": []}
    document = [empty, _claude("c1", "human", "hello"), {"uuid": "e2", "chat_messages": []}]
    report = service.import_text(json.dumps(document), format="claude")
    assert report.errors == []
    assert (report.created, report.skipped) == (1, 2)
    assert report.details["conversations without messages"] == 2
    assert _sources(service) == ["claude://conversation/c1"]


def test_chatgpt_conversation_of_hidden_messages_only_is_skipped(service: MemoryService) -> None:
    hidden = _chatgpt("h1", "You are ChatGPT")
    message = hidden["mapping"]["m"]["message"]
    message["author"] = {"role": "system"}
    message["metadata"] = {"is_visually_hidden_from_conversation": True}
    report = service.import_text(json.dumps([hidden, _chatgpt("g1", "hi")]), format="chatgpt")
    assert report.errors == []
    assert (report.created, report.skipped) == (1, 1)
    assert _sources(service) == ["chatgpt://conversation/g1"]


def test_chatgpt_mapping_without_a_root_or_its_current_node_names_current_node(
    service: MemoryService,
) -> None:
    # Every node's parent another node (a cycle) and current_node none of them: no order
    # to read the messages in. It was "messages: List should have at least 1 item".
    looped = _chatgpt("loop", "one")
    second = dict(looped["mapping"]["m"], id="n", parent="m", children=["m"])
    second["message"] = dict(second["message"], id="n")
    looped["mapping"]["m"] = dict(looped["mapping"]["m"], parent="n", children=["n"])
    looped["mapping"]["n"] = second
    looped["current_node"] = "gone"
    report = service.import_text(json.dumps([looped, _chatgpt("g1", "hi")]), format="chatgpt")
    assert [error.item for error in report.errors] == [1]
    assert report.errors[0].error.startswith("current_node: 'gone' is not a node of mapping")
    assert _sources(service) == ["chatgpt://conversation/g1"]


def test_chatgpt_assistant_message_to_a_tool_is_a_tool_call(service: MemoryService) -> None:
    # Adversarial pass e60: an assistant's message with a "recipient" other than "all"
    # (Code Interpreter's code, a web search, the "bio" memory tool) was stored as what
    # the assistant said, while the tool's answer was skipped as a tool message.
    conversation = _chatgpt("tools", "plot x squared")
    calls = {
        "code": ("python", {"content_type": "code", "text": "plt.plot([1, 4, 9])"}),
        "memo": ("bio", {"content_type": "text", "parts": ["User is learning plotting"]}),
        "said": ("all", {"content_type": "text", "parts": ["Here is the plot."]}),
    }
    parent = "m"
    for node_id, (recipient, content) in calls.items():
        message = {
            "id": node_id,
            "author": {"role": "assistant", "name": None},
            "create_time": 1700000001,
            "content": content,
            "recipient": recipient,
        }
        conversation["mapping"][node_id] = {
            "id": node_id,
            "parent": parent,
            "children": [],
            "message": message,
        }
        conversation["mapping"][parent]["children"] = [node_id]
        parent = node_id
    conversation["current_node"] = parent
    report = service.import_text(json.dumps([conversation]), format="chatgpt")
    assert (report.created, report.skipped, report.errors) == (2, 2, [])
    turns = service.list_memories(limit=10).memories
    assert sorted(turn.content for turn in turns) == ["Here is the plot.", "plot x squared"]


def test_chatgpt_tool_calls_kept_when_asked_for_read_as_tool_calls(
    service: MemoryService,
) -> None:
    conversation = _chatgpt("tools", "search for the weather")
    conversation["mapping"]["m"]["children"] = ["c"]
    conversation["mapping"]["c"] = {
        "id": "c",
        "parent": "m",
        "children": [],
        "message": {
            "id": "c",
            "author": {"role": "assistant"},
            "create_time": 1700000001,
            "content": {"content_type": "code", "text": 'search("Hobart weather")'},
            "recipient": "browser",
        },
    }
    conversation["current_node"] = "c"
    report = service.import_text(json.dumps([conversation]), format="chatgpt", include_tools=True)
    assert (report.created, report.errors) == (2, [])
    call = next(turn for turn in service.list_memories(limit=10).memories if turn.speaker == "tool")
    assert call.content == '[tool call: browser] search("Hobart weather")'


@pytest.mark.parametrize("export", ["chatgpt", "claude"])
def test_a_conversation_id_with_a_lone_surrogate_is_refused_not_a_traceback(
    service: MemoryService, export: str
) -> None:
    # Adversarial pass e60: '"id": "\ud800"' (a JSON escape UTF-8 cannot encode) ended the
    # whole import with a UnicodeEncodeError while its source URI was built.
    if export == "chatgpt":
        bad, good, field = _chatgpt("x\\ud800", "hello"), _chatgpt("good", "hi"), "id"
    else:
        bad, good, field = (
            _claude("x\\ud800", "human", "hello"),
            _claude("good", "human", "hi"),
            "uuid",
        )
    text = json.dumps([bad, good]).replace("x\\\\ud800", "x\\ud800")
    report = service.import_text(text.encode("utf-8"), format=export)
    assert [(error.item, error.error) for error in report.errors] == [
        (1, f"{field}: contains an unpaired UTF-16 surrogate (not valid Unicode)")
    ]
    assert _sources(service) == [f"{export}://conversation/good"]


def test_chatgpt_voice_chat_imports_its_transcriptions(service: MemoryService) -> None:
    # Adversarial pass e60: a voice chat's message is multimodal_text whose parts are an
    # audio_transcription (the words, under "text") and the audio's pointer; only string
    # parts were read, so every message of a voice chat was skipped as empty.
    conversation = _chatgpt("voice", "unused")
    conversation["mapping"]["m"]["message"]["content"] = {
        "content_type": "multimodal_text",
        "parts": [
            {
                "content_type": "audio_transcription",
                "text": "What's the weather?",
                "direction": "in",
            },
            {"content_type": "audio_asset_pointer", "asset_pointer": "sediment://file_1"},
        ],
    }
    report = service.import_text(json.dumps([conversation]), format="chatgpt")
    assert (report.created, report.skipped, report.errors) == (1, 0, [])
    [turn] = service.list_memories(limit=10).memories
    assert turn.content == "What's the weather?"
    nul = _chatgpt("nul", "unused")
    nul["mapping"]["m"]["message"]["content"] = {
        "content_type": "multimodal_text",
        "parts": [{"content_type": "audio_transcription", "text": "a\x00b"}],
    }
    refused = service.import_text(json.dumps([nul]), format="chatgpt")
    assert refused.errors[0].error.startswith(
        "mapping['m'].message.content.parts[0].text: contains a NUL character"
    )


def test_a_conversation_id_that_is_no_text_is_named_as_such(service: MemoryService) -> None:
    # Adversarial pass e60: "id": 123 was refused as "the conversation has no id".
    numbered = _chatgpt("unused", "hello")
    numbered["id"] = 123
    claude = _claude("unused", "human", "hi")
    claude["uuid"] = ["c1"]
    gpt = service.import_text(json.dumps([numbered]), format="chatgpt")
    assert [error.error for error in gpt.errors] == ["id: must be text, got int"]
    other = service.import_text(json.dumps([claude]), format="claude")
    assert [error.error for error in other.errors] == ["uuid: must be text, got list"]


def test_chatgpt_export_imported_before_tool_calls_were_told_apart_adds_no_duplicate(
    service: MemoryService,
) -> None:
    # Review of e60: an export imported before the fix stored the code sent to python as
    # an assistant turn; importing it again must add nothing and keep that turn, and
    # with --include-tools the same message (same id) becomes the tool call in place.
    def export(recipient: str) -> str:
        conversation = _chatgpt("tools", "plot x squared")
        conversation["mapping"]["m"]["children"] = ["c"]
        conversation["mapping"]["c"] = {
            "id": "c",
            "parent": "m",
            "children": ["r"],
            "message": {
                "id": "c",
                "author": {"role": "assistant"},
                "create_time": 1700000001,
                "content": {"content_type": "code", "text": "plt.plot([1, 4, 9])"},
                "recipient": recipient,
            },
        }
        conversation["mapping"]["r"] = {
            "id": "r",
            "parent": "c",
            "children": [],
            "message": {
                "id": "r",
                "author": {"role": "assistant"},
                "create_time": 1700000002,
                "content": {"content_type": "text", "parts": ["Here is the plot."]},
                "recipient": "all",
            },
        }
        conversation["current_node"] = "r"
        return json.dumps([conversation])

    # What the import before the fix stored: the code as something the assistant said.
    assert service.import_text(export("all"), format="chatgpt").created == 3
    again = service.import_text(export("python"), format="chatgpt")
    assert (again.created, again.updated, again.unchanged, again.errors) == (0, 0, 2, [])
    turns = service.list_memories(limit=10).memories
    assert sorted((turn.speaker, turn.content) for turn in turns) == [
        ("assistant", "Here is the plot."),
        ("assistant", "plt.plot([1, 4, 9])"),
        ("user", "plot x squared"),
    ]
    tools = service.import_text(export("python"), format="chatgpt", include_tools=True)
    assert (tools.created, tools.updated, tools.errors) == (0, 1, [])
    contents = sorted(turn.content for turn in service.list_memories(limit=10).memories)
    assert contents == [
        "Here is the plot.",
        "[tool call: python] plt.plot([1, 4, 9])",
        "plot x squared",
    ]
