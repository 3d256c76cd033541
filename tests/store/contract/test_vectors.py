"""Vectors and their change log; nearest-vector search where the database offers it."""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from recalld.store.base import Scope, Store
from recalld.store.semantic import decode_vectors, encode_vector, text_hash
from tests.store.contract.conftest import NOW, record
from tests.store.contract.test_jobs import LEASE, MODEL

DIMENSION = 16
NUMBERS = itertools.count()


def unit(seed: int) -> np.ndarray:
    values = np.random.default_rng(seed).normal(size=DIMENSION).astype(np.float32)
    return values / np.linalg.norm(values)


def embed_all(store: Store, count: int, **fields: object) -> dict[int, np.ndarray]:
    with store.transaction() as tx:
        for index in range(count):
            memory = tx.insert(
                record(
                    id=f"v{next(NUMBERS)}",
                    content=f"vector {index}",
                    index_state="queued",
                    **fields,
                )
            )
            tx.enqueue_embedding(memory.seq, MODEL, NOW)
    jobs = store.semantic.claim_jobs("w", MODEL, count, NOW, LEASE, 5)
    vectors = {job.seq: unit(job.seq) for job in jobs}
    store.semantic.complete_jobs(
        "w",
        MODEL,
        [(job, text_hash(job.title, job.content), encode_vector(vectors[job.seq])) for job in jobs],
        DIMENSION,
        NOW,
    )
    return vectors


def test_vectors_dropped_in_a_transaction_are_gone_from_every_read(store: Store) -> None:
    vectors = embed_all(store, 3)
    first, second, third = sorted(vectors)
    with store.transaction() as tx:
        tx.drop_vectors(first, NOW, MODEL)  # the caller queues its own model's job
        tx.drop_vectors(second, NOW, None)  # a process without that model
    assert set(store.semantic.vectors_for(MODEL, list(vectors))) == {third}
    assert [row[0] for row in store.semantic.vector_rows(MODEL, 0, 10)] == [third]
    # The model that had a vector gets a job for the row (the caller's own does not).
    queued = store.semantic.claim_jobs("w", MODEL, 10, NOW, LEASE, 5)
    assert [job.seq for job in queued] == [second]


def test_vectors_round_trip_as_float16(store: Store) -> None:
    vectors = embed_all(store, 3)
    stored = store.semantic.vectors_for(MODEL, list(vectors))
    assert set(stored) == set(vectors)
    for seq, blob in stored.items():
        decoded = decode_vectors([blob], DIMENSION)[0]
        assert np.allclose(decoded, vectors[seq], atol=1e-3)
    rows = store.semantic.vector_rows(MODEL, 0, 2)
    assert [row[0] for row in rows] == sorted(vectors)[:2]
    assert all(row[1] == "default" for row in rows)


def test_vector_change_log_sees_upserts_and_deletes(store: Store) -> None:
    vectors = embed_all(store, 3)
    everything = store.semantic.vector_changes(MODEL, 0)
    assert sorted(seq for seq, _, _ in everything.upserts) == sorted(vectors)
    last = store.semantic.last_vector_change(MODEL)
    assert last == everything.last_change > 0
    victim = min(vectors)
    with store.transaction() as tx:
        tx.delete(victim)
    changes = store.semantic.vector_changes(MODEL, last)
    assert changes.deletes == [victim]
    assert changes.upserts == []
    assert store.semantic.last_vector_change(MODEL) > last
    assert store.semantic.compact_vector_log() >= 0


def test_visible_seqs_and_memories_apply_the_scope(store: Store) -> None:
    with store.transaction() as tx:
        kept = tx.insert(record(id="vis", content="visible", tags=("x",)))
        tx.insert(record(id="hidden", content="elsewhere", namespace="other"))
        gone = tx.insert(record(id="old", content="expired", expires_at=NOW - timedelta(seconds=1)))
    scope = Scope(namespaces=("default",), now=NOW)
    assert store.semantic.visible_seqs(scope) == [kept.seq]
    assert store.semantic.visible_seqs(
        Scope(namespaces=("default",), now=NOW, tags_any=("x",))
    ) == [kept.seq]
    found = store.semantic.visible_memories(scope, [kept.seq, gone.seq, 999_999])
    assert list(found) == [kept.seq]
    assert found[kept.seq].id == "vis"


