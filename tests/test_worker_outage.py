"""Results a database outage kept from being stored, on both stores (review of pass d63,
reconciling passes c63 and d63, see :mod:`recalld.worker_outage`): held and stored by
the next step within the lease, handed back (no attempt counted) past it or when the
worker stops, and never stored for a memory edited or forgotten meanwhile."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from recalld.embeddings.hashing import HashingEmbedder
from recalld.errors import DatabaseUnavailableError
from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.store.semantic import Job, embedding_text, encode_vector, text_hash
from recalld.worker import Worker
from recalld.worker_outage import longest_step_gap
from tests.conftest import FakeClock
from tests.semantic_support import NamedEmbedder, RecordingEmbedder, StoreOutage, semantic_settings


def _service(database: Path | str, clock: FakeClock, embedder: RecordingEmbedder) -> MemoryService:
    settings = semantic_settings(database, graph_extractor="none", worker_max_attempts=2)
    return MemoryService(open_store(settings), settings, clock=clock, embedder=embedder)


def _vectors(service: MemoryService, embedder: RecordingEmbedder) -> list[bytes]:
    return [row[2] for row in service.store.semantic.vector_rows(embedder.name, 0, 10)]


def _vector_of(text: str) -> list[bytes]:
    """The stored vector of a memory whose only field is ``text``."""
    vectors = HashingEmbedder(64).embed_batch([embedding_text(None, text)])
    return [encode_vector(vectors[0])]


def _held_past_the_lease(service: MemoryService, worker: Worker, clock: FakeClock) -> None:
    """Fail one step storing, then one more after the jobs' lease ran out."""
    with pytest.raises(DatabaseUnavailableError):
        worker.run_once()
    clock.advance(seconds=service.settings.worker_lease_seconds + 1)
    with pytest.raises(DatabaseUnavailableError):
        worker.run_once()


