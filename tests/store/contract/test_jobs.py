"""The durable job queue (embed and graph jobs): claims, leases, retries, backfill, sharing."""

from __future__ import annotations

import threading
from datetime import timedelta

import numpy as np

from recalld.graph.types import ExtractedEntity, ExtractedRelation, Extraction
from recalld.store.base import Store
from recalld.store.semantic import Job, encode_vector, text_hash
from tests.store.contract.conftest import NOW, OpenStore, record

MODEL = "test-model"
LEASE = NOW + timedelta(minutes=2)


def queue(store: Store, count: int, *, kind: str = "embed") -> list[int]:
    seqs = []
    with store.transaction() as tx:
        for index in range(count):
            memory = tx.insert(
                record(id=f"j{index}", content=f"job text {index}", index_state="queued")
            )
            if kind == "embed":
                tx.enqueue_embedding(memory.seq, MODEL, NOW - timedelta(milliseconds=count - index))
            else:
                tx.enqueue_graph(memory.seq, MODEL, NOW - timedelta(milliseconds=count - index))
            seqs.append(memory.seq)
    return seqs


def vector(seed: int, dimension: int = 8) -> bytes:
    values = np.random.default_rng(seed).normal(size=dimension).astype(np.float32)
    return encode_vector(values / np.linalg.norm(values))


def results(jobs: list[Job]) -> list[tuple[Job, str, bytes]]:
    return [(job, text_hash(job.title, job.content), vector(job.seq)) for job in jobs]


def queue_in(store: Store, namespace: str, count: int) -> list[int]:
    seqs = []
    with store.transaction() as tx:
        for index in range(count):
            memory = tx.insert(
                record(
                    id=f"{namespace}{index}",
                    namespace=namespace,
                    content=f"{namespace} text {index}",
                    index_state="queued",
                )
            )
            tx.enqueue_embedding(memory.seq, MODEL, NOW)
            seqs.append(memory.seq)
    return seqs


def test_a_recall_claims_its_namespaces_jobs_even_those_a_worker_holds(store: Store) -> None:
    mine = queue_in(store, "mine", 2)
    theirs = queue_in(store, "theirs", 5)
    held = store.semantic.claim_jobs("worker", MODEL, 10, NOW, LEASE, 5)
    assert {job.seq for job in held} == set(mine + theirs)
    # Another namespace's five pending jobs are more than the limit and do not count.
    claimed = store.semantic.claim_for_recall("recall", MODEL, ["mine"], 3, NOW, LEASE)
    assert claimed is not None
    assert sorted(job.seq for job in claimed) == mine
    # Taking over a live lease is no new attempt (concurrent recalls must not use them up).
    assert all(job.namespace == "mine" and job.attempts == 1 for job in claimed)
    assert store.semantic.complete_jobs("recall", MODEL, results(claimed), 8, NOW) == 2
    # The worker that held them finds its lease gone and completes nothing twice.
    assert store.semantic.complete_jobs("worker", MODEL, results(held), 8, NOW) == 5
    assert store.semantic.pending_jobs(MODEL) == 0
    assert set(store.semantic.vectors_for(MODEL, mine + theirs)) == set(mine + theirs)


def test_a_recall_claims_nothing_past_its_limit_or_when_nothing_waits(store: Store) -> None:
    queue_in(store, "busy", 4)
    assert store.semantic.claim_for_recall("recall", MODEL, ["busy"], 3, NOW, LEASE) is None
    assert store.semantic.claim_for_recall("recall", MODEL, ["quiet"], 3, NOW, LEASE) == []
    # Nothing was leased by the refusal: a worker still claims all four.
    assert len(store.semantic.claim_jobs("worker", MODEL, 10, NOW, LEASE, 5)) == 4


def test_jobs_claim_in_order_and_complete(store: Store) -> None:
    seqs = queue(store, 3)
    jobs = store.semantic.claim_jobs("w1", MODEL, 2, NOW, LEASE, 5)
    assert [job.seq for job in jobs] == seqs[:2]
    assert all(job.attempts == 1 and job.content.startswith("job text") for job in jobs)
    assert store.semantic.pending_jobs(MODEL) == 3
    # Leased jobs are not claimed again before their lease expires.
    again = store.semantic.claim_jobs("w2", MODEL, 5, NOW, LEASE, 5)
    assert [job.seq for job in again] == seqs[2:]
    assert store.semantic.complete_jobs("w1", MODEL, results(jobs), 8, NOW) == 2
    assert store.semantic.complete_jobs("w2", MODEL, results(jobs), 8, NOW) == 0  # not its lease
    assert store.semantic.pending_jobs(MODEL) == 1
    assert set(store.semantic.vectors_for(MODEL, seqs)) == set(seqs[:2])
    counts = store.semantic.queue_counts(["default"], 10)
    assert counts.embeddings_by_model == {MODEL: 2}
    assert counts.memories_by_index_state == {"indexed": 2, "queued": 1}
    assert counts.jobs_by_state["running"] == 1


