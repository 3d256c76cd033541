"""A conversation is read a page at a time past its first page: ``turns`` takes
``after``, the id of the last turn read (it could be read only to its 1,000th turn,
``max_limit`` when lower) (adversarial pass e63)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.service import MemoryService

SOURCE = "recalld://conversation/long"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[MemoryService]:
    # A page of 10 stands for the default 1,000: the same reading, 100 times smaller.
    settings = Settings(
        db=tmp_path / "paging.db",
        synchronous="NORMAL",
        embedder="none",
        graph_extractor="rules",
        max_limit=10,
    )
    with MemoryService.open(settings) as opened:
        opened.remember_conversation(
            [
                {"speaker": "Ada" if index % 2 else "Bob", "content": f"line {index}"}
                for index in range(25)
            ],
            conversation="long",
        )
        yield opened


def test_a_conversation_longer_than_a_page_is_read_to_its_end(service: MemoryService) -> None:
    read: list[str] = []
    after = None
    while True:
        page = service.conversations.turns(SOURCE, after=after)
        if not page:
            break
        read.extend(turn.content for turn in page)
        after = page[-1].id
    assert read == [f"line {index}" for index in range(25)]
    assert len(service.conversations.turns(SOURCE)) == 10  # one page without after


def test_after_that_is_no_turn_of_the_conversation_is_refused_naming_it(
    service: MemoryService,
) -> None:
    note = service.remember("not a turn")
    for after in (note.id, "01M97K00000000000000000000"):
        with pytest.raises(ValidationError) as caught:
            service.conversations.turns(SOURCE, after=after)
        assert caught.value.field == "after"
