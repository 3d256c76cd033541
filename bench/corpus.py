"""Synthetic corpora shared by the recall and peers benchmarks (texts, queries, vectors).

Texts: 8-24 words plus a verb, so the real model sees real tokens, from one of
two vocabularies:

* ``zipf`` (the default): a list of ~330 common English nouns, drawn with a
  heavy head (a few words are in most memories: the hard case for keywords);
* ``broad``: the 21,358 whole lower-case words of the MiniLM tokenizer's
  vocabulary (shipped with recalld, ordered by corpus frequency), drawn by
  Zipf's law (the probability of the word of rank r is proportional to 1/r),
  function words included: closer to the spread of real English text.

Queries: 2-5 words of a random memory with one swapped, plus a verb.
Everything comes from ``random.Random(seed)``.

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

import itertools
import json
import random
import re
from collections.abc import Sequence
from functools import cache
from typing import Literal

import numpy as np
import numpy.typing as npt

from recalld.embeddings.base import Embedder
from recalld.embeddings.minilm import default_tokenizer_path

Vocabulary = Literal["zipf", "broad"]
VOCABULARIES: tuple[Vocabulary, ...] = ("zipf", "broad")

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


@cache
def _broad() -> tuple[list[str], list[float]]:
    """The tokenizer's whole words by rank, and Zipf cumulative weights over them."""
    vocab = json.loads(default_tokenizer_path().read_text())["model"]["vocab"]
    ranked = sorted(vocab.items(), key=lambda item: item[1])
    words = [word for word, _ in ranked if re.fullmatch(r"[a-z]{3,}", word)]
    weights = list(itertools.accumulate(1.0 / rank for rank in range(1, len(words) + 1)))
    return words, weights


def _word(rng: random.Random, vocabulary: Vocabulary) -> str:
    if vocabulary == "zipf":
        return _zipf_word(rng)
    words, weights = _broad()
    return rng.choices(words, cum_weights=weights)[0]


def make_texts(count: int, rng: random.Random, vocabulary: Vocabulary = "zipf") -> list[str]:
    """``count`` synthetic memory sentences."""
    texts = []
    for _ in range(count):
        words = [_word(rng, vocabulary) for _ in range(rng.randint(7, 22))]
        words.insert(rng.randrange(len(words)), rng.choice(VERBS))
        texts.append("I " + " ".join(words) + ".")
    return texts


def make_queries(
    texts: Sequence[str], count: int, rng: random.Random, vocabulary: Vocabulary = "zipf"
) -> list[tuple[int, str]]:
    """Distinct ``(target index, query)`` pairs: a few words of a memory, one swapped."""
    queries: dict[str, int] = {}
    while len(queries) < count:
        target = rng.randrange(len(texts))
        words = texts[target].rstrip(".").split()[1:]
        picked = rng.sample(words, min(len(words), rng.randint(2, 5)))
        swapped = rng.choice(WORDS) if vocabulary == "zipf" else _word(rng, vocabulary)
        picked[rng.randrange(len(picked))] = swapped
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
