"""The context channels: documented scales; vectorised forms agree with scalar ones."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pygeohash
import pytest

from recalld.context.place import (
    MAX_SEARCH_CELLS,
    Extent,
    cells_around,
    distance_m,
    extent_distances,
    place_similarity,
    search_precision,
)
from recalld.context.signals import (
    AUDIO_BER_CEILING,
    AUDIO_MAX_OFFSET,
    AUDIO_MIN_OVERLAP,
    AUDIO_MIN_SHARED,
    AudioFeatures,
    audio_similarities,
    audio_similarity,
    biometric_similarity,
)
from recalld.context.timing import time_similarities, time_similarity


def test_place_distance_is_haversine() -> None:
    # Paris Notre-Dame to the Eiffel Tower: about 4.1 km.
    assert distance_m(48.8530, 2.3499, 48.8584, 2.2945) == pytest.approx(4_100, rel=0.03)
    assert distance_m(10, 20, 10, 20) == 0


@pytest.mark.parametrize(
    ("metres", "low", "high"),
    [
        (0, 1, 1),
        (49, 1, 1),
        (500, 0.75, 0.85),
        (1_000, 0.35, 0.45),
        (2_000, 0.0, 0.03),
        (3_000, 0, 0.001),
    ],
)
def test_place_similarity_scale(metres: float, low: float, high: float) -> None:
    assert low <= place_similarity(metres) <= high


def test_extent_distances_between_points_are_haversine() -> None:
    lats = np.array([48.8642, 48.8700, 48.8300, -33.86])
    lons = np.array([2.3475, 2.3500, 2.3900, 151.21])
    vector = extent_distances(Extent(48.8642, 2.3475), lats, lons)
    scalar = [distance_m(48.8642, 2.3475, a, b) for a, b in zip(lats, lons, strict=True)]
    assert vector == pytest.approx(scalar)


def test_extent_distances_run_edge_to_edge() -> None:
    cell = Extent(10.0, 20.0, 0.5, 0.5)
    # Inside (or touching) the cell: 0; a degree north of its centre: half a degree away.
    assert extent_distances(cell, np.array([10.3, 10.5]), np.array([20.4, 19.5])) == (
        pytest.approx([0.0, 0.0])
    )
    assert extent_distances(cell, np.array([11.0]), np.array([20.0]))[0] == pytest.approx(
        distance_m(10.5, 20.0, 11.0, 20.0)
    )
    # Across the antimeridian, and two cells side by side.
    assert extent_distances(Extent(0.0, 179.9), np.array([0.0]), np.array([-179.9]))[0] == (
        pytest.approx(distance_m(0.0, 179.9, 0.0, -179.9))
    )
    assert extent_distances(cell, np.array([10.0]), np.array([21.0]), 0.5, 0.5)[0] == 0.0


def test_extent_distances_to_a_cell_holding_a_pole_go_no_further_than_the_pole() -> None:
    # "gzzzz" reaches 90 N: a cue 556 m from the pole was scored 1,112 m from the cell.
    cell = pygeohash.decode_exactly("gzzzz")
    polar = Extent(cell.latitude, cell.longitude, cell.latitude_error, cell.longitude_error)
    to_pole = distance_m(89.995, 180.0, 90.0, 0.0)
    assert extent_distances(polar, np.array([89.995]), np.array([180.0]))[0] == pytest.approx(
        to_pole, rel=1e-6
    )
    # The other way round (the cue is the cell), and at the south pole.
    assert extent_distances(
        Extent(89.995, 180.0),
        np.array([cell.latitude]),
        np.array([cell.longitude]),
        cell.latitude_error,
        cell.longitude_error,
    )[0] == pytest.approx(to_pole, rel=1e-6)
    south = pygeohash.decode_exactly("00000")
    area = Extent(south.latitude, south.longitude, south.latitude_error, south.longitude_error)
    assert extent_distances(area, np.array([-89.995]), np.array([170.0]))[0] <= to_pole


@pytest.mark.parametrize("lat", [0.0, 48.86, 60.0, 70.0, 80.0, 85.0, 89.9, -89.9999])
def test_cells_around_cover_the_reach_in_every_direction(lat: float) -> None:
    reach = 1_800.0
    cells = cells_around(Extent(lat, 10.0), reach, 6)
    assert 0 < len(cells) <= MAX_SEARCH_CELLS
    assert len({len(cell) for cell in cells}) == 1
    rng = np.random.default_rng(int(abs(lat) * 1000))
    for bearing in rng.uniform(0, 2 * np.pi, 200):
        # A point just inside the reach (a flat-earth step, checked by haversine).
        north = reach * 0.98 * np.cos(bearing) / 111_195
        east = reach * 0.98 * np.sin(bearing) / (111_195 * max(np.cos(np.radians(lat)), 1e-9))
        point_lat = float(np.clip(lat + north, -90, 90))
        point_lon = float((10.0 + east + 180) % 360 - 180)
        if distance_m(lat, 10.0, point_lat, point_lon) > reach:
            continue
        code = pygeohash.encode(point_lat, point_lon, 12)
        assert any(code.startswith(cell) for cell in cells), (point_lat, point_lon)


def test_search_precision_follows_the_reach() -> None:
    assert search_precision(500) == 6
    assert search_precision(3_000) == 5


@pytest.mark.parametrize(
    ("cue", "stored", "low", "high"),
    [
        ("2026-11-05T08:05:00+01:00", "2026-11-04T08:10:00+01:00", 0.99, 1.0),  # weekday mornings
        ("2026-11-05T09:05:00+01:00", "2026-11-04T08:05:00+01:00", 0.6, 0.7),  # an hour apart
        ("2026-11-08T20:00:00+01:00", "2026-11-04T08:10:00+01:00", 0.1, 0.2),  # Sunday night
        ("2026-11-05T08:00:00+09:00", "2026-11-04T08:00:00-05:00", 0.99, 1.0),  # local clocks
        ("2026-11-05T23:55:00+00:00", "2026-11-05T00:05:00+00:00", 0.95, 1.0),  # wraps at midnight
        ("2026-07-06T08:00:00+00:00", "2026-01-05T08:00:00+00:00", 0.84, 0.86),  # other season
    ],
)
def test_time_similarity_documented_cases(cue: str, stored: str, low: float, high: float) -> None:
    combined = time_similarity(datetime.fromisoformat(cue), datetime.fromisoformat(stored)).combined
    assert low <= combined <= high
    vector = time_similarities(datetime.fromisoformat(cue), [datetime.fromisoformat(stored)])[0]
    assert vector == pytest.approx(combined)


def test_time_similarities_in_arrays_are_each_pair_s_similarity() -> None:
    # Many years (leap and not, the first and the last), offsets and gaps between them.
    offsets = [timezone(timedelta(minutes=minutes)) for minutes in (-600, -300, 0, 345, 840)]
    stored: list[datetime | None] = [
        datetime(year, month, day, hour, minute, tzinfo=offsets[(year + day) % 5])
        for year in (1, 1900, 2000, 2024, 2026, 9999)
        for month, day in ((1, 1), (2, 28), (3, 1), (7, 14), (12, 31))
        for hour, minute in ((0, 5), (8, 10), (23, 59))
    ]
    stored.insert(7, None)
    for cue in ("2026-11-05T08:05:00+01:00", "2024-12-31T23:58:00-10:00", "0001-01-01T00:01:00Z"):
        moment = datetime.fromisoformat(cue)
        expected = [0.0 if s is None else time_similarity(moment, s).combined for s in stored]
        assert list(time_similarities(moment, stored)) == pytest.approx(expected)


def test_time_similarities_missing_time_scores_zero() -> None:
    cue = datetime.fromisoformat("2026-11-05T08:05:00+01:00")
    assert list(time_similarities(cue, [None])) == [0.0]


def test_biometric_similarity_normalises_each_reading() -> None:
    stored = {"heart_rate": 130.0, "skin_conductance": 12.0, "temperature": 37.0}
    assert biometric_similarity({"heart_rate": 130.0}, stored) == 1.0
    assert biometric_similarity({"heart_rate": 118.0}, stored) == pytest.approx(np.exp(-0.5))
    assert biometric_similarity({"temperature": 37.4}, stored) == pytest.approx(np.exp(-0.5))
    mixed = biometric_similarity({"heart_rate": 130.0, "skin_conductance": 3.0}, stored)
    assert mixed is not None
    assert 0.45 < mixed < 0.55
    assert biometric_similarity({"steps_per_minute": 90.0}, stored) is None
    assert biometric_similarity({"glucose": 110.0}, {"glucose": 100.0}) == pytest.approx(
        np.exp(-0.5)
    )


def _reference_audio_similarity(cue: np.ndarray, stored: np.ndarray) -> float:
    # The definition, one offset at a time: at least AUDIO_MIN_SHARED distinct shared
    # sub-fingerprints, then 1 - BER/ceiling at the best alignment with enough overlap.
    if len(set(cue.tolist()) & set(stored.tolist())) < AUDIO_MIN_SHARED:
        return 0.0
    length, other = len(cue), len(stored)
    min_overlap = min(AUDIO_MIN_OVERLAP, length, other)
    best = None
    for offset in range(-AUDIO_MAX_OFFSET, AUDIO_MAX_OFFSET + 1):
        pairs = [(cue[i], stored[i - offset]) for i in range(length) if 0 <= i - offset < other]
        if len(pairs) < min_overlap:
            continue
        bits = sum(bin(int(a) ^ int(b)).count("1") for a, b in pairs)
        rate = bits / (32.0 * len(pairs))
        best = rate if best is None else min(best, rate)
    return 0.0 if best is None else max(0.0, 1.0 - best / AUDIO_BER_CEILING)


def test_audio_similarities_match_the_definition() -> None:
    # Many fingerprints at once (grouped by length, aligned in batches) score as the
    # definition does one by one: copies with a few flipped bits at an offset, unrelated
    # ones, and ones shorter than the minimum overlap.
    generator = np.random.default_rng(7)
    cue = generator.integers(0, 2**32, 90, dtype=np.uint64).astype(np.uint32)
    stored = []
    for index in range(40):
        length = int(generator.integers(5, 140))
        if index % 3 == 0:
            fingerprint = generator.integers(0, 2**32, length, dtype=np.uint64).astype(np.uint32)
        else:
            shift = int(generator.integers(-30, 30))
            fingerprint = np.resize(np.roll(cue, shift), length).astype(np.uint32)
            noise = generator.random(length) < (0.05 if index % 3 == 1 else 0.4)
            fingerprint[noise] ^= np.uint32(1) << generator.integers(0, 32, noise.sum()).astype(
                np.uint32
            )
        stored.append(AudioFeatures(fingerprint).to_bytes())
    expected = [
        _reference_audio_similarity(cue, AudioFeatures.from_bytes(data).fingerprint)
        for data in stored
    ]
    found = audio_similarities(AudioFeatures(cue), stored)
    assert found == pytest.approx(expected, abs=1e-12)
    assert sum(value > 0.5 for value in expected) >= 10, "the copies are recognised"
    single = [audio_similarity(AudioFeatures(cue), AudioFeatures.from_bytes(d)) for d in stored]
    assert single == pytest.approx(expected, abs=1e-12)
    assert audio_similarities(AudioFeatures(cue), []).shape == (0,)