def test_jobs_expired_lease_is_taken_over_then_fails(store: Store) -> None:
    (seq,) = queue(store, 1)
    first = store.semantic.claim_jobs("w1", MODEL, 1, NOW, LEASE, 2)
    later = LEASE + timedelta(seconds=1)
    second = store.semantic.claim_jobs("w2", MODEL, 1, later, later + timedelta(minutes=2), 2)
    assert [job.id for job in second] == [job.id for job in first]
    assert second[0].attempts == 2
    # w1's late result of an older text settles nothing (its current text's would settle
    # the job once, see test_jobs_a_late_result_settles_a_job_taken_over).
    stale = [(job, "0" * 24, blob) for job, _, blob in results(first)]
    assert store.semantic.complete_jobs("w1", MODEL, stale, 8, later) == 0
    much_later = later + timedelta(minutes=5)
    assert store.semantic.claim_jobs("w3", MODEL, 1, much_later, much_later, 2) == []
    counts = store.semantic.queue_counts(["default"], 10)
    assert counts.jobs_by_state["failed"] == 1
    assert counts.memories_by_index_state == {"failed": 1}
    assert "lease expired" in (counts.failures[0].error or "")
    assert counts.failures[0].memory_id == "j0"
    del seq


def test_jobs_a_late_result_settles_a_job_taken_over(store: Store) -> None:
    # A worker that held its vector through an outage longer than the lease stores it
    # for the job another worker took meanwhile, its text unchanged (adversarial pass
    # d65): the job is settled once, and the other worker's result then settles nothing.
    queue(store, 1)
    first = store.semantic.claim_jobs("w1", MODEL, 1, NOW, LEASE, 5)
    later = LEASE + timedelta(seconds=1)
    second = store.semantic.claim_jobs("w2", MODEL, 1, later, later + timedelta(minutes=2), 5)
    assert [job.id for job in second] == [job.id for job in first]
    assert store.semantic.complete_jobs("w1", MODEL, results(first), 8, later) == 1
    assert store.semantic.complete_jobs("w2", MODEL, results(second), 8, later) == 0
    counts = store.semantic.queue_counts(["default"], 10)
    assert counts.memories_by_index_state == {"indexed": 1}
    assert store.semantic.pending_jobs(MODEL) == 0


def test_jobs_retry_with_backoff_then_fail_for_good(store: Store) -> None:
    queue(store, 1)
    (job,) = store.semantic.claim_jobs("w1", MODEL, 1, NOW, LEASE, 5)
    store.semantic.retry_job("w1", job, "RuntimeError: flaky", NOW, NOW + timedelta(seconds=30))
    assert store.semantic.claim_jobs("w1", MODEL, 1, NOW + timedelta(seconds=10), LEASE, 5) == []
    (retried,) = store.semantic.claim_jobs("w1", MODEL, 1, NOW + timedelta(seconds=31), LEASE, 5)
    assert retried.attempts == 2
    store.semantic.retry_job("w1", retried, "RuntimeError: broken", NOW, None)
    counts = store.semantic.queue_counts(["default"], 10)
    assert counts.jobs_by_state["failed"] == 1
    assert counts.failures[0].error == "RuntimeError: broken"
    assert store.semantic.pending_jobs(MODEL) == 0


def test_jobs_backfill_queues_missing_and_drops_other_models(store: Store) -> None:
    with store.transaction() as tx:
        for index in range(3):
            tx.insert(record(id=f"b{index}", content=f"backfill {index}"))
    assert store.semantic.backfill_jobs(MODEL, NOW) == 3
    assert store.semantic.backfill_jobs(MODEL, NOW) == 0
    jobs = store.semantic.claim_jobs("w", MODEL, 10, NOW, LEASE, 5)
    store.semantic.complete_jobs("w", MODEL, results(jobs), 8, NOW)
    assert store.semantic.backfill_jobs("new-model", NOW) == 3
    assert store.semantic.pending_jobs("new-model") == 3
    assert store.semantic.drop_other_models("new-model") == 3
    assert store.semantic.vectors_for(MODEL, [job.seq for job in jobs]) == {}


