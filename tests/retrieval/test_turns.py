"""A chat turn typed in several messages is read as one turn by the reranker's features."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

QUESTION = "how long did jess take to run the 5k?"
START = datetime(2026, 10, 20, 18, 0, tzinfo=UTC)
# (conversation, second speaker, minutes between the two messages)
CHATS = (
    ("goes-on", "Jess", 1),  # the same speaker a minute later: one turn in two messages
    ("much-later", "Jess", 40),  # the same speaker, but a new turn
    ("answered", "Maya", 1),  # someone else
)


def _written(service: MemoryService) -> dict[str, tuple[str, str]]:
    """For each chat, the ids of its first and second message."""
    ids = {}
    for day, (name, speaker, minutes) in enumerate(CHATS):
        at = START + timedelta(days=day)
        report = service.remember_conversation(
            [
                {"speaker": "Jess", "content": "ran my first 5k on saturday!!!!", "at": at},
                {"speaker": speaker, "content": "31 mins", "at": at + timedelta(minutes=minutes)},
            ],
            conversation=name,
        )
        first, second = (turn.receipt.id for turn in report.turns)
        ids[name] = (first, second)
    return ids


def test_a_message_that_goes_on_from_the_last_takes_its_better_scores(
    db_path: Path, clock: FakeClock
) -> None:
    with MemoryService.open(semantic_settings(db_path), clock=clock) as service:
        ids = _written(service)
        service.new_worker().run_until_idle()
        seen = {}
        for name, (first, second) in ids.items():
            began = service.explain(QUESTION, first, min_score=0)
            went_on = service.explain(QUESTION, second, min_score=0)
            seen[name] = (began, went_on)
            # What a hit reports in its channels stays its own: "31 mins" holds no "5k".
            assert went_on.channels["keyword"] < began.channels["keyword"]
            assert went_on.channels["text"] != began.channels["text"]
        began, went_on = seen["goes-on"]
        assert began.channels["text"] > went_on.channels["text"]
        assert went_on.features["keyword_share"] == began.features["keyword_share"]
        assert went_on.features["cosine"] == max(went_on.channels["text"], began.channels["text"])
        for name in ("much-later", "answered"):
            began, other = seen[name]
            assert other.features["keyword_share"] < began.features["keyword_share"], name
            assert other.features["cosine"] == other.channels["text"], name
        # Read as one turn, the answer ranks above the same words said apart.
        assert seen["goes-on"][1].score > seen["much-later"][1].score
        assert seen["goes-on"][1].score > seen["answered"][1].score
