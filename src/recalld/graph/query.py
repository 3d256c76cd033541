"""Graph queries for recall: the entities a text names, and a short walk from them.

The walk is spreading activation over the entity-memory graph, truncated at
two hops (one step of personalised PageRank from the seeds, then one more
through the entities co-mentioned with them, damped): a seed entity gives its
weight to each memory that mentions it; those memories pass a damped share
to the other entities they mention, which pass it on to *their* memories.
Entity weights fall with how many memories mention them (``1/log2(2 +
mentions)``), and an entity mentioned by more than ``fanout`` memories (a
chat's speaker, say) is never walked through: it connects everything, so it
says nothing. Every lookup is scoped to one namespace.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from recalld._text import STOPWORDS, WORD
from recalld.graph.names import entity_key
from recalld.store.graph import EntityRecord, GraphStore

__all__ = ["GraphWalk", "Seed", "WalkResult", "query_keys"]

MAX_NGRAM = 4
HOP_DECAY = 0.5
# The second hop is narrower than the first: it only refines, and it is where cost grows.
SECOND_HOP_MEMORIES = 50
SECOND_HOP_ENTITIES = 4
# Words that may appear inside a name but never make one alone.
_NEVER_ALONE = STOPWORDS | frozenset({"s", "t", "d", "ll", "re", "ve", "m"})


def _singular(word: str) -> str:
    """A naive English singular of a plural head noun (topics are stored lemmatised)."""
    lower = word.lower()
    if len(lower) > 4 and lower.endswith("ies"):
        return word[:-3] + "y"
    if len(lower) > 4 and lower.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if len(lower) > 3 and lower.endswith("s") and not lower.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def query_keys(text: str, max_ngram: int = MAX_NGRAM) -> list[str]:
    """Entity keys a text could name: its word n-grams (up to ``max_ngram``), normalised,
    each also with its last word made singular ("painting sunsets" names "painting sunset").

    An n-gram that starts or ends with a stop-word is skipped ("the", "is Kate").
    """
    words = WORD.findall(text)
    keys: list[str] = []
    for size in range(min(max_ngram, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            gram = words[start : start + size]
            if gram[0].lower() in _NEVER_ALONE or gram[-1].lower() in _NEVER_ALONE:
                continue
            for variant in (gram, [*gram[:-1], _singular(gram[-1])]):
                key = entity_key(" ".join(variant))
                if key and key not in keys:
                    keys.append(key)
    return keys


@dataclass(frozen=True)
class Seed:
    """An entity a walk starts from, with its weight."""

    entity_id: int
    key: str
    name: str
    weight: float


@dataclass
class WalkResult:
    """Graph scores of the memories reached (in [0, 1], best 1) and how they were reached."""

    scores: dict[int, float] = field(default_factory=dict)
    seeds: list[Seed] = field(default_factory=list)
    entities_of: dict[int, set[int]] = field(default_factory=dict)


def _weight(record: EntityRecord) -> float:
    return 1.0 / math.log2(2.0 + record.mentions)


class GraphWalk:
    """Seeds and walks for one graph store (see the module docstring)."""

    def __init__(self, graph: GraphStore, *, seed_limit: int = 8, fanout: int = 200) -> None:
        self._graph = graph
        self._seed_limit = seed_limit
        self._fanout = fanout

    def seeds(self, namespace: str, text: str, now: datetime) -> list[Seed]:
        """The namespace's entities named in ``text``, heaviest first (longer names win ties)."""
        keys = query_keys(text)
        found = self._graph.entities_by_key(namespace, keys, now)
        seeds = [
            Seed(record.id, record.key, record.name, _weight(record))
            for record in found.values()
            if 0 < record.mentions <= self._fanout
        ]
        seeds.sort(key=lambda seed: (-seed.weight, -len(seed.key), seed.key))
        return seeds[: self._seed_limit]

    def seeds_from_memories(
        self,
        namespace: str,
        ranked_seqs: Sequence[int],
        exclude: Iterable[int],
        now: datetime,
    ) -> list[Seed]:
        """Entities of the given memories (best first) not in ``exclude``: the second hop."""
        excluded = set(exclude)
        rank_of = {seq: rank for rank, seq in enumerate(ranked_seqs)}
        best: dict[int, int] = {}
        for mention in self._graph.entities_of(namespace, ranked_seqs):
            if mention.entity_id in excluded:
                continue
            rank = rank_of[mention.seq]
            best[mention.entity_id] = min(rank, best.get(mention.entity_id, rank))
        records = self._graph.entity_by_id(namespace, list(best), now)
        seeds = [
            Seed(record.id, record.key, record.name, _weight(record) / (1.0 + best[record.id]))
            for record in records.values()
            if 1 < record.mentions <= self._fanout
        ]
        seeds.sort(key=lambda seed: (-seed.weight, seed.key))
        return seeds[:SECOND_HOP_ENTITIES]

    def walk(
        self, namespace: str, seeds: Sequence[Seed], now: datetime, *, hops: int = 2
    ) -> WalkResult:
        """Spread the seeds' weight over ``hops`` hops; scores rescaled so the best is 1."""
        result = WalkResult(seeds=list(seeds))
        if not seeds:
            return result
        raw: defaultdict[int, float] = defaultdict(float)
        weights = {seed.entity_id: seed.weight for seed in seeds}
        per_entity = self._fanout if hops >= 2 else SECOND_HOP_MEMORIES
        first = self._graph.mentions(namespace, list(weights), now, per_entity)
        for mention in first:
            raw[mention.seq] += weights[mention.entity_id]
            result.entities_of.setdefault(mention.seq, set()).add(mention.entity_id)
        if hops >= 2 and raw:
            self._second_hop(namespace, raw, set(weights), now, result)
        best = max(raw.values(), default=0.0)
        if best > 0:
            result.scores = {seq: value / best for seq, value in raw.items()}
        return result

    def _second_hop(
        self,
        namespace: str,
        raw: defaultdict[int, float],
        seed_ids: set[int],
        now: datetime,
        result: WalkResult,
    ) -> None:
        reached = sorted(raw, key=lambda seq: -raw[seq])[:SECOND_HOP_MEMORIES]
        passed: defaultdict[int, float] = defaultdict(float)
        for mention in self._graph.entities_of(namespace, reached):
            if mention.entity_id not in seed_ids:
                passed[mention.entity_id] += HOP_DECAY * raw[mention.seq]
        if not passed:
            return
        records = self._graph.entity_by_id(namespace, list(passed), now)
        hop = {
            entity: value * _weight(records[entity])
            for entity, value in passed.items()
            if entity in records and 1 < records[entity].mentions <= self._fanout
        }
        chosen = sorted(hop, key=lambda entity: -hop[entity])[:SECOND_HOP_ENTITIES]
        for mention in self._graph.mentions(namespace, chosen, now, SECOND_HOP_MEMORIES):
            raw[mention.seq] += HOP_DECAY * hop[mention.entity_id]
            result.entities_of.setdefault(mention.seq, set()).add(mention.entity_id)
