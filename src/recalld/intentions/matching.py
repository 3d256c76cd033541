"""Whole-word matching of mentions: "Anna" fires on "Anna's move", never on "Annapolis".

Text is folded (case, diacritics: "Léa" matches "lea") and split into word
tokens; a mention holds when its tokens occur consecutively in the tokens of
what was heard.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

__all__ = ["EntityMatcher", "contains_phrase", "fold", "lookup_term", "tokens"]

WORD = re.compile(r"\w+", re.UNICODE)

# The hook the knowledge graph connects to: (sensed text, namespace) -> the names of
# the entities recognised in it. A mention trigger also holds when its text is
# (once folded) one of these names, so "Anna Lima" can fire on "Anna" or an alias.
EntityMatcher = Callable[[str, str], Sequence[str]]


def fold(text: str) -> str:
    """Case- and accent-insensitive form of ``text``."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(character for character in decomposed if not unicodedata.combining(character))


def tokens(text: str) -> list[str]:
    """The folded word tokens of ``text``, in order."""
    return WORD.findall(fold(text))


def contains_phrase(haystack: Sequence[str], phrase: Sequence[str]) -> bool:
    """Whether ``phrase`` occurs as consecutive tokens of ``haystack``."""
    size = len(phrase)
    if size == 0 or size > len(haystack):
        return False
    first = phrase[0]
    return any(
        haystack[index] == first and list(haystack[index : index + size]) == list(phrase)
        for index in range(len(haystack) - size + 1)
    )


def lookup_term(words: Sequence[str]) -> str:
    """The word a mention is indexed by: its longest (the rarest, as a rule), so
    "the Beatles" is looked up when "beatles" is heard, not on every "the"."""
    return max(words, key=len)
