"""The rule-based extractor: needs no model (tests, and when spaCy is not installed).

Entities: the speaker (a person), every tag (type ``tag``), and capitalised
word sequences (type ``name``; a single capitalised word that only starts a
sentence, or is a common word, is skipped). Relations, from three surface
patterns: ``Name's thing`` (has), ``my sister Anna`` (speaker → sister → Anna),
and ``Name is a thing`` (is_a).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from recalld._text import COMMON_CAPITALISED
from recalld.graph.types import ExtractedEntity, ExtractedRelation, Extraction, ExtractionInput

__all__ = ["COMMON_CAPITALISED", "RULES_VERSION", "RuleExtractor"]

RULES_VERSION = 1
_NAME = re.compile(
    r"[A-Z][\w\u2019'-]*"
    r"(?:(?:[ \t]+(?:of|the|de|da|du|van|von|der|la|le|del)){0,2}[ \t]+[A-Z][\w\u2019'-]*)*"
)
# A capitalised run ("Ada Lovelace"): the subject of ``Name's thing`` and ``Name is a
# thing``. Those are matched from the end of each whole run, never from every capital
# inside it, nor backtracking over its words: a memory of 64 KB of "Ada Ada Ada ..." (or
# "Ab-Ab-...") cost minutes of the worker's time when each word restarted a scan to the end
# of the run (adversarial pass e62).
_RUN = re.compile(r"\b[A-Z][\w-]*+(?:[ \t]++[A-Z][\w-]*+)*+")
_POSSESSIVE_TAIL = re.compile(r"['\u2019]s\s++([a-z][a-z-]{2,30})\b")
_COPULA_TAIL = re.compile(r"\s++(?:is|was)\s++(?:a|an|the)\s++([a-z][a-z-]{2,30})\b")
# ",?" between two optional runs of spaces made "my sister" and 60,000 spaces cost 30 s.
_KIN = re.compile(
    r"\b[Mm]y\s+(sister|brother|mother|mom|mum|father|dad|son|daughter|wife|husband|partner|"
    r"friend|boss|cousin|aunt|uncle|grandma|grandmother|grandpa|grandfather|niece|nephew|"
    r"colleague|boyfriend|girlfriend|dog|cat)(?:\s*+,)?\s++([A-Z][\w-]*(?:[ \t]+[A-Z][\w-]*)?)"
)
_TRIM = re.compile(r"['\u2019]s$")
_OPENERS = '"\u201c('
_SENTENCE_ENDS = ".!?"


def _starts_sentence(text: str, position: int) -> bool:
    """Whether ``text[position]`` starts a sentence: only spaces and opening quotes after
    the text's start, a line break, or a sentence's end and a space. A backward scan that
    stops at the first other character, so all the names of a memory cost one pass
    (matching a pattern anchored at the end of ``text[:position]`` scanned the whole prefix
    for every name: quadratic)."""
    index = position
    while index > 0 and text[index - 1] in _OPENERS:
        index -= 1
    spaces_end = index
    while index > 0 and text[index - 1].isspace():
        if text[index - 1] == "\n":
            return True
        index -= 1
    if index == 0:
        return True
    return index < spaces_end and text[index - 1] in _SENTENCE_ENDS


def _run_relations(text: str, tail: re.Pattern[str]) -> list[tuple[str, str]]:
    """(run, thing) for each capitalised run that ``tail`` follows, left to right."""
    found: list[tuple[str, str]] = []
    resume = 0
    for run in _RUN.finditer(text):
        if run.start() < resume:
            continue
        after = tail.match(text, run.end())
        if after is not None:
            found.append((run.group(0), after.group(1)))
            resume = after.end()
    return found


def _names(text: str) -> list[str]:
    found: list[str] = []
    for match in _NAME.finditer(text):
        name = _TRIM.sub("", match.group(0).strip(" .-'\u2019"))
        words = name.split()
        if not words:
            continue
        # The first uncommon word, then one slice: dropping one word at a time copied the
        # rest each time, so 64 KB of "I I I ..." took 4 s (review of pass e62).
        first = next(
            (at for at, word in enumerate(words) if word.lower() not in COMMON_CAPITALISED),
            len(words),
        )
        words = words[first:]
        if not words:
            continue
        name = " ".join(words)
        single = len(words) == 1
        at_start = words[0] == match.group(0).split()[0] and _starts_sentence(text, match.start())
        if single and (name.lower() in COMMON_CAPITALISED or (at_start and len(name) < 3)):
            continue
        found.append(name)
    return found


class RuleExtractor:
    """:class:`recalld.graph.extractor.Extractor` from surface patterns (see the module)."""

    @property
    def name(self) -> str:
        """``rules/v<N>``: bumped whenever the rules change what they extract."""
        return f"rules/v{RULES_VERSION}"

    @property
    def description(self) -> str:
        """For status."""
        return f"rule-based extractor v{RULES_VERSION} (no model)"

    def extract(self, item: ExtractionInput) -> Extraction:
        """The entities and relations of one memory."""
        counts: Counter[str] = Counter()
        types: dict[str, str] = {}
        if item.speaker:
            counts[item.speaker] += 1
            types[item.speaker] = "person"
        for tag in item.tags:
            counts[tag] += 1
            types.setdefault(tag, "tag")
        for name in _names(item.text):
            counts[name] += 1
            types.setdefault(name, "name")
        relations: list[ExtractedRelation] = []
        for owner, thing in _run_relations(item.text, _POSSESSIVE_TAIL):
            relations.append(ExtractedRelation(owner, "has", thing))
            types.setdefault(thing, "topic")
            counts[thing] += 1
        if item.speaker:
            for relation, name in _KIN.findall(item.text):
                relations.append(ExtractedRelation(item.speaker, relation.lower(), name))
                types.setdefault(name, "person")
        for subject, thing in _run_relations(item.text, _COPULA_TAIL):
            if subject.lower() in COMMON_CAPITALISED:
                continue
            relations.append(ExtractedRelation(subject, "is_a", thing))
            types.setdefault(thing, "topic")
            counts[thing] += 1
        entities = tuple(
            ExtractedEntity(name=name, type=types[name], count=count)
            for name, count in counts.items()
        )
        return Extraction(entities=entities, relations=tuple(relations))

    def extract_batch(self, items: Sequence[ExtractionInput]) -> list[Extraction]:
        """One extraction per item."""
        return [self.extract(item) for item in items]
