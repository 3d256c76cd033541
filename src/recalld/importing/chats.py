"""Chat exports into conversations: ChatGPT's ``conversations.json`` and Claude's export.

**ChatGPT** (Settings → Data controls → Export): ``conversations.json`` is a
list of conversations, each with ``title``, ``create_time`` (Unix seconds),
``id``/``conversation_id``, ``current_node`` and ``mapping``: message nodes
by id, each ``{"id", "message", "parent", "children"}``, where a message has
``author.role`` (``user``, ``assistant``, ``system``, ``tool``),
``create_time``, ``content`` (``content_type`` and ``parts``, or ``text``),
``recipient`` (``all``, or the tool an assistant's message calls: a tool
message, ``[tool call: python] <code>``) and ``metadata``. The nodes form a
tree (an edited message starts a branch); the conversation as last shown
is the path from ``current_node`` up to the root, which is what is imported.
Parts that are not text (images, files, audio) are left out, but a voice
chat's ``audio_transcription`` part is its text; a message with no text left
is skipped.

**Claude** (Settings → Privacy → Export data): ``conversations.json`` is a
list of conversations with ``uuid``, ``name``, ``created_at`` and
``chat_messages``, each ``{"uuid", "sender": "human"|"assistant", "text",
"content": [{"type": "text", "text"}, {"type": "tool_use"|"tool_result"...}],
"created_at", "attachments": [{"file_name", "extracted_content"...}]}``, in
order. Text blocks are the message; tool blocks become their own tool
messages (skipped unless tools are included); an attachment's extracted text
(what the user gave Claude to read) becomes its own turn after the message,
from the same sender, starting ``[attachment: <file name>]`` (split into
``part k of n`` turns when it is larger than a memory may be).

A message id that repeats an earlier one of the same conversation would
overwrite that turn on every import: the later message is left out, and
reported with the conversation's number.

Both become :class:`recalld.conversations.Conversation` objects whose id is
the export's conversation id and whose source is ``chatgpt://conversation/<id>``
or ``claude://conversation/<id>``, so importing the same export again (or a
later one) adds only what is new.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pydantic

from recalld import _validate as check
from recalld._time import parse_instant
from recalld.conversation_model import ID_MAX_CHARS
from recalld.conversations import MAX_MESSAGES, Conversation, ConversationMessage
from recalld.errors import ConflictError, ValidationError
from recalld.importing._json_text import unix_seconds
from recalld.model import SOURCE_MAX_CHARS

__all__ = ["ChatItem", "chatgpt_conversations", "claude_conversations", "load_document"]

ATTACHMENT_HEADER = "[attachment: {name}]\n"
ATTACHMENT_PART_HEADER = "[attachment: {name}, part {part} of {parts}]\n"
MESSAGE_PART_HEADER = "[part {part} of {parts}]\n"

# A message's place in the export and the export's names of its fields, kept beside it
# (under this key, never validated) so that a refused value is named as the export names
# it, not by recalld's count of messages, which also counts attachments and parts.
WHERE = "_where"
_MESSAGE_FIELD = re.compile(r"messages\[(?P<index>\d+)\](?:\.(?P<field>\w+))?(?P<rest>.*)", re.S)
_CHATGPT_NAMES = {
    "role": "author.role",
    "speaker": "author.name",
    "content": "content.parts",
    "at": "create_time",
}
_CLAUDE_NAMES = {"role": "sender", "at": "created_at", "id": "uuid"}


@dataclass(frozen=True)
class ChatItem:
    """One conversation of an export: its number (from 1), the conversation or why it
    cannot be read (None: it holds no message, as exports keep chats opened and never
    sent), and the messages left out of it (each error names the message)."""

    number: int
    conversation: Conversation | ValidationError | None
    left_out: tuple[ValidationError, ...] = ()
    # Each message's place in the export and the export's names of its fields.
    places: tuple[tuple[str, dict[str, str]], ...] = ()

    def named(self, error: ValidationError | ConflictError) -> ValidationError | ConflictError:
        """``error`` of the conversation's ``messages[N]``, named as the export names that
        message (``chat_messages[2].text``): recalld's count of messages also counts
        attachments and parts, so its ``messages[3]`` was no position in the export."""
        found = _MESSAGE_FIELD.fullmatch(error.field)
        if found is None or int(found["index"]) >= len(self.places):
            return error
        where, names = self.places[int(found["index"])]
        field = found["field"]
        named = where if field is None else f"{where}.{names.get(field, field)}"
        return type(error)(named + found["rest"], error.message)


def load_document(text: str) -> Any:
    """The JSON document of a chat export (a ``ValidationError`` when it is not one)."""
    try:
        return json.loads(text.lstrip("\ufeff"))
    except RecursionError:
        raise ValidationError("document", "is nested too deeply") from None
    except ValueError as error:
        reason = check.json_reason(str(error))
        raise ValidationError("document", f"is not a JSON document: {reason}") from None


def _conversations(document: Any, what: str) -> list[Any]:
    if isinstance(document, dict):
        document = document.get("conversations", [document])
    if not isinstance(document, list):
        raise ValidationError("document", f"{what} is a list of conversations")
    return document


def _epoch(value: Any, field: str) -> str | None:
    """A ChatGPT ``create_time`` (Unix seconds) as an ISO 8601 time; None when absent
    (null, or 0, which exports give nodes without a time). Anything else that is no time
    in Unix seconds (milliseconds or ``Infinity``: past year 9999, which ended the whole
    import with an ``OverflowError`` traceback; a negative number, NaN, text, true) is
    refused naming ``field``, as mem0's ``created_at`` is."""
    if value is None or (
        isinstance(value, int | float) and not isinstance(value, bool) and value == 0
    ):
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return unix_seconds(value, field)
    raise ValidationError(
        field, f"expected a time in Unix seconds (a number), got {type(value).__name__}"
    )