def test_jobs_backfill_re_embeds_vectors_of_another_dimension(store: Store) -> None:
    # One model name served with another dimension: its old vectors were read as zeros
    # (SQLite: never found again) or failed every new one's insert (PostgreSQL: the old
    # dimension's index cast), and no backfill queued them again.
    with store.transaction() as tx:
        for index in range(3):
            tx.insert(record(id=f"d{index}", content=f"dimension {index}"))
    assert store.semantic.backfill_jobs(MODEL, NOW) == 3
    jobs = store.semantic.claim_jobs("w", MODEL, 10, NOW, LEASE, 5)
    store.semantic.complete_jobs("w", MODEL, results(jobs), 8, NOW)
    assert store.semantic.backfill_jobs(MODEL, NOW, 8) == 0
    assert store.semantic.backfill_jobs(MODEL, NOW, 12) == 3
    assert store.semantic.pending_jobs(MODEL) == 3
    jobs = store.semantic.claim_jobs("w", MODEL, 10, NOW, LEASE, 5)
    wider = [(job, text_hash(job.title, job.content), vector(job.seq, 12)) for job in jobs]
    assert store.semantic.complete_jobs("w", MODEL, wider, 12, NOW) == 3
    assert store.semantic.backfill_jobs(MODEL, NOW, 12) == 0
    stored = store.semantic.vectors_for(MODEL, [job.seq for job in jobs])
    assert {len(blob) for blob in stored.values()} == {24}


def test_jobs_backfill_can_queue_failed_jobs_again(store: Store) -> None:
    # A job that failed for good (attempts used up while an endpoint was down) stayed
    # failed: no backfill or command queued its memory again.
    (seq,) = queue(store, 1)
    (job,) = store.semantic.claim_jobs("w", MODEL, 1, NOW, LEASE, 1)
    store.semantic.retry_job("w", job, "EmbeddingError: endpoint down", NOW, None)
    assert store.semantic.backfill_jobs(MODEL, NOW) == 0
    assert store.semantic.queue_counts(["default"], 10).memories_by_index_state == {"failed": 1}
    assert store.semantic.backfill_jobs(MODEL, NOW, retry_failed=True) == 1
    counts = store.semantic.queue_counts(["default"], 10)
    assert counts.jobs_by_state["failed"] == 0
    assert counts.memories_by_index_state == {"queued": 1}
    (again,) = store.semantic.claim_jobs("w", MODEL, 1, NOW, LEASE, 1)
    assert (again.seq, again.attempts) == (seq, 1)


