"""The library refuses what is not text, or not Unicode, with a ValidationError naming the field.

Found by an outside tester: ``search(None)``, ``search(b"...")``, a query or a write
holding a lone surrogate and ``filters`` given as a dict raised AttributeError,
TypeError or UnicodeEncodeError from deep inside; a query of a megabyte was searched
(REST refuses more than 10,000 characters); and a blank or zero-width ``kind``,
``category`` or ``speaker`` filter silently matched nothing (a blank tag is refused).
Each refusal changes nothing.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from recalld.errors import ValidationError
from recalld.model import QUERY_MAX_CHARS, Filters, NewMemory
from recalld.service import MemoryService

LONE = "\ud800"


@pytest.fixture
def filled(service: MemoryService) -> MemoryService:
    service.remember("The staging database runs in Sydney", key="staging", speaker="Ana")
    service.remember("The cat sleeps on the sofa", kind="fact", category="object")
    return service


def _refused(call: Callable[[], object], field: str) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        call()
    assert caught.value.field == field, caught.value
    return caught.value


def _snapshot(service: MemoryService) -> list[str]:
    return list(service.export())


QUERIES: list[tuple[Any, str]] = [
    (None, "must be text (a str), got NoneType"),
    (123, "must be text (a str), got int"),
    (b"staging", "must be text (a str), got bytes"),
    (f"staging {LONE}", "contains an unpaired UTF-16 surrogate (not valid Unicode)"),
    ("staging " * 1251, "the limit is 10000 characters"),
]


@pytest.mark.parametrize(("query", "message"), QUERIES)
def test_search_recall_and_explain_refuse_a_query_that_is_not_text(
    filled: MemoryService, query: Any, message: str
) -> None:
    memory_id = filled.get(key="staging").id
    before = _snapshot(filled)
    for call in (
        lambda: filled.search(query),
        lambda: filled.recall(query),
        lambda: filled.explain(query, memory_id),
    ):
        assert message in _refused(call, "query").message
    assert _snapshot(filled) == before  # recall counted no access


def test_the_query_limit_is_10000_characters(filled: MemoryService) -> None:
    assert QUERY_MAX_CHARS == 10_000
    longest = ("staging database " * 600)[:QUERY_MAX_CHARS]
    assert filled.search(longest)[0].memory.key == "staging"
    error = _refused(lambda: filled.search(longest + "x"), "query")
    assert error.message == "is 10001 characters; the limit is 10000 characters"


@pytest.mark.parametrize("memory_id", [None, 5, b"id", f"id{LONE}"])
def test_lookups_refuse_an_id_that_is_not_text(filled: MemoryService, memory_id: Any) -> None:
    before = _snapshot(filled)
    _refused(lambda: filled.explain("staging", memory_id), "id")
    _refused(lambda: filled.get(memory_id), "id")
    _refused(lambda: filled.forget(memory_id), "id")
    _refused(lambda: filled.update(memory_id, title="t"), "id")
    if memory_id is not None:  # get(key=None) gives nothing to look up
        _refused(lambda: filled.get(key=memory_id), "key")
    assert _snapshot(filled) == before


def test_filters_may_be_a_mapping_of_their_fields(filled: MemoryService) -> None:
    hits = filled.search("staging", filters={"kind": "note", "speaker": "Ana"})
    assert [hit.memory.key for hit in hits] == ["staging"]
    assert filled.search("staging", filters={"kind": "fact"}) == []
    assert filled.recall("staging", filters={"tags_any": ["none"]}) == []
    listed = filled.list_memories(filters={"category": "object"}).memories
    assert [memory.content for memory in listed] == ["The cat sleeps on the sofa"]
    assert len(filled.recent(filters={}).memories) == 2
    memory_id = filled.get(key="staging").id
    assert filled.explain("staging", memory_id, filters={"kind": "fact"}).stage == "excluded"


@pytest.mark.parametrize(
    ("filters", "field"),
    [
        ("note", "filters"),
        (["kind", "note"], "filters"),
        (1, "filters"),
        ({"kindx": "note"}, "filters.kindx"),
        ({"kind": 5}, "filters.kind"),
        ({"tags_any": [LONE]}, "filters.tags_any[0]"),
        ({"include_expired": True}, "filters.include_expired"),
    ],
)
def test_filters_of_the_wrong_shape_are_refused(
    filled: MemoryService, filters: Any, field: str
) -> None:
    before = _snapshot(filled)
    _refused(lambda: filled.search("staging", filters=filters), field)
    _refused(lambda: filled.recall("staging", filters=filters), field)
    if field != "filters.include_expired":  # the admin listing's own filter
        _refused(lambda: filled.list_memories(filters=filters), field)
    assert _snapshot(filled) == before


@pytest.mark.parametrize("field", ["kind", "category", "speaker"])
@pytest.mark.parametrize("value", ["", "   ", "\u200b", "\u200b\u200d", f"a{LONE}"])
def test_blank_or_invisible_name_filters_are_refused_like_tags(
    filled: MemoryService, field: str, value: str
) -> None:
    filters = Filters.model_validate({field: value})
    calls: list[Callable[[], object]] = [
        lambda: filled.search("staging", filters=filters),
        lambda: filled.recall("staging", filters=filters),
        lambda: filled.explain("staging", filled.get(key="staging").id, filters=filters),
        lambda: filled.list_memories(filters=filters),
        lambda: filled.recent(filters=filters),
    ]
    for call in calls:
        _refused(call, field)
    # Given as a mapping (a REST body's filters), a lone surrogate is found where
    # the mapping is read, as REST finds it in the body.
    in_mapping = f"filters.{field}" if LONE in value else field
    _refused(lambda: filled.search("staging", filters={field: value}), in_mapping)
    # The same mistake in tags is refused too (what the name filters now match).
    _refused(lambda: filled.search("staging", filters=Filters(tags_any=[value])), "tags_any")


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"content": f"note {LONE} x"}, "content"),
        ({"content": b"note"}, "content"),
        ({"content": "note", "title": f"t{LONE}"}, "title"),
        ({"content": "note", "speaker": f"A{LONE}"}, "speaker"),
        ({"content": "note", "kind": f"k{LONE}"}, "kind"),
        ({"content": "note", "tags": ["fine", f"t{LONE}"]}, "tags[1]"),
        ({"content": "note", "meta": {"k": LONE}}, "meta.k"),
        ({"content": "note", "meta": {"a": [1, {"b": LONE}]}}, "meta.a[1].b"),
        ({"content": "note", "meta": {LONE: 1}}, "meta"),
        ({"content": "note", "meta": {"k": b"raw"}}, "meta.k"),
        ({"content": "note", "place": {"geohash": "u4pr", "name": LONE}}, "place.name"),
    ],
)
def test_writes_refuse_text_that_is_not_unicode(
    filled: MemoryService, arguments: dict[str, Any], field: str
) -> None:
    before = _snapshot(filled)
    content = arguments.pop("content")
    _refused(lambda: filled.remember(content, **arguments), field)
    _refused(lambda: filled.put({"content": content, **arguments}), field)
    _refused(
        lambda: filled.remember_many([{"content": "fine"}, {"content": content, **arguments}]),
        f"[1].{field}",
    )
    memory_id = filled.get(key="staging").id
    _refused(lambda: filled.update(memory_id, content=content, **arguments), field)
    assert _snapshot(filled) == before


@pytest.mark.parametrize(
    ("meta", "field"),
    [
        ({"ocr": "TOTAL\x00 12.50"}, "meta.ocr"),
        ({"a": [1, {"b": "\x00"}]}, "meta.a[1].b"),
        ({"k\x00": 1}, "meta"),
    ],
)
def test_writes_refuse_a_nul_in_meta_on_every_store(
    filled: MemoryService, meta: dict[str, Any], field: str
) -> None:
    # PostgreSQL's jsonb cannot hold a NUL: SQLite refuses it too, so that a database can
    # always be migrated (review 50b, finding 4).
    before = _snapshot(filled)
    _refused(lambda: filled.remember("note", meta=meta), field)
    _refused(lambda: filled.put({"content": "note", "meta": meta}), field)
    _refused(
        lambda: filled.remember_many([{"content": "fine"}, {"content": "n", "meta": meta}]),
        f"[1].{field}",
    )
    _refused(lambda: filled.update(filled.get(key="staging").id, meta=meta), field)
    line = json.dumps({"content": "imported", "meta": meta})
    report = filled.import_text(line)
    assert [problem.error.split(": ")[0] for problem in report.errors] == [field], report
    assert "NUL" in report.errors[0].error
    assert _snapshot(filled) == before


def test_drafts_built_by_the_caller_are_checked_too(filled: MemoryService) -> None:
    before = _snapshot(filled)
    drafts = [
        (NewMemory(content=f"a{LONE}"), "content"),
        (NewMemory(content="a", meta={"k": LONE}), "meta.k"),
        (NewMemory(content="a", tags=[LONE]), "tags"),
    ]
    for draft, field in drafts:
        _refused(functools.partial(filled.remember_many, [draft]), field)
        _refused(functools.partial(filled.put, draft), field)
    assert _snapshot(filled) == before


@pytest.mark.parametrize(
    ("messages", "options", "field"),
    [
        (
            [{"speaker": "Ana", "content": "fine"}, {"speaker": "Bob", "content": f"bad {LONE}"}],
            {},
            "messages[1].content",
        ),
        ([{"speaker": f"B{LONE}", "content": "fine"}], {}, "messages[0].speaker"),
        ([{"role": "user", "content": b"bytes"}], {}, "messages[0].content"),
        ([{"role": "user", "content": "fine"}], {"title": LONE}, "title"),
        ([{"role": "user", "content": "fine"}], {"tags": [LONE]}, "tags[0]"),
    ],
)
def test_conversations_refuse_text_that_is_not_unicode(
    filled: MemoryService, messages: list[dict[str, Any]], options: dict[str, Any], field: str
) -> None:
    before = _snapshot(filled)
    _refused(lambda: filled.remember_conversation(messages, conversation="s1", **options), field)
    assert _snapshot(filled) == before


def _not_lists(service: MemoryService) -> list[tuple[Callable[[], object], str]]:
    return [
        (lambda: service.remember("a note", tags=None), "tags"),  # type: ignore[arg-type]
        (lambda: service.remember("a note", tags=5), "tags"),  # type: ignore[arg-type]
        (lambda: service.remember("a note", tags=["ok", 5]), "tags[1]"),  # type: ignore[list-item]
        (lambda: service.remember_many(None), "drafts"),  # type: ignore[arg-type]
        (lambda: service.stats(5), "namespaces"),  # type: ignore[arg-type]
        (lambda: service.status(True), "namespaces"),  # type: ignore[arg-type]
        (lambda: service.core.apply("user", 5), "operations"),  # type: ignore[arg-type]
        (lambda: service.remind("stretch", mention=5), "mention"),
        (lambda: service.intentions.cancel(f"a{LONE}"), "id"),
        (lambda: service.intentions.get(["x"]), "id"),  # type: ignore[arg-type]
        (lambda: service.recollections.cue(tags=None), "tags"),  # type: ignore[arg-type]
        (lambda: service.recollections.cue(at=5), "at"),  # type: ignore[arg-type]
        (lambda: service.recollections.cue(biometrics=5), "biometrics"),  # type: ignore[arg-type]
        (lambda: service.recollections.cue(text="x" * 10_001), "text"),
        (lambda: service.recollections.cue(text=f"a{LONE}"), "text"),
        (lambda: service.import_text(5), "text"),  # type: ignore[arg-type]
        (lambda: service.import_lines(None), "lines"),  # type: ignore[arg-type]
        # A NUL in a lookup: PostgreSQL's own error named a field "text" (review 48e).
        (lambda: service.get("a\x00b"), "id"),
        (lambda: service.get(key="a\x00b"), "key"),
        (lambda: service.graph.entities(query="a\x00b"), "query"),
    ]


def test_what_is_no_list_or_no_text_is_refused_everywhere_naming_the_field(
    filled: MemoryService,
) -> None:
    # A second outside tester: these raised TypeError, AttributeError, OverflowError or
    # UnicodeEncodeError from deep inside; each is a ValidationError, and nothing is written.
    before = _snapshot(filled)
    for call, field in _not_lists(filled):
        _refused(call, field)
    assert _snapshot(filled) == before


@pytest.mark.parametrize("ttl", [math.nan, math.inf, -math.inf, 0.0, -1, 1e300])
def test_a_ttl_out_of_range_names_ttl_seconds_and_the_range(
    filled: MemoryService, ttl: float
) -> None:
    # NaN fails every comparison: it was refused as "less than or equal to 10000000000".
    rule = "must be a finite number of seconds from 1e-06 to 1e+10, got "
    memory = filled.get(key="staging")
    for write in (
        lambda: filled.remember("expires", ttl_seconds=ttl),
        lambda: filled.remember("expires", key="staging", ttl_seconds=ttl),
        lambda: filled.update(memory.id, ttl_seconds=ttl),
    ):
        refused = _refused(write, "ttl_seconds")
        assert str(refused) == f"ttl_seconds: {rule}{ttl!r}"
    after = filled.get(key="staging")
    assert (after.content, after.expires_at) == (memory.content, None)
    assert len(filled.list_memories().memories) == 2


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, -0.5, 2.0])
def test_a_salience_or_coordinate_out_of_range_names_the_field_and_the_range(
    filled: MemoryService, value: float
) -> None:
    # NaN fails every comparison: a NaN salience was refused as "less than or equal to 1",
    # a NaN latitude as "less than or equal to 90", bounds it does not break.
    before = _snapshot(filled)
    memory = filled.get(key="staging")
    for write in (
        lambda: filled.remember("important", salience=value),
        lambda: filled.update(memory.id, salience=value),
    ):
        refused = _refused(write, "salience")
        assert str(refused) == f"salience: must be a finite number from 0 to 1, got {value!r}"
    for field, place, rule in (
        ("lat", {"lat": value * 1000, "lon": 2.0}, "from -90 to 90"),
        ("lon", {"lat": 48.0, "lon": value * 1000}, "from -180 to 180"),
    ):
        refused = _refused(partial(filled.remember, "somewhere", place=place), f"place.{field}")
        shown = repr(place[field])
        assert str(refused).endswith(f"must be a finite number {rule}, got {shown}"), str(refused)
    assert _snapshot(filled) == before


def test_empty_content_is_what_the_published_pattern_calls_empty(service: MemoryService) -> None:
    # TEXT_PATTERN's \s is ECMA-262's (JSON Schema's): U+0085 and U+001C are no white space
    # there, so a REST fuzzer's schema-valid content of U+0085 was refused as empty.
    for number, visible in enumerate(("\u0085", "\x1c", "\u200b")):
        assert service.remember(visible, namespace=f"n{number}").status == "created"
    before = _snapshot(service)
    for blank in ("", " \t\n", "\u3000", "\ufeff", "\u2028\u00a0", "\x0b\x0c\r"):
        _refused(partial(service.remember, blank), "content")
    assert _snapshot(service) == before


def test_a_value_that_holds_itself_is_refused_not_walked_for_ever(filled: MemoryService) -> None:
    # A framework's state dict holding itself (meta["self"] = meta), passed as meta, hung
    # remember for ever: the text check walked round the cycle, its path ever longer
    # (adversarial pass a66). REST cannot send one; the library can.
    looped: dict[str, Any] = {"step": 1}
    looped["self"] = looped
    circle: list[Any] = ["tag"]
    circle.append(circle)
    before = filled.stats().count
    error = _refused(lambda: filled.remember("a state", meta=looped), "meta")
    assert "hold itself" in error.message
    _refused(lambda: filled.remember("a state", tags=circle), "tags")
    _refused(lambda: filled.remember_many([{"content": "a state", "meta": looped}]), "[0].meta")
    assert filled.stats().count == before


@pytest.mark.parametrize("expected", [5, 1.5, b"abc", {"version": "x"}, [5]])
def test_an_expected_version_that_is_no_version_is_refused_naming_it(
    filled: MemoryService, expected: Any
) -> None:
    # update(id, content=..., expected_version=5) failed with "TypeError: 'int' object is
    # not iterable" from the version check (adversarial pass a66).
    memory = filled.get(key="staging")
    for call in (
        lambda: filled.update(memory.id, content="moved", expected_version=expected),
        lambda: filled.forget(memory.id, expected_version=expected),
        lambda: filled.put({"content": "moved", "key": "staging"}, expected_version=expected),
    ):
        _refused(call, "expected_version")
    assert filled.get(key="staging") == memory


def test_expected_versions_may_be_any_iterable_read_once(filled: MemoryService) -> None:
    from recalld.versions import memory_version

    memory = filled.get(key="staging")
    versions = (version for version in ["0" * 32, memory_version(memory)])
    assert filled.update(memory.id, content="moved", expected_version=versions).content == "moved"
