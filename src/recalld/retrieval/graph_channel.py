"""The ``graph`` channel of hybrid recall: candidates and scores from the knowledge graph.

After keyword and vector candidates are fused, :meth:`GraphChannel.rerank`
walks the graph (:mod:`recalld.graph.query`) from the entities the query
names, then again from the entities of the best hits that the query did not
name (the second hop of a multi-hop question: it shares an entity with the
first hit, not words with the question). Memories reached get a graph score
in [0, 1]; those not found by another backend join as candidates (scope and
expiry re-checked) with backend ``graph``. The final score is
``(1 - w)·fused + w·graph`` with ``w`` = ``graph_recall_weight``.

:meth:`GraphChannel.features` gives the same signals per memory (entity
overlap with the query, graph score) for a feature-based reranker.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from recalld.graph.query import GraphWalk, Seed, WalkResult
from recalld.model import Memory
from recalld.retrieval.fusion import Candidate
from recalld.store.base import Scope, Store

__all__ = ["GraphChannel", "GraphFeatures"]

# How many of the fused best hits feed the second hop, and how much it counts.
SECOND_HOP_HITS = 5
SECOND_HOP_WEIGHT = 0.5
# Graph-only candidates kept (best graph score first): loading memories is the costly part.
NEW_CANDIDATES = 50


@dataclass(frozen=True)
class GraphFeatures:
    """Graph signals of one memory for one query (reranker features)."""

    entity_overlap: float
    """Share of the query's seed entities (by weight) that the memory mentions, in [0, 1]."""
    graph_score: float
    """The walk's score (query seeds, then the top hits' entities), in [0, 1]."""
    seed_entities: tuple[str, ...]
    """The names of the query's seed entities the memory mentions."""


class GraphChannel:
    """Graph candidates and scores over one store (see the module docstring)."""

    def __init__(self, store: Store, *, weight: float, seed_limit: int, fanout: int) -> None:
        self._store = store
        self.weight = weight
        self._walk = GraphWalk(store.graph, seed_limit=seed_limit, fanout=fanout)

    def _scores(
        self, scope: Scope, text: str, ranked_seqs: Sequence[int]
    ) -> tuple[dict[int, float], dict[int, GraphFeatures]]:
        scores: dict[int, float] = {}
        features: dict[int, GraphFeatures] = {}
        for namespace in scope.namespaces:
            seeds = self._walk.seeds(namespace, text)
            first = self._walk.walk(namespace, seeds, scope.now)
            top = list(ranked_seqs[:SECOND_HOP_HITS])
            hop_seeds = self._walk.seeds_from_memories(
                namespace, top, [seed.entity_id for seed in seeds]
            )
            second = self._walk.walk(namespace, hop_seeds, scope.now, hops=1)
            # The second hop discovers memories beside the top hits; it does not rank them.
            tops = set(top)
            discovered = {seq: v for seq, v in second.scores.items() if seq not in tops}
            for seq in set(first.scores) | set(discovered):
                value = first.scores.get(seq, 0.0) + SECOND_HOP_WEIGHT * discovered.get(seq, 0.0)
                scores[seq] = max(scores.get(seq, 0.0), min(1.0, value))
            features.update(_features(seeds, first, scores))
        return scores, features

    def rerank(
        self,
        scope: Scope,
        text: str,
        ranked: Sequence[Candidate],
        memories: dict[int, Memory],
    ) -> list[Candidate]:
        """Mix the graph score into fused candidates (adding graph-only ones); best first."""
        if self.weight <= 0 or not text.strip():
            return list(ranked)
        scores, _ = self._scores(scope, text, [item.seq for item in ranked])
        if not scores:
            return list(ranked)
        by_seq = {item.seq: item for item in ranked}
        new = sorted((seq for seq in scores if seq not in by_seq), key=lambda seq: -scores[seq])
        new = new[:NEW_CANDIDATES]
        visible = self._store.semantic.visible_memories(scope, new) if new else {}
        for seq, memory in visible.items():
            memories[seq] = memory
            by_seq[seq] = Candidate(seq=seq, backends=[], channels={"keyword": 0.0})
        for item in by_seq.values():
            graph = scores.get(item.seq, 0.0)
            if graph > 0:
                item.channels["graph"] = round(graph, 6)
                item.backends.append("graph")
            item.score = round((1.0 - self.weight) * item.score + self.weight * graph, 6)
        return sorted(by_seq.values(), key=lambda item: -item.score)

    def features(self, scope: Scope, text: str, seqs: Sequence[int]) -> dict[int, GraphFeatures]:
        """Graph features of ``seqs`` (ranked best first) for ``text``; zeros when unreached."""
        scores, features = self._scores(scope, text, seqs)
        empty = GraphFeatures(entity_overlap=0.0, graph_score=0.0, seed_entities=())
        return {
            seq: features.get(seq, GraphFeatures(0.0, round(scores.get(seq, 0.0), 6), ()))
            if seq in scores or seq in features
            else empty
            for seq in seqs
        }


def _features(
    seeds: Sequence[Seed], walk: WalkResult, scores: Mapping[int, float]
) -> dict[int, GraphFeatures]:
    total = sum(seed.weight for seed in seeds)
    by_id = {seed.entity_id: seed for seed in seeds}
    found: dict[int, GraphFeatures] = {}
    for seq, entity_ids in walk.entities_of.items():
        named = [by_id[entity] for entity in entity_ids if entity in by_id]
        overlap = sum(seed.weight for seed in named) / total if total else 0.0
        found[seq] = GraphFeatures(
            entity_overlap=round(overlap, 6),
            graph_score=round(scores.get(seq, 0.0), 6),
            seed_entities=tuple(sorted(seed.name for seed in named)),
        )
    return found
