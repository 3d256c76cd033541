"""Walking ``list`` and ``recent`` page by page while other writes land between the pages:
every memory that stayed as it was for the whole walk comes back exactly once, on both
stores (inserts, edits, key overwrites, a repeated write that extends an expiry, a TTL
restarted, forgets and an expiry between pages)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.model import Page
from recalld.service import MemoryService
from tests.conftest import FakeClock


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="none")


def _writes(
    service: MemoryService, clock: FakeClock, touched: list[tuple[str, str]]
) -> Iterator[None]:
    """One write of another client per step, each on a memory in ``touched`` (id, key)."""
    step = 0
    while True:
        step += 1
        clock.advance(1)
        target, key = touched[step % len(touched)]
        match step % 7:
            case 0:
                service.remember(f"written during the walk {step}")
            case 1:
                service.update(target, content=f"edited during the walk {step}")
            case 2:
                service.remember(f"overwritten {step}", key=key)
            case 3:
                # A repeat asked to live longer: the memory takes the later expiry.
                service.remember("expires soon", ttl_seconds=10_000 + step)
            case 4:
                service.update(target, ttl_seconds=50_000)
            case 5:
                service.forget(target)
            case _:
                service.remember(f"short-lived {step}", ttl_seconds=1)
        yield


@pytest.mark.parametrize("order", ["list", "recent"])
def test_paging_under_writes_returns_each_unchanged_memory_once(
    service: MemoryService, clock: FakeClock, order: str
) -> None:
    untouched: set[str] = set()
    touched: list[tuple[str, str]] = []
    for index in range(30):
        if index % 3 == 0:
            key = f"key {index}"
            touched.append((service.remember(f"touched {index}", key=key).id, key))
        else:
            untouched.add(service.remember(f"untouched {index}").id)
        clock.advance(1)
    service.remember("expires soon", ttl_seconds=60)
    lister: Callable[..., Page] = service.list_memories if order == "list" else service.recent
    writes = _writes(service, clock, touched)
    seen: Counter[str] = Counter()
    page = lister(limit=4)
    while True:
        seen.update(memory.id for memory in page.memories)
        if page.next_cursor is None:
            break
        next(writes)
        page = lister(limit=4, cursor=page.next_cursor)
    assert {memory_id: seen[memory_id] for memory_id in untouched} == dict.fromkeys(untouched, 1)
