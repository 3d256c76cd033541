"""Synthetic corpora shared by the recall and peers benchmarks (texts, queries, vectors).

Texts: 8-24 words drawn (Zipf-like) from a list of common English words plus a
verb, so the real model sees real tokens; queries: 2-5 words of a random
memory with one swapped, plus a verb. Everything comes from
``random.Random(seed)``.

Vectors, two ways:

* ``real``: every text embedded by the model (what a user gets; slow at 1M).
* ``cheap``: ``base`` texts are embedded for real, and each memory's vector is
  ``normalize(w1·b1 + w2·b2 + w3·b3 + noise)`` of three random base vectors
  (Dirichlet(1,1,1) weights, Gaussian noise of norm ~0.25). The collection then
  has the real model's geometry (anisotropy, a dead dimension, clusters)
  without 1M model calls, but a memory's vector does not describe its text:
  latency, ANN recall and sizes are meaningful, hit@10 is not.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from recalld.embeddings.base import Embedder

WORDS = (
    "time person year way day thing man world life hand part child eye woman place work "
    "week case point government company number group problem fact water room mother area "
    "money story month lot right study book job word business issue side kind head house "
    "service friend father power hour game line end member law car city community name "
    "president team minute idea kid body information back parent face others level office "
    "door health art war history party result change morning reason research girl guy moment "
    "air teacher force education foot boy age policy music market sense nation plan college "
    "interest death experience effect class control care field development role effort rate "
    "heart drug show leader light voice wife police mind price report decision son view "
    "relationship town road arm difference value building action model season society tax "
    "director position player record paper space ground form event official matter center "
    "couple site project activity star table need court oil situation cost industry figure "
    "street image phone data picture practice piece land product doctor wall patient worker "
    "news test movie north love support technology step baby computer type attention film "
    "tree source organization hair window evidence population site garden kitchen dog cat "
    "coffee dinner birthday holiday beach mountain river train flight hotel camera guitar "
    "painting recipe bread cake soccer tennis yoga school exam library museum concert park "
    "rain snow summer winter spring autumn weekend hospital dentist meeting deadline server "
    "database backup password laptop keyboard email calendar invoice budget salary loan"
).split()
VERBS = (
    "visited bought cooked painted fixed planned moved started finished lost found shared "
    "booked cancelled learned taught watched played adopted sold borrowed packed cleaned"
).split()


def _zipf_word(rng: random.Random) -> str:
    rank = min(int(rng.paretovariate(1.1)) - 1, len(WORDS) - 1)
    return WORDS[(rank * 7919 + rng.randrange(3)) % len(WORDS)]


def make_texts(count: int, rng: random.Random) -> list[str]:
    """``count`` synthetic memory sentences."""
    texts = []
    for _ in range(count):
        words = [_zipf_word(rng) for _ in range(rng.randint(7, 22))]
        words.insert(rng.randrange(len(words)), rng.choice(VERBS))
        texts.append("I " + " ".join(words) + ".")
    return texts


def make_queries(texts: Sequence[str], count: int, rng: random.Random) -> list[tuple[int, str]]:
    """Distinct ``(target index, query)`` pairs: a few words of a memory, one swapped."""
    queries: dict[str, int] = {}
    while len(queries) < count:
        target = rng.randrange(len(texts))
        words = texts[target].rstrip(".").split()[1:]
        picked = rng.sample(words, min(len(words), rng.randint(2, 5)))
        picked[rng.randrange(len(picked))] = rng.choice(WORDS)
        queries.setdefault(" ".join(picked) + f" {rng.choice(VERBS)}", target)
    return sorted((target, query) for query, target in queries.items())


def embed_all(embedder: Embedder, texts: Sequence[str], batch: int = 64) -> npt.NDArray[np.float32]:
    """Every text embedded for real, in batches."""
    parts = [
        embedder.embed_batch(texts[start : start + batch]) for start in range(0, len(texts), batch)
    ]
    return np.vstack(parts).astype(np.float32)


def cheap_vectors(base: npt.NDArray[np.float32], count: int, seed: int) -> npt.NDArray[np.float32]:
    """``count`` vectors mixed from real ``base`` vectors (see the module docstring)."""
    generator = np.random.default_rng(seed)
    dimension = base.shape[1]
    out = np.empty((count, dimension), dtype=np.float32)
    for start in range(0, count, 50_000):
        size = min(50_000, count - start)
        parents = generator.integers(0, len(base), (size, 3))
        weights = generator.dirichlet([1.0, 1.0, 1.0], size).astype(np.float32)
        mixed = (base[parents] * weights[:, :, None]).sum(axis=1)
        mixed += generator.standard_normal((size, dimension)).astype(np.float32) * (
            0.25 / np.sqrt(dimension)
        )
        out[start : start + size] = mixed / np.linalg.norm(mixed, axis=1, keepdims=True)
    return out
