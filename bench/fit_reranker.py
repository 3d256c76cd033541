"""Fit recall's reranker on a LoCoMo-format file, leave-one-conversation-out, and write it.

What it does (``bench/locomo.py --cv`` runs the same code):

1. Ingests every conversation into its own namespace exactly as
   ``bench/locomo.py`` does (speaker, source = session, ``at`` = session time +
   turn index) and, when the file has them, its observations as plain notes
   into a namespace of their own (``locomo.load_observations``: no speaker, no
   source), and embeds both with the chosen embedder. With ``--chats`` (by
   default the hand-written chats of ``chat_probe.FITTED_CHATS``; ``--chats ''``
   for none) it writes those chats too (``chat_probe.as_conversation``): the
   turns' models are fitted on them as on the file's conversations, each chat a
   fold of its own; ``chat_probe.NEVER_FITTED`` are refused.
2. For every question with evidence, builds the candidate pool recall builds
   (``HybridRetriever.pool``: keyword and vector candidates, every feature of
   ``recalld.retrieval.features``) in each channel set (keyword, vector,
   hybrid, and hybrid+graph: hybrid with the knowledge graph's candidates and
   features, as recall has them with ``RECALLD_GRAPH_RECALL=true``); a
   candidate's label is whether it is one of the question's evidence turns
   (for notes: one of the facts citing an evidence turn; for a chat, also a
   message its question lists as answering as well). Categories 1-4 train;
   category 5 (adversarial) does not.
3. Fits one logistic regression per channel set and *regime* (turns; and notes,
   with only the features a note has: the models' ``/notes`` twins, see
   ``recalld.retrieval.rerank``; scikit-learn, standardised features, L2), then
   the weight of each query-level feature (``QUERY_FEATURES``) with that model
   held fixed (a second stage, see :func:`add_query_features`),
   first once per held-out conversation on the other ones
   (leave-one-conversation-out: the figures ``--cv`` reports), then once on
   every conversation (the shipped coefficients).
4. Scores each held-out pool with its fold's model as recall scores it
   (``pool.score_pool``: a piece of a turn typed in several messages may score
   as its turn) and ranks it through the runtime's own selection
   (``HybridRetriever.select``: threshold, near-duplicate collapse, limit), so
   the cross-validated figures are what recall would return.
5. With ``--write``, stores the models and the BM25F parameters in
   ``src/recalld/retrieval/data/reranker.json`` (or ``--out``), with the
   cross-validated figures in its ``info``.

The pools (steps 1-2) are built by ``bench/reranker_pools.py``; this script fits,
cross-validates, reports and writes. Never commit the data: only coefficients
(and figures) leave this script.

Run it from the repository root (``pip install -e '.[bench]'`` for scikit-learn)::

    .venv/bin/python bench/fit_reranker.py --data ../shared/bench/locomo/dev.json \\
        [--embedder minilm|hashing] [--write] [--out PATH] [--db-dir DIR] \\
        [--no-notes | --notes-only] [--roles] [--chats NAME,...]

Progress goes to stderr; the last line of stdout is one JSON object: the
cross-validated figures per channel set and the fitted models.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chat_probe import FITTED_CHATS, NEVER_FITTED, as_conversation, chat_names
from locomo import (
    CATEGORIES,
    KS,
    OVERALL_CATEGORIES,
    Conversation,
    average_metrics,
    ingest,
    ranking_metrics,
    speakers_as_roles,
)
from recalld import MemoryService
from recalld.retrieval.features import FEATURES
from recalld.retrieval.hybrid import HybridRetriever
from recalld.retrieval.keyword import KeywordParameters
from recalld.retrieval.pool import score_pool
from recalld.retrieval.rerank import NOTES_SUFFIX, Channels, LogisticModel, Reranker
from reranker_pools import (
    CHANNEL_SETS,
    NEGATIVES,
    TRAINED_WITH,
    ChannelData,
    ChannelScores,
    QueryPool,
    Regime,
    Scores,
    build_notes,
    build_service,
    parameters_data,
    pool_all,
    regime_view,
)

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src/recalld/retrieval/data/reranker.json"

KEYWORD_FEATURES = (
    "keyword",
    "keyword_log_raw",
    "keyword_share",
    "keyword_rank",
    "keyword_gap",
    "previous_keyword",
    "next_keyword",
    "source_keyword_gap",
    "previous_question_keyword",
)
VECTOR_FEATURES = (
    "cosine",
    "cosine_rank",
    "cosine_gap",
    "previous_cosine",
    "next_cosine",
    "source_cosine_gap",
    "previous_question_cosine",
)
SHARED_FEATURES = (
    "question",
    "previous_question",
    "next_question",
    "speaker_named",
    "other_speaker_named",
    "query_time",
    "memory_time",
    "time_match",
    # in_period and told_after as one weight (see features.py); the two stay features of
    # their own for explain and the hits' period channel.
    "near_period",
    "period_crowd",
    "stated_in_period",
    "query_terms",
    "memory_terms",
)
# What the knowledge graph adds (hybrid recall only: the graph channel runs there);
# 0 for a candidate the graph did not reach, and for every candidate without a graph.
GRAPH_FEATURES = ("graph_score", "entity_overlap")
MODEL_FEATURES: dict[Channels, tuple[str, ...]] = {
    "keyword": KEYWORD_FEATURES + SHARED_FEATURES,
    "vector": VECTOR_FEATURES + SHARED_FEATURES,
    "hybrid": KEYWORD_FEATURES + VECTOR_FEATURES + SHARED_FEATURES,
    "hybrid+graph": KEYWORD_FEATURES + VECTOR_FEATURES + SHARED_FEATURES + GRAPH_FEATURES,
}
# What a memory without a speaker and a source (a plain note) never has: neighbours in a
# source, a session, a speaker. The notes twins leave these features out.
STRUCTURE_FEATURES = frozenset(
    (
        "previous_keyword",
        "next_keyword",
        "source_keyword_gap",
        "previous_question_keyword",
        "previous_cosine",
        "next_cosine",
        "source_cosine_gap",
        "previous_question_cosine",
        "previous_question",
        "next_question",
        "speaker_named",
        "other_speaker_named",
    )
)
NOTES_FEATURES: dict[Channels, tuple[str, ...]] = {
    mode: tuple(name for name in features if name not in STRUCTURE_FEATURES)
    for mode, features in MODEL_FEATURES.items()
}
# Features of the query alone (the same for every candidate of a pool), fitted in a second
# stage: see add_query_features.
QUERY_FEATURES = ("unseen_name",)
REGULARISATION = 1.0
EVALUATION_LIMIT = max(KS)
# The default min_score is the largest reported threshold costing at most this much R@5.
R5_LOSS = 0.01
# Thresholds at which the abstention trade-off is reported.
THRESHOLDS = (0.0, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2)


def training_pools(
    data: ChannelData, held_out: int | None, regime: Regime = "turns"
) -> list[QueryPool]:
    """The pools a model of ``regime`` trains on (those of the regimes ``TRAINED_WITH`` it:
    the turns' models on the chats too): questions of categories 1-4 and the foreign
    negatives, none of which involves the ``held_out`` conversation."""
    regimes = TRAINED_WITH[regime]
    questions = [
        item
        for item in data.questions
        if item.category in OVERALL_CATEGORIES
        and item.conversation != held_out
        and item.regime in regimes
    ]
    foreign = [
        item
        for item in data.foreign
        if held_out not in (item.conversation, item.origin) and item.regime in regimes
    ]
    return questions + foreign


def fit_model(pools: Sequence[QueryPool], features: Sequence[str]) -> dict[str, Any]:
    """A standardised L2 logistic regression over ``features`` of the pools' candidates,
    then the query-level features' weights on top of it (:func:`add_query_features`)."""
    from sklearn.linear_model import LogisticRegression

    columns = [FEATURES.index(name) for name in features]
    matrix = np.concatenate([item.pool.features[:, columns] for item in pools])
    labels = np.concatenate([item.labels for item in pools])
    mean = np.nanmean(matrix, axis=0)
    if np.isnan(mean).any():
        missing = [name for name, value in zip(features, mean, strict=True) if np.isnan(value)]
        raise ValueError(f"no training row has the features {missing}")
    matrix = np.where(np.isnan(matrix), mean, matrix)
    scale = matrix.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    model = LogisticRegression(C=REGULARISATION, max_iter=5000)
    model.fit((matrix - mean) / scale, labels)
    base = {
        "features": list(features),
        "mean": [round(float(value), 8) for value in mean],
        "scale": [round(float(value), 8) for value in scale],
        "coef": [round(float(value), 8) for value in model.coef_[0]],
        "intercept": round(float(model.intercept_[0]), 8),
    }
    return add_query_features(pools, base, QUERY_FEATURES)


def add_query_features(
    pools: Sequence[QueryPool], base: dict[str, Any], names: Sequence[str]
) -> dict[str, Any]:
    """``base`` with the query-level features ``names`` added, each weight fitted by L2
    logistic regression with ``base``'s logit held fixed as an offset (mean 0, scale 1:
    the weight is the change of log-odds when the feature is 1; NaN counts as 0).

    Why a second stage: such a feature moves every candidate of a pool alike. Fitted
    with the rest, it explains the foreign negatives (whose questions name people the
    conversation never mentions) on its own, and the rest of the model stops pushing
    down pools with no good match at all: on LoCoMo dev (leave one conversation out)
    the joint fit left 87 % of foreign questions without a hit at the default
    threshold, but only 54 % of unrelated ones (89 % before); held fixed, the model
    keeps what it learnt and the feature only adds its own evidence (85 % and 92 %).
    """
    from scipy.optimize import minimize

    if not names:
        return base
    model = LogisticModel.from_data("base", base)
    matrix = np.concatenate([item.pool.features for item in pools])
    labels = np.concatenate([item.labels for item in pools])
    offset = model.intercept + model.contributions(matrix).sum(axis=1)
    values = matrix[:, [FEATURES.index(name) for name in names]]
    values = np.where(np.isnan(values), 0.0, values)
    penalty = 1.0 / REGULARISATION

    def loss(weights: npt.NDArray[np.float64]) -> tuple[float, npt.NDArray[np.float64]]:
        logits = offset + values @ weights
        probabilities = 1.0 / (1.0 + np.exp(-logits))
        value = np.sum(np.logaddexp(0.0, logits) - labels * logits)
        gradient = values.T @ (probabilities - labels) + penalty * weights
        return float(value + 0.5 * penalty * weights @ weights), gradient

    fitted = minimize(loss, np.zeros(len(names)), jac=True, method="L-BFGS-B")
    if not fitted.success:
        raise RuntimeError(f"fitting the query-level features {list(names)}: {fitted.message}")
    return {
        "features": [*base["features"], *names],
        "mean": [*base["mean"], *([0.0] * len(names))],
        "scale": [*base["scale"], *([1.0] * len(names))],
        "coef": [*base["coef"], *(round(float(value), 8) for value in fitted.x)],
        "intercept": base["intercept"],
    }


def fit_models(
    data: dict[Channels, ChannelData], held_out: int | None
) -> dict[str, dict[str, Any]]:
    """One model per channel set (keyed by it), and its notes twin (keyed by it plus
    ``/notes``) when there are note pools, trained without ``held_out`` (None: on
    everything)."""
    models: dict[str, dict[str, Any]] = {}
    for mode, channel in data.items():
        models[mode] = fit_model(training_pools(channel, held_out), MODEL_FEATURES[mode])
        notes = training_pools(channel, held_out, "notes")
        if notes:
            models[mode + NOTES_SUFFIX] = fit_model(notes, NOTES_FEATURES[mode])
    return models


def reranker_data(
    parameters: KeywordParameters,
    embedder: str | None,
    models: dict[str, dict[str, Any]],
    info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The reranker file's JSON: BM25F parameters and the models keyed as the runtime wants
    (``keyword`` and ``<embedder>/<channels>``, each with its ``/notes`` twin)."""
    keyed: dict[str, Any] = {}
    for name, model in models.items():
        notes = name.endswith(NOTES_SUFFIX)
        channels = name.removesuffix(NOTES_SUFFIX)
        suffix = NOTES_SUFFIX if notes else ""
        if channels == "keyword" or embedder is None:
            keyed["keyword" + suffix] = model
        else:
            keyed[f"{embedder}/{channels}{suffix}"] = model
    return {
        "version": 1,
        "info": info or {},
        "fallback_embedder": embedder or "",
        "keyword_parameters": parameters_data(parameters),
        "models": keyed,
    }


def _score(reranker: Reranker, item: QueryPool, embedder: str | None) -> Any:
    """``item``'s pool scored by ``reranker`` as recall scores it (``score_pool``: a piece
    of a turn typed in several messages may score as its turn)."""
    scoring = item.pool.scoring
    if scoring is None:
        raise ValueError(f"the pool of {item.question!r} keeps nothing to score it again")
    scores, _, _, _ = score_pool(scoring, reranker, embedder)
    return scores


def cross_validate(
    data: dict[Channels, ChannelData],
    embedder: str | None,
    parameters: KeywordParameters,
    folds: int,
    twins: bool = True,
) -> dict[Channels, ChannelScores]:
    """Every pool scored by the models fitted without its conversation (without their
    notes twins unless ``twins``: then the turns' models score the notes too)."""
    scored = {
        mode: ChannelScores(
            questions=[np.zeros(0)] * len(channel.questions),
            foreign=[np.zeros(0)] * len(channel.foreign),
            unrelated=[np.zeros(0)] * len(channel.unrelated),
        )
        for mode, channel in data.items()
    }
    for held_out in range(folds):
        models = fit_models(data, held_out)
        if not twins:
            models = {name: model for name, model in models.items() if NOTES_SUFFIX not in name}
        reranker = Reranker(reranker_data(parameters, embedder, models))
        for mode, channel in data.items():
            for name in ("questions", "foreign", "unrelated"):
                items: list[QueryPool] = getattr(channel, name)
                targets: Scores = getattr(scored[mode], name)
                for position, item in enumerate(items):
                    if item.conversation == held_out:
                        targets[position] = _score(reranker, item, embedder)
    return scored


def rank_pool(
    retriever: HybridRetriever, item: QueryPool, scores: npt.NDArray[np.float64], min_score: float
) -> list[str]:
    """The dia_ids recall would return for ``item`` scored with ``scores``."""
    item.pool.scores = scores
    selection = retriever.select(item.pool, retriever.index(), min_score, EVALUATION_LIMIT)
    return [item.dia_ids[position] for position in selection.kept]


def evaluate(
    retriever: HybridRetriever, pools: Sequence[QueryPool], scores: Scores, min_score: float
) -> dict[str, Any]:
    """Per-category and overall (categories 1-4) metrics of the scored pools, pool recall,
    and the share of questions left without any hit."""
    by_category: dict[str, list[dict[str, float]]] = {name: [] for name in CATEGORIES}
    pool_recall: dict[str, list[float]] = {name: [] for name in CATEGORIES}
    empty: dict[str, int] = {name: 0 for name in CATEGORIES}
    for item, item_scores in zip(pools, scores, strict=True):
        ranked = rank_pool(retriever, item, item_scores, min_score)
        by_category[item.category].append(ranking_metrics(ranked, item.gold))
        pool_recall[item.category].append(len(set(item.dia_ids) & set(item.gold)) / len(item.gold))
        empty[item.category] += int(not ranked)
    overall = [row for name in OVERALL_CATEGORIES for row in by_category[name]]
    overall_pool = [value for name in OVERALL_CATEGORIES for value in pool_recall[name]]

    def mean(values: Sequence[float]) -> float:
        return round(float(np.mean(values)), 4) if values else 0.0

    return {
        "overall": average_metrics(overall),
        "by_category": {name: average_metrics(rows) for name, rows in by_category.items()},
        "pool_recall": {
            "overall": mean(overall_pool),
            **{name: mean(values) for name, values in pool_recall.items()},
        },
        "pool_size_mean": round(float(np.mean([len(item.pool.rows) for item in pools])), 1),
        "no_hits": {
            name: round(empty[name] / len(by_category[name]), 4) if by_category[name] else 0.0
            for name in CATEGORIES
        },
        "no_hits_overall": (
            round(sum(empty[name] for name in OVERALL_CATEGORIES) / len(overall), 4)
            if overall
            else 0.0
        ),
    }


def _empty_share(
    retriever: HybridRetriever,
    items: Sequence[QueryPool],
    scores: Scores,
    threshold: float,
    category: str | None = None,
) -> float:
    """The share of ``items`` (of ``category`` only, when given) recall leaves empty."""
    empties = [
        not rank_pool(retriever, item, values, threshold)
        for item, values in zip(items, scores, strict=True)
        if category is None or item.category == category
    ]
    return round(float(np.mean(empties)), 4) if empties else 0.0


def abstention(
    retriever: HybridRetriever, channel: ChannelData, scores: ChannelScores
) -> list[dict[str, float]]:
    """At each threshold: R@5 and All@10 (categories 1-4) and the share of questions with
    no hit at all: categories 1-4, category 5, foreign and unrelated questions, and the
    questions about something never said (a chat's) when there are any."""
    unanswerable = any(item.category == "unanswerable" for item in channel.unrelated)
    rows = []
    for threshold in THRESHOLDS:
        answered = evaluate(retriever, channel.questions, scores.questions, threshold)
        row = {
            "min_score": threshold,
            "R@5": answered["overall"]["R@5"],
            "All@10": answered["overall"]["All@10"],
            "no_hits_categories_1_4": answered["no_hits_overall"],
            "no_hits_category_5": answered["no_hits"]["5"],
            "no_hits_foreign": _empty_share(retriever, channel.foreign, scores.foreign, threshold),
            "no_hits_unrelated": _empty_share(
                retriever, channel.unrelated, scores.unrelated, threshold, "unrelated"
            ),
        }
        if unanswerable:
            row["no_hits_unanswerable"] = _empty_share(
                retriever, channel.unrelated, scores.unrelated, threshold, "unanswerable"
            )
        rows.append(row)
    return rows


CALIBRATION_BINS = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 1.0)


def calibration(channel: ChannelData, scores: ChannelScores) -> dict[str, Any]:
    """How often candidates of each score band are evidence (questions of categories 1-4
    and foreign questions, out of fold), and the expected calibration error."""
    pools = [
        (item, values)
        for item, values in zip(channel.questions, scores.questions, strict=True)
        if item.category in OVERALL_CATEGORIES
    ] + list(zip(channel.foreign, scores.foreign, strict=True))
    predicted = np.concatenate([values for _, values in pools])
    labels = np.concatenate([item.labels for item, _ in pools])
    bins = []
    error = 0.0
    for low, high in itertools.pairwise(CALIBRATION_BINS):
        inside = (predicted >= low) & ((predicted < high) | (high == CALIBRATION_BINS[-1]))
        if not inside.any():
            continue
        mean_score = float(predicted[inside].mean())
        share = float(labels[inside].mean())
        error += inside.sum() / predicted.size * abs(mean_score - share)
        bins.append(
            {
                "scores": [low, high],
                "candidates": int(inside.sum()),
                "mean_score": round(mean_score, 4),
                "evidence_share": round(share, 4),
            }
        )
    return {
        "candidates": int(predicted.size),
        "evidence_share": round(float(labels.mean()), 5),
        "expected_calibration_error": round(error, 5),
        "bins": bins,
    }


def choose_min_score(rows: Sequence[dict[str, float]]) -> float:
    """The largest reported threshold that costs at most :data:`R5_LOSS` of R@5."""
    base = rows[0]["R@5"]
    allowed = [row["min_score"] for row in rows if base - row["R@5"] <= R5_LOSS]
    return max(allowed)


def _figures(
    retriever: HybridRetriever, channel: ChannelData, scores: ChannelScores
) -> dict[str, Any]:
    trade_off = abstention(retriever, channel, scores)
    chosen = choose_min_score(trade_off)
    return {
        **evaluate(retriever, channel.questions, scores.questions, 0.0),
        "at_chosen_min_score": {
            "min_score": chosen,
            **evaluate(retriever, channel.questions, scores.questions, chosen)["overall"],
        },
        "abstention": trade_off,
        "chosen_min_score": chosen,
        "calibration": calibration(channel, scores),
    }


def report(
    service: MemoryService,
    conversations: Sequence[Conversation],
    parameters: KeywordParameters,
    negatives: int = NEGATIVES,
    modes: Sequence[Channels] = CHANNEL_SETS,
    notes: Sequence[Conversation] = (),
    roles: Sequence[Conversation] = (),
    chats: Sequence[Conversation] = (),
) -> tuple[dict[str, Any], dict[Channels, ChannelData]]:
    """The leave-one-conversation-out figures of every channel set of ``modes``
    (``bench/locomo.py --cv``): the turns' at the top level; when ``notes`` holds any,
    the notes' under ``notes``, and under ``notes_without_twins`` the notes scored by the
    turns' models (what recall did before the twins); with ``roles`` (the turns renamed
    user/assistant, never fitted on), theirs under ``roles``; with ``chats`` (each a fold
    of its own, the turns' models fitted on the others too), theirs under ``chats``."""
    embedder = None if service.embedder is None else service.embedder.name
    data, retriever = pool_all(
        service,
        conversations,
        parameters,
        negatives,
        modes=modes,
        notes=notes,
        roles=roles,
        chats=chats,
    )
    folds = len(conversations) + len(chats)
    scored = cross_validate(data, embedder, parameters, folds)
    without = cross_validate(data, embedder, parameters, folds, twins=False) if notes else None
    result: dict[str, Any] = {}
    for mode, channel in data.items():
        turns, turn_scores = regime_view(channel, scored[mode], "turns")
        result[mode] = _figures(retriever, turns, turn_scores)
        plain, plain_scores = regime_view(channel, scored[mode], "notes")
        if plain.questions and without is not None:
            result[mode]["notes"] = _figures(retriever, plain, plain_scores)
            plain, plain_scores = regime_view(channel, without[mode], "notes")
            result[mode]["notes_without_twins"] = _figures(retriever, plain, plain_scores)
        renamed, renamed_scores = regime_view(channel, scored[mode], "roles")
        if renamed.questions:
            result[mode]["roles"] = _figures(retriever, renamed, renamed_scores)
        chatted, chat_scores = regime_view(channel, scored[mode], "chats")
        if chatted.questions:
            result[mode]["chats"] = _figures(retriever, chatted, chat_scores)
    return result, data


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments, pool, cross-validate, fit, optionally write; print the JSON last."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm")
    parser.add_argument(
        "--graph-extractor",
        choices=["spacy", "rules", "none"],
        default="spacy",
        help="the knowledge graph the pools are built with (recall's default: spacy)",
    )
    parser.add_argument(
        "--negatives", type=int, default=NEGATIVES, help="foreign questions per conversation"
    )
    parser.add_argument("--write", action="store_true", help="write the reranker data file")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where --write writes")
    parser.add_argument("--db-dir", type=Path, default=None, help="keep the database here")
    parser.add_argument(
        "--no-notes",
        action="store_true",
        help="fit no notes twins (the file's observations are then left out)",
    )
    parser.add_argument(
        "--roles",
        action="store_true",
        help="also report the turns renamed user/assistant (evaluated, never fitted on)",
    )
    parser.add_argument(
        "--chats",
        type=chat_names,
        default=",".join(FITTED_CHATS),
        help="also fit the turns' models on these hand-written chats (bench/chat_probe.py),"
        " comma-separated ('' for none; default: the shipped file's, %(default)s)",
    )
    parser.add_argument(
        "--notes-only",
        action="store_true",
        help="write only the notes twins (the turn models already in --out stay as they are)",
    )
    arguments = parser.parse_args(argv)
    kept_out = sorted({chat.name for chat in arguments.chats} & set(NEVER_FITTED))
    if kept_out:
        parser.error(f"--chats: {', '.join(kept_out)}: held out of every fit")
    if arguments.notes_only and arguments.no_notes:
        parser.error("--notes-only and --no-notes contradict each other")
    parameters = Reranker.default().keyword_parameters
    with tempfile.TemporaryDirectory(dir=arguments.db_dir) as directory:
        chats = [as_conversation(chat) for chat in arguments.chats]
        service, conversations, timings = build_service(
            arguments.data,
            Path(directory),
            arguments.embedder,
            arguments.graph_extractor,
            chats,
        )
        with service:
            notes, timings["notes_seconds"] = (
                ([], 0.0) if arguments.no_notes else build_notes(service, arguments.data)
            )
            roles = speakers_as_roles(conversations) if arguments.roles else []
            if roles:
                timings["roles_seconds"] = ingest(service, roles)["indexing_seconds"]
            embedder = None if service.embedder is None else service.embedder.name
            cross_validated, data = report(
                service,
                conversations,
                parameters,
                arguments.negatives,
                notes=notes,
                roles=roles,
                chats=chats,
            )
            models = fit_models(data, None)
    info = {
        "fitted": datetime.now(UTC).isoformat(timespec="seconds"),
        "data": arguments.data.name,
        "conversations": len(conversations),
        "chats": [chat.name for chat in arguments.chats],
        "embedder": embedder,
        "graph_extractor": arguments.graph_extractor,
        "regularisation": REGULARISATION,
        "negatives_per_conversation": arguments.negatives,
        "leave_one_conversation_out": {
            mode: {
                "overall": result["overall"],
                "pool_recall": result["pool_recall"],
                "chosen_min_score": result["chosen_min_score"],
                **{
                    regime: {
                        "overall": result[regime]["overall"],
                        "pool_recall": result[regime]["pool_recall"],
                        "chosen_min_score": result[regime]["chosen_min_score"],
                        "at_default_min_score": result[regime]["abstention"][
                            THRESHOLDS.index(0.02)
                        ],
                    }
                    for regime in ("notes", "roles", "chats")
                    if regime in result
                },
            }
            for mode, result in cross_validated.items()
        },
    }
    if arguments.notes_only:
        models = {name: model for name, model in models.items() if name.endswith(NOTES_SUFFIX)}
        if not models:
            parser.error("--notes-only: the file has no observations to fit notes twins on")
    data_file = reranker_data(parameters, embedder, models, info)
    if arguments.write:
        merged = data_file
        if arguments.out.exists():
            # Models of other embedders already in the file stay (each refit replaces its own).
            existing = json.loads(arguments.out.read_text())
            merged = {**existing, "keyword_parameters": data_file["keyword_parameters"]}
            merged["models"] = {**existing.get("models", {}), **data_file["models"]}
            entry = info
            if arguments.notes_only:
                # The turn models and their figures stay; the twins' figures join them.
                entry = {**existing.get("info", {}).get(str(embedder), {}), "notes_twins": info}
            merged["info"] = {**existing.get("info", {}), str(embedder): entry}
            merged["fallback_embedder"] = existing.get("fallback_embedder") or embedder
        arguments.out.write_text(json.dumps(merged, indent=1) + "\n")
        print(f"wrote {arguments.out}", file=sys.stderr)
    output = {
        "benchmark": "fit_reranker",
        **timings,
        "cross_validated": cross_validated,
        "info": info,
        "models": data_file["models"],
    }
    print(json.dumps(output))


if __name__ == "__main__":
    main()
