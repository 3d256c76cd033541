"""Place similarity from great-circle distance, and the geohash cells around a place.

Scale (defaults; configurable): within ``near_m`` (50 m, the same building) the
similarity is 1; beyond it, it falls as ``exp(-((d - near_m) / scale_m)^2)`` with
``scale_m`` = 1 km: about 0.8 at 500 m, 0.4 at 1 km, 0.02 at 2 km and ~0 from
3 km on.

A place given by a geohash shorter than :data:`POINT_PRECISION` ("u09tv", a
5 km cell: the usual privacy-preserving form) is an area, not its centre: its
distance to another place is from the cell's nearest edge, so a place inside the
cell is at distance 0. The cells searched around a place cover a box of the
same reach in metres at every latitude (east-west cells narrow towards the
poles), coarser cells when finer ones would be too many.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pygeohash

from recalld.model import Place

__all__ = [
    "POINT_PRECISION",
    "Extent",
    "cells_around",
    "distance_m",
    "extent_distances",
    "extent_of",
    "place_distance",
    "place_similarity",
    "search_precision",
]

EARTH_RADIUS_M = 6_371_008.8
# Approximate cell size (metres, the shorter side) of a geohash at each precision.
CELL_SIZE_M = {1: 5_000_000, 2: 625_000, 3: 156_000, 4: 19_500, 5: 4_890, 6: 610, 7: 153, 8: 19}
# Geohashes at least this long (cells at most ~38 x 19 m) are points; shorter ones areas.
POINT_PRECISION = 8
METRES_PER_DEGREE = EARTH_RADIUS_M * math.pi / 180
# At most this many cells are scanned around a place (coarser ones when finer would be more).
MAX_SEARCH_CELLS = 64


class Extent(NamedTuple):
    """A place as an area: its centre and half its height and width, in degrees (a point
    has both halves 0)."""

    lat: float
    lon: float
    lat_half: float = 0.0
    lon_half: float = 0.0


def extent_of(geohash: str | None, lat: float, lon: float) -> Extent:
    """The area a stored place stands for: its cell when its geohash is coarse, else the
    point (``lat``, ``lon``)."""
    if geohash and len(geohash) < POINT_PRECISION:
        cell = pygeohash.decode_exactly(geohash)
        return Extent(cell.latitude, cell.longitude, cell.latitude_error, cell.longitude_error)
    return Extent(lat, lon)


def extent_distances(
    cue: Extent,
    lats: np.ndarray,
    lons: np.ndarray,
    lat_halves: np.ndarray | float = 0.0,
    lon_halves: np.ndarray | float = 0.0,
) -> np.ndarray:
    """Great-circle metres between ``cue`` and each extent, edge to edge (0 when they
    overlap); between points it is the haversine distance."""
    lat_gap = np.maximum(0.0, np.abs(lats - cue.lat) - cue.lat_half - lat_halves)
    # Where the extents overlap north-south, the east-west gap is measured at the overlap's
    # latitude nearest a pole (the shortest way round); else at the facing edges.
    low = np.maximum(cue.lat - cue.lat_half, lats - lat_halves)
    high = np.minimum(cue.lat + cue.lat_half, lats + lat_halves)
    polar = np.where(np.abs(low) > np.abs(high), low, high)
    north = lats >= cue.lat
    cue_edge = np.where(
        lat_gap > 0, np.where(north, cue.lat + cue.lat_half, cue.lat - cue.lat_half), polar
    )
    other_edge = np.where(lat_gap > 0, np.where(north, lats - lat_halves, lats + lat_halves), polar)
    lon_delta = np.abs((lons - cue.lon + 180.0) % 360.0 - 180.0)
    lon_gap = np.clip(lon_delta - cue.lon_half - lon_halves, 0.0, 180.0)
    phi_a, phi_b = np.radians(cue_edge), np.radians(other_edge)
    h = (
        np.sin(np.radians(lat_gap) / 2) ** 2
        + np.cos(phi_a) * np.cos(phi_b) * np.sin(np.radians(lon_gap) / 2) ** 2
    )
    distance: np.ndarray = 2 * EARTH_RADIUS_M * np.arcsin(np.minimum(1.0, np.sqrt(h)))
    # An extent reaching a pole holds it: the other is at most as far as its way there.
    for pole in (90.0, -90.0):
        cue_holds = abs(cue.lat + np.sign(pole) * cue.lat_half) >= 90.0
        other_holds = np.abs(lats + np.sign(pole) * lat_halves) >= 90.0
        cue_way = abs(pole - np.clip(cue.lat + np.sign(pole) * cue.lat_half, -90.0, 90.0))
        other_way = np.abs(pole - np.clip(lats + np.sign(pole) * lat_halves, -90.0, 90.0))
        distance = np.where(
            other_holds, np.minimum(distance, cue_way * METRES_PER_DEGREE), distance
        )
        if cue_holds:
            distance = np.minimum(distance, other_way * METRES_PER_DEGREE)
    return distance


def place_distance(a: Place, b: Place) -> float:
    """Metres between two stored places, each a point or (a coarse geohash) its cell."""
    if len(a.geohash) >= POINT_PRECISION and len(b.geohash) >= POINT_PRECISION:
        return distance_m(a.lat, a.lon, b.lat, b.lon)
    area = extent_of(b.geohash, b.lat, b.lon)
    return float(
        extent_distances(
            extent_of(a.geohash, a.lat, a.lon),
            np.array([area.lat]),
            np.array([area.lon]),
            area.lat_half,
            area.lon_half,
        )[0]
    )


def cells_around(place: Extent, reach_m: float, finest: int) -> list[str]:
    """Geohash cells covering ``place`` and ``reach_m`` metres around it in every direction:
    at ``finest`` precision, or the finest coarser one that needs at most
    :data:`MAX_SEARCH_CELLS` cells (near a pole, where a degree of longitude is short)."""
    reach_lat = reach_m / METRES_PER_DEGREE
    south = max(-90.0, place.lat - place.lat_half - reach_lat)
    north = min(90.0, place.lat + place.lat_half + reach_lat)
    cosine = math.cos(math.radians(max(abs(south), abs(north))))
    around = cosine <= 0 or north >= 90.0 or south <= -90.0
    reach_lon = 180.0 if around else place.lon_half + reach_m / (METRES_PER_DEGREE * cosine)
    around = around or reach_lon >= 180.0
    for precision in range(finest, 0, -1):
        lon_cells, lat_cells = 2 ** ((5 * precision + 1) // 2), 2 ** (5 * precision // 2)
        width, height = 360.0 / lon_cells, 180.0 / lat_cells
        first_row = min(lat_cells - 1, int((south + 90.0) // height))
        last_row = min(lat_cells - 1, int((north + 90.0) // height))
        if around:
            columns = list(range(lon_cells))
        else:
            first = int((place.lon - reach_lon + 180.0) // width)
            last = int((place.lon + reach_lon + 180.0) // width)
            columns = sorted({column % lon_cells for column in range(first, last + 1)})
        if (last_row - first_row + 1) * len(columns) > MAX_SEARCH_CELLS and precision > 1:
            continue
        return sorted(
            {
                pygeohash.encode(
                    -90.0 + (row + 0.5) * height, -180.0 + (column + 0.5) * width, precision
                )
                for row in range(first_row, last_row + 1)
                for column in columns
            }
        )
    return []


def distance_m(lat_a: float, lon_a: float, lat_b: float, lon_b: float) -> float:
    """Great-circle (haversine) distance in metres."""
    phi_a, phi_b = math.radians(lat_a), math.radians(lat_b)
    d_phi = phi_b - phi_a
    d_lambda = math.radians(lon_b - lon_a)
    h = math.sin(d_phi / 2) ** 2 + math.cos(phi_a) * math.cos(phi_b) * math.sin(d_lambda / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(h)))


def place_similarity(distance: float, *, near_m: float = 50.0, scale_m: float = 1_000.0) -> float:
    """1 within ``near_m``; a Gaussian fall-off with ``scale_m`` beyond it."""
    if distance <= near_m:
        return 1.0
    return math.exp(-(((distance - near_m) / scale_m) ** 2))


def search_precision(reach_m: float) -> int:
    """The finest geohash precision whose cells are at least ``reach_m`` across."""
    for precision in range(8, 0, -1):
        if CELL_SIZE_M[precision] >= reach_m:
            return precision
    return 1