def _text_parts(content: Any, where: str) -> str:
    """The text of a ChatGPT message's content (``parts`` strings, or ``text``); a NUL is
    refused here, named by its part and its position in it (``where``: the message's
    place), not in the joined text or one of its pieces."""
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        texts = []
        for index, part in enumerate(parts):
            if isinstance(part, dict) and part.get("content_type") == "audio_transcription":
                # A voice chat's words: what was said, as the part's text (the audio itself
                # is another part). Left out with the other non-text parts, a voice chat
                # imported as nothing but skipped messages.
                part, field = part.get("text"), f"{where}.content.parts[{index}].text"
            else:
                field = f"{where}.content.parts[{index}]"
            if isinstance(part, str):
                texts.append(check.free_text(part, field))
        return "\n".join(texts).strip()
    text = content.get("text")
    if not isinstance(text, str):
        return ""
    return check.free_text(text, f"{where}.content.text").strip()


def _chatgpt_path(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """The messages from the root to ``current`` (or, without it, along first children).

    A mapping with nodes but neither ``current`` among them nor a root (a node without a
    parent: every one's parent is another's, a cycle) has no order to read its messages
    in: refused naming ``current_node`` (it read as a conversation without messages)."""
    nodes: list[dict[str, Any]] = []
    if isinstance(current, str) and current in mapping:
        seen: set[str] = set()
        node_id: Any = current
        while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
            seen.add(node_id)
            node = mapping[node_id]
            if not isinstance(node, dict):
                break
            nodes.append(node)
            node_id = node.get("parent")
        return list(reversed(nodes))
    roots = [node for node in mapping.values() if isinstance(node, dict) and not node.get("parent")]
    if not roots and mapping:
        shown = repr(current) if len(repr(current)) <= 60 else repr(current)[:57] + "..."
        raise ValidationError(
            "current_node",
            f"{shown} is not a node of mapping, and no node is a root (one without a"
            " parent): the conversation's messages have no order to be read in",
        )
    node = roots[0] if roots else None
    seen_ids: set[int] = set()
    while isinstance(node, dict) and id(node) not in seen_ids:
        seen_ids.add(id(node))
        nodes.append(node)
        children = node.get("children") or []
        node = mapping.get(children[0]) if children and isinstance(children[0], str) else None
    return nodes


def chatgpt_conversations(document: Any, max_bytes: int | None = None) -> Iterator[ChatItem]:
    """Each conversation of a ChatGPT export, numbered from 1 (or why it cannot be read);
    a message longer than ``max_bytes`` comes in parts (:func:`_message_parts`)."""
    for number, item in enumerate(_conversations(document, "ChatGPT's export"), start=1):
        left_out: list[ValidationError] = []
        places: list[tuple[str, dict[str, str]]] = []
        try:
            conversation = _chatgpt_conversation(item, max_bytes, left_out, places)
            yield ChatItem(number, conversation, tuple(left_out), tuple(places))
        except ValidationError as error:
            yield ChatItem(number, error)


def _chatgpt_conversation(
    item: Any,
    max_bytes: int | None,
    left_out: list[ValidationError],
    places: list[tuple[str, dict[str, str]]],
) -> Conversation | None:
    _refuse_bad_text(item)
    if not isinstance(item, dict):
        raise ValidationError("conversation", "must be a JSON object")
    mapping = item.get("mapping")
    if not isinstance(mapping, dict):
        raise ValidationError("mapping", "is missing (not a ChatGPT conversation)")
    conversation_id = item.get("conversation_id") or item.get("id")
    messages = []
    seen = _SeenIds(left_out)
    for node in _chatgpt_path(mapping, item.get("current_node")):
        message = node.get("message")
        if not isinstance(message, dict):
            continue  # the root node carries no message
        where = f"mapping[{str(node.get('id'))!r}].message"
        if not seen.first(message.get("id"), f"{where}.id"):
            continue
        metadata = message.get("metadata") or {}
        if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
            continue
        author = message.get("author") or {}
        role = author.get("role") if isinstance(author, dict) else None
        name = author.get("name") if isinstance(author, dict) else None
        text = _text_parts(message.get("content"), where)
        recipient = message.get("recipient")
        if role == "assistant" and isinstance(recipient, str) and recipient not in ("", "all"):
            # Addressed to a tool (python's code, a web search, the "bio" memory tool): a
            # tool call, kept with the tool messages (skipped unless asked for), not words
            # the assistant said. Read as its words, the code was a turn of the chat.
            role = "tool"
            text = f"[tool call: {recipient[:100]}] {text}" if text else ""
        messages.extend(
            _message_parts(
                {
                    "role": role if isinstance(role, str) and role else None,
                    "speaker": name if isinstance(name, str) and name and role == "user" else None,
                    "content": text,
                    "at": _epoch(message.get("create_time"), f"{where}.create_time"),
                    "id": message.get("id") if isinstance(message.get("id"), str) else None,
                    WHERE: (where, _CHATGPT_NAMES),
                },
                max_bytes,
            )
        )
    return _conversation(
        item,
        "chatgpt",
        conversation_id,
        item.get("title"),
        _epoch(item.get("create_time"), "create_time"),
        messages,
        places,
    )


def claude_conversations(document: Any, max_bytes: int | None = None) -> Iterator[ChatItem]:
    """Each conversation of a Claude export, numbered from 1 (or why it cannot be read);
    an attachment's text is split into turns of at most ``max_bytes`` (UTF-8) each."""
    for number, item in enumerate(_conversations(document, "Claude's export"), start=1):
        left_out: list[ValidationError] = []
        places: list[tuple[str, dict[str, str]]] = []
        try:
            conversation = _claude_conversation(item, max_bytes, left_out, places)
            yield ChatItem(number, conversation, tuple(left_out), tuple(places))
        except ValidationError as error:
            yield ChatItem(number, error)


def _claude_conversation(
    item: Any,
    max_bytes: int | None,
    left_out: list[ValidationError],
    places: list[tuple[str, dict[str, str]]],
) -> Conversation | None:
    _refuse_bad_text(item)
    if not isinstance(item, dict):
        raise ValidationError("conversation", "must be a JSON object")
    chat = item.get("chat_messages")
    if not isinstance(chat, list):
        raise ValidationError("chat_messages", "is missing (not a Claude conversation)")
    messages: list[dict[str, Any]] = []
    seen = _SeenIds(left_out)
    for position, entry in enumerate(chat):
        if not isinstance(entry, dict):
            continue
        if not seen.first(entry.get("uuid"), f"chat_messages[{position}].uuid"):
            continue
        sender = entry.get("sender")
        role = {"human": "user", "assistant": "assistant"}.get(str(sender), str(sender or ""))
        at = _claude_time(entry.get("created_at"), f"chat_messages[{position}].created_at")
        message_id = entry.get("uuid") if isinstance(entry.get("uuid"), str) else None
        texts: list[str] = []
        tools: list[tuple[int, str]] = []  # (the block's place in content, its JSON)
        blocks = entry.get("content")
        names = _CLAUDE_NAMES | {"content": "content" if blocks else "text"}
        if isinstance(blocks, list) and blocks:
            for block_index, block in enumerate(blocks):
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    field = f"chat_messages[{position}].content[{block_index}].text"
                    texts.append(check.free_text(block["text"], field))
                elif block.get("type") in ("tool_use", "tool_result"):
                    tools.append((block_index, json.dumps(block, ensure_ascii=False)[:4000]))
        elif isinstance(entry.get("text"), str):
            texts.append(check.free_text(entry["text"], f"chat_messages[{position}].text"))
        messages.extend(
            _message_parts(
                {
                    "role": role or None,
                    "content": "\n".join(texts).strip(),
                    "at": at,
                    "id": message_id,
                    WHERE: (f"chat_messages[{position}]", names),
                },
                max_bytes,
            )
        )
        for index, (place, name, text) in enumerate(_attachments(entry, position)):
            parts = _attachment_parts(name, text, max_bytes)
            for part, content in enumerate(parts, start=1):
                suffix = f"/attachment-{index}" + (f"/part-{part}" if len(parts) > 1 else "")
                messages.append(
                    {
                        "role": role or None,
                        "content": content,
                        "at": at,
                        "id": None if message_id is None else message_id + suffix,
                        # Its sender, time and id are the message's (the id with a suffix).
                        WHERE: (
                            f"chat_messages[{position}]",
                            _CLAUDE_NAMES | {"content": f"attachments[{place}].extracted_content"},
                        ),
                    }
                )
        for index, (block_index, tool) in enumerate(tools):
            messages.append(
                {
                    "role": "tool",
                    "content": tool,
                    "at": at,
                    "id": None if message_id is None else f"{message_id}/tool-{index}",
                    WHERE: (
                        f"chat_messages[{position}]",
                        _CLAUDE_NAMES | {"content": f"content[{block_index}]"},
                    ),
                }
            )
    created = _claude_time(item.get("created_at"), "created_at")
    return _conversation(
        item, "claude", item.get("uuid"), item.get("name"), created, messages, places
    )


def _refuse_bad_text(item: Any) -> None:
    """Refuse a conversation holding a string that is not valid Unicode (a JSON escape of a
    lone UTF-16 surrogate, ``"\\ud800"``), naming where: as its id, it ended the whole
    import with a ``UnicodeEncodeError`` traceback (building its source URI)."""
    found = check.text_problem(item)
    if found is not None:
        path, problem = found
        raise ValidationError(path or "conversation", problem)


def _claude_time(value: Any, field: str) -> str | None:
    """A Claude ``created_at`` (ISO 8601 text), checked here so that a bad one is named as
    the export names it: the conversation's ``messages[2].at`` counted attachment and part
    turns, so it was not the export's message 2."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise ValidationError(field, f"must be an ISO 8601 time, got {type(value).__name__}")
    parse_instant(field, value)
    return value


class _SeenIds:
    """The message ids of one conversation so far: a repeat is left out, and said."""

    def __init__(self, left_out: list[ValidationError]) -> None:
        self._first: dict[str, str] = {}
        self._left_out = left_out

    def first(self, message_id: Any, where: str) -> bool:
        """Whether the message at ``where`` (id ``message_id``) is the first with its id."""
        if not isinstance(message_id, str):
            return True
        earlier = self._first.get(message_id)
        if earlier is None:
            self._first[message_id] = where
            return True
        self._left_out.append(
            ValidationError(
                where, f"{message_id!r} repeats {earlier}: only the first message is imported"
            )
        )
        return False


def _attachments(entry: dict[str, Any], position: int) -> list[tuple[int, str, str]]:
    """The attachments of the Claude message at ``position`` that carry text: (their place
    in ``attachments``, file name, extracted text); a NUL is refused, named by its
    position in the attachment's text (its turn's text starts with a header)."""
    found = []
    attachments = entry.get("attachments")
    for place, attachment in enumerate(attachments if isinstance(attachments, list) else []):
        if not isinstance(attachment, dict):
            continue
        text = attachment.get("extracted_content")
        if not isinstance(text, str) or not text.strip():
            continue
        field = f"chat_messages[{position}].attachments[{place}].extracted_content"
        check.free_text(text, field)
        name = attachment.get("file_name")
        name = name.strip()[:200] if isinstance(name, str) and name.strip() else "unnamed"
        found.append((place, name, text))
    return found


def _attachment_parts(name: str, text: str, max_bytes: int | None) -> list[str]:
    """The turns holding one attachment: one, or parts that each fit in ``max_bytes``."""
    whole = ATTACHMENT_HEADER.format(name=name) + text.strip()
    if max_bytes is None or len(whole.encode("utf-8")) <= max_bytes:
        return [whole]
    widest = ATTACHMENT_PART_HEADER.format(name=name, part=10**6, parts=10**6)
    # At least some text per part (a limit under the header's size refuses each part anyway).
    budget = max(max_bytes - len(widest.encode("utf-8")), 64)
    chunks = _split_bytes(text.strip(), budget)
    return [
        ATTACHMENT_PART_HEADER.format(name=name, part=part, parts=len(chunks)) + chunk
        for part, chunk in enumerate(chunks, start=1)
    ]


def _message_parts(message: dict[str, Any], max_bytes: int | None) -> list[dict[str, Any]]:
    """``message``, or its parts when its text is longer than a memory: a pasted 100 KB log
    refused the whole conversation. Each part is a turn headed ``[part 2 of 3]``, its id
    the message's with ``/part-2``."""
    text = message["content"]
    if max_bytes is None or len(text.encode("utf-8")) <= max_bytes:
        return [message]
    widest = MESSAGE_PART_HEADER.format(part=10**6, parts=10**6)
    chunks = _split_bytes(text, max(max_bytes - len(widest.encode("utf-8")), 64))
    identity = message.get("id")
    return [
        message
        | {
            "content": MESSAGE_PART_HEADER.format(part=part, parts=len(chunks)) + chunk,
            "id": None if identity is None else f"{identity}/part-{part}",
        }
        for part, chunk in enumerate(chunks, start=1)
    ]


