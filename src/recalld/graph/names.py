"""Entity names and relation predicates: normalisation (the matching key) and validation.

Two spellings are the same entity when their keys are equal: Unicode NFKC,
case-folded, underscores read as spaces (the knowledge tools' ``John_Smith``
is the ``John Smith`` of a chat line), a trailing possessive dropped, runs of
whitespace collapsed and surrounding punctuation stripped.
"""

from __future__ import annotations

import re
import unicodedata

from recalld import _validate as check
from recalld.errors import ValidationError
from recalld.graph.types import (
    ENTITY_NAME_MAX_CHARS,
    ENTITY_TYPE_MAX_CHARS,
    RELATION_PREDICATE_MAX_CHARS,
)

__all__ = [
    "check_entity_lookup",
    "check_entity_name",
    "check_entity_type",
    "check_predicate",
    "entity_key",
]

_SPACES = re.compile(r"[\s_]+")
_POSSESSIVE = re.compile(r"(?:'s|\u2019s|'|\u2019)$")
_EDGE_PUNCTUATION = " \t\"'`\u201c\u201d\u2018\u2019.,;:!?()[]{}<>"


def entity_key(name: str) -> str:
    """The matching key of an entity name (see the module docstring); may be empty."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _SPACES.sub(" ", text).strip(_EDGE_PUNCTUATION)
    text = _POSSESSIVE.sub("", text).strip(_EDGE_PUNCTUATION)
    return text


def _plain_text(field: str, value: object, limit: int) -> str:
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    # The same rule as every other name (one list of refused characters, also published
    # in the API's schemas), checked before spaces are collapsed.
    check.name_text(value, field)
    text = " ".join(value.split())
    if len(text) > limit:
        raise ValidationError(field, f"is {len(text)} characters; the limit is {limit}")
    return text


def check_entity_name(value: object, field: str = "name") -> str:
    """An entity name: 1-200 characters of visible text with a non-empty key."""
    text = _plain_text(field, value, ENTITY_NAME_MAX_CHARS)
    if not entity_key(text):
        raise ValidationError(field, f"{text!r} has no letters or digits to match on")
    return text


def check_entity_lookup(value: object, field: str = "name") -> str | None:
    """A name to look an entity up by: as :func:`check_entity_name`, except that visible
    text with no letter or digit (``'""'``), which the API's schemas allow, is None: a
    valid question that no entity can answer (the caller says "not found")."""
    text = _plain_text(field, value, ENTITY_NAME_MAX_CHARS)
    return text if entity_key(text) else None


def check_entity_type(value: object, field: str = "entityType") -> str:
    """An entity type: 1-100 characters of visible text."""
    return _plain_text(field, value, ENTITY_TYPE_MAX_CHARS)


def check_predicate(value: object, field: str = "relationType") -> str:
    """A relation predicate: 1-100 characters of visible text."""
    return _plain_text(field, value, RELATION_PREDICATE_MAX_CHARS)
