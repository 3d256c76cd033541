"""Which stored turns a transcript may change: derived conversation ids, message ids,
sources, long sends written in chunks while another writer writes, and speaker names
in one Unicode spelling (the outside review of stop 50, findings 1, 2, 4, 5 and 9)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.errors import ConflictError
from recalld.model import Filters
from recalld.service import MemoryService


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    """The keyword-only settings of tests/conftest.py, on SQLite and on PostgreSQL."""
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


def _lines(*lines: str) -> list[dict[str, Any]]:
    return [
        {"speaker": line.split(": ", 1)[0], "content": line.split(": ", 1)[1]} for line in lines
    ]


def _contents(service: MemoryService) -> list[str]:
    return sorted(memory.content for memory in service.list_memories(limit=1000).memories)


def test_conversation_speaker_in_either_unicode_form_is_one_speaker(
    service: MemoryService,
) -> None:
    # "Zoë" decomposed (as macOS tools write it) was another speaker than "Zoë" typed:
    # the filter missed her turn, and the same transcript re-sent duplicated both turns.
    decomposed, composed = "Zoe\u0308", "Zo\u00eb"
    pets = [
        {"speaker": decomposed, "content": "I have a parrot called Kiwi."},
        {"speaker": "Bob", "content": "Nice bird."},
    ]
    service.remember_conversation(pets, conversation="pets")
    for typed in (composed, decomposed):
        found = service.list_memories(filters=Filters(speaker=typed)).memories
        assert [memory.speaker for memory in found] == [composed]
    again = [{**pets[0], "speaker": composed}, pets[1]]
    report = service.remember_conversation(again, conversation="pets")
    assert (report.created, report.updated, report.unchanged) == (0, 0, 2)
    note = service.remember("Zoë's parrot is green", speaker=decomposed)
    assert service.get(note.id).speaker == composed


def _conversation_ids(service: MemoryService) -> set[str]:
    memories = service.list_memories(limit=1000).memories
    return {str(memory.meta["conversation"]) for memory in memories}


def test_conversation_without_an_id_never_changes_another_transcripts_turns(
    service: MemoryService,
) -> None:
    # The derived id came from the first message alone: a second chat that opened alike
    # was taken for a re-send with its last two answers regenerated, and overwrote them.
    hobart = _lines(
        "User: hi",
        "Assistant: Hello! How can I help you today?",
        "User: I moved to Hobart last spring.",
        "Assistant: How are you finding Hobart?",
    )
    oslo = [*hobart[:2], *_lines("User: My flight to Oslo is on Friday.", "Assistant: Enjoy.")]
    first = service.remember_conversation(hobart)
    second = service.remember_conversation(oslo)
    assert (second.created, second.updated) == (4, 0)
    assert first.conversation != second.conversation
    assert "I moved to Hobart last spring." in _contents(service)
    # Each is found again the same way: re-sent, nothing changes; grown, only its new turn.
    assert service.remember_conversation(hobart).conversation == first.conversation
    grown = service.remember_conversation([*oslo, *_lines("User: It leaves at 9.")])
    assert (grown.conversation, grown.created, grown.unchanged) == (second.conversation, 1, 4)
    # A third chat that opens alike, and one that stops after the opening, change nothing.
    third = service.remember_conversation([*hobart[:2], *_lines("User: Book a taxi")])
    assert third.conversation not in {first.conversation, second.conversation}
    assert service.remember_conversation(hobart[:2]).unchanged == 2
    assert service.stats().count == 12


@pytest.mark.parametrize("source", [None, "file:///chats/export.json"])
def test_conversation_without_an_id_is_found_again_once_the_chat_opening_alike_is_forgotten(
    service: MemoryService, source: str | None
) -> None:
    # The second of two chats that open alike took a longer start's id. Once the first was
    # forgotten, the first id was free, and the second re-sent unchanged was stored again
    # under it: a second copy of every turn.
    hobart = _lines("User: hi", "Assistant: Hello!", "User: I moved to Hobart last spring.")
    oslo = [*hobart[:2], *_lines("User: My flight to Oslo is on Friday.")]
    first = service.remember_conversation(hobart, source=source)
    second = service.remember_conversation(oslo, source=source)
    assert second.conversation != first.conversation
    for turn in first.turns:
        assert service.forget(turn.receipt.id).deleted
    again = service.remember_conversation(oslo, source=source)
    assert (again.conversation, again.created, again.unchanged) == (second.conversation, 0, 3)
    grown = service.remember_conversation([*oslo, *_lines("Assistant: Enjoy.")], source=source)
    assert (grown.conversation, grown.created, grown.unchanged) == (second.conversation, 1, 3)
    # A new chat that opens alike takes the first id, free again.
    third = service.remember_conversation([*hobart[:2], *_lines("User: Book a taxi")])
    assert third.conversation == first.conversation
    assert _conversation_ids(service) == {first.conversation, second.conversation}
    assert service.stats().count == 7


def test_conversation_without_an_id_grows_only_the_chat_it_starts_with(
    service: MemoryService,
) -> None:
    # A chat that opens and ends as a stored one ("hi" ... "thanks") held all its turns,
    # though not at its start: its new turns went into the stored chat, and were added
    # again on the next re-send.
    short = _lines(
        "User: hi",
        "Assistant: Hello! How can I help you today?",
        "User: thanks",
        "Assistant: You're welcome!",
    )
    longer = [
        *short[:2],
        *_lines("User: My flight to Oslo is on Friday.", "Assistant: Have a good trip."),
        *short[2:],
    ]
    first = service.remember_conversation(short)
    second = service.remember_conversation(longer)
    assert second.conversation != first.conversation
    assert (second.created, second.updated) == (6, 0)
    again = service.remember_conversation(longer)
    assert (again.conversation, again.created, again.unchanged) == (second.conversation, 0, 6)
    assert service.stats().count == 10


def test_conversation_without_an_id_sent_again_after_a_forgotten_turn_is_the_same_chat(
    service: MemoryService,
) -> None:
    # With one of its turns forgotten, the same chat sent again (here grown) was taken
    # for another that opens and ends alike and stored whole a second time.
    chat = _lines(
        "User: hi",
        "Assistant: Hello! How can I help you today?",
        "User: I moved to Hobart last spring.",
        "Assistant: How are you finding Hobart?",
        "User: thanks",
        "Assistant: You're welcome!",
    )
    first = service.remember_conversation(chat)
    assert service.forget(first.turns[2].receipt.id).deleted
    grown = service.remember_conversation([*chat, *_lines("User: bye")])
    assert (grown.conversation, grown.created, grown.unchanged) == (first.conversation, 2, 5)
    assert service.stats().count == 7


def test_conversation_without_an_id_forgotten_turn_sent_again_goes_back_into_its_gap(
    service: MemoryService,
) -> None:
    # The forgotten turn, sent again, was appended after the stored turns; the same chat
    # grown by one message then no longer repeated them in order and was stored whole
    # under another derived id (a second copy of the transcript).
    chat = _lines(
        "User: hi",
        "Assistant: Hello! How can I help you today?",
        "User: I moved to Hobart last spring.",
        "Assistant: How are you finding Hobart?",
    )
    first = service.remember_conversation(chat)
    assert service.forget(first.turns[2].receipt.id).deleted
    again = service.remember_conversation(chat)
    assert (again.conversation, again.created, again.unchanged) == (first.conversation, 1, 3)
    grown = service.remember_conversation([*chat, *_lines("User: bye")])
    assert (grown.conversation, grown.created, grown.unchanged) == (first.conversation, 1, 4)
    assert _conversation_ids(service) == {first.conversation}
    turns = service.conversations.turns(f"recalld://conversation/{first.conversation}")
    assert sorted((turn.meta["turn"], turn.content) for turn in turns) == [
        (index, message["content"]) for index, message in enumerate([*chat, *_lines("U: bye")])
    ]


def test_conversation_without_an_id_keeps_chats_whose_message_ids_start_alike(
    service: MemoryService,
) -> None:
    # The derived id hashed the first message id alone: two chats numbered from "1" were
    # one conversation, and every turn of the second replaced the first's.
    ada = [
        {"id": "1", "speaker": "Ada", "content": "I moved to Hobart last spring."},
        {"id": "2", "speaker": "Bot", "content": "How are you finding Hobart?"},
    ]
    carl = [
        {"id": "1", "speaker": "Carl", "content": "My flight to Oslo is on Friday."},
        {"id": "2", "speaker": "Bot", "content": "Have a good trip."},
    ]
    service.remember_conversation(ada)
    report = service.remember_conversation(carl)
    assert (report.created, report.updated) == (2, 0)
    assert len(_conversation_ids(service)) == 2
    assert "I moved to Hobart last spring." in _contents(service)
    for chat in (ada, carl):
        again = service.remember_conversation(chat)
        assert (again.created, again.updated, again.unchanged) == (0, 0, 2)


def test_conversation_without_an_id_regenerated_answer_keeps_the_stored_one(
    service: MemoryService,
) -> None:
    # Without a conversation id a changed turn cannot be told from another chat's: both
    # answers are kept (the edited transcript is stored apart), neither is overwritten.
    chat = _lines("Ana: What is 2+2?", "Bot: 5")
    service.remember_conversation(chat)
    regenerated = service.remember_conversation([chat[0], *_lines("Bot: 4")])
    assert regenerated.updated == 0
    assert {"5", "4"} <= set(_contents(service))


def test_conversation_without_an_id_refuses_when_every_derived_id_is_taken(
    service: MemoryService,
) -> None:
    from recalld.conversation_ids import derived_ids
    from recalld.conversations import ConversationMessage

    said = {"id": "1", "speaker": "Ana"}
    service.remember_conversation([{**said, "content": "a"}])
    wanted = [{**said, "content": "b"}]
    ids = list(derived_ids([ConversationMessage.model_validate(wanted[0])]))
    assert len(ids) == 2
    service.remember_conversation([{**said, "content": "c"}], conversation=ids[1])
    with pytest.raises(ConflictError) as raised:
        service.remember_conversation(wanted)
    assert raised.value.field == "conversation"
    assert sorted(_contents(service)) == ["a", "c"]


def test_conversation_with_message_ids_under_another_source_is_a_conflict(
    service: MemoryService,
) -> None:
    # With message ids the source was not looked at: Tuesday's minutes were written over
    # Monday's turn, which kept Monday's source.
    monday, tuesday = "file:///meetings/monday.json", "file:///meetings/tuesday.json"
    minutes = [{"id": "1", "speaker": "Ada", "content": "Monday: budget approved"}]
    service.remember_conversation(minutes, conversation="weekly", source=monday)
    with pytest.raises(ConflictError) as raised:
        service.remember_conversation(
            [{"id": "1", "speaker": "Bob", "content": "Tuesday: hiring freeze"}],
            conversation="weekly",
            source=tuesday,
        )
    assert raised.value.field == "source"
    assert "message '1'" in raised.value.message
    assert monday in raised.value.message
    assert [turn.content for turn in service.conversations.turns(monday)] == [
        "Monday: budget approved"
    ]
    # The same words from a file that moved change nothing.
    moved = service.remember_conversation(minutes, conversation="weekly", source=tuesday)
    assert (moved.created, moved.updated, moved.unchanged) == (0, 0, 1)


def test_conversation_window_with_message_ids_keeps_each_turn_and_its_position(
    service: MemoryService,
) -> None:
    # A message's position was its index in the send: a window of the latest messages
    # rewrote every repeated turn ("updated") and numbered them 0, 1, 2 again.
    texts = ["I moved to Hobart", "How is Hobart?", "Cold", "Nice", "My cat is Miso", "Cute"]
    messages = [
        {"id": f"m{index}", "speaker": "Ada" if index % 2 == 0 else "Bot", "content": text}
        for index, text in enumerate(texts)
    ]
    service.remember_conversation(messages, conversation="c")
    before = {turn.id: turn.updated_at for turn in service.conversations.turns(_c())}
    window = [*messages[3:], {"id": "m6", "speaker": "Ada", "content": "And a dog"}]
    report = service.remember_conversation(window, conversation="c")
    assert (report.created, report.updated, report.unchanged) == (1, 0, 3)
    turns = service.conversations.turns(_c())
    assert sorted((turn.meta["turn"], turn.meta["message_id"]) for turn in turns) == [
        (index, f"m{index}") for index in range(7)
    ]
    assert all(before[turn.id] == turn.updated_at for turn in turns if turn.id in before)
    # A new message between two stored ones takes a free position, not a stored one's.
    inserted = [messages[4], {"id": "m4b", "speaker": "Bot", "content": "A cat!"}, messages[5]]
    service.remember_conversation(inserted, conversation="c")
    positions = Counter(turn.meta["turn"] for turn in service.conversations.turns(_c()))
    assert max(positions.values()) == 1
    assert positions[7] == 1


def _c() -> str:
    return "recalld://conversation/c"


def test_conversation_messages_without_ids_take_no_position_of_a_turn_with_one(
    service: MemoryService,
) -> None:
    # Placed by their index, messages without ids sent after ones with ids took the
    # positions of those turns: two turns of one conversation at the same position.
    keyed = [
        {"id": "m0", "speaker": "Ada", "content": "I moved to Hobart"},
        {"id": "m1", "speaker": "Bot", "content": "How is Hobart?"},
    ]
    service.remember_conversation(keyed, conversation="c")
    service.remember_conversation(_lines("Ada: Cold", "Bot: Wrap up"), conversation="c")
    service.remember_conversation(
        _lines("Ada: Cold", "Bot: Wrap up", "Ada: I will"), conversation="c"
    )
    turns = service.conversations.turns(_c())
    assert sorted((turn.meta["turn"], turn.content) for turn in turns) == [
        (0, "I moved to Hobart"),
        (1, "How is Hobart?"),
        (2, "Cold"),
        (3, "Wrap up"),
        (4, "I will"),
    ]


def test_conversation_long_send_overwrites_no_turn_another_writer_wrote_between_chunks(
    settings: Settings,
) -> None:
    # A send of more than CHUNK_TURNS (500) turns is written in several transactions, but
    # was placed once: turns another writer added between two chunks took positions the
    # next chunk then wrote over, and a turn edited meanwhile got the old text back.
    lines = [{"speaker": "Ana", "content": f"imported line {index}"} for index in range(600)]
    with MemoryService.open(settings) as big, MemoryService.open(settings) as other:
        big.remember_conversation(lines[:560], conversation="chat")
        edited = big.conversations.turns(_chat(), limit=1000)[550].id
        written: list[str] = []

        def between_chunks(done: int, total: int) -> None:
            if done < total and not written:
                live = _lines("Zed: live message one", "Zed: live message two")
                report = other.remember_conversation(live, conversation="chat")
                written.extend(turn.receipt.id for turn in report.turns)
                other.update(edited, content="imported line 550, corrected")

        report = big.remember_conversation(lines, conversation="chat", progress=between_chunks)
        assert (report.created, report.updated, report.unchanged) == (41, 0, 559)
        assert [big.get(memory_id).content for memory_id in written] == [
            "live message one",
            "live message two",
        ]
        assert big.get(edited).content == "imported line 550, corrected"
        stored = big.conversations.turns(_chat(), limit=1000)
        assert sorted(turn.content for turn in stored) == sorted(
            [
                *(line["content"] for line in lines),
                "imported line 550, corrected",
                "live message one",
                "live message two",
            ]
        )
        assert max(Counter(turn.meta["turn"] for turn in stored).values()) == 1


IMPORTED = "2023-01-01T00:00:00Z"


def test_conversation_long_send_keeps_another_writers_turn_that_says_the_same_as_it_wrote_it(
    settings: Settings,
) -> None:
    # A turn another writer wrote (or re-sent) between two chunks that says what this send
    # says there was kept, but rewritten with this send's time, tags and title.
    lines = [{"speaker": "Ana", "content": f"imported line {index}"} for index in range(600)]
    with MemoryService.open(settings) as big, MemoryService.open(settings) as other:
        big.remember_conversation(
            lines[:560], conversation="chat", title="Import", at=IMPORTED, tags=["import"]
        )
        live = [{**line, "at": "2024-05-01T10:00:00Z"} for line in lines[559:561]]
        sent: list[bool] = []

        def between_chunks(done: int, total: int) -> None:
            if done < total and not sent:
                report = other.remember_conversation(
                    live, conversation="chat", title="Phone", tags=["phone"]
                )
                assert (report.created, report.updated) == (1, 1)
                sent.append(True)

        report = big.remember_conversation(
            lines,
            conversation="chat",
            title="Import",
            at=IMPORTED,
            tags=["import"],
            progress=between_chunks,
        )
        assert (report.created, report.updated, report.unchanged) == (39, 0, 561)
        stored = big.conversations.turns(_chat(), limit=1000)
        assert len(stored) == 600
        for turn in stored:
            phone = turn.content in ("imported line 559", "imported line 560")
            assert turn.tags == (["phone"] if phone else ["import"]), turn.content
            assert turn.meta["conversation_title"] == ("Phone" if phone else "Import")
            assert turn.at is not None
            assert turn.at.year == (2024 if phone else 2023), turn.content


def test_conversation_long_send_twice_at_once_stores_each_turn_once(settings: Settings) -> None:
    # A retried import, or two processes ingesting one file: the second send, written
    # between the first one's chunks, found its later turns "written by another writer"
    # and moved them after every turn, so 510 messages became 520 turns.
    lines = [{"speaker": "Ana", "content": f"imported line {index}"} for index in range(510)]
    with MemoryService.open(settings) as first, MemoryService.open(settings) as retry:
        done: list[int] = []

        def between_chunks(written: int, total: int) -> None:
            if written < total and not done:
                done.append(retry.remember_conversation(lines, conversation="chat").created)

        report = first.remember_conversation(lines, conversation="chat", progress=between_chunks)
        assert done == [10]  # the retry wrote the turns the first had not written yet
        assert (report.created, report.updated, report.unchanged) == (500, 0, 10)
        stored = first.conversations.turns(_chat(), limit=1000)
        assert len(stored) == 510
        again = first.remember_conversation(lines, conversation="chat")
        assert (again.created, again.updated, again.unchanged) == (0, 0, 510)


def _chat() -> str:
    return "recalld://conversation/chat"
