"""A conversation id in one Unicode spelling (NFC), as keys, tags and speakers are.

"Zoë" typed precomposed and "Zoe" + U+0308 (as macOS and some tools write it) were two
conversations: two sources, two sets of turns, and a re-send under the other spelling
added every turn again. A conversation id is now composed before it is used, unless a
conversation is stored under the very spelling given or under its decomposed (NFD)
spelling (written before ids were composed): that one keeps its id, so its re-sends
find it under either spelling.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from recalld.store.base import Scope, Store

__all__ = ["spelled_conversation"]


def spelled_conversation(
    store: Store, scope: Scope, given: str, source_of: Callable[[str], str]
) -> str:
    """The id under which the conversation ``given`` is written: ``given`` in NFC, or the
    spelling (``given``, else its NFD form) a stored conversation has. ``source_of`` is
    the source of the turns of a spelling."""
    composed = unicodedata.normalize("NFC", given)
    if len(composed) > len(given):
        # A few characters (U+0958 …) are longer composed: such an id stays as given, never
        # past the length it was checked for.
        return given
    decomposed = unicodedata.normalize("NFD", given)
    for spelling in dict.fromkeys((given, decomposed)):
        if spelling != composed and _stored(store, scope, spelling, source_of):
            return spelling
    return composed


def _stored(store: Store, scope: Scope, spelling: str, source_of: Callable[[str], str]) -> bool:
    """Whether turns of the conversation ``spelling`` are stored."""
    source = source_of(spelling)
    if source != source_of(unicodedata.normalize("NFC", spelling)):
        # A source of its own (the conversation's URI): one turn tells.
        return bool(store.by_source(scope, source, limit=1))
    # A source given for every spelling: its turns say which conversation they are.
    stored = store.source_turns(scope, source, texts=False)
    return any(turn.meta.get("conversation") == spelling for turn in stored)
