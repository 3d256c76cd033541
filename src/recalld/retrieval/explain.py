""" "Why (not) recalled?": where one memory stands for one query, stage by stage.

The service resolves the memory in the caller's namespace first (another
namespace's memory is "not visible", exactly like an unknown id); this module
then checks the filters and expiry against it, builds the query's candidate
pool with the memory scored as an extra candidate, and walks the stages recall
applies: candidate pool, threshold, near-duplicate collapse, limit.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from recalld.errors import NotFoundError
from recalld.model import ExplainStage, Explanation, Memory
from recalld.retrieval.features import FEATURES
from recalld.retrieval.hybrid import VECTOR_UNAVAILABLE, HybridRetriever
from recalld.retrieval.pool import Mode, Pool, channels_of, features_of, tie_order
from recalld.store.base import Scope

__all__ = ["excluded_by", "explain"]


def excluded_by(memory: Memory, scope: Scope) -> list[str]:
    """The filters (by field name) and states (``expired``) that hide ``memory`` from ``scope``."""
    reasons = []
    if (
        not scope.include_expired
        and memory.expires_at is not None
        and memory.expires_at <= scope.now
    ):
        reasons.append("expired")
    if scope.kind is not None and unicodedata.normalize("NFC", memory.kind) != scope.kind:
        reasons.append("kind")
    if scope.category is not None and memory.category != scope.category:
        reasons.append("category")
    if scope.speaker is not None and memory.speaker != scope.speaker:
        reasons.append("speaker")
    if scope.has_key is not None and (memory.key is not None) != scope.has_key:
        reasons.append("has_key")
    if scope.tags_any and not set(scope.tags_any) & set(memory.tags):
        reasons.append("tags_any")
    if scope.tags_all and not set(scope.tags_all) <= set(memory.tags):
        reasons.append("tags_all")
    for name, value, lower in (
        ("since", memory.at, True),
        ("until", memory.at, False),
        ("created_since", memory.created_at, True),
        ("created_until", memory.created_at, False),
    ):
        bound = getattr(scope, name)
        if bound is None:
            continue
        if value is None or (value < bound if lower else value >= bound):
            reasons.append(name)
    return reasons


def _not_in_pool_reason(
    memory: Memory,
    pool: Pool,
    requested: Mode,
    depths: tuple[int, int, int],
    shares_a_word: bool,
    in_period: bool,
) -> str:
    """Why neither channel put ``memory`` among the candidates, naming only the searches
    that ran: a channel this query never asked found nothing because it was not asked."""
    keyword_depth, vector_depth, period_depth = depths
    parts = []
    if "keyword" not in pool.asked:
        if requested == "vector":
            parts.append("its words are not matched in vector mode")
        else:
            parts.append("the query holds only stop words, so its words are not matched")
    elif not shares_a_word:
        parts.append("it shares no word with the query")
    else:
        parts.append(f"it is not among the {keyword_depth} best keyword matches")
    if "vector" not in pool.asked:
        if requested == "keyword":
            parts.append("vectors are not searched in keyword mode")
        else:
            parts.append("no embedder is configured, so no vectors are searched")
    elif pool.vector_unavailable:
        parts.append("embedding the query failed, so no vectors were searched")
    elif memory.index_state == "queued":
        parts.append("it has no vector yet (still queued for embedding)")
    elif memory.index_state == "failed":
        parts.append("embedding it failed, so it has no vector")
    else:
        parts.append(f"it is not among the {vector_depth} nearest vectors")
        if in_period:
            parts.append(f"nor among the {period_depth} nearest of the period the query names")
    return "not in the candidate pool: " + "; ".join(parts)


def explain(
    retriever: HybridRetriever,
    memory: Memory,
    scope: Scope,
    query: str,
    words: Sequence[str],
    mode: Mode,
    min_score: float,
    limit: int,
) -> Explanation:
    """Explain how recall of ``query`` under ``scope`` treats ``memory`` (see the module)."""
    hidden = excluded_by(memory, scope)
    if "expired" in hidden:
        # What an expired memory said is never shown: not even as its score against a
        # query, which would tell a guess at its words from a wrong one.
        return Explanation(
            memory_id=memory.id,
            query=query,
            stage="excluded",
            reason="hidden by " + ", ".join(hidden) + " (an expired memory is not scored)",
            excluded_by=hidden,
            index_state=memory.index_state,
            score=0.0,
            min_score=min_score,
            limit=limit,
            model="",
        )
    pool, index = retriever.pool(scope, query, words, mode, extra=[memory.seq], limit=limit)
    position = pool.index_of(memory.seq)
    if position is None:
        # The memory was read before the pool: another process (another server on one
        # PostgreSQL, another process on one SQLite file) forgot it in between.
        raise NotFoundError(f"memory {memory.id!r} was forgotten while it was explained")
    found_by = pool.backends[position]
    score = float(pool.scores[position])
    extra = [] if found_by else [position]
    selection = retriever.select(pool, index, min_score, limit, leave_out=extra)
    # The rank is the place recall gives it: a near-duplicate collapsed into another
    # hit takes no place, so counting it would put a memory returned third at rank 4.
    # Ties go as recall sends them (the older memory, by seq, first): a memory the limit
    # left out behind an equal hit is not ranked beside it. One recall did not find (an
    # extra read for explain) would come after every tied candidate it did.
    tied = pool.scores == score
    tied_before = tied if not found_by else tied & (tie_order(pool) < memory.seq)
    above = (pool.scores > score) | tied_before
    above[position] = False
    above[list(selection.collapsed_into)] = False
    rank = (
        selection.kept.index(position) + 1 if position in selection.kept else 1 + int(above.sum())
    )
    duplicate_of = None
    stage: ExplainStage
    if hidden:
        stage = "excluded"
        reason = "hidden by " + ", ".join(hidden)
    elif not found_by:
        stage = "not_in_pool"
        candidate = pool.candidates[position]
        depths = retriever.depths
        reason = _not_in_pool_reason(
            memory,
            pool,
            mode,
            (depths.keyword, depths.vector, retriever.period_depth(pool.period_only, limit)),
            candidate.keyword.matched_share > 0,
            candidate.in_period == 1.0
            and pool.period is not None
            and retriever.searches_period(pool.period),
        )
    elif score < min_score:
        stage = "below_threshold"
        reason = f"scored {score:.4f}, under min_score {min_score:g}"
    elif position in selection.collapsed_into:
        stage = "collapsed"
        duplicate_of = pool.rows[selection.collapsed_into[position]].id
        reason = f"a near-duplicate of {duplicate_of}, which is returned in its place"
    elif position in selection.kept:
        stage = "returned"
        reason = f"returned at position {selection.kept.index(position) + 1}"
    else:
        stage = "beyond_limit"
        reason = f"ranked after the {limit} hits the limit keeps"
    if found_by and pool.vector_unavailable:
        # As its hit would say (backends): scored without the vectors, which a recall
        # once the embedder is back may rank otherwise.
        found_by = [*found_by, VECTOR_UNAVAILABLE]
        reason += "; embedding the query failed, so no vectors were searched"
    features = features_of(pool, position)
    model = retriever.reranker.models.get(pool.models[position])
    contributions: dict[str, float] = {}
    if model is not None:
        shares = model.contributions(pool.features[position : position + 1])[0]
        contributions = {
            name: round(float(value), 6)
            for name, value in zip(model.features, shares, strict=True)
            if name in features  # a missing feature (NaN) contributes nothing
        }
    return Explanation(
        memory_id=memory.id,
        query=query,
        stage=stage,
        reason=reason,
        excluded_by=hidden,
        index_state=memory.index_state,
        found_by=list(found_by),
        rank=rank,
        candidates=len(pool.rows) - len(extra),
        score=score,  # rounded by the pool
        min_score=min_score,
        limit=limit,
        duplicate_of=duplicate_of,
        turn_of=_turn_of(pool, memory.seq),
        model=pool.models[position],
        channels=channels_of(pool, position),
        features={name: features[name] for name in FEATURES if name in features},
        contributions=contributions,
    )


def _turn_of(pool: Pool, seq: int) -> str | None:
    """The id of the memory whose turn memory ``seq`` took its features from, if any."""
    start = pool.turns.get(seq)
    if start is None:
        return None
    position = pool.index_of(start)
    return None if position is None else pool.rows[position].id
