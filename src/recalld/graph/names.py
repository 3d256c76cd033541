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
    ExtractedEntity,
    ExtractedRelation,
    Extraction,
)

__all__ = [
    "check_entity_lookup",
    "check_entity_name",
    "check_entity_type",
    "check_predicate",
    "entity_key",
    "search_key",
    "visible_extraction",
]

_SPACES = re.compile(r"[\s_]+")
_SPACE = re.compile(r"[\s_]")
_POSSESSIVE = re.compile(r"(?:'s|\u2019s|'|\u2019)$")
_EDGE_PUNCTUATION = " \t\"'`\u201c\u201d\u2018\u2019.,;:!?()[]{}<>"


def entity_key(name: str) -> str:
    """The matching key of an entity name (see the module docstring); may be empty."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _SPACES.sub(" ", text).strip(_EDGE_PUNCTUATION)
    text = _POSSESSIVE.sub("", text).strip(_EDGE_PUNCTUATION)
    return text


def search_key(query: str) -> str:
    """What ``search_nodes`` looks for in entity keys: the query in NFKC, case-folded, with
    each underscore or whitespace character read as a space, and nothing trimmed or
    collapsed.

    :func:`entity_key` strips the punctuation around a name and a possessive, which is
    right for telling two spellings of one name apart but wrong for a search: the key of
    ".NET" is "net", found in "Kenneth"; the reference finds a query in a text as given
    (three spaces are looked for as three).
    """
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", query).casefold())


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


def visible_extraction(extraction: Extraction) -> Extraction:
    """``extraction`` with names and predicates anyone can look up again.

    An extractor takes names from a memory's text as written, and text may hold control
    or invisible characters (an ANSI colour code, a right-to-left override): such a name
    was stored, listed, and refused when asked for (the rule of :func:`check_entity_name`).
    A format character goes ("Mont\u00adréal" is "Montréal"), a control character becomes
    a space (runs of space collapse); a name or predicate
    left without a key or over its limit is dropped, with the relations that name it;
    names that become one are one entity (their counts added, the first one's type).
    """

    def visible(text: str) -> str:
        # A format character (soft hyphen, zero-width joiner, a bidi control) sits inside
        # a word: it goes; a control character (an escape, a bell) parts words: a space.
        cleared = check.INVISIBLE.sub(
            lambda found: "" if unicodedata.category(found.group()) == "Cf" else " ", text
        )
        return " ".join(cleared.split())

    names: dict[str, str | None] = {}

    def name_of(name: str) -> str | None:
        if name not in names:
            text = visible(name)
            fits = entity_key(text) and len(text) <= ENTITY_NAME_MAX_CHARS
            names[name] = text if fits else None
        return names[name]

    entities: dict[str, ExtractedEntity] = {}
    for entity in extraction.entities:
        name = name_of(entity.name)
        if name is None:
            continue
        known = entities.get(name)
        if known is None:
            entities[name] = ExtractedEntity(name, entity.type, entity.count)
        else:
            entities[name] = ExtractedEntity(name, known.type, known.count + entity.count)
    relations: list[ExtractedRelation] = []
    for relation in extraction.relations:
        subject, object_ = name_of(relation.subject), name_of(relation.object)
        predicate = visible(relation.predicate)
        if subject is None or object_ is None or not predicate:
            continue
        if len(predicate) > RELATION_PREDICATE_MAX_CHARS:
            continue
        relations.append(ExtractedRelation(subject, predicate, object_))
    cleaned = Extraction(tuple(entities.values()), tuple(dict.fromkeys(relations)))
    return extraction if cleaned == extraction else cleaned
