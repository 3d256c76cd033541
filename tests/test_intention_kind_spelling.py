"""The kind kept for reminders is refused in any spelling a write stores as it (adversarial
pass e66): remember, remember_many and update given " intention" stored "intention" (kinds
are trimmed since pass a65), a reminder's memory without its reminder, whose kind no edit
could change and whose export no import took."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.service import MemoryService


@pytest.fixture
def service(db_path: Path) -> Iterator[MemoryService]:
    with MemoryService.open(Settings(db=db_path, embedder="none")) as opened:
        yield opened


@pytest.mark.parametrize("spelling", [" intention", "intention  ", "\tintention"])
def test_the_reminders_kind_is_refused_in_a_spelling_trimmed_into_it(
    service: MemoryService, spelling: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        service.remember("water the plants", kind=spelling)
    assert caught.value.field == "kind"
    with pytest.raises(ValidationError) as caught:
        service.remember_many([{"content": "water the plants", "kind": spelling}])
    assert caught.value.field == "kind"
    memory_id = service.remember("water the plants").id
    with pytest.raises(ValidationError) as caught:
        service.update(memory_id, kind=spelling)
    assert caught.value.field == "kind"
    assert service.get(memory_id).kind == "note"
    assert service.stats().by_kind == {"note": 1}


def test_a_batch_draft_refused_for_its_kind_is_named_by_its_index(service: MemoryService) -> None:
    # Review of pass e66: the check of the reminders' kind named a blank or invalid kind
    # "kind", not the draft's "[1].kind", before the batch's own checks could.
    for kind in ("   ", "a\x00b", " intention"):
        drafts = [{"content": "first"}, {"content": "second", "kind": kind}]
        with pytest.raises(ValidationError) as caught:
            service.remember_many(drafts)
        assert caught.value.field == "[1].kind"
    assert service.stats().by_kind == {}
