"""A live conversation's sends arriving late, again, or at once (adversarial pass a61)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.service import MemoryService


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    """The keyword-only settings of tests/conftest.py, on SQLite and on PostgreSQL."""
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


def _said(service: MemoryService, conversation: str) -> list[str]:
    turns = service.conversations.turns(f"recalld://conversation/{conversation}")
    return [turn.content for turn in turns]


def test_a_stale_retry_of_the_whole_transcript_adds_no_turn(service: MemoryService) -> None:
    # A client sends its whole transcript each time. The retry of an earlier send arrived
    # after the next one, whose last turn says what the first did ("hi"): it was read as a
    # window beginning with that last turn, and the three turns after "hi" were added again.
    transcript: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "What is the capital of Tasmania?"},
        {"role": "assistant", "content": "Hobart."},
        {"role": "user", "content": "hi"},
    ]
    service.remember_conversation(transcript[:4], conversation="c")
    service.remember_conversation(transcript, conversation="c")
    retry = service.remember_conversation(transcript[:4], conversation="c")
    assert (retry.created, retry.updated, retry.unchanged) == (0, 0, 4)
    assert _said(service, "c") == [message["content"] for message in transcript]
    # A window that slid still begins with the last turn: what follows it is new.
    window = service.remember_conversation(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello again."}],
        conversation="c",
    )
    assert (window.created, window.unchanged) == (1, 1)
    assert _said(service, "c")[-2:] == ["hi", "Hello again."]


def test_a_stale_retry_without_a_conversation_id_finds_its_conversation(
    service: MemoryService,
) -> None:
    # The same race without a conversation id: the retry was stored as a conversation of
    # its own (under a longer derived id), its four turns a second time.
    transcript: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "What is the capital of Tasmania?"},
        {"role": "assistant", "content": "Hobart."},
        {"role": "user", "content": "hi"},
    ]
    first = service.remember_conversation(transcript[:4])
    service.remember_conversation(transcript)
    retry = service.remember_conversation(transcript[:4])
    assert retry.conversation == first.conversation
    assert (retry.created, retry.updated, retry.unchanged) == (0, 0, 4)
    assert service.stats().count == 5


def test_appending_a_turn_builds_no_memory_for_each_stored_turn(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every stored turn was read as a Memory to place one new message: appending one turn
    # to a conversation of 100,000 took 4 s and 550 MB. Only the turns written are built.
    messages = [{"speaker": "Ada", "content": f"turn number {n}"} for n in range(30)]
    service.remember_conversation(messages, conversation="long")
    store_type = type(service.store)
    by_source = store_type.by_source
    rows_read: list[int] = []

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        found = by_source(self, *args, **kwargs)
        rows_read.append(len(found))
        return found

    monkeypatch.setattr(store_type, "by_source", counted)
    with_id = {"speaker": "Bob", "content": "and one more", "id": "m30"}
    without_id = {"speaker": "Bob", "content": "and another"}
    for message in (with_id, without_id):
        report = service.remember_conversation([message], conversation="long")
        assert report.created == 1
    assert sum(rows_read) == 0
    said = _said(service, "long")
    assert said[:30] == [f"turn number {n}" for n in range(30)]
    assert said[30:] == ["and one more", "and another"]


def test_a_role_spelled_in_another_case_is_one_speaker(service: MemoryService) -> None:
    # Two clients spell the roles of one transcript differently ("User" and "user"): every
    # turn was stored twice, under two speakers, and `--speaker user` missed the first.
    spelled = [
        {"role": "User", "content": "I moved to Hobart"},
        {"role": "Assistant", "content": "How are you finding it?"},
        {"role": "USER", "content": "Cold"},
    ]
    first = service.remember_conversation(spelled, conversation="roles")
    assert first.created == 3
    lower = [{**message, "role": message["role"].lower()} for message in spelled]
    again = service.remember_conversation(lower, conversation="roles")
    assert (again.created, again.updated, again.unchanged) == (0, 0, 3)
    turns = service.conversations.turns("recalld://conversation/roles")
    assert [(turn.speaker, turn.meta["role"]) for turn in turns] == [
        ("user", "user"),
        ("assistant", "assistant"),
        ("user", "user"),
    ]
    # A name given as the role is no known role: it is kept as given.
    named = service.remember_conversation([{"role": "Ada", "content": "hi"}], conversation="n")
    assert service.get(named.turns[0].receipt.id).speaker == "Ada"


def test_a_turn_stored_under_a_capitalised_role_is_found_again(service: MemoryService) -> None:
    # Turns written before roles were folded keep "User" until they are sent again: the
    # re-send finds them (and folds them in place) rather than adding them a second time.
    messages = [
        {"role": "user", "content": "I moved to Hobart"},
        {"role": "assistant", "content": "How are you finding it?"},
    ]
    report = service.remember_conversation(messages, conversation="old")
    for turn, role in zip(report.turns, ("User", "Assistant"), strict=True):
        stored = service.get(turn.receipt.id)
        service.update(turn.receipt.id, speaker=role, meta={**stored.meta, "role": role})
    again = service.remember_conversation(messages, conversation="old")
    assert (again.created, again.updated, again.unchanged) == (0, 2, 0)
    assert [turn.speaker for turn in service.conversations.turns("recalld://conversation/old")] == [
        "user",
        "assistant",
    ]


def test_a_conversation_id_spelled_decomposed_is_the_same_conversation(
    service: MemoryService,
) -> None:
    # "Zoë" typed and "Zoe" + U+0308 (macOS, some tools) were two conversations, so a
    # re-send under the other spelling added every turn again.
    composed, decomposed = "chat-Zo\u00eb", "chat-Zoe\u0308"
    messages = [{"speaker": "Ada", "content": "I moved to Hobart"}]
    first = service.remember_conversation(messages, conversation=decomposed)
    assert first.conversation == composed
    assert first.source == "recalld://conversation/chat-Zo%C3%AB"
    again = service.remember_conversation(messages, conversation=composed)
    assert (again.created, again.unchanged) == (0, 1)
    assert service.stats().count == 1


def test_a_conversation_stored_under_a_decomposed_id_keeps_it(service: MemoryService) -> None:
    # A conversation written before ids were composed is found under its own spelling.
    decomposed = "Zoe\u0308"
    source = "recalld://conversation/Zoe%CC%88"
    sent = service.remember_conversation(
        [{"speaker": "Ada", "content": "hi"}], conversation="probe", source=source
    )
    turn = service.get(sent.turns[0].receipt.id)
    service.update(turn.id, meta={**turn.meta, "conversation": decomposed})
    kept = service.remember_conversation(
        [{"speaker": "Ada", "content": "hi"}], conversation=decomposed
    )
    assert kept.conversation == decomposed
    assert kept.source == source


def test_a_role_spelled_in_another_case_derives_one_conversation(service: MemoryService) -> None:
    # Without a conversation id the id is derived from the transcript's start, which read
    # the role as given: "User" and "user" sends were two conversations, every turn twice.
    spelled = [
        {"role": "User", "content": "I moved to Hobart"},
        {"role": "Assistant", "content": "How are you finding it?"},
    ]
    first = service.remember_conversation(spelled)
    lower = [{**message, "role": message["role"].lower()} for message in spelled]
    again = service.remember_conversation(lower)
    assert again.conversation == first.conversation
    assert (again.created, again.updated, again.unchanged) == (0, 0, 2)
    assert service.stats().count == 2


def test_a_transcript_derived_from_its_roles_as_given_is_found_there(
    service: MemoryService,
) -> None:
    # A transcript sent without an id before roles were folded is under the id derived from
    # its roles as given: sent again, it finds its turns there.
    from recalld.conversation_ids import derived_ids
    from recalld.conversations import ConversationMessage

    spelled = [
        {"role": "User", "content": "I moved to Hobart"},
        {"role": "Assistant", "content": "How are you finding it?"},
    ]
    parsed = [ConversationMessage.model_validate(message) for message in spelled]
    before = next(derived_ids(parsed))
    assert before != next(derived_ids(parsed, folded=True))
    service.remember_conversation(spelled, conversation=before)
    again = service.remember_conversation(spelled)
    assert again.conversation == before
    assert again.created == 0
    assert service.stats().count == 2


def test_a_speaker_named_like_a_role_alias_is_not_that_role(service: MemoryService) -> None:
    # Review of pass a61: matching a stored turn read a speaker "Bot" (or "AI", "Human")
    # as the role it aliases, so a turn said by "Bot" overwrote the assistant's turn of
    # the same words (`updated`) instead of being a turn of its own, as it always was.
    said = service.remember_conversation(
        [{"role": "assistant", "content": "hey"}], conversation="alias"
    )
    assert said.created == 1
    for name in ("Bot", "AI", "Human", "Model"):
        bot = service.remember_conversation(
            [{"speaker": name, "content": "hey"}], conversation="alias"
        )
        assert (bot.created, bot.updated) == (1, 0)
    turns = service.conversations.turns("recalld://conversation/alias")
    assert [turn.speaker for turn in turns] == ["assistant", "Bot", "AI", "Human", "Model"]


@pytest.mark.parametrize("explicit_source", [False, True])
def test_a_conversation_stored_under_a_decomposed_id_is_found_composed(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch, explicit_source: bool
) -> None:
    # Review of pass a61: a conversation stored under "Zoe" + U+0308 (before ids were
    # composed) was found only when sent again in that spelling; "Zoë" typed composed
    # started a second conversation, and every turn was stored twice.
    import recalld.conversations

    decomposed, composed = "Zoe\u0308", "Zo\u00eb"
    source = "recalld://chat/zoe" if explicit_source else None
    with monkeypatch.context() as before:  # written as the code before this pass wrote it
        before.setattr(recalld.conversations, "spelled_conversation", lambda *a: a[2])
        old = service.remember_conversation(
            [{"speaker": "Ada", "content": "hi"}], conversation=decomposed, source=source
        )
    assert old.conversation == decomposed
    messages = [{"speaker": "Ada", "content": "hi"}, {"speaker": "Bob", "content": "hello"}]
    for spelling in (composed, decomposed):
        again = service.remember_conversation(messages, conversation=spelling, source=source)
        assert (again.conversation, again.source) == (old.conversation, old.source)
        assert again.created == (1 if spelling == composed else 0)
    assert service.stats().count == 2
    # Without such a conversation, the composed spelling is the id.
    new = service.remember_conversation(messages, conversation="Zoe\u0301", source=source)
    assert new.conversation == "Zo\u00e9"


@pytest.mark.parametrize(("sent", "created"), [(2, 1), (3, 0), (4, 0)])
def test_a_retry_is_more_than_twice_the_window(
    service: MemoryService, sent: int, created: int
) -> None:
    # Review of pass a61: the conversation ends with its first turn ("hi"), a window of 1.
    # A send of its first turns is that window slid when at most twice as long (what
    # follows "hi" is new), a late retry of the whole transcript when longer.
    transcript: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Is it cold in Hobart?"},
        {"role": "assistant", "content": "Often."},
        {"role": "user", "content": "hi"},
    ]
    service.remember_conversation(transcript, conversation="edge")
    report = service.remember_conversation(transcript[:sent], conversation="edge")
    assert (report.created, report.unchanged) == (created, sent - created)
    expected = [message["content"] for message in transcript]
    assert _said(service, "edge") == expected + (["Hello!"] if created else [])
