"""A differential fuzz of search, explain and the listing's filters, on each store and
across SQLite and PostgreSQL (adversarial pass d64).

One seeded generator writes the same memories to a store (tags with odd characters,
times at day boundaries in several offsets, keys, meta of mixed types, memories that
expire, are forgotten or edited), then hypothesis (derandomized: the same examples every
run) draws queries and filters. Each answer is checked against an oracle of the filters
written here, not recalld's own: every hit passes every filter, scores lie in [0, 1],
fall with rank and reach ``min_score``; explain gives each hit its rank and score and
names the filters that hide a memory left out; a listing read a page at a time repeats
and skips nothing. On both stores (``pytest --postgres``) keyword search answers alike,
for words that neither index treats as the README says they differ (stop words, the
letters PostgreSQL's ``unaccent`` folds) and fewer matches than a channel's depth.
"""

from __future__ import annotations

import contextlib
import random
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recalld.errors import NotFoundError
from recalld.model import Memory
from recalld.retrieval.pool import Mode
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

START = datetime(2026, 10, 25, 16, 20, tzinfo=UTC)
# Words both keyword indexes read alike (no stop word, nothing unaccent folds).
WORDS = [
    "kitchen", "door", "coffee", "meeting", "Melbourne", "garden", "python", "deploy",
    "staging", "sofa", "recipe", "station", "running", "email", "project", "deadline",
    "café", "München", "v1.2.3", "anna@example.org", "Jean-Luc", "日本",
]  # fmt: skip
QUERY_EXTRAS = ["yesterday", "last week", "in October", "what did Ana say", "?", "🎉"]
TAGS = ["infra", "Infra", "café", "cafe\u0301", "a b", "x/y", "%", "_", "emoji🎉", "'quote"]
KINDS = ["note", "reference", "kv", "Note"]
CATEGORIES = ["spatial", "fact", "Café"]
SPEAKERS = ["Ana", "ana", "Zoë", "Zoe\u0308"]
OFFSETS = [UTC, timezone(timedelta(hours=-7)), timezone(timedelta(hours=5, minutes=30))]
NAMESPACES = ["default", "other"]
MODES: list[Mode] = ["keyword", "hybrid", "vector"]
COUNT = 70


