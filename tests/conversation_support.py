"""A conversation send that fails partway: the shared setup of the tests of what a send
stopped in a later chunk keeps and says (pass a68, its review, the integration read)."""

from __future__ import annotations

from typing import Any

import pytest

from recalld import conversations
from recalld.conversations import Conversations
from recalld.model import Receipt


def failing_turn(
    monkeypatch: pytest.MonkeyPatch,
    *,
    chunk_turns: int,
    failing_index: int,
    error: Exception,
    once: bool = False,
) -> None:
    """Sends go in chunks of ``chunk_turns`` turns; writing message ``failing_index``
    raises ``error`` (the first time only when ``once``: a conflict the re-run meets no
    more)."""
    monkeypatch.setattr(conversations, "CHUNK_TURNS", chunk_turns)
    turn = Conversations._turn
    raised: list[int] = []

    def failing(self: Conversations, *arguments: Any) -> Receipt:
        if arguments[5] == failing_index and not (once and raised):  # the message's index
            raised.append(failing_index)
            raise error
        return turn(self, *arguments)

    monkeypatch.setattr(Conversations, "_turn", failing)
