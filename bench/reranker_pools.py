"""The candidate pools recall's reranker is fitted and measured on (``bench/fit_reranker.py``).

Each question of a LoCoMo-format file, asked of its own conversation, becomes
the pool recall builds for it (``HybridRetriever.pool``: candidates, features),
labelled by its evidence; beside them foreign questions (another conversation's,
negatives), questions no personal memory holds (unrelated), and the same for
the conversations' observations written as plain notes and, evaluated only,
the turns renamed user/assistant (the *regimes*, see ``locomo.py``). This
module builds the service and the pools; fitting, cross-validation and the
figures are ``fit_reranker.py``'s.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import (
    Conversation,
    ingest,
    load_conversations,
    load_observations,
)
from recalld import MemoryService, Settings
from recalld._text import query_terms
from recalld.retrieval.graph_channel import GraphChannel
from recalld.retrieval.hybrid import HybridRetriever, RetrievalDepths
from recalld.retrieval.keyword import KeywordParameters
from recalld.retrieval.pool import Mode, Pool
from recalld.retrieval.rerank import Channels, Reranker
from recalld.store.base import Scope

# The two kinds of memory a reranker file has models for: conversation turns, and notes;
# and "roles", turns renamed user/assistant (locomo.speakers_as_roles), evaluated only.
# The hand-written chats (bench/chat_probe.py) are a regime of their own for the figures;
# the turns' models are fitted on them too (see TRAINED_WITH).
Regime = Literal["turns", "notes", "roles", "chats"]
# The regimes whose pools a regime's models are fitted on.
TRAINED_WITH: dict[Regime, tuple[Regime, ...]] = {
    "turns": ("turns", "chats"),
    "notes": ("notes",),
    "roles": (),
    "chats": ("turns", "chats"),
}
# hybrid+graph: hybrid recall with the knowledge graph's candidates (RECALLD_GRAPH_RECALL=true),
# pooled and fitted on its own; skipped when the service builds no graph.
CHANNEL_SETS: tuple[Channels, ...] = ("keyword", "vector", "hybrid", "hybrid+graph")
# Foreign questions (another conversation's) asked of each conversation as negatives.
NEGATIVES = 100
SEED = 7
# Questions about things a personal-conversation memory never holds, written for this
# benchmark (no text of the data set): recall should return nothing for them.
UNRELATED_QUERIES = (
    "xyzzy plugh",
    "qwzx vlorp frimble",
    "What is the boiling point of tungsten?",
    "How do I rotate TLS certificates in a Kubernetes cluster?",
    "Which port does PostgreSQL listen on by default?",
    "What is the airspeed velocity of an unladen swallow?",
    "Explain the difference between TCP and UDP.",
    "What is the capital of Kazakhstan?",
    "How many moons does Neptune have?",
    "What is the derivative of the natural logarithm?",
    "Who wrote the Treaty of Westphalia?",
    "What is the chemical formula of sulfuric acid?",
    "How do I configure a VLAN on a network switch?",
    "What is the half-life of carbon-14?",
    "Which compiler flags enable link-time optimisation?",
    "What does the HTTP status code 418 mean?",
    "How is the Gini coefficient computed?",
    "What is the torque spec for the cylinder head bolts?",
    "Which enzyme unwinds DNA during replication?",
    "What is the exchange rate between the yen and the rupee?",
    "How do I resolve a merge conflict in git?",
    "What is the melting point of gallium?",
    "Which protocol does DNSSEC use to sign records?",
    "What is the population of Ulaanbaatar?",
    "How do you solder a surface-mount resistor?",
    "What is the syntax of a Rust match expression?",
    "Who discovered the positron?",
    "What is the maximum takeoff weight of an Airbus A320?",
    "How does a Bloom filter estimate membership?",
    "What are the tax brackets in Luxembourg?",
    "Which vitamin deficiency causes scurvy?",
    "How do I defragment an ext4 partition?",
    "What is Avogadro's number?",
    "Which sorting algorithm is stable and runs in n log n?",
    "What is the zoning code for a commercial lot?",
    "How many bytes are in a kibibyte?",
    "What is the orbital period of Mercury?",
    "Which amendment abolished slavery?",
    "How do I calibrate a 3D printer bed?",
    "What is the wavelength of red light?",
)


@dataclass
class QueryPool:
    """One question asked of one conversation: the candidate pool and its labels.

    ``origin`` is the conversation a *foreign* question comes from (a negative:
    asked of another conversation, it has no evidence there). ``regime`` says
    whether the memories asked are conversation turns or notes (then
    ``conversation`` is the index of the conversation the notes come from, so
    both regimes of one conversation leave a fold together).
    """

    conversation: int
    category: str
    question: str
    gold: list[str]
    pool: Pool
    dia_ids: list[str]
    labels: npt.NDArray[np.float64]
    origin: int | None = None
    regime: Regime = "turns"


@dataclass
class ChannelData:
    """Every pool of one channel set: the questions, the foreign negatives, the unrelated."""

    questions: list[QueryPool] = field(default_factory=list)
    foreign: list[QueryPool] = field(default_factory=list)
    unrelated: list[QueryPool] = field(default_factory=list)


Scores = list[npt.NDArray[np.float64]]


@dataclass
class ChannelScores:
    """Out-of-fold scores of every pool of a :class:`ChannelData`, in the same order."""

    questions: Scores
    foreign: Scores
    unrelated: Scores


def retriever_for(
    service: MemoryService, reranker: Reranker, depths: RetrievalDepths
) -> HybridRetriever:
    """A retriever over the service's store and embedder with another reranker, and no
    graph channel (:func:`pool_all` sets one for the ``hybrid+graph`` pools)."""
    return HybridRetriever(
        service.store,
        service.embedder,
        reranker=reranker,
        depths=depths,
        ann_threshold=service.settings.vector_ann_threshold,
        index_prefix=None,
    )


def graph_channel(service: MemoryService) -> GraphChannel | None:
    """The graph channel recall uses with ``RECALLD_GRAPH_RECALL=true`` (None: no graph)."""
    if service.indexing.extractor is None:
        return None
    settings = service.settings
    return GraphChannel(
        service.store, seed_limit=settings.graph_seed_limit, fanout=settings.graph_fanout
    )


def parameters_data(parameters: KeywordParameters) -> dict[str, Any]:
    """The JSON form of BM25F parameters."""
    return {
        "k1": parameters.k1,
        "b": parameters.b,
        "weights": dict(parameters.weights),
        "reference_lengths": dict(parameters.reference_lengths),
        "reference_documents": parameters.reference_documents,
        "document_count_cap": parameters.document_count_cap,
    }


def placeholder_reranker(parameters: KeywordParameters) -> Reranker:
    """A reranker with these BM25F parameters whose model scores nothing (for pooling)."""
    zero = {"features": ["keyword"], "mean": [0.0], "scale": [1.0], "coef": [0.0], "intercept": 0.0}
    return Reranker(
        {"keyword_parameters": parameters_data(parameters), "models": {"keyword": zero}}
    )


def _pool(
    retriever: HybridRetriever,
    conversation: Conversation,
    question: str,
    mode: Mode,
    now: datetime,
    max_terms: int,
) -> tuple[Pool, list[str]]:
    scope = Scope(namespaces=(conversation.sample_id,), now=now)
    pool, _ = retriever.pool(scope, question, query_terms(question, max_terms), mode)
    return pool, [conversation.dia_of_seq.get(row.seq, "") for row in pool.rows]


def _pool_regime(
    retriever: HybridRetriever,
    conversations: Sequence[Conversation],
    mode: Mode,
    max_terms: int,
    negatives: int,
    rng: random.Random,
    regime: Regime,
    data: ChannelData,
    first: int = 0,
) -> None:
    """Pool the questions, foreign negatives and unrelated questions of one regime into
    ``data`` (a conversation without memories, e.g. without observations, is skipped);
    a conversation's fold is ``first`` plus its position. Its unanswerable questions
    join the unrelated ones (category ``unanswerable``); its questions are asked at its
    ``asked_at`` (else now), and its ``acceptable`` turns are labelled evidence too."""
    for position, conversation in enumerate(conversations):
        if not conversation.turns:
            continue
        now = conversation.asked_at or datetime.now(UTC)
        number = first + position
        for category, question, gold in conversation.queries:
            pool, dia_ids = _pool(retriever, conversation, question, mode, now, max_terms)
            answers = {*gold, *conversation.acceptable.get(question, ())}
            labels = np.array([float(dia in answers) for dia in dia_ids], dtype=np.float64)
            data.questions.append(
                QueryPool(number, category, question, gold, pool, dia_ids, labels, None, regime)
            )
        others = [
            (first + origin, question)
            for origin, other in enumerate(conversations)
            if origin != position
            for _, question, _ in other.queries
        ]
        for origin, question in rng.sample(others, min(negatives, len(others))):
            pool, dia_ids = _pool(retriever, conversation, question, mode, now, max_terms)
            zeros = np.zeros(len(dia_ids), dtype=np.float64)
            data.foreign.append(
                QueryPool(number, "foreign", question, [], pool, dia_ids, zeros, origin, regime)
            )
        unrelated = [("unrelated", question) for question in UNRELATED_QUERIES]
        unrelated += [("unanswerable", question) for question in conversation.unanswerable]
        for category, question in unrelated:
            pool, dia_ids = _pool(retriever, conversation, question, mode, now, max_terms)
            zeros = np.zeros(len(dia_ids), dtype=np.float64)
            data.unrelated.append(
                QueryPool(number, category, question, [], pool, dia_ids, zeros, None, regime)
            )


def pool_channel(
    retriever: HybridRetriever,
    conversations: Sequence[Conversation],
    mode: Mode,
    max_terms: int,
    negatives: int,
    seed: int,
    notes: Sequence[Conversation] = (),
    roles: Sequence[Conversation] = (),
    chats: Sequence[Conversation] = (),
) -> ChannelData:
    """Pool every question of every conversation, ``negatives`` foreign questions per
    conversation (drawn with ``seed``) and the unrelated questions, in ``mode``; then the
    same for ``notes`` (the conversations' observations, in the same order), drawn with
    a generator of their own so the turns' pools do not depend on them; then the
    questions and unrelated ones (no foreign: nothing trains on them) of ``roles``; then
    the ``chats`` (folds after the conversations'; foreign questions from the other
    chats, drawn with a third generator)."""
    data = ChannelData()
    _pool_regime(
        retriever, conversations, mode, max_terms, negatives, random.Random(seed), "turns", data
    )
    rng = random.Random(seed + 1)
    _pool_regime(retriever, notes, mode, max_terms, negatives, rng, "notes", data)
    _pool_regime(retriever, roles, mode, max_terms, 0, rng, "roles", data)
    _pool_regime(
        retriever,
        chats,
        mode,
        max_terms,
        negatives,
        random.Random(seed + 2),
        "chats",
        data,
        first=len(conversations),
    )
    return data


def build_service(
    data: Path,
    directory: Path,
    embedder: str,
    graph_extractor: str = "spacy",
    chats: Sequence[Conversation] = (),
) -> tuple[MemoryService, list[Conversation], dict[str, float]]:
    """Ingest and index a LoCoMo-format file's conversations, then ``chats``, into a fresh
    database under ``directory`` (with recall's default knowledge graph, so the pools
    hold what recall's do); the file's conversations are returned. Their observations
    are not written: :func:`build_notes` adds them."""
    conversations = load_conversations(data)
    settings = Settings(
        db=directory / "locomo.db",
        synchronous="NORMAL",
        embedder=embedder,  # type: ignore[arg-type]
        graph_extractor=graph_extractor,  # type: ignore[arg-type]
        purge_interval_seconds=3600,
    )
    service = MemoryService.open(settings)
    timings = ingest(service, [*conversations, *chats])
    return service, conversations, timings


def build_notes(service: MemoryService, data: Path) -> tuple[list[Conversation], float]:
    """The file's observations written as plain notes (``locomo.load_observations``), one
    namespace per conversation, indexed; and the seconds it took. Empty when the file
    has no observations."""
    notes = load_observations(data)
    if not any(conversation.turns for conversation in notes):
        return [], 0.0
    started = time.perf_counter()
    ingest(service, [conversation for conversation in notes if conversation.turns])
    return notes, round(time.perf_counter() - started, 3)


def pool_all(
    service: MemoryService,
    conversations: Sequence[Conversation],
    parameters: KeywordParameters,
    negatives: int = NEGATIVES,
    seed: int = SEED,
    modes: Sequence[Channels] = CHANNEL_SETS,
    notes: Sequence[Conversation] = (),
    roles: Sequence[Conversation] = (),
    chats: Sequence[Conversation] = (),
) -> tuple[dict[Channels, ChannelData], HybridRetriever]:
    """Every pool in every channel set of ``modes`` the service allows (vector sets need an
    embedder, ``hybrid+graph`` a graph extractor), of the conversations and of their
    ``notes`` (in the same order), ``roles`` and ``chats`` (see :func:`pool_channel`)."""
    depths = RetrievalDepths(
        keyword=service.settings.keyword_candidates,
        vector=service.settings.vector_candidates,
        duplicate_cosine=service.settings.duplicate_cosine,
    )
    retriever = retriever_for(service, placeholder_reranker(parameters), depths)
    graph = graph_channel(service)
    data: dict[Channels, ChannelData] = {}
    for channels in modes:
        if channels != "keyword" and service.embedder is None:
            continue
        if channels == "hybrid+graph" and graph is None:
            continue
        retriever.graph = graph if channels == "hybrid+graph" else None
        mode: Mode = "hybrid" if channels == "hybrid+graph" else channels
        started = time.perf_counter()
        data[channels] = pool_channel(
            retriever,
            conversations,
            mode,
            service.settings.max_query_terms,
            negatives,
            seed,
            notes,
            roles,
            chats,
        )
        print(f"pooled {channels} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    retriever.graph = None
    return data, retriever


def regime_view(
    channel: ChannelData, scores: ChannelScores, regime: Regime
) -> tuple[ChannelData, ChannelScores]:
    """The pools of one regime and their scores, in the same order."""
    view = ChannelData()
    kept = ChannelScores(questions=[], foreign=[], unrelated=[])
    for name in ("questions", "foreign", "unrelated"):
        items: list[QueryPool] = getattr(channel, name)
        values: Scores = getattr(scores, name)
        for item, item_scores in zip(items, values, strict=True):
            if item.regime == regime:
                getattr(view, name).append(item)
                getattr(kept, name).append(item_scores)
    return view, kept
