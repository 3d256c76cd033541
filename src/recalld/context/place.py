"""Place similarity from great-circle distance, and geohash neighbourhoods for candidates.

Scale (defaults; configurable): within ``near_m`` (50 m, the same building) the
similarity is 1; beyond it, it falls as ``exp(-((d - near_m) / scale_m)^2)`` with
``scale_m`` = 1 km: about 0.8 at 500 m, 0.4 at 1 km, 0.02 at 2 km and ~0 from
3 km on.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pygeohash

__all__ = [
    "distance_m",
    "neighbourhood",
    "place_similarities",
    "place_similarity",
    "search_precision",
]

EARTH_RADIUS_M = 6_371_008.8
# Approximate cell size (metres, the shorter side) of a geohash at each precision.
CELL_SIZE_M = {1: 5_000_000, 2: 625_000, 3: 156_000, 4: 19_500, 5: 4_890, 6: 610, 7: 153, 8: 19}


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


def place_similarities(
    lat: float,
    lon: float,
    lats: np.ndarray,
    lons: np.ndarray,
    *,
    near_m: float = 50.0,
    scale_m: float = 1_000.0,
) -> np.ndarray:
    """:func:`place_similarity` of one point against many (vectorised haversine)."""
    phi, phis = np.radians(lat), np.radians(lats)
    d_phi = phis - phi
    d_lambda = np.radians(lons - lon)
    h = np.sin(d_phi / 2) ** 2 + np.cos(phi) * np.cos(phis) * np.sin(d_lambda / 2) ** 2
    distance = 2 * EARTH_RADIUS_M * np.arcsin(np.minimum(1.0, np.sqrt(h)))
    beyond = np.maximum(0.0, distance - near_m)
    similarity: np.ndarray = np.exp(-((beyond / scale_m) ** 2))
    return similarity


def search_precision(reach_m: float) -> int:
    """The finest geohash precision whose cells are at least ``reach_m`` across."""
    for precision in range(8, 0, -1):
        if CELL_SIZE_M[precision] >= reach_m:
            return precision
    return 1


Direction = Literal["top", "bottom", "left", "right"]


def _adjacent(cell: str, direction: Direction) -> str | None:
    """The neighbouring cell, or None beyond a pole (there is no cell north of the top row)."""
    try:
        adjacent: str = pygeohash.get_adjacent(cell, direction)
    except ValueError:
        return None
    return adjacent


def _around(cell: str) -> set[str]:
    """The cell and its (up to eight) neighbours; rows past a pole are left out."""
    around = {cell}
    for row in (cell, _adjacent(cell, "top"), _adjacent(cell, "bottom")):
        if row is None:
            continue
        around.add(row)
        sides: tuple[Direction, Direction] = ("left", "right")
        for direction in sides:
            side = _adjacent(row, direction)
            if side is not None:
                around.add(side)
    return around


def neighbourhood(geohash: str, precision: int, rings: int = 1) -> list[str]:
    """The cell of ``geohash`` at ``precision`` and ``rings`` rings of cells around it.

    One ring is the 3x3 block, two rings the 5x5 block: geohash prefixes to scan
    with index range queries instead of the whole table.
    """
    cells = {geohash[:precision]}
    for _ in range(rings):
        cells = set().union(*(_around(cell) for cell in cells))
    return sorted(cells)
