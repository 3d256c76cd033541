"""Fusing keyword and vector candidates into one score in [0, 1] with per-channel parts.

The fused score is a convex combination of two normalised channels:

* ``keyword`` — the store's keyword similarity (half BM25 saturation, half
  relative to the query's best hit), 0 when the keyword index did not find it;
* ``text`` — the cosine of the memory's vector with the query's, min-max
  rescaled over this query's candidates (best candidate 1, the weakest vector
  candidate 0), so a "good" cosine means the same for every query and model.

``score = w·keyword + (1 - w)·text_normalised``, with ``w`` =
``keyword_weight``. A memory without a vector yet (still queued) is scored on
the keyword channel alone, so indexing never hides what keywords find.

Why not reciprocal-rank fusion: RRF throws the score margins away; on the
LoCoMo dev split it is *worse* than BM25 alone (R@5 .485 vs .509) because the
keyword ranking's large margins on rare names and content words carry most
of the signal. A score-normalised convex combination keeps them (see
``bench/RESULTS.md`` for the dev numbers and how the weight was chosen).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Candidate", "FusionParameters", "fuse"]


@dataclass(frozen=True)
class FusionParameters:
    """The knobs of :func:`fuse`."""

    keyword_weight: float = 0.7


@dataclass
class Candidate:
    """One memory found by at least one backend, with whatever each channel said."""

    seq: int
    keyword: float | None = None
    cosine: float | None = None
    backends: list[str] = field(default_factory=list)
    score: float = 0.0
    channels: dict[str, float] = field(default_factory=dict)


def _rescale(value: float, low: float, high: float) -> float:
    if high - low <= 1e-9:
        return 1.0
    return min(1.0, max(0.0, (value - low) / (high - low)))


def fuse(candidates: Mapping[int, Candidate], parameters: FusionParameters) -> list[Candidate]:
    """Score every candidate, best first (ties keep the order the backends gave)."""
    cosines = [item.cosine for item in candidates.values() if item.cosine is not None]
    high = max(cosines, default=0.0)
    low = min(cosines, default=0.0)
    weight = parameters.keyword_weight
    if not any(item.keyword is not None for item in candidates.values()):
        weight = 0.0  # vector-only recall: the score is the rescaled similarity
    for item in candidates.values():
        keyword = item.keyword or 0.0
        channels: dict[str, float] = {"keyword": round(keyword, 6)}
        if item.cosine is None:
            score = keyword
        else:
            channels["text"] = round(max(0.0, item.cosine), 6)
            score = weight * keyword + (1.0 - weight) * _rescale(item.cosine, low, high)
        item.score = round(min(1.0, max(0.0, score)), 6)
        item.channels = channels
    return sorted(candidates.values(), key=lambda item: -item.score)
