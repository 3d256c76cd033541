"""Case-insensitive substring search over entity names, types and observations, the same on
every store.

The reference memory server lower-cases both sides (JavaScript's ``toLowerCase``, the
Unicode default mapping); Python's :meth:`str.lower` is the same mapping. SQLite's LIKE
folds ASCII only, and PostgreSQL's ILIKE folds what the database's locale says (ASCII
only under ``C``), so neither can be asked. Instead a query becomes a case-sensitive
pattern that lists, for each of its lower-cased characters, every character that
lower-cases to it (``ë`` is ``[ëË]``): SQLite's GLOB and PostgreSQL's regular expressions
read it alike, with the stores' own indexes and limits. The one character whose lower
case is two characters (``İ``, ``i`` and a combining dot) and the one whose lower case
depends on its neighbours (capital sigma: final sigma ending a word, else small sigma)
make the pattern wider than the question when the query holds the dot or a sigma; then
:func:`entity_matches` checks each candidate in Python (:attr:`SubstringPattern.exact`
says whether that is needed).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["SubstringPattern", "entity_matches", "substring_pattern"]

# "İ".lower() is "i" + this combining dot: the only lower case longer than one character.
_COMBINING_DOT = "\u0307"
_DOTTED_CAPITAL_I = "\u0130"
# Every cased character is below U+20000 (the last block with case is Adlam, U+1E900).
_CASED_BELOW = 0x20000
# Capital sigma lower-cases to final sigma ending a word, else to small sigma: the one that
# depends on the characters around it, so both stand for all three and are checked.
_SIGMAS = ("\u03c3", "\u03c2", "\u03a3")
_GLOB_SPECIAL = frozenset("*?[]^-")


@functools.cache
def _upper_forms() -> dict[str, tuple[str, ...]]:
    """Each lower-case character's other characters that lower-case to it alone."""
    forms: dict[str, list[str]] = {}
    for point in range(_CASED_BELOW):
        character = chr(point)
        lowered = character.lower()
        if lowered != character and len(lowered) == 1:
            forms.setdefault(lowered, []).append(character)
    return {lowered: tuple(characters) for lowered, characters in forms.items()}


@dataclass(frozen=True)
class SubstringPattern:
    """A query as patterns: ``glob`` for SQLite's GLOB, ``regex`` for PostgreSQL's ``~``.

    Both match every text whose lower case contains ``lowered``; when ``exact`` they
    match no other text, else candidates are checked with :func:`entity_matches`.
    """

    lowered: str
    glob: str
    regex: str
    exact: bool


def _glob_class(members: list[str]) -> str:
    if len(members) == 1:
        member = members[0]
        return f"[{member}]" if member in "*?[" else member
    # Inside a GLOB class "]" is literal first, "-" last, "^" anywhere but first.
    plain = [member for member in members if member not in _GLOB_SPECIAL]
    first = ["]"] if "]" in members else []
    last: list[str] = [member for member in ("^", "-") if member in members]
    return "[" + "".join(first + plain + last) + "]"


def _regex_class(members: list[str]) -> str:
    return "[" + "".join(f"\\U{ord(member):08x}" for member in members) + "]"


def substring_pattern(query: str) -> SubstringPattern:
    """The patterns that find ``query`` in any case (see the module docstring)."""
    lowered = query.lower()
    forms = _upper_forms()
    glob = ["*"]
    regex: list[str] = []
    for index, character in enumerate(lowered):
        if character == _COMBINING_DOT:
            # Part of "İ" matched at the "i" before it, or a dot of its own: either way wider.
            glob.append("*")
            regex.append(".*")
            continue
        others = _SIGMAS if character in _SIGMAS else forms.get(character, ())
        members = list(dict.fromkeys((character, *others)))
        following = lowered[index + 1 : index + 2]
        if character == "i" and following in ("", _COMBINING_DOT):
            members.append(_DOTTED_CAPITAL_I)  # its lower case starts with this "i"
        glob.append(_glob_class(members))
        regex.append(_regex_class(members))
    glob.append("*")
    return SubstringPattern(
        lowered=lowered,
        glob="".join(glob),
        regex="".join(regex),
        exact=not any(character in lowered for character in (_COMBINING_DOT, *_SIGMAS)),
    )


def entity_matches(
    pattern: SubstringPattern,
    key: str,
    *,
    name: str,
    entity_key: str,
    type: str,
    observations: Iterable[str],
) -> bool:
    """Whether an entity answers the query: its name, type or an observation contains it in
    any case, or its key contains the query's ``key`` (when that is not empty)."""
    if bool(key) and key in entity_key:
        return True
    texts = (name, type, *observations)
    return any(pattern.lowered in text.lower() for text in texts)
