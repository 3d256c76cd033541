"""Regression tests for the promises an adversarial run broke (issue 10), at the service.

Deep JSON, look-alike names, booleans taken as numbers, control characters,
existence oracles across namespaces and expired rows leaking through search.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.errors import NotFoundError, ValidationError
from recalld.model import Filters
from recalld.service import MemoryService
from recalld.store.base import MemoryRecord
from tests.conftest import FakeClock


def nested(depth: int) -> dict[str, Any]:
    """A JSON object nested ``depth`` levels deep: {"a": {"a": ... {}}}."""
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


# -- (1) deep JSON -----------------------------------------------------------------


@pytest.mark.parametrize("depth", [33, 300, 1_000, 10_000])
def test_remember_refuses_meta_nested_too_deep(service: MemoryService, depth: int) -> None:
    with pytest.raises(ValidationError) as caught:
        service.remember("deep", meta=nested(depth))
    assert caught.value.field == "meta"
    assert "32" in caught.value.message
    assert service.stats().count == 0


def test_remember_accepts_meta_at_the_depth_limit(service: MemoryService) -> None:
    receipt = service.remember("deep enough", meta=nested(32))
    assert service.get(receipt.id).meta == nested(32)


def test_update_refuses_meta_nested_too_deep(service: MemoryService) -> None:
    receipt = service.remember("shallow", meta={"a": 1})
    with pytest.raises(ValidationError) as caught:
        service.update(receipt.id, meta=nested(300))
    assert caught.value.field == "meta"
    assert service.get(receipt.id).meta == {"a": 1}


def test_import_deep_line_is_a_per_line_error(service: MemoryService) -> None:
    good = {
        "id": "good-1",
        "content": "fine",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }
    deep_meta = json.dumps({**good, "id": "deep-1", "meta": nested(100)})
    deeper_meta = json.dumps({**good, "id": "deep-2", "meta": nested(300)})
    deep_line = "[" * 10_000 + "]" * 10_000
    report = service.import_lines([json.dumps(good), deep_meta, deeper_meta, deep_line])
    assert report.created == 1
    assert [error.line for error in report.errors] == [2, 3, 4]
    assert report.errors[0].error.startswith("meta: is nested deeper than 32")
    assert all("nested deeper than" in error.error for error in report.errors)


def _poison(service: MemoryService, clock: FakeClock, depth: int) -> str:
    """Store a row the way an older version did: meta nested past today's limit."""
    now = clock()
    with service.store.transaction() as tx:
        memory = tx.insert(
            MemoryRecord(
                id="poisoned",
                namespace="default",
                content="written before the depth limit existed",
                created_at=now,
                updated_at=now,
                meta=nested(depth),
                index_state="indexed",
            )
        )
    return memory.id


@pytest.mark.parametrize("depth", [300, 900])
def test_a_stored_deep_row_does_not_poison_reads(
    service: MemoryService, clock: FakeClock, depth: int
) -> None:
    service.remember("an ordinary memory about the garden")
    poisoned = _poison(service, clock, depth)
    service.remember("another ordinary memory about the garden")
    memory = service.get(poisoned)
    assert "recalld_unreadable_meta" in memory.meta
    assert len(service.list_memories().memories) == 3
    assert len(service.search("garden written")) == 3
    problems: list[str] = []
    lines = list(service.export(on_problem=problems.append))
    assert len(lines) == 3  # never truncated: every row has its line
    assert any(poisoned in problem for problem in problems)
    memory.model_dump_json()  # renderable


