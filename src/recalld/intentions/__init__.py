"""Prospective memory: "remind me when…", delivered once, by place, time, mention or sense.

An *intention* is a memory of kind ``intention`` (listed, exported and
forgotten like any memory) whose content is the action to remind of, with one
or more *triggers*, all of which must hold: a place within a radius, a time (an
instant, a window or a recurrence in the caller's zone), a mention (whole
words, or an entity), a tag, a biometric threshold sustained over N readings.
``sense`` evaluates them beside involuntary recollections; time-only
intentions fire from a clock-driven scheduler in every long-running process.
A firing is claimed in one transaction and queued in the pending queue as a
``reminder`` (what matched and why), delivered exactly once like a recollection.

Modules: :mod:`~recalld.intentions.model` (the shapes),
:mod:`~recalld.intentions.timing` (zones, phrases, recurrences),
:mod:`~recalld.intentions.building` (a request into triggers),
:mod:`~recalld.intentions.matching` (whole-word mentions, the entity hook),
:mod:`~recalld.intentions.evaluation` (which triggers hold, who fires),
:mod:`~recalld.intentions.scheduler` (the thread) and
:mod:`~recalld.intentions.component` (the :class:`Intentions` facade).
"""

from recalld.intentions.component import Intentions
from recalld.intentions.matching import EntityMatcher
from recalld.intentions.model import (
    Intention,
    IntentionList,
    IntentionRequest,
    ResolvedTime,
    SignalCondition,
)

__all__ = [
    "EntityMatcher",
    "Intention",
    "IntentionList",
    "IntentionRequest",
    "Intentions",
    "ResolvedTime",
    "SignalCondition",
]
