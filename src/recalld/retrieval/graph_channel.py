"""The ``graph`` channel of recall: candidates and features from the knowledge graph.

:meth:`GraphChannel.features` walks the graph (:mod:`recalld.graph.query`) from
the entities the query names: memories reached get a graph score in [0, 1]
and the share of the query's entities they mention. The retriever adds the
memories reached to the candidate pool (backend ``graph``) and gives both
values to the reranker as features (:mod:`recalld.retrieval.features`), which
decides how much they count; the graph never overrides the reranker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recalld.graph.query import GraphWalk, Seed, WalkResult
from recalld.store.base import Scope, Store

__all__ = ["GraphChannel", "GraphFeatures"]

# Graph-only candidates kept (best graph score first): loading memories is the costly part.
NEW_CANDIDATES = 50


@dataclass(frozen=True, slots=True)
class GraphFeatures:
    """Graph signals of one memory for one query (reranker features)."""

    entity_overlap: float
    """Share of the query's seed entities (by weight) that the memory mentions, in [0, 1]."""
    graph_score: float
    """The walk's score from the query's entities, in [0, 1]."""
    seed_entities: tuple[str, ...]
    """The names of the query's seed entities the memory mentions."""


class GraphChannel:
    """Graph candidates and scores over one store (see the module docstring)."""

    def __init__(self, store: Store, *, seed_limit: int, fanout: int) -> None:
        self._store = store
        self._walk = GraphWalk(store.graph, seed_limit=seed_limit, fanout=fanout)

    def features(self, scope: Scope, text: str) -> dict[int, GraphFeatures]:
        """The memories the query's entities reach, with their graph features (first hop)."""
        found: dict[int, GraphFeatures] = {}
        if not text.strip():
            return found
        for namespace in scope.namespaces:
            seeds = self._walk.seeds(namespace, text, scope.now)
            if not seeds:
                continue
            walk = self._walk.walk(namespace, seeds, scope.now)
            for seq, item in _features(seeds, walk).items():
                if seq not in found or item.graph_score > found[seq].graph_score:
                    found[seq] = item
        return found


def _features(seeds: Sequence[Seed], walk: WalkResult) -> dict[int, GraphFeatures]:
    """The features of every memory the walk scored (a few hundred per query: kept lean)."""
    total = sum(seed.weight for seed in seeds)
    by_id = {seed.entity_id: seed for seed in seeds}
    entities_of = walk.entities_of
    found: dict[int, GraphFeatures] = {}
    for seq, value in walk.scores.items():
        named = [by_id[entity] for entity in entities_of.get(seq, ()) if entity in by_id]
        if not named:
            found[seq] = GraphFeatures(0.0, round(value, 6), ())
            continue
        overlap = sum(seed.weight for seed in named) / total if total else 0.0
        found[seq] = GraphFeatures(
            round(overlap, 6), round(value, 6), tuple(sorted(seed.name for seed in named))
        )
    return found