def _split_bytes(text: str, budget: int) -> list[str]:
    """``text`` in pieces of at most ``budget`` UTF-8 bytes, cut after a line break when
    one is in a piece's second half, else after a space there (not inside a word), else
    between characters."""
    data = text.encode("utf-8")
    pieces = []
    start = 0
    while len(data) - start > budget:
        end = start + budget
        while data[end] & 0xC0 == 0x80:  # not inside a character
            end -= 1
        for separator in (b"\n", b" "):
            cut = data.rfind(separator, start + budget // 2, end)
            if cut != -1:
                end = cut + 1
                break
        pieces.append(data[start:end].decode("utf-8").strip())
        start = end
    pieces.append(data[start:].decode("utf-8").strip())
    return [piece for piece in pieces if piece]


def _conversation(
    item: dict[str, Any],
    origin: str,
    conversation_id: Any,
    title: Any,
    at: str | None,
    messages: list[dict[str, Any]],
    places: list[tuple[str, dict[str, str]]],
) -> Conversation | None:
    if not messages:
        # A chat opened and never sent (Claude's exports hold many, with no message; a
        # ChatGPT one may hold hidden ones only): nothing to import, and nothing wrong with
        # it. It was refused with pydantic's "List should have at least 1 item".
        return None
    # Named as the export names it (Claude's "uuid"), as its other fields are.
    id_field = "uuid" if origin == "claude" else "id"
    if conversation_id is not None and not isinstance(conversation_id, str):
        # "has no id" said of an id that is there, as a number (or a list ...).
        raise ValidationError(id_field, f"must be text, got {type(conversation_id).__name__}")
    if not isinstance(conversation_id, str) or not conversation_id.strip():
        raise ValidationError(id_field, "the conversation has no id")
    parsed = []
    for index, message in enumerate(messages):
        place: tuple[str, dict[str, str]] = message.get(WHERE) or (f"messages[{index}]", {})
        where, names = place
        places.append(place)
        try:
            parsed.append(
                ConversationMessage.model_validate(
                    {
                        name: value
                        for name, value in message.items()
                        if value is not None and name != WHERE
                    }
                    | {"content": message.get("content") or ""}
                )
            )
        except pydantic.ValidationError as error:
            # The first problem, named by field as the export names it (recalld's own
            # message count also counts attachments and parts): the text's last line is
            # pydantic's URL.
            first = error.errors()[0]
            location = [names.get(str(part), part) for part in first["loc"][:1]]
            raise ValidationError(
                check.field_path([where, *location, *first["loc"][1:]]), first["msg"]
            ) from None
    if len(parsed) > MAX_MESSAGES:
        # One conversation is one send: the item is refused (as other bad items are), not
        # the whole import (pydantic's error ended it).
        raise ValidationError(
            "messages",
            f"the conversation has {len(parsed)} messages; the limit is {MAX_MESSAGES}",
        )
    # Cut to the limit, two long ids that start alike named one conversation: the second
    # was refused as a repeat of the first (or its turns as another source's).
    longest = ID_MAX_CHARS - len(origin) - 1
    source = f"{origin}://conversation/{quote(conversation_id, safe='')}"
    if len(conversation_id) > longest or len(source) > SOURCE_MAX_CHARS:
        raise ValidationError(
            "id",
            f"is {len(conversation_id)} characters; a conversation id may have at most"
            f" {longest} (and fit in a {SOURCE_MAX_CHARS}-character source once escaped)",
        )
    try:
        return Conversation(
            messages=parsed,
            conversation=f"{origin}:{conversation_id}",
            title=title[:500] if isinstance(title, str) and title.strip() else None,
            at=at,
            source=source,
        )
    except pydantic.ValidationError as error:  # any other limit: this item, not the import
        first = error.errors()[0]
        raise ValidationError(
            check.field_path(first["loc"]) or "conversation", first["msg"]
        ) from None
