"""Settings refuse combinations that cannot both hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pydantic
import pytest

from recalld import MemoryService
from recalld.adapters._cli_support import load_settings
from recalld.config import MAX_DURATION_SECONDS, MAX_TIMEOUT_MS, Settings
from recalld.errors import ValidationError


def test_config_pool_maximum_below_minimum_is_one_line_naming_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECALLD_POSTGRES_POOL_MIN", "5")
    monkeypatch.setenv("RECALLD_POSTGRES_POOL_MAX", "2")
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == "RECALLD_POSTGRES_POOL_MAX"
    assert caught.value.message.startswith("is below RECALLD_POSTGRES_POOL_MIN (5)")
    assert caught.value.message.endswith("(got '2')")
    assert "\n" not in str(caught.value)


def test_config_pool_bounds_may_meet() -> None:
    assert Settings(postgres_pool_min=3, postgres_pool_max=3).postgres_pool_max == 3
    assert Settings(postgres_pool_min=0, postgres_pool_max=1).postgres_pool_max == 1
    with pytest.raises(pydantic.ValidationError, match="postgres_pool_max"):
        Settings(postgres_pool_min=5, postgres_pool_max=2)


@pytest.mark.parametrize(
    "variable",
    [
        "RECALLD_HABITUATION_SECONDS",
        "RECALLD_INTENTION_WINDOW_MINUTES",
        "RECALLD_INTENTION_READING_GAP_SECONDS",
        "RECALLD_INTENTION_MIN_RECURRENCE_SECONDS",
        # An infinite scrub wait made every forget fail after it deleted (OverflowError),
        # an infinite lease every job claim; the others are waits and timeouts alike.
        "RECALLD_SCRUB_WAIT_SECONDS",
        "RECALLD_WORKER_LEASE_SECONDS",
        "RECALLD_LOCK_RETRY_SECONDS",
        "RECALLD_POSTGRES_CONNECT_TIMEOUT_SECONDS",
        "RECALLD_PURGE_INTERVAL_SECONDS",
        "RECALLD_SCRUB_POLL_SECONDS",
        "RECALLD_INTENTION_MIN_INTERVAL_SECONDS",
        "RECALLD_SCHEDULER_POLL_SECONDS",
        "RECALLD_EMBEDDER_TIMEOUT_SECONDS",
        "RECALLD_WORKER_RETRY_SECONDS",
        "RECALLD_WORKER_RETRY_MAX_SECONDS",
        "RECALLD_WORKER_POLL_SECONDS",
    ],
)
@pytest.mark.parametrize("value", ["1e12", "inf"])
def test_config_durations_past_the_calendar_are_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    # Accepted, each made every sense (or every reminder) fail with an OverflowError: a
    # date that far from now is past the calendar's end ("never again" is its limit).
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == variable
    assert "less than or equal to" in caught.value.message


def test_config_durations_at_their_limit_still_compute_a_date() -> None:
    settings = Settings(
        habituation_seconds=MAX_DURATION_SECONDS,
        intention_reading_gap_seconds=MAX_DURATION_SECONDS,
        intention_min_recurrence_seconds=MAX_DURATION_SECONDS,
        intention_window_minutes=MAX_DURATION_SECONDS / 60,
    )
    now = datetime(2026, 11, 5, tzinfo=UTC)
    assert now - timedelta(seconds=settings.habituation_seconds) < now
    assert now + timedelta(minutes=settings.intention_window_minutes) > now


def test_config_busy_timeout_past_sqlites_int_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Accepted, it made every open fail: SQLite's busy timeout is a 32-bit int.
    monkeypatch.setenv("RECALLD_BUSY_TIMEOUT_MS", str(MAX_TIMEOUT_MS + 1))
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == "RECALLD_BUSY_TIMEOUT_MS"
    assert "less than or equal to" in caught.value.message


def test_config_waits_and_leases_at_their_limit_still_work(db_path: Path) -> None:
    # At their limits a job's lease is still a date and the busy timeout and a forget's
    # scrub wait still timeouts: the memory is embedded and forgotten, its scrub done.
    settings = Settings(
        db=db_path,
        synchronous="NORMAL",
        embedder="hashing",
        graph_extractor="none",
        busy_timeout_ms=MAX_TIMEOUT_MS,
        worker_lease_seconds=MAX_DURATION_SECONDS,
        scrub_wait_seconds=MAX_TIMEOUT_MS // 1000,
    )
    with MemoryService.open(settings) as service:
        receipt = service.remember("the spare key is under the blue pot")
        assert service.new_worker().run_until_idle().processed == 1
        assert service.forget(receipt.id).scrub == "done"
        assert service.search("spare key", min_score=0) == []
