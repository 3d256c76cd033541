"""Settings refuse combinations that cannot both hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pydantic
import pytest

from recalld.adapters._cli_support import load_settings
from recalld.config import MAX_DURATION_SECONDS, Settings
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
