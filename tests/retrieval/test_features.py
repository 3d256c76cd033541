"""The reranker's features of a pool: what a question that names somebody, or nobody, gives."""

from __future__ import annotations

import math

import pytest

from recalld._text import asks_question
from recalld.retrieval.features import FEATURES, Candidate, QueryShape, feature_matrix
from recalld.retrieval.keyword import KeywordScore

SCORE = KeywordScore(raw=1.0, normalised=0.5, matched_share=0.5)


def _candidate(seq: int, *, speaker: bool, named: bool) -> Candidate:
    return Candidate(
        seq=seq,
        source="chat" if speaker else None,
        keyword=SCORE,
        cosine=0.5,
        speaker_named=named,
        has_speaker=speaker,
        mentions_time=False,
        terms=5,
    )


def _speaker_columns(candidates: list[Candidate]) -> list[tuple[float, float]]:
    matrix = feature_matrix(candidates, QueryShape(terms=3, asks_about_time=False), 100)
    named, other = FEATURES.index("speaker_named"), FEATURES.index("other_speaker_named")
    return [(float(row[named]), float(row[other])) for row in matrix]


def test_features_speaker_named_and_other_speaker_when_the_query_names_someone() -> None:
    columns = _speaker_columns(
        [
            _candidate(1, speaker=True, named=True),
            _candidate(2, speaker=True, named=False),
            _candidate(3, speaker=False, named=False),
        ]
    )
    assert columns[0] == (1.0, 0.0)
    assert columns[1] == (0.0, 1.0)
    assert math.isnan(columns[2][0])
    assert columns[2][1] == 1.0


def test_features_a_query_naming_nobody_leaves_both_speaker_features_missing() -> None:
    # "What is my dog called?" asked of a chat between user and assistant: no candidate's
    # speaker is named, which says nothing about whose memory answers (not "someone else's").
    columns = _speaker_columns(
        [_candidate(1, speaker=True, named=False), _candidate(2, speaker=False, named=False)]
    )
    assert all(math.isnan(value) for pair in columns for value in pair)


def test_features_an_unseen_name_marks_every_candidate_of_the_query() -> None:
    candidates = [
        _candidate(1, speaker=True, named=True),
        _candidate(2, speaker=False, named=False),
    ]
    column = FEATURES.index("unseen_name")
    for unseen in (False, True):
        shape = QueryShape(terms=3, asks_about_time=False, unseen_name=unseen)
        matrix = feature_matrix(candidates, shape, 100)
        assert matrix[:, column].tolist() == [float(unseen)] * 2


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("What did you name him?", True),
        ("what did u name him", True),
        ("Jess: how did it go", True),
        ("did you get the job", True),
        ("where u at", True),
        ("whats ur name", True),
        ("who's coming tonight", True),
        ("what time is it", True),
        ("how many people are coming", True),
        ("is Tom coming", True),
        ("did anyone see my keys", True),
        ("hey, did you get the job", True),
        ("r u ok", True),
        ("Jess: whens the party", True),
        ("2: did you get the job", True),
        ("- Jess: did you get the job", True),
        ("What a day!", False),
        ("how nice", False),
        ("when I got home I slept", False),
        ("Tom: im in", False),
        ("Did my taxes this morning", False),
        ("Had my first driving lesson today", False),
        ("Was the best concert ever", False),
        ("Do the dishes before you go", False),
        ("Had Covid last week", False),
        ("Did Christmas shopping today", False),
    ],
)
def test_a_memory_asks_with_or_without_a_question_mark(text: str, asks: bool) -> None:
    assert asks_question(text) is asks
