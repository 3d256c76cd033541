"""A conversation id in one Unicode spelling (NFC), as keys, tags and speakers are.

"Zoë" typed precomposed and "Zoe" + U+0308 (as macOS and some tools write it) were two
conversations: two sources, two sets of turns, and a re-send under the other spelling
added every turn again. A conversation id is now composed before it is used, unless a
conversation is stored under the very spelling given (written before ids were
composed): that one keeps its id, so its re-sends still find it.
"""

from __future__ import annotations

import unicodedata

from recalld.store.base import Scope, Store

__all__ = ["spelled_conversation"]


def spelled_conversation(store: Store, scope: Scope, given: str, source: str) -> str:
    """The id under which the conversation ``given`` (whose turns are under ``source``) is
    written: ``given`` in NFC, or as given when turns of that spelling are stored."""
    composed = unicodedata.normalize("NFC", given)
    if composed == given or len(composed) > len(given):
        # A few characters (U+0958 …) are longer composed: such an id stays as given, never
        # past the length it was checked for.
        return given
    stored = store.source_turns(scope, source, texts=False)
    if any(turn.meta.get("conversation") == given for turn in stored):
        return given
    return composed
