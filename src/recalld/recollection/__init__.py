"""Involuntary recall: memories stored with their context come back when the context recurs.

``recall`` (pull) compares only the cues given and changes nothing. ``sense``
(push) always includes the current time; memories whose encoding context
matches strongly *fire*: they are returned, queued for ``pending`` and not
fired again for the habituation window.

Channels, each a similarity in [0, 1] (see :mod:`recalld.context`): ``text``
(what is heard or read: the larger of the F1 overlap of its words with the
memory's words and the cosine of their text embeddings, when the memory is
embedded; candidates from the full-text index and the nearest vectors),
``place``, ``time``, ``tags``,
``image``, ``audio``, ``biometric``. A memory's score is the weighted mean of
the channels both the cue and the memory have (weights: text, place, image,
audio 1.0; time and biometric 0.6; tags 0.5; a memory stored without a place
is neither helped nor hurt by the cue's place), times a salience boost
``0.85 + 0.15·salience`` (salience 0.5 when unset), so salience lifts a match
but never makes one.

Firing rule (defaults, all in :class:`~recalld.config.Settings`): a memory
fires when one of ``text``, ``image`` or ``audio`` alone reaches
``fire_strong`` (0.9), or when its score is at least ``fire_score`` (0.55) and
two or more channels reach ``fire_channel`` (0.6), at least one of them an
anchor (place, text, image or audio). Time, place, tags or a biometric reading
alone never fires, nor do time and biometrics together; a memory that fired
does not fire again for ``habituation_seconds`` (3 hours).

The package is split by responsibility: :mod:`~recalld.recollection.cue`
(the cue and the media features it is built from),
:mod:`~recalld.recollection.candidates` (which memories to score),
:mod:`~recalld.recollection.scoring` (channels and the combined score),
:mod:`~recalld.recollection.firing` (the firing rule) and
:mod:`~recalld.recollection.recollector` (the facade the service owns).
"""

from recalld.recollection.cue import Cue, Recollection, flat_place
from recalld.recollection.recollector import Recollector

__all__ = ["Cue", "Recollection", "Recollector", "flat_place"]
