"""BM25F from prepared terms (:mod:`recalld.retrieval.keyword`)."""

from __future__ import annotations

import math
from pathlib import Path

from recalld.config import Settings
from recalld.retrieval.keyword import (
    KeywordParameters,
    QueryKeywords,
    RowTermsCache,
    score_row,
)
from recalld.store.factory import open_store
from recalld.store.retrieval import CandidateRow


def _row(seq: int, content: str, **fields: object) -> CandidateRow:
    values: dict[str, object] = {
        "seq": seq,
        "id": f"m{seq}",
        "namespace": "default",
        "title": None,
        "content": content,
        "tags": (),
        "speaker": None,
        "source": None,
        "at_utc": None,
        "index_state": "indexed",
    }
    values.update(fields)
    return CandidateRow(**values)  # type: ignore[arg-type]


def _bm25f(
    query: QueryKeywords, fields: dict[str, list[str]], parameters: KeywordParameters
) -> float:
    # The module docstring's formula, written out term by term.
    total = 0.0
    for term, idf in zip(query.terms, query.idf, strict=True):
        pseudo = 0.0
        for name, tokens in fields.items():
            if not tokens:
                continue
            length = len(tokens) / parameters.reference_lengths[name]
            norm = 1.0 - parameters.b + parameters.b * length
            pseudo += parameters.weights[name] * tokens.count(term) / norm
        if pseudo:
            total += idf * pseudo / (parameters.k1 + pseudo)
    return total


def test_prepared_terms_score_as_the_formula_and_follow_the_text(tmp_path: Path) -> None:
    store = open_store(Settings(db=tmp_path / "k.db", embedder="none"))
    try:
        parameters = KeywordParameters()
        cache = RowTermsCache(store.retrieval, parameters, frozenset(), size=2)
        query = QueryKeywords(
            terms=("garden", "rose", "grandma"),
            idf=(parameters.idf(3), parameters.idf(40), parameters.idf(0)),
            all_terms=frozenset({"garden", "rose", "grandma"}),
        )
        row = _row(
            1,
            "Roses, roses and a garden",
            title="Garden notes",
            tags=("garden", "flowers"),
            speaker="Grandma",
        )
        score = score_row(query, cache.of(row), parameters)
        fields = {
            "title": ["garden", "note"],
            "content": ["rose", "rose", "and", "a", "garden"],
            "tags": ["garden", "flower"],
            "speaker": ["grandma"],
        }
        assert math.isclose(score.raw, _bm25f(query, fields, parameters), rel_tol=1e-12)
        assert score.matched_share == 1.0
        assert math.isclose(score.normalised, score.raw / sum(query.idf), rel_tol=1e-12)
        # Same seq, new text: the cache answers for the text, not the seq.
        edited = _row(1, "A quiet afternoon")
        assert score_row(query, cache.of(edited), parameters).raw == 0.0
        # A full cache drops its oldest entry and still answers correctly.
        third = _row(3, "grandma")
        assert score_row(query, cache.of(third), parameters).matched_share == 1 / 3
        again = score_row(query, cache.of(row), parameters)
        assert again == score
    finally:
        store.close()
