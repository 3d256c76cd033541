"""list, recent and stats: filters, newest first, cursor pagination, counts."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import NotFoundError, ValidationError
from recalld.model import Filters, Memory
from recalld.service import MemoryService
from recalld.store.base import Scope
from recalld.store.migrations import MIGRATIONS
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings


@pytest.fixture
def timeline(service: MemoryService, clock: FakeClock) -> MemoryService:
    for index in range(7):
        service.remember(
            f"memory {index}",
            kind="note" if index % 2 else "reference",
            category="fact" if index < 3 else "goal",
            tags=["even"] if index % 2 == 0 else ["odd", "x"],
            at=f"2026-01-0{index + 1}T12:00:00+00:00",
        )
        clock.advance(1)
    return service


def _contents(memories: list[Memory]) -> list[str]:
    return [memory.content for memory in memories]


def test_list_newest_first_with_cursor_pages(timeline: MemoryService) -> None:
    first = timeline.list_memories(limit=3)
    assert _contents(first.memories) == ["memory 6", "memory 5", "memory 4"]
    assert first.next_cursor is not None
    second = timeline.list_memories(limit=3, cursor=first.next_cursor)
    assert _contents(second.memories) == ["memory 3", "memory 2", "memory 1"]
    third = timeline.list_memories(limit=3, cursor=second.next_cursor)
    assert _contents(third.memories) == ["memory 0"]
    assert third.next_cursor is None


def test_list_cursor_is_stable_under_new_writes(timeline: MemoryService) -> None:
    first = timeline.list_memories(limit=2)
    timeline.remember("written between pages")
    second = timeline.list_memories(limit=2, cursor=first.next_cursor)
    assert _contents(second.memories) == ["memory 4", "memory 3"]


def test_list_rejects_foreign_cursor(timeline: MemoryService) -> None:
    with pytest.raises(ValidationError) as caught:
        timeline.list_memories(cursor="not-a-cursor")
    assert caught.value.field == "cursor"
    recent_cursor = timeline.recent(limit=1).next_cursor
    assert recent_cursor is not None
    with pytest.raises(ValidationError):
        timeline.list_memories(cursor=recent_cursor)


def _forged(*values: object) -> str:
    raw = json.dumps(list(values)).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        # Offsets that take the time past year 1 or 9999 in UTC: an OverflowError before.
        _forged("created", "0001-01-01T00:00:00+14:00", 1),
        _forged("created", "9999-12-31T23:59:59-14:00", 1),
        # JSON true as the seq: read as seq 1 before.
        _forged("created", "2026-01-01T00:00:00.000000Z", True),
        # Nested past the recursion limit: a RecursionError before.
        base64.urlsafe_b64encode(b"[" * 2000).decode().rstrip("="),
    ],
    ids=["before-year-1", "after-year-9999", "boolean-seq", "nested-arrays"],
)
def test_list_refuses_forged_cursor_naming_the_field(timeline: MemoryService, cursor: str) -> None:
    with pytest.raises(ValidationError) as caught:
        timeline.list_memories(cursor=cursor)
    assert caught.value.field == "cursor"
    assert "is not a cursor this listing returned" in str(caught.value)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (Filters(kind="note"), ["memory 5", "memory 3", "memory 1"]),
        (Filters(category="fact"), ["memory 2", "memory 1", "memory 0"]),
        (Filters(tags_any=["even"]), ["memory 6", "memory 4", "memory 2", "memory 0"]),
        (Filters(tags_all=["odd", "x"]), ["memory 5", "memory 3", "memory 1"]),
        (Filters(tags_all=["odd", "even"]), []),
        (
            Filters(since="2026-01-03T00:00:00Z", until="2026-01-05T00:00:00Z"),
            ["memory 3", "memory 2"],
        ),
        (Filters(created_since="2026-10-25T16:20:05Z"), ["memory 6", "memory 5"]),
        (Filters(created_until="2026-10-25T16:20:01Z"), ["memory 0"]),
    ],
)
def test_list_filters(timeline: MemoryService, filters: Filters, expected: list[str]) -> None:
    assert _contents(timeline.list_memories(filters=filters).memories) == expected


def test_years_before_1000_sort_and_import_in_their_place(service: MemoryService) -> None:
    # The year 800 was stored as "800-12-25T...", after "2026-...": since=2020 returned
    # it, until=1000 did not, and an import line dated 500 was a server error.
    service.remember("the coronation", at="0800-12-25T12:00:00Z")
    service.remember("the launch", at="2026-01-01T00:00:00Z")
    assert _contents(
        service.list_memories(filters=Filters(until="1000-01-01T00:00:00Z")).memories
    ) == ["the coronation"]
    assert _contents(
        service.list_memories(filters=Filters(since="2020-01-01T00:00:00Z")).memories
    ) == ["the launch"]
    line = '{"id": "ancient", "content": "a charter", "created_at": "0500-01-01T00:00:00Z"}'
    assert service.import_lines([line]).errors == []
    charter = service.get("ancient")
    assert charter.created_at.year == 500
    assert charter.content == "a charter"


def test_list_bad_filter_time_names_field(timeline: MemoryService) -> None:
    with pytest.raises(ValidationError) as caught:
        timeline.list_memories(filters=Filters(since="last tuesday"))
    assert caught.value.field == "since"


def test_recent_orders_by_last_change(timeline: MemoryService, clock: FakeClock) -> None:
    oldest = timeline.list_memories(limit=10).memories[-1]
    clock.advance(10)
    timeline.update(oldest.id, content="memory 0, edited")
    assert _contents(timeline.recent(limit=2).memories) == ["memory 0, edited", "memory 6"]


def test_stats_counts(timeline: MemoryService) -> None:
    timeline.remember("elsewhere", namespace="other")
    stats = timeline.stats()
    assert stats.count == 7
    assert stats.by_category == {"fact": 3, "goal": 4}
    assert stats.by_kind == {"note": 3, "reference": 4}
    assert stats.by_namespace == {"default": 7}
    assert stats.fts is True
    assert stats.search_backend == "fts"
    assert stats.schema_version == len(MIGRATIONS)
    assert stats.db_size_bytes is not None
    assert stats.db_size_bytes > 0
    assert timeline.namespaces() == ["default", "other"]


@pytest.mark.parametrize(
    ("filters", "field"),
    [
        ({"since": "2026-01-05T00:00:00Z", "until": "2026-01-03T00:00:00Z"}, "until"),
        # Compared as instants: 01:00 at -01:00 is 02:00 UTC, after 00:30 UTC.
        ({"since": "2026-01-03T01:00:00-01:00", "until": "2026-01-03T00:30:00Z"}, "until"),
        (
            {"created_since": "2026-10-25T16:20:05Z", "created_until": "2026-10-25T16:20:01Z"},
            "created_until",
        ),
    ],
)
def test_swapped_time_bounds_name_the_field_on_every_read(
    timeline: MemoryService, filters: dict[str, str], field: str
) -> None:
    reads = (
        lambda: timeline.list_memories(filters=filters),
        lambda: timeline.recent(filters=filters),
        lambda: timeline.search("memory", filters=filters),
        lambda: timeline.recall("memory", filters=filters),
    )
    for read in reads:
        with pytest.raises(ValidationError) as caught:
            read()
        assert caught.value.field == field
        assert "is before" in str(caught.value)
    assert timeline.get(timeline.list_memories().memories[0].id).access_count == 0


def test_bounds_at_one_instant_hold_nothing_and_are_no_error(timeline: MemoryService) -> None:
    same = Filters(since="2026-01-03T12:00:00Z", until="2026-01-03T13:00:00+01:00")
    assert timeline.list_memories(filters=same).memories == []
    reach = Filters(since="2026-01-03T12:00:00Z", until="2026-01-03T12:00:00.000001Z")
    assert _contents(timeline.list_memories(filters=reach).memories) == ["memory 2"]


def test_a_refused_listing_or_explain_changes_nothing(settings: Settings, clock: FakeClock) -> None:
    """A listing's or an explain's bad filters are refused before any work that changes
    the store: no lazy purge of expired memories, no catch-up embedding."""
    # The shortest interval the settings take (0 is refused, a copy's change too): a
    # purge at every read.
    eager = settings.model_copy(update={"purge_interval_seconds": 1e-6})
    swapped = {"since": "2026-10-26T00:00:00Z", "until": "2026-10-25T00:00:00Z"}
    with MemoryService.open(eager, clock=clock) as service:
        kept = service.remember("expired but not yet purged", ttl_seconds=5)
        clock.advance(10)
        for refused in (
            lambda: service.list_memories(filters=swapped),
            lambda: service.recent(filters=swapped),
            lambda: service.explain("expired", kept.id, filters=swapped),
        ):
            with pytest.raises(ValidationError) as raised:
                refused()
            assert raised.value.field == "until"
            admin = service.store.list_page(
                Scope(namespaces=("default",), now=clock(), include_expired=True),
                order="created",
                limit=10,
                after=None,
            )
            assert [memory.id for memory in admin] == [kept.id]


def test_a_refused_explain_embeds_nothing(db_path: Path, clock: FakeClock) -> None:
    """explain's catch-up (embedding a short queue before explaining) runs only once its
    filters are known good, as search's does."""
    with MemoryService.open(semantic_settings(db_path, recall_catch_up=10), clock=clock) as service:
        queued = service.remember("a memory still waiting for its vector")
        with pytest.raises(ValidationError) as raised:
            service.explain(
                "waiting",
                queued.id,
                filters={"since": "2026-10-26T00:00:00Z", "until": "2026-10-25T00:00:00Z"},
            )
        assert raised.value.field == "until"
        assert service.get(queued.id).index_state == "queued"
        service.explain("waiting", queued.id)  # the same explain with good filters catches up
        assert service.get(queued.id).index_state == "indexed"