# -- (6) look-alike names, booleans, control characters ------------------------------


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"namespace": "B\n"}, "namespace"),
        ({"id": "client-1\n"}, "id"),
        ({"ttl_seconds": True}, "ttl_seconds"),
        ({"salience": True}, "salience"),
        ({"key": " "}, "key"),
        ({"key": "k\x00ey"}, "key"),
        ({"key": "line\nbreak"}, "key"),
        ({"tags": ["a\x00b"]}, "tags"),
        ({"source": ""}, "source"),
        ({"source": "   "}, "source"),
        ({"title": "nul\x00title"}, "title"),
        ({"place": {"lat": True, "lon": 2.0}}, "place.lat"),
    ],
)
def test_remember_refuses_look_alikes_and_non_numbers(
    service: MemoryService, arguments: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        service.remember("content", **arguments)
    assert caught.value.field == field
    assert service.stats(service.namespaces() or None).count == 0


def test_remember_refuses_nul_in_content(service: MemoryService) -> None:
    with pytest.raises(ValidationError) as caught:
        service.remember("value with a \x00 inside")
    assert caught.value.field == "content"


def test_get_by_seq_out_of_range_names_the_field(service: MemoryService) -> None:
    with pytest.raises(ValidationError) as caught:
        service.get(seq=2**70)
    assert caught.value.field == "seq"
    with pytest.raises(ValidationError):
        service.get(seq=0)


def test_limits_refuse_booleans(service: MemoryService) -> None:
    with pytest.raises(ValidationError) as caught:
        service.search("x", limit=True)
    assert caught.value.field == "limit"


# -- (5) ids do not reveal other namespaces -------------------------------------------


def test_an_id_taken_in_another_namespace_is_free_in_mine(service: MemoryService) -> None:
    theirs = service.remember("bob's", id="shared-id", namespace="bob")
    mine = service.remember("alice's", id="shared-id", namespace="alice")
    assert (theirs.status, mine.status) == ("created", "created")
    assert service.get("shared-id", namespace="alice").content == "alice's"
    assert service.get("shared-id", namespace="bob").content == "bob's"
    assert service.forget("shared-id", namespace="alice").deleted is True
    assert service.get("shared-id", namespace="bob").content == "bob's"
    with pytest.raises(NotFoundError):
        service.get("shared-id", namespace="alice")


def test_import_of_an_id_taken_elsewhere_lands_in_its_namespace(service: MemoryService) -> None:
    service.remember("bob's", id="shared-id", namespace="bob")
    line = {
        "id": "shared-id",
        "content": "alice's import",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }
    report = service.import_lines([json.dumps(line)], namespace="alice")
    assert (report.created, report.errors) == (1, [])
    assert service.get("shared-id", namespace="bob").content == "bob's"


def test_ids_stay_unique_within_a_namespace_after_migration(
    db_path: Path, clock: FakeClock
) -> None:
    settings = Settings(db=db_path, embedder="none")
    with MemoryService.open(settings, clock=clock) as service:
        service.remember("one", id="dup", namespace="n")
    with MemoryService.open(settings, clock=clock) as service:
        assert service.remember("one", id="dup", namespace="n").status == "unchanged"


# -- (4) include_expired is the admin listing's only ------------------------------------


def test_search_and_recall_refuse_include_expired(service: MemoryService, clock: FakeClock) -> None:
    service.remember("expired secret about the vault", ttl_seconds=10)
    clock.advance(11)
    for find in (service.search, service.recall):
        with pytest.raises(ValidationError) as caught:
            find("vault", filters=Filters(include_expired=True))
        assert caught.value.field == "filters.include_expired"
        assert find("vault") == []


def test_explain_refuses_include_expired_as_search_does(
    service: MemoryService, clock: FakeClock
) -> None:
    """explain says why search does (not) return a memory: with a filter search refuses it
    reported an expired memory as "returned", which no search can return."""
    memory_id = service.remember("expired secret about the vault", ttl_seconds=10).id
    clock.advance(11)
    with pytest.raises(ValidationError) as caught:
        service.explain("vault", memory_id, filters=Filters(include_expired=True))
    assert caught.value.field == "filters.include_expired"
    assert "never return expired memories" in caught.value.message
    assert service.explain("vault", memory_id).stage == "excluded"


def test_invisible_ranges_are_unicodes_control_and_format_characters() -> None:
    """The one list behind the name checks and the published patterns is exactly Unicode's
    Cc, Cf, Zl and Zp characters (as this Python knows them)."""
    import sys
    import unicodedata

    from recalld._schema import INVISIBLE_RANGES

    listed = {code for low, high in INVISIBLE_RANGES for code in range(low, high + 1)}
    wanted = {
        code
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in {"Cc", "Cf", "Zl", "Zp"}
    }
    assert listed == wanted


def test_get_names_a_malformed_id_and_what_it_looked_for(service: MemoryService) -> None:
    with pytest.raises(ValidationError) as malformed:
        service.get("")
    assert malformed.value.field == "id"
    with pytest.raises(NotFoundError) as missing:
        service.get("no-such-id")
    assert "'no-such-id'" in str(missing.value)
    with pytest.raises(NotFoundError) as by_key:
        service.get(key="absent")
    assert "key 'absent'" in str(by_key.value)


def test_a_lone_string_is_no_list_of_tags_and_one_namespace_is_one(
    service: MemoryService,
) -> None:
    with pytest.raises(ValidationError) as tags:
        service.remember("x", tags="infra")
    assert tags.value.field == "tags"
    with pytest.raises(ValidationError) as mention:
        service.remind("ask about the move", mention="Anna")
    assert mention.value.field == "mention"
    with pytest.raises(ValidationError) as cue:
        service.recollections.cue(tags="lea")
    assert cue.value.field == "tags"
    assert service.stats().count == 0  # nothing of the refused calls was written
    service.remember("kept", namespace="team")
    assert service.stats("team").count == 1
    assert len(list(service.export("team"))) == 1


def test_batch_errors_name_the_draft_and_turns_bounds_are_checked(service: MemoryService) -> None:
    with pytest.raises(ValidationError) as batch:
        service.remember_many([{"content": "fine"}, {"content": " "}])
    assert batch.value.field == "[1].content"
    assert service.stats().count == 0  # all or nothing
    receipt = service.remember("alone")
    for arguments, field in (({"before": -1}, "before"), ({"after": True}, "after")):
        with pytest.raises(ValidationError) as bounds:
            service.turns(receipt.id, **arguments)
        assert bounds.value.field == field
    with pytest.raises(ValidationError) as every:
        service.remind("stretch", at="tomorrow at 9", every="hourlyish")
    assert "FREQ=WEEKLY" in str(every.value)
