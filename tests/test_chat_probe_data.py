"""The hand-written chats of bench/chat_probe.py: consistent labels, and each written as
bench/locomo.py writes a conversation (what bench/fit_reranker.py --chats fits on)."""

from __future__ import annotations

import json
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
    for turn, (session, index, speaker, text, label, at) in zip(
        conversation.turns, written, strict=True
    ):
        assert turn.kind == "turn"
        assert turn.content == f"{speaker}: {text}"
        assert turn.speaker == speaker
        assert turn.at == at
        assert turn.source == f"chat://{name}/session_{session}"
        assert turn.meta["dia_id"] == (label or f"s{session}.{index}")
    # Questions asked at another time are left out; the others are queries or unanswerable.
    default = [item for item in chat.questions if item[2] is None]
    assert len(conversation.queries) + len(conversation.unanswerable) == len(default)
    assert conversation.unanswerable == [q for q, evidence, _, _ in default if not evidence]
    kinds = {question: kind for question, _, _, kind in default}
    # LoCoMo's categories: 1 multi-hop, 2 temporal, 4 single-hop (a typo changes nothing).
    expected = {"multi": "1", "temporal": "2", "typo-temporal": "2", "single": "4", "typo": "4"}
    for category, question, evidence in conversation.queries:
        assert category == expected[kinds[question]], question
        assert evidence, question
        assert set(evidence) <= conversation.dia_ids, question
    assert conversation.asked_at == chat_probe.parse(chat.asked_at)
    # Another answering message is evidence for fitting, never required by All@k.
    assert conversation.acceptable == {
        question: extra
        for question, extra in chat.acceptable.items()
        if extra and any(question == q and evidence for q, evidence, _, _ in default)
    }


def test_a_locomo_file_is_written_as_a_conversations_turns(tmp_path: Path) -> None:
    import locomo

    data = tmp_path / "tiny.json"
    session = [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a cat"},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "What is her name?"},
    ]
    item = {
        "sample_id": "tiny",
        "conversation": {"session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": session},
        "qa": [{"question": "What pet does Ana have?", "evidence": ["D1:1"], "category": 4}],
    }
    data.write_text(json.dumps([item]))
    (conversation,) = locomo.load_conversations(data)
    assert [turn.kind for turn in conversation.turns] == ["turn", "turn"]
    assert conversation.turns[0].source == "locomo://tiny/session_1"
    assert conversation.queries == [("4", "What pet does Ana have?", ["D1:1"])]


def test_two_chats_stay_out_of_every_fit() -> None:
    from recalld.retrieval.rerank import Reranker

    assert set(chat_probe.FITTED_CHATS) | set(chat_probe.NEVER_FITTED) <= set(CHATS)
    assert not set(chat_probe.NEVER_FITTED) & set(chat_probe.FITTED_CHATS)
    # The shipped reranker says, for each embedder, which chats its models were fitted on.
    info = Reranker.default().info
    assert info
    for embedder in info:
        assert chat_probe.fitted_chats(embedder) == set(chat_probe.FITTED_CHATS), embedder