def test_an_explain_of_a_memory_not_visible_embeds_nothing(db_path: Path, clock: FakeClock) -> None:
    """Review of stop 57: explain caught up (embedded the short queue) before it looked the
    memory up, so an explain refused with NotFoundError had changed the store; the memory
    it explains is still read after the catch-up (its index state is reported)."""
    with MemoryService.open(semantic_settings(db_path, recall_catch_up=10), clock=clock) as service:
        queued = service.remember("a memory still waiting for its vector")
        other = service.remember("one of another namespace", namespace="elsewhere")
        for missing in ("01NOTAMEMORYATALL0000000000", other.id):
            with pytest.raises(NotFoundError):
                service.explain("waiting", missing)
        assert service.get(queued.id).index_state == "queued"
        assert service.explain("waiting", queued.id).index_state == "indexed"


def test_list_refuses_a_real_cursor_padded_or_with_other_characters(
    timeline: MemoryService,
) -> None:
    # The decoder skipped characters outside base64: these read as the cursor itself,
    # though the REST schema's pattern (^[A-Za-z0-9_-]+$) refuses them.
    cursor = timeline.list_memories(limit=2).next_cursor
    assert cursor is not None
    for altered in (cursor + "=" * (-len(cursor) % 4 or 4), f"{cursor[:4]} !{cursor[4:]}"):
        with pytest.raises(ValidationError) as caught:
            timeline.list_memories(limit=2, cursor=altered)
        assert caught.value.field == "cursor"


@pytest.mark.parametrize("digits", ["1234567", "123456789"])
def test_digits_past_the_microsecond_are_dropped_alike_in_at_and_in_a_bound(
    service: MemoryService, digits: str
) -> None:
    # Adversarial pass a65: times are kept to the microsecond (README, Time). The digits
    # past it are dropped in a write's `at` and in a time filter alike, so a bound of the
    # very time a memory was written with holds it or not as the same bound written to
    # the microsecond would: since includes it, until (exclusive) does not.
    given = f"2026-03-01T08:00:00.{digits}+01:00"
    memory_id = service.remember("written to the nanosecond", at=given).id
    stored = service.get(memory_id).at
    assert stored is not None
    assert stored.isoformat() == "2026-03-01T08:00:00.123456+01:00"
    since = service.list_memories(filters=Filters(since=given)).memories
    assert [memory.id for memory in since] == [memory_id]
    assert service.list_memories(filters=Filters(until=given)).memories == []
