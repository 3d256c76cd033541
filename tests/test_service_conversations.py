"""Conversation ingestion: a turn per kept message, its speaker, its conversation as source,
order kept, idempotent by message id, system and tool messages skipped unless asked for."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.errors import ConflictError, ValidationError
from recalld.service import MemoryService
from tests.conftest import FakeClock


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    """The keyword-only settings of tests/conftest.py, on SQLite and on PostgreSQL."""
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helpful assistant.", "id": "m0"},
    {"speaker": "Ada", "role": "user", "content": "I moved to Hobart last spring.", "id": "m1"},
    {"role": "assistant", "content": "How are you finding Hobart?", "id": "m2"},
    {"role": "tool", "content": '{"weather": "cold"}', "id": "m3"},
    {"speaker": "Ada", "content": "Cold, but I love the harbour.", "id": "m4"},
]


def test_conversation_turns_keep_speaker_source_and_order(service: MemoryService) -> None:
    report = service.remember_conversation(MESSAGES, conversation="chat-1", title="Moving")
    assert (report.created, report.skipped) == (3, 2)
    assert [skipped.index for skipped in report.skipped_messages] == [0, 3]
    memories = [service.get(turn.receipt.id) for turn in report.turns]
    assert [memory.speaker for memory in memories] == ["Ada", "assistant", "Ada"]
    assert {memory.source for memory in memories} == {"recalld://conversation/chat-1"}
    assert [memory.seq for memory in memories] == sorted(memory.seq for memory in memories)
    around = service.turns(memories[1].id, before=1, after=1)
    assert [memory.id for memory in around] == [memory.id for memory in memories]


def test_conversation_reingestion_is_idempotent(service: MemoryService) -> None:
    service.remember_conversation(MESSAGES, conversation="chat-1")
    again = service.remember_conversation(MESSAGES, conversation="chat-1")
    assert (again.created, again.updated, again.unchanged) == (0, 0, 3)
    grown = [*MESSAGES, {"role": "assistant", "content": "The harbour is lovely.", "id": "m5"}]
    more = service.remember_conversation(grown, conversation="chat-1")
    assert (more.created, more.unchanged) == (1, 3)
    edited = [dict(message) for message in grown]
    edited[4]["content"] = "Cold, but I adore the harbour."
    changed = service.remember_conversation(edited, conversation="chat-1")
    assert changed.updated == 1
    assert service.stats().count == 4


def test_conversation_edited_turn_keeps_its_time_and_an_expired_turn_comes_back(
    service: MemoryService, clock: FakeClock
) -> None:
    turns = [{"speaker": "Ada", "content": text} for text in ("one", "two", "three")]
    first = service.remember_conversation(turns, conversation="c")
    ids = [turn.receipt.id for turn in first.turns]
    times = [service.get(memory_id).at for memory_id in ids]
    clock.advance(60)
    edited = [dict(turn) for turn in turns]
    edited[1]["content"] = "two (edited)"
    assert service.remember_conversation(edited, conversation="c").updated == 1
    assert [service.get(memory_id).at for memory_id in ids] == times
    around = service.turns(ids[0], before=3, after=3)
    assert [memory.content for memory in around] == ["one", "two (edited)", "three"]
    # A turn whose TTL passed (not purged yet) is written again by a re-send.
    service.update(ids[2], ttl_seconds=1)
    clock.advance(2)
    again = service.remember_conversation(edited, conversation="c")
    assert (again.created, again.unchanged) == (1, 2)
    assert service.get(ids[2]).content == "three"


def test_conversation_keeps_system_and_tool_messages_when_asked(service: MemoryService) -> None:
    report = service.remember_conversation(
        MESSAGES, conversation="chat-2", include_system=True, include_tools=True
    )
    assert (report.created, report.skipped) == (5, 0)


def test_conversation_speaker_filters_recall(service: MemoryService) -> None:
    service.remember_conversation(MESSAGES, conversation="chat-1")
    hits = service.search("harbour Hobart")
    assert hits
    assert {hit.memory.speaker for hit in hits} <= {"Ada", "assistant"}


def test_conversation_bad_message_writes_nothing(service: MemoryService) -> None:
    bad: list[dict[str, Any]] = [*MESSAGES, {"role": "user", "content": "x", "unknown": 1}]
    with pytest.raises(ValidationError):
        service.remember_conversation(bad, conversation="chat-3")
    assert service.stats().count == 0


def test_conversation_speaker_is_a_filter(service: MemoryService) -> None:
    from recalld.model import Filters

    service.remember_conversation(MESSAGES, conversation="chat-1")
    ada = service.list_memories(filters=Filters(speaker="Ada")).memories
    assert sorted(memory.content for memory in ada) == [
        "Cold, but I love the harbour.",
        "I moved to Hobart last spring.",
    ]
    hits = service.search("Hobart", filters=Filters(speaker="assistant"), min_score=0)
    assert [hit.memory.speaker for hit in hits] == ["assistant"]


def _said(service: MemoryService, conversation: str) -> list[tuple[int, str | None, str]]:
    turns = service.conversations.turns(f"recalld://conversation/{conversation}")
    return sorted((turn.meta["turn"], turn.speaker, turn.content) for turn in turns)


def _lines(*lines: str) -> list[dict[str, Any]]:
    return [
        {"speaker": line.split(": ", 1)[0], "content": line.split(": ", 1)[1]} for line in lines
    ]


def test_conversation_sliding_window_without_ids_keeps_the_earlier_turns(
    service: MemoryService,
) -> None:
    first = _lines("Ada: My locker code is 4711", "Bob: Noted", "Ada: Bike lock 2525", "Bob: Ok")
    service.remember_conversation(first, conversation="daily")
    window = _lines("Ada: Bike lock 2525", "Bob: Ok", "Ada: Thanks")
    report = service.remember_conversation(window, conversation="daily")
    assert (report.created, report.updated, report.unchanged) == (1, 0, 2)
    assert [turn.index for turn in report.turns] == [0, 1, 2]
    expected = [
        (0, "Ada", "My locker code is 4711"),
        (1, "Bob", "Noted"),
        (2, "Ada", "Bike lock 2525"),
        (3, "Bob", "Ok"),
        (4, "Ada", "Thanks"),
    ]
    assert _said(service, "daily") == expected
    again = service.remember_conversation(window, conversation="daily")
    assert (again.created, again.updated, again.unchanged) == (0, 0, 3)
    whole = service.remember_conversation([*first, window[-1]], conversation="daily")
    assert (whole.created, whole.updated, whole.unchanged) == (0, 0, 5)
    # A window that slid, with one of its turns edited: only that turn changes.
    edited = _lines("Bob: Noted", "Ada: Bike lock 2626", "Bob: Ok", "Ada: Thanks", "Bob: Bye")
    changed = service.remember_conversation(edited, conversation="daily")
    assert (changed.created, changed.updated, changed.unchanged) == (1, 1, 3)
    assert _said(service, "daily") == [
        *expected[:2],
        (2, "Ada", "Bike lock 2626"),
        *expected[3:],
        (5, "Bob", "Bye"),
    ]
    assert service.stats().count == 6


def test_conversation_resend_without_ids_overwrites_no_turn_it_does_not_repeat(
    service: MemoryService,
) -> None:
    stored = _lines("Ada: hi", "Bob: Ok", "Ada: the code is 4711", "Bob: Ok")
    service.remember_conversation(stored, conversation="c")
    # "Ok" repeats: the alignment that changes nothing wins (after the last "Ok").
    report = service.remember_conversation(_lines("Bob: Ok", "Ada: bye"), conversation="c")
    assert (report.created, report.updated, report.unchanged) == (1, 0, 1)
    # Only new turns, none repeated: appended, nothing overwritten.
    fresh = service.remember_conversation(_lines("Ada: new one", "Bob: new two"), conversation="c")
    assert (fresh.created, fresh.updated, fresh.unchanged) == (2, 0, 0)
    assert _said(service, "c") == [
        (0, "Ada", "hi"),
        (1, "Bob", "Ok"),
        (2, "Ada", "the code is 4711"),
        (3, "Bob", "Ok"),
        (4, "Ada", "bye"),
        (5, "Ada", "new one"),
        (6, "Bob", "new two"),
    ]
    # The whole transcript again with one turn edited still updates that turn in place.
    whole = _lines(
        "Ada: hi",
        "Bob: Ok",
        "Ada: the code is 4712",
        "Bob: Ok",
        "Ada: bye",
        "Ada: new one",
        "Bob: new two",
    )
    edited = service.remember_conversation(whole, conversation="c")
    assert (edited.created, edited.updated, edited.unchanged) == (0, 1, 6)
    assert _said(service, "c")[2] == (2, "Ada", "the code is 4712")
    # One new turn that says what a middle turn said is a new turn, not that turn again.
    again = service.remember_conversation(_lines("Bob: Ok"), conversation="c")
    assert (again.created, again.updated, again.unchanged) == (1, 0, 0)
    assert _said(service, "c")[-1] == (7, "Bob", "Ok")
    # Two turns repeated in the middle are a re-send of them: nothing changes.
    middle = service.remember_conversation(
        _lines("Ada: the code is 4712", "Bob: Ok"), conversation="c"
    )
    assert (middle.created, middle.updated, middle.unchanged) == (0, 0, 2)
    # Unless the re-send also begins with the last stored turn ("Ok"): clients re-send
    # their latest messages, so it is that window, and what follows is new.
    window = service.remember_conversation(
        _lines("Bob: Ok", "Ada: the code is 4712"), conversation="c"
    )
    assert (window.created, window.updated, window.unchanged) == (1, 0, 1)
    assert _said(service, "c")[-1] == (8, "Ada", "the code is 4712")


def test_conversation_new_turns_after_a_repeated_turn_overwrite_nothing(
    service: MemoryService,
) -> None:
    # An agent sends only its new turns; the first new one says again what the turn before
    # the last said. Placing it there would overwrite (and scrub) the last stored turn.
    service.remember_conversation(_lines("Ana: book a table for two", "Bot: ok"), conversation="c")
    service.remember_conversation(_lines("Ana: thanks"), conversation="c")
    sent = service.remember_conversation(_lines("Bot: ok", "Ana: also flowers"), conversation="c")
    assert (sent.created, sent.updated, sent.unchanged) == (2, 0, 0)
    assert [text for _, _, text in _said(service, "c")] == [
        "book a table for two",
        "ok",
        "thanks",
        "ok",
        "also flowers",
    ]


def test_conversation_whole_transcript_with_a_regenerated_answer_updates_it(
    service: MemoryService,
) -> None:
    # A chat client re-sends its whole transcript after regenerating (or editing) its last
    # answer: that turn is updated in place, nothing is appended twice.
    service.remember_conversation(_lines("Ana: hi there", "Bot: partial ans"), conversation="c")
    again = service.remember_conversation(
        _lines("Ana: hi there", "Bot: full answer"), conversation="c"
    )
    assert (again.created, again.updated, again.unchanged) == (0, 1, 1)
    assert [text for _, _, text in _said(service, "c")] == ["hi there", "full answer"]
    four = _lines("Ana: hi there", "Bot: full answer", "Ana: and?", "Bot: more")
    service.remember_conversation(four, conversation="c")
    edited = [*four[:2], *_lines("Ana: and then?", "Bot: even more")]
    last = service.remember_conversation(edited, conversation="c")
    assert (last.created, last.updated, last.unchanged) == (0, 2, 2)
    assert [text for _, _, text in _said(service, "c")] == [
        "hi there",
        "full answer",
        "and then?",
        "even more",
    ]


def test_conversation_resend_applies_new_tags_and_time(service: MemoryService) -> None:
    message = {"speaker": "Ada", "content": "hello there", "id": "m1"}
    first = service.remember_conversation(
        [{**message, "at": "2026-01-01T10:00:00Z"}], conversation="c2", tags=["old"]
    )
    memory_id = first.turns[0].receipt.id
    tagged = service.remember_conversation(
        [{**message, "at": "2026-01-01T10:00:00Z"}], conversation="c2", tags=["new", "two"]
    )
    assert (tagged.updated, tagged.unchanged) == (1, 0)
    assert service.get(memory_id).tags == ["new", "two"]
    moved = service.remember_conversation(
        [{**message, "at": "2026-06-01T10:00:00Z"}], conversation="c2", tags=["new", "two"]
    )
    assert (moved.updated, moved.unchanged) == (1, 0)
    moment = service.get(memory_id).at
    assert moment is not None
    assert moment.isoformat() == "2026-06-01T10:00:00+00:00"
    same = service.remember_conversation(
        [{**message, "at": "2026-06-01T10:00:00Z"}], conversation="c2", tags=["new", "two"]
    )
    assert (same.updated, same.unchanged) == (0, 1)


def test_conversation_message_without_a_time_keeps_its_place_among_timed_ones(
    service: MemoryService,
) -> None:
    # A client that drops the time of a short message: "biscuit" was stamped now and read
    # after "he's a beagle", so recall's neighbouring turns were the wrong ones.
    messages: list[dict[str, Any]] = [
        {"speaker": "Bob", "content": "guess what"},
        {"speaker": "Ana", "content": "what did u name him", "at": "2026-11-01T10:00:00Z"},
        {"speaker": "Bob", "content": "biscuit"},
        {"speaker": "Ana", "content": "cute!!", "at": "2026-11-01T10:01:00Z"},
        {"speaker": "Bob", "content": "he's a beagle", "at": "2026-11-01T10:01:30Z"},
        {"speaker": "Bob", "content": "and 2"},
    ]
    report = service.remember_conversation(messages, conversation="pup", at="2026-01-01")
    ids = [turn.receipt.id for turn in report.turns]
    around = service.turns(ids[0], before=10, after=10)
    assert [memory.content for memory in around] == [message["content"] for message in messages]
    times = [service.get(memory_id).at for memory_id in ids]
    assert [moment.isoformat() if moment else None for moment in times] == [
        "2026-11-01T10:00:00+00:00",  # the first takes the time after it
        "2026-11-01T10:00:00+00:00",
        "2026-11-01T10:00:00+00:00",  # the time before it, not now
        "2026-11-01T10:01:00+00:00",
        "2026-11-01T10:01:30+00:00",
        "2026-11-01T10:01:30+00:00",
    ]
    again = service.remember_conversation(messages, conversation="pup", at="2026-01-01")
    assert (again.created, again.updated, again.unchanged) == (0, 0, 6)
    # A window that slid lends "biscuit" the next turn's time: the stored one is kept.
    window = service.remember_conversation(messages[2:], conversation="pup")
    assert (window.created, window.updated, window.unchanged) == (0, 0, 4)
    assert service.get(ids[2]).at == times[2]


@pytest.mark.parametrize(
    ("messages", "field"),
    [
        ({"messages": [{"speaker": "Ada", "content": "hi"}], "conversation": "c"}, "messages"),
        ("Ada: hi", "messages"),
        (42, "messages"),
        ([{"speaker": "Ada", "content": "hi"}, "Bob: hi"], "messages[1]"),
    ],
)
def test_conversation_refuses_messages_in_another_form(
    service: MemoryService, messages: Any, field: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        service.remember_conversation(messages, conversation="c")
    assert raised.value.field == field
    assert service.stats().count == 0


def test_conversation_refuses_fields_beside_a_whole_conversation(service: MemoryService) -> None:
    from recalld.conversations import Conversation

    whole = Conversation.model_validate(
        {"messages": [{"speaker": "Ada", "content": "hi"}], "conversation": "c"}
    )
    with pytest.raises(ValidationError) as raised:
        service.remember_conversation(whole, title="ignored")
    assert raised.value.field == "title"
    assert service.stats().count == 0


def test_conversation_names_a_bad_message_field_one_way(service: MemoryService) -> None:
    fields = []
    for speaker in ("", " ", "Ada\n", "a" * 201):  # the schema's checks and recalld's
        messages = [{"speaker": "Ada", "content": "hi"}, {"speaker": speaker, "content": "x"}]
        with pytest.raises(ValidationError) as raised:
            service.remember_conversation(messages, conversation="c")
        fields.append(raised.value.field)
    assert fields == ["messages[1].speaker"] * 4
    assert service.stats().count == 0


def test_conversation_refuses_a_repeated_message_id_naming_the_first(
    service: MemoryService,
) -> None:
    # Both messages would be one turn: the second overwrote the first in the same send.
    messages = [
        {"id": "a", "speaker": "Ana", "content": "My flight is on Friday at 9am"},
        {"id": "b", "speaker": "Bob", "content": "cool"},
        {"role": "system", "content": "skipped, but its id counts", "id": "s"},
        {"id": "a", "speaker": "Ana", "content": "ok"},
    ]
    with pytest.raises(ValidationError) as raised:
        service.remember_conversation(messages, conversation="d1")
    assert raised.value.field == "messages[3].id"
    assert "messages[0].id" in raised.value.message
    assert service.stats().count == 0
    messages[3]["id"] = "s"  # a skipped message's id is its too
    with pytest.raises(ValidationError) as raised:
        service.remember_conversation(messages, conversation="d1")
    assert raised.value.field == "messages[3].id"
    assert "messages[2].id" in raised.value.message
    assert service.stats().count == 0


def test_conversation_new_turns_sent_at_once_by_two_writers_are_all_kept(
    settings: Settings,
) -> None:
    # Two agents each send their new turns (no message ids) to one conversation at the same
    # time: each send is placed while it holds the write lock, so none takes the other's
    # free position and overwrites its turn.
    with MemoryService.open(settings) as first:
        first.remember_conversation(_lines("Ana: start"), conversation="c")
    barrier = threading.Barrier(2)

    def send(speaker: str) -> None:
        with MemoryService.open(settings) as writer:
            barrier.wait(timeout=30)
            for number in range(25):
                writer.remember_conversation(
                    [{"speaker": speaker, "content": f"message {number} from {speaker}"}],
                    conversation="c",
                )

    threads = [threading.Thread(target=send, args=(speaker,)) for speaker in ("Ana", "Bob")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    with MemoryService.open(settings) as reader:
        assert len(_said(reader, "c")) == 51


def test_conversation_resend_that_leaves_a_message_out_shifts_no_turn(
    service: MemoryService,
) -> None:
    # A client re-sends its transcript without ids, one middle message left out and a new
    # one at the end: placed by position, each later message overwrote its predecessor
    # (the passport turn was lost). Aligned as a diff, nothing stored changes.
    trip = _lines(
        "Ana: plan the trip",
        "Bot: Lisbon or Porto?",
        "Ana: Lisbon. My passport expires in March",
        "Bot: Noted, renew it first",
    )
    service.remember_conversation(trip, conversation="trip")
    resent = [trip[0], trip[1], trip[3], *_lines("Ana: book flights")]
    report = service.remember_conversation(resent, conversation="trip")
    assert (report.created, report.updated, report.unchanged) == (1, 0, 3)
    assert [text for _, _, text in _said(service, "trip")] == [
        "plan the trip",
        "Lisbon or Porto?",
        "Lisbon. My passport expires in March",
        "Noted, renew it first",
        "book flights",
    ]
    # A message added between two stored turns is a new turn; the ones after it stay.
    letters = _lines(*(f"Ana: {letter}" for letter in "abcd"))
    service.remember_conversation(letters, conversation="letters")
    inserted = [letters[0], *_lines("Ana: x"), *letters[1:]]
    again = service.remember_conversation(inserted, conversation="letters")
    assert (again.created, again.updated, again.unchanged) == (1, 0, 4)
    assert [text for _, _, text in _said(service, "letters")] == ["a", "b", "c", "d", "x"]


def test_conversation_new_exchanges_under_one_id_overwrite_no_earlier_one(
    service: MemoryService,
) -> None:
    # An agent sends each new exchange under the conversation's id; the bot's "ok" repeats.
    # As many turns as stored, one repeated: it is no whole transcript with its last answer
    # regenerated (the edited turn is not the last), so the flight stays.
    service.remember_conversation(
        _lines("Ana: My flight to Lima is on Friday at 9am", "Bot: ok"), conversation="c"
    )
    service.remember_conversation(
        _lines("Ana: The dentist moved to Tuesday", "Bot: ok"), conversation="c"
    )
    said = [text for _, _, text in _said(service, "c")]
    assert said[:2] == ["My flight to Lima is on Friday at 9am", "ok"]
    assert "The dentist moved to Tuesday" in said
    service.remember_conversation(
        _lines("Ana: I'm allergic to peanuts", "Bot: ok", "Ana: My sister is Rosa", "Bot: ok"),
        conversation="d",
    )
    service.remember_conversation(
        _lines("Ana: Book the 7pm train", "Bot: ok", "Ana: Cancel the gym", "Bot: ok"),
        conversation="d",
    )
    kept = [text for _, _, text in _said(service, "d")]
    assert {"I'm allergic to peanuts", "My sister is Rosa"} <= set(kept)
    assert {"Book the 7pm train", "Cancel the gym"} <= set(kept)


def test_conversation_refuses_a_message_id_that_would_take_a_positions_key(
    service: MemoryService,
) -> None:
    # A message without an id is keyed by its position ("#0"): an id "#0" overwrote it.
    messages = [
        {"speaker": "Ana", "content": "My passport number ends in 4411"},
        {"speaker": "Bo", "content": "Noted", "id": "#0"},
    ]
    with pytest.raises(ValidationError, match=r"messages\[1\]\.id"):
        service.remember_conversation(messages, conversation="c")
    assert service.stats().count == 0


def test_conversation_too_large_message_late_in_a_long_transcript_writes_nothing(
    service: MemoryService,
) -> None:
    # Written in chunks of 500: a content over the limit at message 550 left 500 turns.
    messages = [{"speaker": "Ana", "content": f"line {index}"} for index in range(600)]
    messages[550]["content"] = "x" * (service.settings.max_content_bytes + 1)
    with pytest.raises(ValidationError, match=r"messages\[550\]\.content"):
        service.remember_conversation(messages, conversation="long")
    assert service.stats().count == 0


def test_conversation_sent_under_another_source_overwrites_no_turn(
    service: MemoryService,
) -> None:
    # Its turns are looked up by source: under another one none was found, and the new
    # messages were written over the stored turns 0, 1 ... of the same conversation id.
    service.remember_conversation(
        _lines("Ana: My flight to Lima is Friday 9am", "Bot: Noted"),
        conversation="trip",
        source="file:///home/ana/chat.json",
    )
    with pytest.raises(ConflictError, match=r"^source: .*file:///home/ana/chat\.json"):
        service.remember_conversation(_lines("Ana: Also book a taxi"), conversation="trip")
    stored = service.conversations.turns("file:///home/ana/chat.json")
    assert [turn.content for turn in stored] == ["My flight to Lima is Friday 9am", "Noted"]
    assert service.stats().count == 2
    # The same turns from a file that moved (another source) change nothing.
    moved = service.remember_conversation(
        _lines("Ana: My flight to Lima is Friday 9am", "Bot: Noted"),
        conversation="trip",
        source="file:///tmp/chat.json",
    )
    assert (moved.created, moved.updated, moved.unchanged) == (0, 0, 2)


def test_conversation_conflict_with_another_source_late_in_a_long_send_writes_nothing(
    service: MemoryService,
) -> None:
    # Written in chunks of 500: the conflict at message 550 came after the first chunk
    # had given 500 stored turns the new tags.
    messages = [{"speaker": "Ana", "content": f"line {index}"} for index in range(600)]
    service.remember_conversation(messages, conversation="long", source="file:///a.json")
    resent = [dict(message) for message in messages]
    resent[550]["content"] = "something else"
    with pytest.raises(ConflictError, match=r"turn 550 says something else"):
        service.remember_conversation(
            resent, conversation="long", source="file:///b.json", tags=["moved"]
        )
    stored = service.conversations.turns("file:///a.json", limit=1000)
    assert [turn.content for turn in stored] == [message["content"] for message in messages]
    assert all(turn.tags == [] for turn in stored)
    assert service.stats().count == 600


def test_conversation_short_replies_matched_far_apart_lose_no_new_message(
    service: MemoryService,
) -> None:
    # The review of the diff placement: scattered "Done." matches beat a one-turn window
    # (the answer to "push it" was lost), a lone repeated "Done." swallowed the new
    # exchange's reply, and a regenerated last answer saying an earlier turn's words was
    # added instead of edited.
    stored = _lines(
        "u: fix the bug",
        "a: Done.",
        "u: run the tests",
        "a: All green.",
        "u: commit it",
        "a: Done.",
    )
    service.remember_conversation(stored, conversation="w")
    service.remember_conversation(_lines("a: Done.", "u: push it", "a: Done."), conversation="w")
    assert [text for _, _, text in _said(service, "w")][-3:] == ["Done.", "push it", "Done."]
    service.remember_conversation(_lines("u: fix the bug", "a: Done."), conversation="b")
    service.remember_conversation(_lines("u: commit it", "a: Done."), conversation="b")
    assert [text for _, _, text in _said(service, "b")] == [
        "fix the bug",
        "Done.",
        "commit it",
        "Done.",
    ]
    asked = _lines("u: fix the bug", "a: Done.", "u: and the other one?", "a: I could not find it.")
    service.remember_conversation(asked, conversation="c")
    regenerated = service.remember_conversation([*asked[:3], *_lines("a: Done.")], conversation="c")
    assert (regenerated.created, regenerated.updated) == (0, 1)
    assert [text for _, _, text in _said(service, "c")][-1] == "Done."


def test_conversation_large_skipped_message_is_skipped_not_refused(
    service: MemoryService,
) -> None:
    # Sizes are checked before anything is written, but only for the messages kept: a long
    # system prompt or tool output, skipped unless asked for, is not stored at all.
    big = "x" * (service.settings.max_content_bytes + 1)
    report = service.remember_conversation(
        [{"role": "system", "content": big}, {"speaker": "Ana", "content": "hello"}],
        conversation="big",
    )
    assert (report.created, report.skipped) == (1, 1)


def test_turns_around_a_turn_past_max_limit(any_database: Path | str) -> None:
    # RECALLD_MAX_LIMIT=10: turn 25 of 30 came back alone (only the first 10 were searched).
    capped = Settings(
        db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="none", max_limit=10
    )
    with MemoryService.open(capped) as service:
        messages = [
            {"role": "user" if n % 2 == 0 else "assistant", "content": f"turn number {n}"}
            for n in range(30)
        ]
        report = service.remember_conversation(messages, conversation="long")
        ids = [turn.receipt.id for turn in report.turns]
        around = service.turns(ids[25], before=2, after=10)
        assert [memory.content for memory in around] == [f"turn number {n}" for n in range(23, 30)]


def test_turns_reads_only_the_turns_it_returns(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every turn of the source was read to find one (30,000 memories under one source: 1.5 s
    # and 150 MB for the five turns around one); only those beside it are read now.
    messages = [{"speaker": "Ada", "content": f"turn number {n}"} for n in range(30)]
    ids = [turn.receipt.id for turn in service.remember_conversation(messages).turns]
    store_type = type(service.store)
    by_source = store_type.by_source
    rows_read: list[int] = []

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        found = by_source(self, *args, **kwargs)
        rows_read.append(len(found))
        return found

    monkeypatch.setattr(store_type, "by_source", counted)
    around = service.turns(ids[15], before=2, after=3)
    assert [memory.content for memory in around] == [f"turn number {n}" for n in range(13, 19)]
    assert sum(rows_read) == 5


def test_turns_of_a_memory_that_is_no_turn_is_itself_alone(service: MemoryService) -> None:
    # A note and a turn under a conversation's source: the note's "turns" were its
    # neighbours by source, and the turns around a turn included the note.
    messages = [{"speaker": "Ada", "content": f"turn number {n}"} for n in range(3)]
    report = service.remember_conversation(messages, conversation="chat")
    source = "recalld://conversation/chat"
    at = service.get(report.turns[1].receipt.id).at
    note = service.remember("a note filed with the chat", source=source, at=at)
    sibling = service.remember("another note from the same page", source="https://example.org")
    filed = service.remember("a note from the same page", source="https://example.org")
    assert [memory.id for memory in service.turns(note.id)] == [note.id]
    assert [memory.id for memory in service.turns(filed.id)] == [filed.id]
    assert sibling.id not in [memory.id for memory in service.turns(filed.id)]
    ids = [turn.receipt.id for turn in report.turns]
    assert [memory.id for memory in service.turns(ids[2], before=5, after=5)] == ids
