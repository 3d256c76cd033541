"""The rule-based extractor on memories built to be slow, at the content limit (64 KB).

Each of these inputs cost the worker from 30 s to nearly three minutes before adversarial
pass e62 (a scan restarted at every capital of a run, or at every name over the whole text
before it): the tests assert what is extracted, the numbers are in bench/hostile_inputs.py.
"""

from __future__ import annotations

from recalld.graph.rules import RuleExtractor
from recalld.graph.types import Extraction, ExtractionInput

CONTENT_LIMIT = 64 * 1024


def _extract(text: str, speaker: str | None = None) -> Extraction:
    assert len(text.encode()) <= CONTENT_LIMIT
    return RuleExtractor().extract(ExtractionInput(text=text, speaker=speaker))


def _triples(extraction: Extraction) -> list[tuple[str, str, str]]:
    return [(r.subject, r.predicate, r.object) for r in extraction.relations]


def test_one_hyphenated_run_is_one_name() -> None:
    text = "Ab-" * (CONTENT_LIMIT // 3)
    extraction = _extract(text)
    assert [entity.name for entity in extraction.entities] == [text.rstrip("-")]
    assert extraction.relations == ()


def test_a_long_run_of_capitalised_words_owns_what_follows_it() -> None:
    run = " ".join(["Ada"] * 16_000) + " Bob"
    extraction = _extract(run + "'s garden")
    assert _triples(extraction) == [(run, "has", "garden")]
    assert _triples(_extract(run + " is a gardener")) == [(run, "is_a", "gardener")]
    assert _triples(_extract(run + " and more")) == []


def test_many_short_sentences_each_name_counted() -> None:
    extraction = _extract("Ada. " * 13_000 + "Bo is a cat. Mr. Ada. ")
    counts = {entity.name: entity.count for entity in extraction.entities}
    # "Bo" starts a sentence and is too short to be a name of its own; it still "is a cat".
    assert counts == {"Ada": 13_001, "cat": 1}
    assert _triples(extraction) == [("Bo", "is_a", "cat")]


def test_a_kin_word_then_a_long_run_of_spaces_still_names_the_relative() -> None:
    extraction = _extract("my sister" + " " * 60_000 + "Anna", speaker="Eve")
    assert _triples(extraction) == [("Eve", "sister", "Anna")]
    spaced_comma = _extract("my sister" + " " * 30_000 + "," + " " * 30_000 + "Anna", "Eve")
    assert _triples(spaced_comma) == [("Eve", "sister", "Anna")]


def test_a_long_run_of_common_capitalised_words_is_dropped_before_the_name() -> None:
    # 64 KB of "I I I ..." took 4 s of the worker's time: the common words were dropped
    # one at a time, copying the rest each time (review of pass e62).
    extraction = _extract("I " * (CONTENT_LIMIT // 2 - 10) + "Ada Lovelace")
    assert [entity.name for entity in extraction.entities] == ["Ada Lovelace"]
    assert _extract("I\t" * (CONTENT_LIMIT // 2)).entities == ()
