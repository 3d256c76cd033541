"""Time recalld's text parsers on inputs built to be slow (adversarial pass e62).

Each case is the largest input its surface accepts (a memory's content: 64 KB; a query:
10,000 characters) made of a pattern that once cost time growing faster than the input:
many capitalised words, hyphenated runs, short sentences, long runs of spaces, many
near-matches of the date phrases. Run it from the repository root::

    .venv/bin/python bench/hostile_inputs.py

Progress goes to stderr; stdout is one JSON object: milliseconds per case (one call each,
in this process). Anything over ~100 ms for one call is worth a look.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

from recalld._text import named_words, query_terms
from recalld.conversation_placement import TurnKey, placement
from recalld.graph.rules import RuleExtractor
from recalld.graph.types import ExtractionInput
from recalld.importing.transcript import read_transcript
from recalld.retrieval.periods import query_period

CONTENT_CHARS = 64 * 1024
QUERY_CHARS = 10_000

MEMORY_PATTERNS = {
    "capitalised words": "Ada ",
    "hyphenated capitals": "Ab-",
    "short sentences": "Ada. ",
    "titles": "Mr. Ada. ",
    "copulas": "Ada is ",
    "names and": "Ada Lovelace and ",
    "possessives": "Ada's ",
    "common capitals": "I ",
}
QUERY_PATTERNS = {
    "digits": "1 ",
    "last": "last ",
    "on the 1st of": "on the 1st of ",
    "dates": "2024-01-01 ",
    "ago": "3 days ago ",
    "weekdays": "last Monday next Tuesday ",
    "month names": "January February March ",
}


def _filled(pattern: str, size: int) -> str:
    return (pattern * (size // len(pattern) + 1))[:size]


def _milliseconds(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return round((time.perf_counter() - started) * 1000, 1)


def _edited_history(turns: int) -> None:
    """A whole history, three in four turns "ok" or "yes", re-sent with one turn edited."""
    stored: dict[int, TurnKey] = {
        index: ("Ada", "ok" if index % 2 else "yes") if index % 4 else ("Bob", f"answer {index}")
        for index in range(turns)
    }
    sent = list(enumerate(stored.values()))
    sent[turns // 2] = (turns // 2, ("Bob", "edited"))
    placement(stored, sent, stored)


def main() -> None:
    """Print the JSON timings."""
    extractor = RuleExtractor()
    timings: dict[str, dict[str, float]] = {"graph rules": {}, "query": {}}
    for name, pattern in MEMORY_PATTERNS.items():
        item = ExtractionInput(text=_filled(pattern, CONTENT_CHARS), speaker="Eve")
        timings["graph rules"][name] = _milliseconds(partial(extractor.extract, item))
        print(name, timings["graph rules"][name], file=sys.stderr)
    kin = ExtractionInput(text="my sister" + " " * 60_000 + "Anna", speaker="Eve")
    timings["graph rules"]["kin then spaces"] = _milliseconds(lambda: extractor.extract(kin))
    spaces = " " * CONTENT_CHARS
    spaced = f"Ada: hi\n{spaces}x\n{spaces}Bob{spaces}:{spaces}hi\n"
    continued = "Ada: start\n" + "more words\n" * 200_000
    timings["transcript"] = {
        "lines of spaces": _milliseconds(partial(read_transcript, spaced)),
        "200,000 continuation lines": _milliseconds(partial(read_transcript, continued)),
    }
    stored: dict[int, TurnKey] = dict.fromkeys(range(2_000), ("Ada", "ok"))
    alternating = [(row, ("Bob", "x") if row % 2 == 0 else ("Ada", "ok")) for row in range(2_000)]
    timings["conversation re-send"] = {
        "2,000 alternating against 2,000 equal": _milliseconds(
            partial(placement, stored, alternating, stored)
        ),
        "5,000 re-sent whole, one edited": _milliseconds(partial(_edited_history, 5_000)),
    }
    now = datetime.now(UTC)
    for name, pattern in QUERY_PATTERNS.items():
        query = _filled(pattern, QUERY_CHARS)
        timings["query"][name + " (period)"] = _milliseconds(partial(query_period, query, now, UTC))
        timings["query"][name + " (terms)"] = _milliseconds(partial(query_terms, query, 64))
        timings["query"][name + " (named words)"] = _milliseconds(partial(named_words, query))
    print(json.dumps(timings, indent=2))


if __name__ == "__main__":
    main()
