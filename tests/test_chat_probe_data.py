"""The hand-written chats of bench/chat_probe.py: consistent labels, and each written as
bench/locomo.py writes a conversation (what bench/fit_reranker.py --chats fits on)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import chat_probe  # noqa: E402

CHATS = chat_probe.chats()


@pytest.mark.parametrize("name", sorted(CHATS))
def test_every_label_a_question_cites_is_one_message(name: str) -> None:
    chat = CHATS[name]
    labels = [label for *_, label, _ in chat_probe.messages(chat) if label]
    assert len(labels) == len(set(labels))
    cited = {label for _, evidence, _, _ in chat.questions for label in evidence}
    cited |= {label for extra in chat.acceptable.values() for label in extra}
    assert cited <= set(labels), cited - set(labels)
    asked = {question for question, *_ in chat.questions}
    assert set(chat.acceptable) <= asked
    assert all(
        kind in chat_probe.CATEGORY_OF_KIND for _, evidence, _, kind in chat.questions if evidence
    )


@pytest.mark.parametrize("name", sorted(CHATS))
def test_a_chat_becomes_a_locomo_conversation(name: str) -> None:
    chat = CHATS[name]
    conversation = chat_probe.as_conversation(chat)
    written = chat_probe.messages(chat)
    assert conversation.sample_id == f"chat-{name}"
    assert len(conversation.turns) == len(written) == len(conversation.dia_ids)
    first = conversation.turns[0]
    assert first.kind == "turn"
    assert first.content == f"{written[0][2]}: {written[0][3]}"
    assert first.speaker == written[0][2]
    assert first.at == written[0][5]
    # Questions asked at another time are left out; the others are queries or unanswerable.
    default = [item for item in chat.questions if item[2] is None]
    assert len(conversation.queries) + len(conversation.unanswerable) == len(default)
    assert conversation.unanswerable == [q for q, evidence, _, _ in default if not evidence]
    assert conversation.asked_at == chat_probe.parse(chat.asked_at)
    # Another answering message is evidence for fitting, never required by All@k.
    assert conversation.acceptable == {
        question: extra
        for question, extra in chat.acceptable.items()
        if extra and any(question == q and evidence for q, evidence, _, _ in default)
    }
    for category, question, evidence in conversation.queries:
        assert category in {"1", "2", "4"}
        assert evidence, question
        assert set(evidence) <= conversation.dia_ids, question


def test_two_chats_stay_out_of_every_fit() -> None:
    assert set(chat_probe.FITTED_CHATS) | set(chat_probe.NEVER_FITTED) <= set(CHATS)
    assert not set(chat_probe.NEVER_FITTED) & set(chat_probe.FITTED_CHATS)
    # The shipped reranker says which chats it was fitted on.
    assert chat_probe.fitted_chats() == set(chat_probe.FITTED_CHATS)
