"""Where the messages of a re-sent transcript go among the stored turns of its conversation.

Pure functions for :mod:`recalld.conversations`: the alignment of a re-send without
message ids with the stored turns (:func:`placement`), and the times messages without
``at`` borrow from their neighbours (:func:`borrowed_times`). See that module's docstring
for what they promise.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from difflib import Match, SequenceMatcher
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recalld.conversation_model import ConversationMessage

__all__ = ["TurnKey", "borrowed_times", "conversation_order", "keyed_positions", "placement"]


def borrowed_times(
    messages: Sequence[ConversationMessage],
) -> list[datetime | str | None]:
    """The time each message without ``at`` takes from its neighbours, by index.

    A turn without a time used to be stamped "now", which sorted it after every timed
    turn of a transcript (turns are read by ``at``, then by write order) and broke the
    order recall's neighbouring turns rely on. So a message without ``at`` takes the
    ``at`` of the nearest message before it that has one, else of the nearest after it:
    tied with that turn, it stays on its side of it by write order. ``None`` for a
    message with its own time, and for every message when none has a time (the
    conversation's ``at``, else now, applies then).
    """
    times: list[datetime | str | None] = [None] * len(messages)
    previous: datetime | str | None = None
    for index, message in enumerate(messages):
        if message.at is not None:
            previous = message.at
        else:
            times[index] = previous
    following: datetime | str | None = None
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.at is not None:
            following = message.at
        elif times[index] is None:
            times[index] = following
    return times


TurnKey = tuple[str | None, str]

# The most steps (pairs of equal turns compared) the diff alignment of one re-send may
# take. difflib's matcher takes a time cubic in the turns when most of them are equal: a
# re-send of 2,000 turns alternating between two texts, against 2,000 stored turns of one
# of them, held the write for over two minutes (adversarial pass e62). A re-send of
# distinct turns takes about one step per turn; one past this budget is aligned more
# simply (see _opcodes).
ALIGNMENT_STEPS = 2_000_000


class _OverBudgetError(Exception):
    """The diff alignment would take more than ALIGNMENT_STEPS steps."""


class _BudgetedMatcher(SequenceMatcher[TurnKey]):
    """A difflib matcher (no junk) that stops, raising _OverBudgetError, past
    ALIGNMENT_STEPS steps: each search for the longest match is charged, before it runs,
    the pairs of equal items it may visit."""

    def __init__(self, first: Sequence[TurnKey], second: Sequence[TurnKey]) -> None:
        super().__init__(None, first, second, autojunk=False)
        self._first = first
        self._counts = Counter(second)
        self._steps = 0

    def find_longest_match(
        self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None
    ) -> Match:
        """difflib's search, charged first (see the class)."""
        top = len(self._first) if ahi is None else ahi
        for index in range(alo, top):
            self._steps += 1 + self._counts[self._first[index]]
            if self._steps > ALIGNMENT_STEPS:
                raise _OverBudgetError
        return super().find_longest_match(alo, ahi, blo, bhi)


Opcode = tuple[str, int, int, int, int]  # (tag, first low, high, second low, high)


def _opcodes(first: Sequence[TurnKey], second: Sequence[TurnKey]) -> list[Opcode]:
    """difflib's opcodes turning ``first`` into ``second``; past ALIGNMENT_STEPS, those
    of their common head and tail, equal, around their middles' (compared side by side
    when those too are past it).

    A client re-sending its whole history with one turn edited or added keeps its head
    and tail: with thousands of "ok" among its turns the full diff runs past the budget,
    and aligning nothing added every turn again (review of pass e62)."""
    try:
        return list(_BudgetedMatcher(first, second).get_opcodes())
    except _OverBudgetError:
        pass
    head = 0
    limit = min(len(first), len(second))
    while head < limit and first[head] == second[head]:
        head += 1
    tail = 0
    while tail < limit - head and first[-1 - tail] == second[-1 - tail]:
        tail += 1
    first_end, second_end = len(first) - tail, len(second) - tail
    middle: list[Opcode] = []
    if head < first_end or head < second_end:
        try:
            middle = [
                (tag, head + low, head + high, head + start, head + end)
                for tag, low, high, start, end in _BudgetedMatcher(
                    first[head:first_end], second[head:second_end]
                ).get_opcodes()
            ]
        except _OverBudgetError:
            middle = _side_by_side(first, second, head, first_end, second_end)
    start: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    end: list[Opcode] = [("equal", first_end, len(first), second_end, len(second))] if tail else []
    return start + middle + end


def _side_by_side(
    first: Sequence[TurnKey], second: Sequence[TurnKey], low: int, first_end: int, second_end: int
) -> list[Opcode]:
    """The opcodes of two middles past the budget: of as many turns, each turn against the
    one at its place (two turns edited far apart: the equal turns between them repeat);
    else one change."""
    if first_end - low != second_end - low:
        return [("replace", low, first_end, low, second_end)]
    found: list[Opcode] = []
    for tag, group in itertools.groupby(
        range(low, first_end), key=lambda at: "equal" if first[at] == second[at] else "replace"
    ):
        rows = list(group)
        found.append((tag, rows[0], rows[-1] + 1, rows[0], rows[-1] + 1))
    return found


def placement(
    stored: Mapping[int, TurnKey],
    sent: Sequence[tuple[int, TurnKey]],
    taken: Collection[int] = (),
    after: Mapping[int, int] | None = None,
    *,
    repeats: bool = True,
) -> tuple[dict[int, int], dict[int, int]]:
    """Where each re-sent message without a message id goes, and the anchors of the new
    turns that need one.

    Returns its index -> the position of the stored turn it repeats or edits, or a new
    position: in the gap a forgotten turn left where it fits, else after every stored
    turn; and, for a new turn placed after every stored turn although the send puts it
    before a stored one, its position -> its anchor (``meta.after``: see
    :func:`conversation_order`).

    ``stored`` maps the positions of the stored turns without message ids to their
    (speaker, text), ``after`` the anchored ones' to their anchors: they are compared in
    the conversation's order. ``sent`` holds the re-sent messages without ids as (their
    index in the re-send, (speaker, text)), in order. A re-send whose every message
    repeats a stored turn in that order changes nothing (:func:`_repeats`; unless
    ``repeats`` is false: a send under an id derived from its start, which may be
    another chat's). Else two placements are weighed:

    * the window: the re-send begins with the stored conversation's last turns
      (a window that slid), which it repeats; the rest is new;
    * the alignment of the two as a diff aligns two texts
      (:class:`difflib.SequenceMatcher`, from the newest end, so among equal
      matches the latest stored turns win). A message equal to the stored turn it
      is aligned with repeats it; one aligned with a stored turn whose text
      differs, in a run of as many messages as stored turns, edits it, unless
      its text is another stored turn's (a misalignment, not an edit; the last
      answer regenerated is an edit whatever it says). Edits count only when the
      re-send repeats more than twice as many turns as it edits (short replies,
      "ok" or "Done.", repeat by chance); or, for the whole transcript re-sent
      from its first turn, more than it edits, or as many when the edited turns
      are its last; or more than it edits when its last messages edit the stored
      conversation's last turns (an answer regenerated). An alignment that
      repeats one turn only and edits none holds nothing (one repeated "Ok" is a
      new turn).

    The alignment wins when it repeats a run of consecutive turns longer than the
    window (scattered short replies matched far apart do not beat a window) and,
    when there is a window, also reaches the last stored turn (clients re-send
    their latest messages). A re-send that is the stored conversation's first turns,
    from its first, in more than twice as many turns as the window, repeats them (a
    retry of an earlier send arriving after a later one whose last turn says what the
    first did).
    Every other message is new, and a stored turn left unaligned is kept: nothing
    is overwritten with a neighbour's text.

    New messages between two placed ones then take the free positions between theirs
    (:func:`_in_gaps`: a forgotten turn sent again goes back into the gap it left); one
    with no free position there takes one after every stored turn, anchored after the
    message before it in the send, so the same transcript sent again finds it in its
    place instead of adding it again. ``taken`` holds the positions of every stored turn
    of the conversation (those of messages with ids too): a new position is never one of
    them.
    """
    if not sent:
        return {}, {}
    if not stored:
        # Each message at its index (a first send), unless turns with ids hold some of
        # those: then all after every stored turn, in order.
        indexes = [index for index, _ in sent]
        if taken and not set(taken).isdisjoint(indexes):
            return _appended({}, indexes, set(taken)), {}
        return {index: index for index in indexes}, {}
    anchors = {position: anchor for position, anchor in (after or {}).items() if position in stored}
    order = conversation_order(stored, anchors)
    turns = [stored[position] for position in order]
    said = [turn for _, turn in sent]
    indexes = [index for index, _ in sent]
    window = _window(turns, said)
    if window and len(said) > 2 * window and said == turns[: len(said)]:
        # The conversation's first turns, re-sent from its first, in more than twice as
        # many turns as the window: a retry of an earlier send arriving after a later one
        # whose last turn says what the first did ("hi"), not a window that slid. (Under
        # a derived id too: an unbroken run from the first turn is no scattered repeat.)
        return {index: order[row] for row, index in enumerate(indexes)}, {}
    repeated_all = _repeats(order, turns, said, window) if repeats else None
    if repeated_all is not None:
        return {indexes[row]: position for row, position in repeated_all.items()}, {}
    placed = {row: order[len(order) - window + row] for row in range(window)}
    repeated, edited, run = _aligned(order, turns, said)
    # Against a window, the alignment must reach the last stored turn too: clients re-send
    # their latest messages, so two turns matched in the middle lose to it.
    reaches_end = order[-1] in {**repeated, **edited}.values()
    if repeated and run > window and (window == 0 or reaches_end):
        placed = {**repeated, **edited}
    # A forgotten turn's position that anchored turns still name is no gap: a new turn
    # there would take their place after it (see conversation_order).
    used = {*taken, *order, *placed.values(), *anchors.values()}
    placed.update(_in_gaps(len(said), placed, used, anchors))
    positions = {indexes[row]: position for row, position in placed.items()}
    positions = _appended(positions, indexes, used)
    # A new message sent before a placed one took a position after every turn: its anchor
    # (the position of the message before it, -1 for the first) keeps it in its place in
    # the conversation's order, so the same transcript sent again repeats it there.
    last_placed = max(placed, default=-1)
    new_anchors = {
        positions[indexes[row]]: -1 if row == 0 else positions[indexes[row - 1]]
        for row in range(last_placed)
        if row not in placed
    }
    return positions, new_anchors


def conversation_order(stored: Collection[int], after: Mapping[int, int]) -> list[int]:
    """The stored positions in the order of the conversation.

    A turn without an anchor sits at its position (``meta.turn``); one with an anchor
    (``meta.after``: a message sent between two stored turns that had no free position
    between them, so it took one after every turn) sits right after the turn it was sent
    after (-1: before the first turn), ahead of the turns anchored there before it (they
    came after it in the send that placed it). An anchor that no longer exists (a
    forgotten turn) still holds its place among the positions, so the turns anchored
    after it stay where they were.
    """
    present = set(stored)
    children: dict[int, list[int]] = {}
    roots: set[int] = set()
    for position in present:
        anchor = after.get(position)
        if anchor is not None and anchor >= -1 and anchor != position:
            children.setdefault(anchor, []).append(position)
            if anchor not in present and anchor != -1:
                roots.add(anchor)  # gone: held by its position, not listed
        else:
            roots.add(position)
    order: list[int] = []
    seen: set[int] = set()

    def visit(position: int) -> None:
        # Iterative, latest anchored first (each pushed reversed onto the stack).
        stack = [position]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            if current in present:
                order.append(current)
            stack.extend(sorted(children.get(current, ())))

    visit(-1)
    for root in sorted(roots):
        visit(root)
    # A cycle of anchors (never written so; a hand-edited meta) keeps its turns by position.
    order.extend(position for position in sorted(present) if position not in seen)
    return order


def _appended(placed: dict[int, int], indexes: Sequence[int], used: set[int]) -> dict[int, int]:
    """``placed`` with each of ``indexes`` it lacks at a new position after every ``used``
    one, in order."""
    free = max(used, default=-1) + 1
    for index in indexes:
        if index not in placed:
            placed[index] = free
            free += 1
    return placed


def _in_gaps(
    rows: int, placed: Mapping[int, int], used: set[int], anchors: Mapping[int, int]
) -> dict[int, int]:
    """New positions for the unplaced rows between two placed ones (or before the first),
    when the positions free between those two placed rows' hold them all: the lowest
    after the row before, the highest before the first placed row. Not next to an
    anchored turn, whose position says nothing of its place. ``used`` gains them."""
    found: dict[int, int] = {}
    previous: int | None = None  # the position of the last placed row
    waiting: list[int] = []
    for row in range(rows):
        if row not in placed:
            waiting.append(row)
            continue
        position = placed[row]
        if waiting and (position in anchors or previous in anchors):
            waiting = []
        if waiting:
            gap = range(position - 1, -1, -1) if previous is None else range(previous + 1, position)
            chosen = list(
                itertools.islice((free for free in gap if free not in used), len(waiting))
            )
            if len(chosen) == len(waiting):
                found.update(zip(waiting, sorted(chosen), strict=True))
                used.update(chosen)
            waiting = []
        previous = position
    return found


def _repeats(
    order: Sequence[int], turns: Sequence[TurnKey], said: Sequence[TurnKey], window: int
) -> dict[int, int] | None:
    """Every re-sent row as a repeat of a stored turn, in the conversation's order (the
    latest turns win): each row -> its turn's position; None when some row repeats none.

    Such a re-send changes nothing. The diff alignment alone could take a run of equal
    turns at other positions than the send that wrote them, and leave a row of the same
    transcript, sent again, unplaced: a new turn on every re-send. As for the alignment
    (:func:`placement`), one message repeating an older turn's words is a new turn, and
    against a window the repeats must reach the last stored turn in a longer run."""
    if not said or (len(said) == 1 and said[0] != turns[-1]):
        return None
    found: list[int] = []  # indexes into turns, from the last row back
    at = len(turns) - 1
    for row in range(len(said) - 1, -1, -1):
        while at >= 0 and turns[at] != said[row]:
            at -= 1
        if at < 0:
            return None
        found.append(at)
        at -= 1
    if window:
        run = longest = 1
        for later, earlier in itertools.pairwise(found):
            run = run + 1 if earlier == later - 1 else 1
            longest = max(longest, run)
        if found[0] != len(turns) - 1 or longest <= window:
            return None
    return {len(said) - 1 - step: order[at] for step, at in enumerate(found)}


def _window(turns: Sequence[TurnKey], said: Sequence[TurnKey]) -> int:
    """How many of the stored ``turns``' last ones ``said`` begins with (the most)."""
    for start in range(max(0, len(turns) - len(said)), len(turns)):
        if turns[start:] == said[: len(turns) - start]:
            return len(turns) - start
    return 0


def _aligned(
    order: Sequence[int], turns: Sequence[TurnKey], said: Sequence[TurnKey]
) -> tuple[dict[int, int], dict[int, int], int]:
    """The diff placement of :func:`placement`: the re-sent rows it repeats and those it
    edits, each -> the stored position (both empty when it holds nothing), and its
    longest run of repeated consecutive turns."""
    last = len(order) - 1
    opcodes = _opcodes(turns[::-1], said[::-1])
    repeated: dict[int, int] = {}
    edited: dict[int, int] = {}
    run = 0
    known = set(turns)
    for tag, low, high, first, end in opcodes:
        if tag == "equal":
            run = max(run, high - low)
        if tag == "equal" or (tag == "replace" and high - low == end - first):
            for step in range(high - low):
                row = len(said) - 1 - (first + step)
                position = order[last - (low + step)]
                if tag == "equal":
                    repeated[row] = position
                elif said[row] not in known or (row == len(said) - 1 and position == order[-1]):
                    edited[row] = position
    found, changed = len(repeated), len(edited)
    if changed and found <= 2 * changed:
        reaches_end = order[-1] in {**repeated, **edited}.values()
        whole = repeated.get(0, edited.get(0)) == order[0] and reaches_end and found > 0
        # The edited turns are the stored conversation's last ones, edited by the
        # re-send's last messages (an answer regenerated at the end of a window).
        last_ones = set(edited.values()) == set(order[len(order) - changed :])
        at_end = sorted(edited) == list(range(len(said) - changed, len(said)))
        if not (
            (whole and (found > changed or (found == changed and last_ones)))
            or (last_ones and at_end and found > changed)
        ):
            edited = {}
    if found < 2 and not edited:
        return {}, {}, 0
    return repeated, edited, run


def keyed_positions(
    sent: Sequence[tuple[int, str | None]],
    placed: Mapping[int, int],
    kept_at: Mapping[int, int],
    taken: set[int],
) -> dict[int, int]:
    """The position of every re-sent message: ``placed`` for those without an id, ``kept_at``
    for those with an id whose turn is stored (a turn keeps its position: a window of the
    latest messages re-sent does not renumber it), and for a new message with an id, its
    place after the message before it in the send (the send's index when none is placed
    before it), or after every position ``taken`` when that one is taken.

    ``sent`` holds (index in the send, message id or None) in order; ``taken`` (the stored
    turns' positions) gains the positions given.
    """
    taken.update(placed.values())
    positions: dict[int, int] = {}
    anchor: tuple[int, int] | None = None
    for index, message_id in sent:
        if message_id is None:
            position = placed[index]
        elif index in kept_at:
            position = kept_at[index]
        else:
            position = index if anchor is None else anchor[1] + index - anchor[0]
            if position in taken:
                position = max(taken) + 1
            taken.add(position)
        positions[index] = position
        anchor = (index, position)
    return positions
