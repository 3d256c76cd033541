"""Entity names and relation predicates: normalisation (the matching key) and validation.

Two spellings are the same entity when their keys are equal: Unicode NFKC,
case-folded, underscores read as spaces (the knowledge tools' ``John_Smith``
is the ``John Smith`` of a chat line), a trailing possessive dropped, runs of
whitespace collapsed and surrounding punctuation stripped.
"""

from __future__ import annotations

import re
import unicodedata

from recalld.errors import ValidationError
from recalld.graph.types import (
    ENTITY_NAME_MAX_CHARS,
    ENTITY_TYPE_MAX_CHARS,
    RELATION_PREDICATE_MAX_CHARS,
)

__all__ = ["check_entity_name", "check_entity_type", "check_predicate", "entity_key"]

_SPACES = re.compile(r"[\s_]+")
_POSSESSIVE = re.compile(r"(?:'s|\u2019s|'|\u2019)$")
_EDGE_PUNCTUATION = " \t\"'`\u201c\u201d\u2018\u2019.,;:!?()[]{}<>"
# Control characters, line/paragraph separators and invisible format characters.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def entity_key(name: str) -> str:
    """The matching key of an entity name (see the module docstring); may be empty."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _SPACES.sub(" ", text).strip(_EDGE_PUNCTUATION)
    text = _POSSESSIVE.sub("", text).strip(_EDGE_PUNCTUATION)
    return text


def _plain_text(field: str, value: object, limit: int) -> str:
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    text = " ".join(value.split())
    if not text:
        raise ValidationError(field, "must not be empty")
    if len(text) > limit:
        raise ValidationError(field, f"is {len(text)} characters; the limit is {limit}")
    for character in text:
        if unicodedata.category(character) in _REFUSED_CATEGORIES:
            raise ValidationError(
                field, f"contains the control or invisible character U+{ord(character):04X}"
            )
    return text


def check_entity_name(value: object, field: str = "name") -> str:
    """An entity name: 1-200 characters of visible text with a non-empty key."""
    text = _plain_text(field, value, ENTITY_NAME_MAX_CHARS)
    if not entity_key(text):
        raise ValidationError(field, f"{text!r} has no letters or digits to match on")
    return text


def check_entity_type(value: object, field: str = "entityType") -> str:
    """An entity type: 1-100 characters of visible text."""
    return _plain_text(field, value, ENTITY_TYPE_MAX_CHARS)


def check_predicate(value: object, field: str = "relationType") -> str:
    """A relation predicate: 1-100 characters of visible text."""
    return _plain_text(field, value, RELATION_PREDICATE_MAX_CHARS)
