"""Two embedding models on one database: the worker started later waits for the other
(recalld.worker_rivals) instead of undoing its work."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from recalld.errors import ConflictError
from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.store.semantic import WorkerRecord
from recalld.worker import Worker, WorkerReport
from recalld.worker_rivals import rival
from tests.conftest import FakeClock
from tests.semantic_support import NamedEmbedder, semantic_settings

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def _record(
    worker_id: str, model: str, *, started: int, beat: int = 0, state: str = "idle"
) -> WorkerRecord:
    return WorkerRecord(
        id=worker_id,
        pid=1,
        host="h",
        model=model,
        state=state,
        started_at=NOW - timedelta(seconds=started),
        heartbeat_at=NOW - timedelta(seconds=beat),
    )


def _rival(*records: WorkerRecord, embedder: str = "model-b") -> str | None:
    found = rival(
        records,
        me="me",
        started_at=NOW - timedelta(seconds=10),
        embedder=embedder,
        now=NOW,
        alive_within=timedelta(seconds=120),
    )
    return None if found is None else found.id


def test_rival_is_a_live_earlier_worker_of_another_embedding_model() -> None:
    assert _rival(_record("a", "model-a", started=60)) == "a"
    assert _rival(_record("a", "model-a+rules/v3", started=60)) == "a"
    # Not a rival: the same model (with or without an extractor, a "+" in its name
    # too), a worker with no embedder, a later one, a stopped or silent one.
    assert _rival(_record("a", "model-b", started=60)) is None
    assert _rival(_record("a", "model-b+spacy/en_core_web_sm-3.8.0/v2", started=60)) is None
    assert _rival(_record("a", "m+x", started=60), embedder="m+x") is None
    assert _rival(_record("a", "rules/v3", started=60)) is None
    assert _rival(_record("a", "spacy/en_core_web_sm-3.8.0/v2", started=60)) is None
    assert _rival(_record("a", "model-a", started=5)) is None
    assert _rival(_record("a", "model-a", started=60, state="stopped")) is None
    assert _rival(_record("a", "model-a", started=60, beat=121)) is None
    assert _rival(_record("me", "model-a", started=60)) is None
    # Started at the same moment: the smaller id goes on, so exactly one of two waits.
    assert _rival(_record("ma", "model-a", started=10)) == "ma"
    assert _rival(_record("zz", "model-a", started=10)) is None


def test_a_worker_of_the_first_workers_model_does_not_wait_for_one_that_waits() -> None:
    # "a" works; "b" (another model, started next) waits for it. Before, "me" (model-a,
    # started last) waited for "b" too, idling beside "a" for as long as "a" lived.
    working = _record("a", "model-a+rules/v3", started=60)
    waiting = _record("b", "model-b+rules/v3", started=40)
    assert _rival(working, waiting, embedder="model-a") is None
    assert _rival(waiting, working, embedder="model-a") is None
    # One of a third model waits for the first, the one doing the work, named in its log.
    assert _rival(waiting, working, embedder="model-c") == "a"
    # A graph-only worker started first decides nothing.
    assert _rival(_record("g", "rules/v3", started=90), waiting, embedder="model-a") == "b"


@pytest.fixture
def clock() -> FakeClock:
    # Today's time: a heartbeat deletes the workers silent for a week by the real clock.
    return FakeClock(datetime.now(UTC))


def test_a_later_worker_of_another_model_waits_instead_of_undoing_the_earlier_ones_work(
    any_database: Path | str, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    settings = semantic_settings(any_database)
    store = open_store(settings)
    with MemoryService(store, settings, clock=clock, embedder=NamedEmbedder("model-a")) as service:
        service.remember_many([{"content": "roses in June"}, {"content": "the kitchen door"}])
        first = Worker(store, NamedEmbedder("model-a"), settings, clock=clock, worker_id="a")
        first.run_once()  # alive (its heartbeat says so), its work done
        assert service.status().embeddings == {"model-a": 2}
        clock.advance(1)
        second = Worker(store, NamedEmbedder("model-b"), settings, clock=clock, worker_id="b")
        with caplog.at_level(logging.ERROR, logger="recalld.worker"):
            assert second.backfill() == 0
            assert second.run_once() == 0
            # Adversarial pass a64: it reported "embedded 0" as if the queue were drained
            # (`recalld worker --until-idle` exit 0); it now says why it did nothing.
            with pytest.raises(ConflictError, match=r"worker a .* embeds with model-a") as why:
                second.run_until_idle()
        assert why.value.field == "RECALLD_EMBEDDER_MODEL"
        assert "nothing was embedded" in str(why.value)
        # Before, it queued both memories again, then deleted model-a's vectors.
        assert service.status().embeddings == {"model-a": 2}
        assert service.status().queue["queued"] == 0
        said = [r.getMessage() for r in caplog.records if "embeds with model-a" in r.getMessage()]
        assert len(said) == 1  # once, however often it looks
        assert "RECALLD_EMBEDDER_MODEL" in said[0]
        # The earlier worker stops: the later one switches the database to its model.
        first.run_until_idle()
        second.run_until_idle()
        assert service.status().embeddings == {"model-b": 2}


def test_a_worker_of_another_model_whose_heartbeat_stopped_long_ago_is_no_rival(
    any_database: Path | str, clock: FakeClock
) -> None:
    # Its process was killed: no "stopped" heartbeat, and none for longer than a lease.
    settings = semantic_settings(any_database)
    store = open_store(settings)
    with MemoryService(store, settings, clock=clock, embedder=NamedEmbedder("model-a")) as service:
        service.remember("roses in June")
        Worker(store, NamedEmbedder("model-a"), settings, clock=clock, worker_id="a").run_once()
        clock.advance(settings.worker_lease_seconds + 1)
        second = Worker(store, NamedEmbedder("model-b"), settings, clock=clock, worker_id="b")
        assert second.backfill() == 1


def test_until_idle_stopped_by_a_rival_that_appeared_says_what_it_did_first(
    any_database: Path | str, clock: FakeClock
) -> None:
    # Review of pass a64: a run that embedded a batch before an earlier-started worker of
    # another model showed itself raised "nothing was embedded".
    settings = semantic_settings(any_database, worker_batch_size=1)
    store = open_store(settings)
    with MemoryService(store, settings, clock=clock, embedder=NamedEmbedder("model-b")) as service:
        service.remember_many([{"content": "roses in June"}, {"content": "the kitchen door"}])
        later = Worker(store, NamedEmbedder("model-b"), settings, clock=clock, worker_id="b")
        rival_worker = WorkerRecord(
            id="a",
            pid=1,
            host="h",
            model="model-a",
            state="busy",
            started_at=clock() - timedelta(seconds=60),
            heartbeat_at=clock(),
        )

        def rival_appears(report: WorkerReport) -> None:
            if report.processed:  # after its first batch
                store.semantic.heartbeat(rival_worker)

        with pytest.raises(ConflictError, match="worker a ") as why:
            later.run_until_idle(on_step=rival_appears)
        assert "it stopped after embedding 1 and extracting 0" in str(why.value)
        assert "nothing was embedded" not in str(why.value)
        assert service.status().embeddings == {"model-b": 1}
