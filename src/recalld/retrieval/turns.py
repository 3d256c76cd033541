"""A chat turn typed in several messages, read by the reranker as one turn.

People text one thought in several messages ("ran my first 5k on saturday!!!!",
then "31 mins"), where LoCoMo, on which the reranker is mostly fitted, has whole turns
(no two of its consecutive turns have one speaker). A memory written at most
:data:`TURN_GAP` after the previous memory of its source, by the same speaker,
*goes on* with that memory's turn.

Only a conversation's turns (kind ``turn``: ``remember_conversation``,
``recalld ingest``, the import of chat exports) are read so: memories of other
kinds (what ``remember`` stores by default) that an agent writes one after
another with one speaker and source stay separate. A transcript written
without a time for each message counts consecutive messages of one speaker as
one turn. Recall then (:mod:`recalld.retrieval.pool`):

* adds it to the candidates when the memory it goes on from is one (backend
  ``turn``; one message on), so an answer typed as a second message is found
  in a large store. Every such memory joins: a cap would let a memory added
  after some other candidate push out the answer after this one;
* describes it by its turn where the turn's start matches better
  (:func:`take_turns`): the start's keyword features when the start holds a
  larger share of the query's words, its vector features when its cosine is
  higher; the memory before the turn is then its previous memory, so the start
  is not counted a second time as its neighbour;
* scores it the higher of what it scores by itself and what it scores with the
  features it took, the latter never above the start's score (at most just
  under it, :func:`cap_turns`): the turn matched by its start, so a "lol" typed
  after an answer ranks after that answer. Its other features (its length, its
  neighbours) stay its own, so it usually scores well below the start; a piece
  that answers better on its own keeps its own score and its own features.

A hit's channels keep its own values, and explain names the start
(``turn_of``) when the piece's score is its turn's. Every rank, gap and
best-of-source feature is computed from the candidates' own values before any
piece takes its turn's, so a piece of a turn changes no other memory's features.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta

import numpy as np
import numpy.typing as npt

from recalld._time import from_storage
from recalld.retrieval.features import FEATURES
from recalld.store.retrieval import CandidateRow, Neighbour, Neighbours

__all__ = ["TURN_GAP", "cap_turns", "followers", "goes_on", "take_turns", "turn_starts"]

TURN_GAP = timedelta(minutes=10)

_COLUMN = {name: index for index, name in enumerate(FEATURES)}
_KEYWORD = [
    _COLUMN[name]
    for name in (
        "keyword",
        "keyword_log_raw",
        "keyword_share",
        "keyword_rank",
        "keyword_gap",
        "source_keyword_gap",
    )
]
_VECTOR = [_COLUMN[name] for name in ("cosine", "cosine_rank", "cosine_gap", "source_cosine_gap")]
_PREVIOUS = [
    _COLUMN[name]
    for name in (
        "previous_keyword",
        "previous_cosine",
        "previous_question",
        "previous_question_keyword",
        "previous_question_cosine",
    )
]
_SHARE = _COLUMN["keyword_share"]
_COSINE = _COLUMN["cosine"]


def goes_on(
    speaker: str | None, at_utc: str | None, before_speaker: str | None, before_at: str | None
) -> bool:
    """Whether a memory by ``speaker`` at ``at_utc`` goes on with the turn of the memory
    just before it in its source, by ``before_speaker`` at ``before_at``."""
    if not speaker or speaker != before_speaker or at_utc is None or before_at is None:
        return False
    return from_storage(at_utc) - from_storage(before_at) <= TURN_GAP


def _one_turn(
    pair: Neighbours,
    side: Neighbour,
    later: Neighbour | CandidateRow,
    earlier: Neighbour | CandidateRow,
) -> bool:
    """Whether ``later`` goes on with ``earlier``'s turn: ``pair`` are the neighbours of the
    candidate of the two, ``side`` is the other; both must be a conversation's turns."""
    return (
        pair.turn
        and side.turn
        and goes_on(later.speaker, later.at_utc, earlier.speaker, earlier.at_utc)
    )


def turn_starts(
    rows: Sequence[CandidateRow], neighbours: Mapping[int, Neighbours]
) -> dict[int, int]:
    """For each of ``rows`` (by position) that goes on with the turn of the memory before
    it, when that memory is one of ``rows`` too: that memory's position."""
    if not neighbours:  # plain notes: nothing goes on with anything
        return {}
    position = {row.seq: index for index, row in enumerate(rows)}
    starts = {}
    for place, row in enumerate(rows):
        pair = neighbours.get(row.seq)
        before = None if pair is None else pair.previous
        if (
            pair is not None
            and before is not None
            and before.seq in position
            and _one_turn(pair, before, row, before)
        ):
            starts[place] = position[before.seq]
    return starts


def followers(rows: Mapping[int, CandidateRow], neighbours: Mapping[int, Neighbours]) -> list[int]:
    """The seqs of the memories after ``rows`` (seq -> row) that go on with their turn and
    are not among them, in their order."""
    if not neighbours:
        return []
    found = []
    for seq, row in rows.items():
        pair = neighbours.get(seq)
        after = None if pair is None else pair.next
        if (
            pair is not None
            and after is not None
            and after.seq not in rows
            and _one_turn(pair, after, after, row)
        ):
            found.append(after.seq)
    return list(dict.fromkeys(found))


def take_turns(matrix: npt.NDArray[np.float64], starts: Mapping[int, int]) -> dict[int, int]:
    """Give each row of ``matrix`` in ``starts`` (row -> the row of the memory it goes on
    from) what its turn matches better (see the module docstring), in place.

    Returns the rows that took something and the row they took it from, each after
    the row it took from when that one took something too (a turn of three pieces).
    """
    taken: dict[int, int] = {}
    settled: set[int] = set()

    def settle(row: int) -> None:
        if row in settled:
            return
        settled.add(row)
        start = starts.get(row)
        if start is None:
            return
        settle(start)  # a turn's first pieces first: the third takes what the second took
        took = False
        if matrix[start, _SHARE] > matrix[row, _SHARE]:
            matrix[row, _KEYWORD] = matrix[start, _KEYWORD]
            took = True
        theirs, mine = matrix[start, _COSINE], matrix[row, _COSINE]
        if not np.isnan(theirs) and not np.isnan(mine) and theirs > mine:
            matrix[row, _VECTOR] = matrix[start, _VECTOR]
            took = True
        if took:
            matrix[row, _PREVIOUS] = matrix[start, _PREVIOUS]
            taken[row] = start

    for row in starts:
        settle(row)
    return taken


def cap_turns(
    scores: npt.NDArray[np.float64],
    taken: Mapping[int, int],
    own: Mapping[int, float],
    step: float,
) -> list[int]:
    """Each piece of ``taken`` (in :func:`take_turns`' order) scores the higher of ``own``
    (its score from its own features) and its turn's score kept ``step`` under the score
    of the piece it took from, and at least 0 (in place). Returns the pieces whose own
    score is the higher (or as high): they are scored as themselves."""
    themselves = []
    for row, start in taken.items():
        turn = max(0.0, min(float(scores[row]), float(scores[start]) - step))
        if own[row] >= turn:
            themselves.append(row)
        scores[row] = max(own[row], turn)
    return themselves