def test_any_visible_answers_whether_the_scope_sees_a_memory(store: Store) -> None:
    june = NOW.replace(month=6, day=15)
    with store.transaction() as tx:
        tx.insert(record(id="june", content="in June", at=june))
        tx.insert(
            record(id="elsewhere", content="other", namespace="other", at=june.replace(month=7))
        )
        tx.insert(
            record(
                id="gone",
                content="expired",
                at=june.replace(month=8),
                expires_at=NOW - timedelta(1),
            )
        )

    def seen(month: int, namespace: str = "default") -> bool:
        start = june.replace(month=month, day=1)
        end = start.replace(month=month + 1)
        scope = Scope(namespaces=(namespace,), now=NOW, since=start, until=end)
        return store.semantic.any_visible(scope)

    assert seen(6)
    assert not seen(7)  # another namespace's
    assert seen(7, "other")
    assert not seen(8)  # expired
    assert not seen(9)


def test_visible_seqs_list_every_memory_each_filter_keeps(store: Store) -> None:
    """Lists of many memories, from the tag index alone and joined with other filters."""
    with store.transaction() as tx:
        both = [tx.insert(record(id=f"b{i}", content="b", tags=("x", "y"))).seq for i in range(12)]
        only_x = [tx.insert(record(id=f"x{i}", content="x", tags=("x",))).seq for i in range(5)]
        fact = tx.insert(record(id="f", content="f", tags=("y",), kind="fact")).seq
        tx.insert(record(id="gone", content="g", tags=("x",), expires_at=NOW - timedelta(1)))
        tx.insert(record(id="other", content="o", tags=("x",), namespace="other"))

    def listed(**filters: Any) -> list[int]:
        return sorted(
            store.semantic.visible_seqs(Scope(namespaces=("default",), now=NOW, **filters))
        )

    assert listed() == sorted([*both, *only_x, fact])
    assert listed(tags_all=("x", "y")) == both
    assert listed(tags_any=("y",), kind="fact") == [fact]
    assert listed(tags_any=("x", "y"), kind="note") == sorted([*both, *only_x])
    assert listed(tags_any=("nobody",)) == []


def test_nearest_in_the_database_applies_scope_and_ranks_by_cosine(store: Store) -> None:
    search = store.vector_search
    if search is None:
        pytest.skip("this store keeps vectors in each process (see retrieval/test_vector_index.py)")
    vectors = embed_all(store, 40)
    other = embed_all(store, 5, namespace="other")
    query = unit(min(vectors))
    found = search.nearest(MODEL, query, Scope(namespaces=("default",), now=NOW), 5)
    assert found[0][0] == min(vectors)
    assert found[0][1] == pytest.approx(1.0, abs=1e-2)
    expected = sorted(vectors, key=lambda seq: -float(vectors[seq] @ query))[:5]
    assert [seq for seq, _ in found] == expected
    assert not set(seq for seq, _ in found) & set(other)
    cosines = search.cosines(MODEL, query, list(vectors)[:3])
    for seq, cosine in cosines.items():
        assert cosine == pytest.approx(float(vectors[seq] @ query), abs=1e-2)
    # What nearest reports is what cosines (and SQLite) compute: the stored vector with
    # the float32 query, not the half-precision query the index orders by (~2e-4 off).
    exact = search.cosines(MODEL, query, [seq for seq, _ in found])
    for seq, cosine in found:
        assert cosine == pytest.approx(exact[seq], abs=1e-6)
    assert search.nearest("unknown-model", query, Scope(namespaces=("default",), now=NOW), 5) == []


def test_nearest_with_a_selective_filter_still_returns_k(store: Store) -> None:
    search = store.vector_search
    if search is None:
        pytest.skip("this store keeps vectors in each process")
    embed_all(store, 60)
    tagged = embed_all(store, 6, namespace="default", tags=("rare",), kind="kv")
    scope = Scope(namespaces=("default",), now=NOW, tags_all=("rare",), kind="kv")
    found = search.nearest(MODEL, unit(12345), scope, 5)
    assert len(found) == 5
    assert {seq for seq, _ in found} <= set(tagged)
