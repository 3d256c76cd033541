"""A write conflict raised after a knowledge-graph delete committed (in the forget's
scrub) is not run again with the delete (review of pass a68): the whole method is run
again on a conflict, and a second attempt found the entity gone and answered it "not
found", though the first deleted it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import WriteConflictError
from recalld.service import MemoryService
from recalld.store.base import StoreTransaction


@pytest.fixture
def service(tmp_path: Path) -> Iterator[MemoryService]:
    settings = Settings(db=str(tmp_path / "m.db"), embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as opened:
        opened.knowledge.create_entities(
            [{"name": "Alice", "entityType": "person", "observations": ["Rows a boat"]}]
        )
        yield opened


def test_a_conflict_after_the_commit_is_not_run_again(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    scrubs: list[str] = []

    def conflicting() -> None:
        scrubs.append("after forget")
        raise WriteConflictError("a conflict in the work after the commit")

    monkeypatch.setattr(service.indexing, "after_forget", conflicting)
    with pytest.raises(WriteConflictError, match="after the commit"):
        service.knowledge.delete_entities(["Alice"])
    assert scrubs == ["after forget"]
    assert service.knowledge.read_graph().entities == []


def test_a_conflict_before_the_commit_is_still_run_again(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = service.store.transaction
    attempts: list[str] = []

    def conflicting_once() -> AbstractContextManager[StoreTransaction]:
        attempts.append("attempt")
        if len(attempts) == 1:
            raise WriteConflictError("a deadlock's victim")
        return real()

    monkeypatch.setattr(service.store, "transaction", conflicting_once)
    report = service.knowledge.delete_entities(["Alice"])
    assert report.deleted == ["Alice"]
    assert attempts == ["attempt", "attempt"]
