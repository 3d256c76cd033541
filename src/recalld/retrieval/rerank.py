"""The shipped reranker: coefficients as data, scored with numpy.

``data/reranker.json`` (written by ``bench/fit_reranker.py``) holds the BM25F
parameters the features were computed with and one logistic model per
*channel set*:

* ``keyword``: for candidates without a vector (keyword-only recall, no
  embedder, or a memory still queued for embedding);
* ``<embedder name>/hybrid`` and ``<embedder name>/vector``: for candidates
  with a vector of that model, in hybrid and vector-only recall;
* ``<embedder name>/hybrid+graph``: hybrid recall with the knowledge graph's
  candidates and features (``RECALLD_GRAPH_RECALL=true``); its pools differ
  from plain hybrid ones, so it is fitted on its own (a file without it uses
  the ``hybrid`` model).

Each model may have a *notes* twin (the same key with ``/notes`` appended,
``keyword/notes`` for the keyword model) for memories without conversation
structure: no speaker, and no previous or next memory in a source, so no
neighbours, no session and no speaker to match (an agent's plain notes, or a
memory alone in its source). It is fitted on the other kind of
memory LoCoMo holds, its *observations* (short facts about the speakers, see
``bench/locomo.py``), and uses only the features such a memory has. The
models of turns learn that an absolute cosine says little among hundreds of
chat turns (their ``cosine`` coefficient is about zero) and that a question
names its speaker; neither holds for notes, where the cosine is the best
evidence a paraphrase has. A candidate is scored by the notes twin when it is
such a note (:attr:`recalld.retrieval.features.Candidate.note`) and the file
has the twin (else by the model of turns, as files without twins are).

An embedder without its own models (a custom ONNX export, an HTTP endpoint)
uses the default model's (``fallback_embedder``): its ranking is still driven
by the same evidence, but its probabilities are calibrated for MiniLM cosines.

A model is ``p = sigmoid(intercept + sum(coef * (x - mean) / scale))`` over the
features it names (see :mod:`recalld.retrieval.features`), with NaN replaced
by the feature's mean (which contributes nothing), and is calibrated on
leave-one-conversation-out predictions: ``p`` estimates the probability that
the memory is one a person would cite to answer the question.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from recalld.retrieval.features import FEATURES
from recalld.retrieval.keyword import KeywordParameters

__all__ = ["NOTES_SUFFIX", "Channels", "LogisticModel", "Reranker"]

Matrix = npt.NDArray[np.float64]
# The channel sets a model is fitted for (see the module docstring).
Channels = Literal["keyword", "vector", "hybrid", "hybrid+graph"]
# Appended to a model's key for its twin, which scores memories with no speaker and no
# neighbour in a source (see the module docstring).
NOTES_SUFFIX = "/notes"


@dataclass(frozen=True)
class LogisticModel:
    """A standardised logistic regression over named features."""

    name: str
    features: tuple[str, ...]
    mean: npt.NDArray[np.float64]
    scale: npt.NDArray[np.float64]
    coef: npt.NDArray[np.float64]
    intercept: float

    @classmethod
    def from_data(cls, name: str, data: Mapping[str, Any]) -> LogisticModel:
        """Build a model from its JSON object, checking that its features exist."""
        features = tuple(str(item) for item in data["features"])
        unknown = [item for item in features if item not in FEATURES]
        if unknown:
            raise ValueError(f"reranker model {name!r} uses unknown features {unknown}")
        arrays = [np.asarray(data[key], dtype=np.float64) for key in ("mean", "scale", "coef")]
        if any(array.shape != (len(features),) for array in arrays):
            raise ValueError(f"reranker model {name!r}: mean, scale and coef must match features")
        mean, scale, coef = arrays
        return cls(
            name, features, mean, np.where(scale > 0, scale, 1.0), coef, float(data["intercept"])
        )

    @functools.cached_property
    def columns(self) -> list[int]:
        """The positions of this model's features in :data:`FEATURES`."""
        return [FEATURES.index(name) for name in self.features]

    def contributions(self, matrix: Matrix) -> Matrix:
        """Each feature's additive share of the log-odds, per row (for explain)."""
        values = matrix[:, self.columns]
        values = np.where(np.isnan(values), self.mean, values)
        return self.coef * (values - self.mean) / self.scale

    def probabilities(self, matrix: Matrix) -> Matrix:
        """The probability of each row of a full :data:`FEATURES` matrix."""
        logits = self.intercept + self.contributions(matrix).sum(axis=1)
        probabilities: Matrix = 1.0 / (1.0 + np.exp(-np.clip(logits, -50.0, 50.0)))
        return probabilities


class Reranker:
    """The keyword parameters and the models of one reranker data file."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        keyword = data.get("keyword_parameters", {})
        self.keyword_parameters = KeywordParameters(**keyword)
        self.fallback_embedder = str(data.get("fallback_embedder", ""))
        self.models = {
            name: LogisticModel.from_data(name, model) for name, model in data["models"].items()
        }
        if "keyword" not in self.models:
            raise ValueError("a reranker needs a 'keyword' model")
        self.info: dict[str, Any] = dict(data.get("info", {}))

    @classmethod
    def default(cls) -> Reranker:
        """The reranker shipped in the package (``retrieval/data/reranker.json``)."""
        text = resources.files("recalld.retrieval").joinpath("data/reranker.json").read_text()
        return cls(json.loads(text))

    def model(
        self, embedder: str | None, channels: Channels, *, notes: bool = False
    ) -> LogisticModel:
        """The model for ``channels`` with ``embedder``'s vectors: the embedder's own
        first (its cosines are what the model was calibrated on), then the fallback's.
        With ``notes``, that model's notes twin when the file has it (see the module
        docstring)."""
        if channels == "keyword" or embedder is None:
            return self._twin(self.models["keyword"], notes)
        wanted: list[str] = [channels]
        if channels == "hybrid+graph":
            wanted.append("hybrid")
        for model in (embedder, self.fallback_embedder):
            for name in wanted:
                if f"{model}/{name}" in self.models:
                    return self._twin(self.models[f"{model}/{name}"], notes)
        return self._twin(self.models["keyword"], notes)

    def _twin(self, model: LogisticModel, notes: bool) -> LogisticModel:
        if not notes:
            return model
        return self.models.get(model.name + NOTES_SUFFIX, model)

    def score(
        self,
        matrix: Matrix,
        embedder: str | None,
        channels: Channels,
        has_vector: Sequence[bool],
        notes: Sequence[bool] | None = None,
    ) -> tuple[Matrix, list[str]]:
        """Probabilities for every row, and which model scored it: rows without a vector
        use the keyword model (their cosine features are missing), rows flagged in
        ``notes`` (no speaker, no neighbour in a source) the notes twin of their model."""
        count = matrix.shape[0]
        vector = np.asarray(has_vector, dtype=bool)
        if channels == "keyword":
            vector = np.zeros(count, dtype=bool)
        plain = np.zeros(count, dtype=bool) if notes is None else np.asarray(notes, dtype=bool)
        scores = np.zeros(count, dtype=np.float64)
        names = np.full(count, "", dtype=object)
        for with_vector in (True, False):
            for is_note in (False, True):
                rows = (vector == with_vector) & (plain == is_note)
                if not rows.any():
                    continue
                if with_vector:
                    model = self.model(embedder, channels, notes=is_note)
                else:
                    model = self.model(None, "keyword", notes=is_note)
                scores[rows] = model.probabilities(matrix[rows])
                names[rows] = model.name
        return scores, names.tolist()