def test_jobs_are_shared_by_concurrent_workers(open_another: OpenStore) -> None:
    stores = [open_another() for _ in range(3)]
    queue(stores[0], 30)
    claimed: list[list[str]] = [[] for _ in stores]
    barrier = threading.Barrier(len(stores))

    def work(index: int) -> None:
        barrier.wait(timeout=10)
        while True:
            jobs = stores[index].semantic.claim_jobs(f"w{index}", MODEL, 4, NOW, LEASE, 5)
            if not jobs:
                return
            claimed[index] += [job.id for job in jobs]
            stores[index].semantic.complete_jobs(f"w{index}", MODEL, results(jobs), 8, NOW)

    threads = [threading.Thread(target=work, args=(index,)) for index in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    everything = [job_id for ids in claimed for job_id in ids]
    assert len(everything) == 30
    assert len(set(everything)) == 30  # no job claimed twice
    assert stores[1].semantic.pending_jobs(MODEL) == 0
    assert stores[2].semantic.queue_counts(["default"], 5).embeddings_by_model == {MODEL: 30}


def test_jobs_text_changed_after_claim_stores_no_stale_vector(store: Store) -> None:
    (seq,) = queue(store, 1)
    (job,) = store.semantic.claim_jobs("w", MODEL, 1, NOW, LEASE, 5)
    with store.transaction() as tx:
        current = tx.find("default", id="j0")
        assert current is not None
        tx.replace(seq, record(id="j0", content="rewritten text", index_state="queued"))
    assert store.semantic.complete_jobs("w", MODEL, results([job]), 8, NOW) == 1
    assert store.semantic.vectors_for(MODEL, [seq]) == {}


def test_workers_heartbeat(store: Store) -> None:
    from recalld.store.semantic import WorkerRecord

    beat = WorkerRecord(
        id="w",
        pid=1,
        host="h",
        model=MODEL,
        state="idle",
        started_at=NOW,
        heartbeat_at=NOW,
        processed=2,
        failed=1,
    )
    store.semantic.heartbeat(beat)
    store.semantic.heartbeat(WorkerRecord(**{**beat.__dict__, "state": "busy", "processed": 3}))
    (found,) = store.semantic.workers()
    assert (found.state, found.processed, found.heartbeat_at) == ("busy", 3, NOW)


def test_graph_jobs_claim_complete_and_retry(store: Store) -> None:
    seqs = queue(store, 2, kind="graph")
    jobs = store.graph.claim_jobs("w", MODEL, 5, NOW, LEASE, 5)
    assert [job.seq for job in jobs] == seqs
    assert store.semantic.claim_jobs("w", MODEL, 5, NOW, LEASE, 5) == []  # kinds are apart
    extraction = Extraction(
        entities=(
            ExtractedEntity(name="Anna", type="person", count=2),
            ExtractedEntity(name="Paris", type="place", count=1),
        ),
        relations=(ExtractedRelation(subject="Anna", predicate="move_to", object="Paris"),),
    )
    assert store.graph.complete_jobs("w", MODEL, [(jobs[0], extraction)], NOW) == 1
    store.graph.retry_job("w", jobs[1], "ValueError: bad", NOW, None)
    counts = store.graph.counts(["default"], 5)
    assert (counts.entities, counts.relations, counts.mentions) == (2, 1, 2)
    assert counts.extracted == {MODEL: 1}
    assert counts.jobs_by_state["done"] == 1
    assert counts.jobs_by_state["failed"] == 1
    assert counts.failures[0].error == "ValueError: bad"
    assert store.graph.backfill_jobs(MODEL, NOW) == 0  # one extracted, one failed (kept)
    assert store.graph.rebuild(["default"], MODEL, NOW) == 2


def test_a_graph_backfill_asked_to_retry_failed_jobs_queues_them_again(store: Store) -> None:
    # `recalld worker --retry-failed` queued again only the failed embeddings: a failed
    # extraction stayed failed (adversarial pass d63).
    queue(store, 2, kind="graph")
    jobs = store.graph.claim_jobs("w", MODEL, 5, NOW, LEASE, 5)
    store.graph.retry_job("w", jobs[0], "ValueError: bad", NOW, None)
    assert store.graph.backfill_jobs(MODEL, NOW) == 0
    assert store.graph.backfill_jobs(MODEL, NOW, retry_failed=True) == 1
    assert store.graph.counts(["default"], 5).jobs_by_state["failed"] == 0
    (again,) = store.graph.claim_jobs("w", MODEL, 5, NOW, LEASE, 5)
    assert (again.seq, again.attempts) == (jobs[0].seq, 1)


def test_a_failed_old_job_leaves_a_memory_with_a_newer_job_queued(store: Store) -> None:
    # An edit queues a newer job while the old one runs; the old one failing for good must
    # not mark the memory failed (recall's catch-up reads the queued memories only).
    (seq,) = queue(store, 1)
    (held,) = store.semantic.claim_jobs("w1", MODEL, 1, NOW, LEASE, 5)
    with store.transaction() as tx:
        tx.enqueue_embedding(seq, MODEL, NOW)
    store.semantic.retry_job("w1", held, "boom", NOW, None)
    counts = store.semantic.queue_counts(["default"], 10)
    assert counts.memories_by_index_state == {"queued": 1}
    claimed = store.semantic.claim_for_recall("recall", MODEL, ["default"], 5, NOW, LEASE)
    assert claimed is not None
    assert [job.seq for job in claimed] == [seq]


def test_released_jobs_run_again_at_once_without_an_attempt_counted(store: Store) -> None:
    queue(store, 2)
    jobs = store.semantic.claim_jobs("w1", MODEL, 5, NOW, LEASE, 1)
    assert store.semantic.release_jobs("w2", jobs, NOW) == 0  # not its lease
    assert store.semantic.release_jobs("w1", jobs, NOW) == 2
    again = store.semantic.claim_jobs("w1", MODEL, 5, NOW, LEASE, 1)
    assert [job.attempts for job in again] == [1, 1]  # max_attempts 1 and still claimable
    assert store.semantic.complete_jobs("w1", MODEL, results(again), 8, NOW) == 2


def test_released_graph_jobs_run_again_at_once(store: Store) -> None:
    queue(store, 1, kind="graph")
    jobs = store.graph.claim_jobs("w1", MODEL, 5, NOW, LEASE, 1)
    assert store.graph.release_jobs("w1", jobs, NOW) == 1
    (again,) = store.graph.claim_jobs("w1", MODEL, 5, NOW, LEASE, 1)
    assert again.attempts == 1
    assert store.graph.counts(["default"], 5).jobs_by_state.get("failed", 0) == 0