def _text(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def _moment(rng: random.Random) -> datetime:
    moment = START - timedelta(days=rng.randint(0, 40), minutes=rng.randint(0, 1440))
    if rng.random() < 0.3:  # at midnight, where "since" a day starts
        moment = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return moment.astimezone(rng.choice(OFFSETS))


def _write(service: MemoryService, clock: FakeClock, seed: int) -> None:
    """The same memories, edits and forgets for a seed, whatever the store."""
    rng = random.Random(seed)
    written: list[tuple[str, str]] = []
    for index in range(COUNT):
        fields: dict[str, Any] = {
            "namespace": rng.choice([*NAMESPACES, "default"]),
            "kind": rng.choice(KINDS),
            "tags": rng.sample(TAGS, rng.randint(0, 3)),
        }
        if rng.random() < 0.2:
            fields["key"] = f"key.{index}"
        else:
            fields["id"] = f"m{index:03d}"
        if rng.random() < 0.3:
            fields["title"] = _text(rng, 1, 3)
        if rng.random() < 0.5:
            fields["category"] = rng.choice(CATEGORIES)
        if rng.random() < 0.4:
            fields["speaker"] = rng.choice(SPEAKERS)
        if rng.random() < 0.8:
            fields["at"] = _moment(rng).isoformat()
        if rng.random() < 0.1:
            fields["ttl_seconds"] = rng.choice([1, 10**6])
        if rng.random() < 0.3:
            fields["meta"] = {"n": rng.randint(-5, 5), "f": rng.random(), "b": True, "z": None}
        receipt = service.remember(_text(rng, 1, 7), **fields)
        written.append((receipt.id, receipt.namespace))
        clock.advance(1)
        roll = rng.random()
        memory_id, namespace = rng.choice(written)
        if roll < 0.05:
            service.forget(memory_id, namespace=namespace)
        elif roll < 0.12:
            change: dict[str, Any] = rng.choice(
                [
                    {"content": _text(rng, 1, 5)},
                    {"tags": rng.sample(TAGS, 2)},
                    {"at": _moment(rng).isoformat()},
                    {"kind": rng.choice(KINDS)},
                ]
            )
            with contextlib.suppress(NotFoundError):  # forgotten already, or expired
                service.update(memory_id, namespace=namespace, **change)
            clock.advance(1)
    clock.advance(5)  # the one-second TTLs have passed
    service.new_worker().run_until_idle()


@dataclass(frozen=True)
class Query:
    """One drawn search: its text, filters, limit, threshold and namespace."""

    text: str
    filters: dict[str, Any]
    limit: int
    min_score: float | None
    namespace: str


def _instant(draw: st.DrawFn, days: int) -> str:
    moment = START - timedelta(days=draw(st.integers(-1, days)))
    if draw(st.booleans()):
        moment = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return moment.astimezone(draw(st.sampled_from(OFFSETS))).isoformat()


@st.composite
def queries(draw: st.DrawFn, extras: bool = True) -> Query:
    """A query of the generator's words (and, with ``extras``, a period or a symbol), with
    any of the filters."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))
    if extras and draw(st.booleans()):
        words.append(draw(st.sampled_from(QUERY_EXTRAS)))
    filters: dict[str, Any] = {}
    for name, values in (
        ("kind", KINDS),
        ("category", CATEGORIES),
        ("speaker", [*SPEAKERS, " Ana  "]),
        ("has_key", [True, False]),
    ):
        if draw(st.integers(0, 4)) == 0:
            filters[name] = draw(st.sampled_from(values))
    for name, most in (("tags_any", 3), ("tags_all", 2)):
        if draw(st.integers(0, 3)) == 0:
            filters[name] = draw(st.lists(st.sampled_from(TAGS), min_size=1, max_size=most))
    if draw(st.integers(0, 3)) == 0:
        filters["since"] = _instant(draw, 40)
    if draw(st.integers(0, 3)) == 0:
        filters["until"] = _instant(draw, 20)
        if "since" in filters and filters["until"] < filters["since"]:
            filters["since"], filters["until"] = filters["until"], filters["since"]
    if draw(st.integers(0, 5)) == 0:
        filters["created_since"] = (START + timedelta(seconds=draw(st.integers(0, 80)))).isoformat()
    return Query(
        text=" ".join(words),
        filters=filters,
        limit=draw(st.sampled_from([1, 3, 10, 50])),
        min_score=draw(st.sampled_from([None, 0.0, 0.001, 0.3])),
        namespace=draw(st.sampled_from(NAMESPACES)),
    )


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def hidden_by(memory: Memory, filters: dict[str, Any], now: datetime) -> list[str]:
    """The oracle: which of ``filters`` (and expiry) hide ``memory``, by field name."""
    hidden = []
    if memory.expires_at is not None and memory.expires_at <= now:
        hidden.append("expired")
    if "kind" in filters and memory.kind != filters["kind"]:
        hidden.append("kind")
    if "category" in filters and memory.category != _nfc(filters["category"]):
        hidden.append("category")
    if "speaker" in filters and memory.speaker != " ".join(_nfc(filters["speaker"]).split()):
        hidden.append("speaker")
    if "has_key" in filters and (memory.key is not None) != filters["has_key"]:
        hidden.append("has_key")
    tags = set(memory.tags)
    if "tags_any" in filters and not {_nfc(tag) for tag in filters["tags_any"]} & tags:
        hidden.append("tags_any")
    if "tags_all" in filters and not {_nfc(tag) for tag in filters["tags_all"]} <= tags:
        hidden.append("tags_all")
    for name, value, lower in (
        ("since", memory.at, True),
        ("until", memory.at, False),
        ("created_since", memory.created_at, True),
    ):
        if name in filters:
            bound = datetime.fromisoformat(filters[name])
            if value is None or (value < bound if lower else value >= bound):
                hidden.append(name)
    return hidden


def _everything(service: MemoryService, namespace: str) -> dict[str, Memory]:
    page = service.list_memories(namespace=namespace, limit=1000, filters={"include_expired": True})
    assert page.next_cursor is None
    return {memory.id: memory for memory in page.memories}


def check_query(service: MemoryService, query: Query, mode: Mode, now: datetime) -> list[Memory]:
    """Search once and hold the answer to every invariant; returns the hits' memories."""
    everything = _everything(service, query.namespace)
    arguments: dict[str, Any] = {
        "filters": query.filters,
        "limit": query.limit,
        "min_score": query.min_score,
        "namespace": query.namespace,
        "mode": mode,
    }
    hits = service.search(query.text, **arguments)
    threshold = 0.02 if query.min_score is None else query.min_score
    assert len(hits) <= query.limit
    assert len({hit.memory.id for hit in hits}) == len(hits)
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    for position, hit in enumerate(hits, 1):
        assert threshold <= hit.score <= 1
        stored = everything[hit.memory.id]  # a hit is a memory of the namespace
        assert hidden_by(stored, query.filters, now) == [], (query, mode, hit.memory.id)
        explained = service.explain(query.text, hit.memory.id, **arguments)
        assert (explained.stage, explained.rank, explained.score) == (
            "returned",
            position,
            hit.score,
        )
    returned = {hit.memory.id for hit in hits}
    for memory in sorted(everything.values(), key=lambda memory: memory.seq)[:: len(hits) + 3]:
        hidden = hidden_by(memory, query.filters, now)
        if memory.id in returned or "expired" in hidden:
            continue  # an expired memory may already be purged
        explained = service.explain(query.text, memory.id, **arguments)
        assert explained.stage != "returned"
        assert sorted(explained.excluded_by) == sorted(hidden), (query, memory.id)
        assert (explained.stage == "excluded") == bool(hidden)
    return [hit.memory for hit in hits]


def check_listing(service: MemoryService, query: Query, now: datetime) -> list[Memory]:
    """Read the listing under the query's filters a page at a time: the pages hold every
    memory the oracle keeps, once, newest first."""
    pages: list[Memory] = []
    cursor = None
    while True:
        page = service.list_memories(
            filters=query.filters, limit=query.limit, cursor=cursor, namespace=query.namespace
        )
        pages.extend(page.memories)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    kept = [
        memory
        for memory in _everything(service, query.namespace).values()
        if not hidden_by(memory, query.filters, now)
    ]
    assert [memory.id for memory in pages] == [
        memory.id for memory in sorted(kept, key=lambda memory: (memory.created_at, memory.seq))
    ][::-1]
    return pages


def _open(database: Path | str, seed: int) -> tuple[MemoryService, FakeClock]:
    clock = FakeClock(START)
    service = MemoryService.open(semantic_settings(database), clock=clock)
    try:
        _write(service, clock, seed)
    except BaseException:
        service.close()
        raise
    return service, clock


@pytest.fixture
def written(any_database: Path | str) -> Iterator[tuple[MemoryService, FakeClock]]:
    """A store (the hashing embedder, every memory embedded) holding the generator's
    memories."""
    service, clock = _open(any_database, seed=64)
    with service:
        yield service, clock


FUZZ = settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.slow
def test_search_explain_and_listing_hold_their_invariants(
    written: tuple[MemoryService, FakeClock],
) -> None:
    service, clock = written

    @FUZZ
    @given(queries())
    def check(query: Query) -> None:
        for mode in MODES:
            check_query(service, query, mode, clock.now)
        check_listing(service, query, clock.now)

    check()


@pytest.mark.postgres
@pytest.mark.slow
def test_keyword_search_and_listing_answer_alike_on_both_stores(
    db_path: Path, postgres_url: str
) -> None:
    sqlite, sqlite_clock = _open(db_path, seed=65)
    postgres, postgres_clock = _open(postgres_url, seed=65)
    with sqlite, postgres:
        assert sqlite_clock.now == postgres_clock.now
        now = sqlite_clock.now

        def labels(memories: list[Memory]) -> list[str]:
            # A keyed memory's id is the store's own; its key names it on both.
            return [memory.key or memory.id for memory in memories]

        @FUZZ
        @given(queries(extras=False))
        def check(query: Query) -> None:
            found = [check_query(service, query, "keyword", now) for service in (sqlite, postgres)]
            assert labels(found[0]) == labels(found[1]), query
            listed = [check_listing(service, query, now) for service in (sqlite, postgres)]
            assert labels(listed[0]) == labels(listed[1]), query

        check()