def _held_through_an_outage_past_the_lease(
    service: MemoryService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> Worker:
    """A worker ``holding`` whose vectors are held through an outage longer than the lease,
    the hand-back refused too (the database fully down); the database is back on return."""
    outage = StoreOutage(service, monkeypatch)

    def refused(worker_id: str, jobs: list[Job], now: datetime) -> int:
        raise DatabaseUnavailableError("the database at db is unavailable")

    monkeypatch.setattr(service.store.semantic, "release_jobs", refused)
    holding = service.new_worker(worker_id="holding")
    _held_past_the_lease(service, holding, clock)
    outage.on = False
    return holding


def test_a_job_handed_back_and_edited_is_embedded_from_its_new_text(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Held vector + job handed back + edit (reusing the queued job) + claim by the same
    # worker id: the old text's vector must not be stored, nor the job dropped.
    embedder = RecordingEmbedder()
    with _service(any_database, clock, embedder) as service:
        receipt = service.remember("Alice lives in Paris")
        outage = StoreOutage(service, monkeypatch)
        worker = service.new_worker()
        _held_past_the_lease(service, worker, clock)
        assert service.status().queue == {"queued": 1, "running": 0, "done": 0, "failed": 0}
        service.update(receipt.id, content="Alice lives in Oslo")
        assert service.status().queue["queued"] == 1  # the handed-back job, reused
        outage.on = False
        assert worker.run_until_idle().processed == 1
        assert embedder.texts == ["Alice lives in Paris", "Alice lives in Oslo"]
        assert _vectors(service, embedder) == _vector_of("Alice lives in Oslo")
        assert service.get(receipt.id).index_state == "indexed"
        assert service.status().queue["failed"] == 0


def test_a_release_that_failed_after_it_was_made_stores_no_old_vector(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The release committed but its answer was lost: the worker still holds the vector
    # while the job is queued again, edited, and claimable by this worker's id.
    embedder = RecordingEmbedder()
    with _service(any_database, clock, embedder) as service:
        receipt = service.remember("Alice lives in Paris")
        outage = StoreOutage(service, monkeypatch)
        semantic = service.store.semantic
        release = semantic.release_jobs

        def lost_answer(worker_id: str, jobs: list[Job], now: datetime) -> int:
            release(worker_id, jobs, now)
            raise DatabaseUnavailableError("the database at db is unavailable")

        monkeypatch.setattr(semantic, "release_jobs", lost_answer)
        worker = service.new_worker()
        _held_past_the_lease(service, worker, clock)
        service.update(receipt.id, content="Alice lives in Oslo")
        outage.on = False
        assert worker.run_until_idle().processed == 1
        assert embedder.texts[-1] == "Alice lives in Oslo"
        assert _vectors(service, embedder) == _vector_of("Alice lives in Oslo")
        assert service.get(receipt.id).index_state == "indexed"


def test_a_memory_edited_while_its_vector_is_held_gets_the_new_one(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = RecordingEmbedder()
    with _service(any_database, clock, embedder) as service:
        receipt = service.remember("Alice lives in Paris")
        outage = StoreOutage(service, monkeypatch)
        worker = service.new_worker()
        with pytest.raises(DatabaseUnavailableError):
            worker.run_once()
        service.update(receipt.id, content="Alice lives in Oslo")  # its job runs: a new one
        outage.on = False
        assert worker.run_until_idle().processed == 2  # the held one, not stored, and the new
        assert _vectors(service, embedder) == _vector_of("Alice lives in Oslo")
        assert service.get(receipt.id).index_state == "indexed"


def test_a_memory_forgotten_while_its_vector_is_held_keeps_no_vector(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = RecordingEmbedder()
    with _service(any_database, clock, embedder) as service:
        receipt = service.remember("Alice lives in Paris")
        outage = StoreOutage(service, monkeypatch)
        worker = service.new_worker()
        with pytest.raises(DatabaseUnavailableError):
            worker.run_once()
        service.forget(receipt.id)
        outage.on = False
        worker.run_until_idle()
        assert _vectors(service, embedder) == []
        assert service.status().queue == {"queued": 0, "running": 0, "done": 0, "failed": 0}


def test_a_worker_that_gives_up_hands_back_what_it_holds(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `recalld worker --until-idle` giving up on a database that stays away: the job it
    # holds is queued again at once with its attempt taken back, not left to its lease.
    embedder = RecordingEmbedder()
    with _service(any_database, clock, embedder) as service:
        receipt = service.remember("Alice lives in Paris")
        outage = StoreOutage(service, monkeypatch)
        delays: list[float] = []
        settings = service.settings
        worker = Worker(service.store, embedder, settings, clock=clock, pause=delays.append)
        with pytest.raises(DatabaseUnavailableError):
            worker.run_until_idle()
        assert len(delays) == 7
        assert service.status().queue == {"queued": 1, "running": 0, "done": 0, "failed": 0}
        outage.on = False
        semantic = service.store.semantic
        [job] = semantic.claim_jobs("probe", embedder.name, 8, clock(), clock(), 2)
        assert job.attempts == 1  # the given-up worker's claim not counted
        semantic.release_jobs("probe", [job], clock())
        assert service.new_worker().run_until_idle().processed == 1
        assert service.get(receipt.id).index_state == "indexed"


def test_a_recalls_catch_up_hands_back_what_it_held_when_the_service_closes(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A recall embeds a few queued memories itself (recall_catch_up); an outage while it
    # stores them leaves the vectors held by its catch-up worker. Closed then, the jobs
    # stayed leased to it (an attempt counted at the next claim, a lease later).
    settings = semantic_settings(any_database, graph_extractor="none", recall_catch_up=5)
    embedder = RecordingEmbedder()
    service = MemoryService(open_store(settings), settings, clock=clock, embedder=embedder)
    with service:
        service.remember("Alice lives in Paris")
        StoreOutage(service, monkeypatch)
        with pytest.raises(DatabaseUnavailableError):
            service.recall("Paris")
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as again:
        assert again.status().queue == {"queued": 1, "running": 0, "done": 0, "failed": 0}
        [job] = again.store.semantic.claim_jobs("probe", embedder.name, 8, clock(), clock(), 2)
        assert job.attempts == 1


def test_held_jobs_are_handed_back_before_another_worker_may_take_their_lease(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Adversarial pass a64: held results were handed back only once their lease had run
    # out, so another worker polling (a full disk takes its claim's small write) claimed
    # the jobs first, an attempt counted each outage: with RECALLD_WORKER_MAX_ATTEMPTS=1
    # the first such claim failed the memory for good. They are now handed back while
    # the lease still holds, the worker's next step due before it runs out.
    embedder = RecordingEmbedder()
    settings = semantic_settings(any_database, graph_extractor="none", worker_max_attempts=1)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("Alice lives in Paris")
        outage = StoreOutage(service, monkeypatch)
        holding = service.new_worker(worker_id="holding")
        with pytest.raises(DatabaseUnavailableError):
            holding.run_once()
        # Its next step, after the longest back-off, with a minute of the lease left.
        clock.advance(seconds=settings.worker_lease_seconds - 60)
        with pytest.raises(DatabaseUnavailableError):
            holding.run_once()
        assert service.status().queue == {"queued": 1, "running": 0, "done": 0, "failed": 0}
        outage.on = False
        clock.advance(seconds=61)  # past the lease
        other = service.new_worker(worker_id="other")
        assert other.run_until_idle().processed == 1
        assert service.get(receipt.id).index_state == "indexed"
        assert service.status().queue["failed"] == 0


def test_held_jobs_are_handed_back_earlier_than_a_lock_wait_and_a_back_off_before_the_lease(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review of pass a64: the margin was a minute (the longest back-off), but the step
    # after it first waits for the database (a lock up to RECALLD_LOCK_RETRY_SECONDS,
    # 30 s) before it finds the store refused again and then waits as long to release:
    # with 100 s of a long lease left, the hand-back could come after the lease ended.
    embedder = RecordingEmbedder()
    settings = semantic_settings(
        any_database, graph_extractor="none", worker_lease_seconds=600, lock_retry_seconds=30
    )
    assert longest_step_gap(30, 10) == 120
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        service.remember("Alice lives in Paris")
        StoreOutage(service, monkeypatch)
        holding = service.new_worker(worker_id="holding")
        with pytest.raises(DatabaseUnavailableError):
            holding.run_once()
        clock.advance(seconds=600 - 100)  # 100 s of the lease left: less than 2 minutes
        with pytest.raises(DatabaseUnavailableError):
            holding.run_once()
        assert service.status().queue == {"queued": 1, "running": 0, "done": 0, "failed": 0}


def test_a_vector_held_past_the_lease_settles_the_job_another_worker_took(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Adversarial pass d65: the database down longer than the lease refused the hand-back
    # too, so the job was left to its lease; another worker claimed it once the database
    # was back (an attempt counted) and the holding worker's vector, made from the same
    # text, was thrown away: the other worker embedded it again, and with its attempts
    # used up the memory failed for good. The held vector now settles the job.
    embedder = RecordingEmbedder()
    with _service(any_database, clock, embedder) as service:
        receipt = service.remember("Alice lives in Paris")
        semantic = service.store.semantic
        holding = _held_through_an_outage_past_the_lease(service, clock, monkeypatch)
        lease_until = clock() + timedelta(seconds=service.settings.worker_lease_seconds)
        [taken] = semantic.claim_jobs("other", embedder.name, 8, clock(), lease_until, 2)
        assert taken.attempts == 2  # the other worker's claim counted one
        assert holding.run_once() == 1  # the held vector, stored
        assert service.get(receipt.id).index_state == "indexed"
        assert _vectors(service, embedder) == _vector_of("Alice lives in Paris")
        assert service.status().queue == {"queued": 0, "running": 0, "done": 1, "failed": 0}
        assert embedder.texts == ["Alice lives in Paris"]  # embedded once
        # The other worker's result finds the job settled, and its failure fails nothing.
        holding_vector = _vector_of("Alice lives in Paris")[0]
        digest = text_hash(None, "Alice lives in Paris")
        assert (
            semantic.complete_jobs(
                "other", embedder.name, [(taken, digest, holding_vector)], 64, clock()
            )
            == 0
        )
        semantic.retry_job("other", taken, "gave up", clock(), None)
        assert service.get(receipt.id).index_state == "indexed"


def test_a_held_vector_of_an_older_text_settles_no_job_another_worker_took(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The memory was edited after the lease ran out: the held vector is of the old text
    # and must neither be stored nor settle the job another worker took.
    embedder = RecordingEmbedder()
    with _service(any_database, clock, embedder) as service:
        receipt = service.remember("Alice lives in Paris")
        semantic = service.store.semantic
        holding = _held_through_an_outage_past_the_lease(service, clock, monkeypatch)
        service.update(receipt.id, content="Alice lives in Oslo")
        lease_until = clock() + timedelta(seconds=service.settings.worker_lease_seconds)
        semantic.claim_jobs("other", embedder.name, 8, clock(), lease_until, 5)
        holding.run_once()
        assert _vectors(service, embedder) == []
        # Both jobs (the held one and the edit's) still the other worker's to settle.
        assert service.status().queue["running"] == 2


def test_a_vector_held_past_the_lease_settles_no_job_of_a_model_now_another_length(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review of pass d65: a model served under the same name with another dimension, whose
    # worker took the jobs, had the held vector (of the old length) stored among its own.
    # (On PostgreSQL the model's index per dimension refuses it: this is SQLite's.)
    embedder = NamedEmbedder("shared", 64)
    settings = semantic_settings(db_path, graph_extractor="none", worker_max_attempts=5)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        service.remember("Alice lives in Paris")
        service.remember("Bob lives in Rome")
        semantic = service.store.semantic
        holding = _held_through_an_outage_past_the_lease(service, clock, monkeypatch)
        lease_until = clock() + timedelta(seconds=settings.worker_lease_seconds)
        taken = semantic.claim_jobs("other", "shared", 8, clock(), lease_until, 5)
        [bob] = [job for job in taken if job.content == "Bob lives in Rome"]
        shorter = HashingEmbedder(32).embed_batch([embedding_text(None, bob.content)])[0]
        digest = text_hash(None, bob.content)
        assert (
            semantic.complete_jobs(
                "other", "shared", [(bob, digest, encode_vector(shorter))], 32, clock()
            )
            == 1
        )
        assert holding.run_once() == 0  # neither held vector settles a job now
        lengths = {len(row[2]) for row in semantic.vector_rows("shared", 0, 10)}
        assert lengths == {len(encode_vector(shorter))}
        # Alice's job is still the other worker's, to be settled with its own vector.
        assert service.status().queue["running"] == 1
