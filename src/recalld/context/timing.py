"""Time similarity from the local time of day, the kind of day, and the season.

Both instants are read on their own local clocks (the offset each was given
with), because what recurs is "08:10 at the café", not a UTC instant.

- time of day: circular difference on the 24 h clock, Gaussian with sigma 45 min
  (5 min apart → 0.99, 1 h → 0.41, 2 h → 0.03);
- kind of day: 1 when both are weekdays or both weekend days, else 0;
- season: circular difference in day of year, Gaussian with sigma 30 days.

The channel is ``0.6·time_of_day + 0.25·kind_of_day + 0.15·season``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

import numpy as np

__all__ = ["TimeSimilarity", "time_similarities", "time_similarity"]

MINUTES_PER_DAY = 24 * 60
DAYS_PER_YEAR = 365.2425
TIME_OF_DAY_SIGMA_MINUTES = 45.0
SEASON_SIGMA_DAYS = 30.0
WEIGHTS = (0.6, 0.25, 0.15)


@dataclass(frozen=True)
class TimeSimilarity:
    """The parts of a time comparison and their weighted combination."""

    time_of_day: float
    kind_of_day: float
    season: float

    @property
    def combined(self) -> float:
        """The time channel's similarity in [0, 1]."""
        tod, kind, season = WEIGHTS
        return tod * self.time_of_day + kind * self.kind_of_day + season * self.season


def _gaussian(distance: float, sigma: float) -> float:
    return math.exp(-0.5 * (distance / sigma) ** 2)


def time_similarity(cue: datetime, memory: datetime) -> TimeSimilarity:
    """Compare two instants on their own local clocks."""
    cue_minutes = cue.hour * 60 + cue.minute + cue.second / 60
    memory_minutes = memory.hour * 60 + memory.minute + memory.second / 60
    minutes: float = abs(cue_minutes - memory_minutes)
    minutes = min(minutes, MINUTES_PER_DAY - minutes)
    weekend_cue, weekend_memory = cue.weekday() >= 5, memory.weekday() >= 5
    days: float = abs(cue.timetuple().tm_yday - memory.timetuple().tm_yday)
    days = min(days, DAYS_PER_YEAR - days)
    return TimeSimilarity(
        time_of_day=_gaussian(minutes, TIME_OF_DAY_SIGMA_MINUTES),
        kind_of_day=1.0 if weekend_cue == weekend_memory else 0.0,
        season=_gaussian(days, SEASON_SIGMA_DAYS),
    )


def time_similarities(cue: datetime, stored: Sequence[datetime | None]) -> np.ndarray:
    """The combined time similarity of ``cue`` with many stored ``at`` instants.

    Each stored instant is read on its own local clock (the offset it was
    stored with); a missing time scores 0. The same as :func:`time_similarity`
    for each, in arrays: a recall by time alone compares up to 50,000 instants.
    """
    result = np.zeros(len(stored))
    present = [index for index, moment in enumerate(stored) if moment is not None]
    if not present:
        return result
    moments = [moment for moment in stored if moment is not None]
    count = len(moments)
    minutes = np.fromiter(
        (m.hour * 60 + m.minute + m.second / 60 for m in moments),
        np.float64,
        count,
    )
    # Days since 0001-01-01 (day 1, a Monday): the weekday and, from each year's first
    # day, the day of the year, without a time tuple per instant.
    days = np.fromiter((m.toordinal() for m in moments), np.int64, count)
    years, year_of = np.unique(
        np.fromiter((m.year for m in moments), np.int64, count),
        return_inverse=True,
    )
    first_days = np.array([date(int(year), 1, 1).toordinal() for year in years], np.int64)
    day_of_year = days - first_days[year_of] + 1
    weekend = (days + 6) % 7 >= 5
    cue_minutes = cue.hour * 60 + cue.minute + cue.second / 60
    difference = np.abs(minutes - cue_minutes)
    difference = np.minimum(difference, MINUTES_PER_DAY - difference)
    season = np.abs(day_of_year - cue.timetuple().tm_yday).astype(np.float64)
    season = np.minimum(season, DAYS_PER_YEAR - season)
    tod, kind, season_weight = WEIGHTS
    result[present] = (
        tod * np.exp(-0.5 * (difference / TIME_OF_DAY_SIGMA_MINUTES) ** 2)
        + kind * (weekend == (cue.weekday() >= 5))
        + season_weight * np.exp(-0.5 * (season / SEASON_SIGMA_DAYS) ** 2)
    )
    return result
