"""The case-insensitive substring patterns of search_nodes, against Python's lower case."""

from __future__ import annotations

import random

import apsw

from recalld.graph.matching import entity_matches, substring_pattern

# Letters with case beyond ASCII (the dotted capital I, the Kelvin sign, sigmas, sharp s),
# GLOB's own specials and a combining dot.
ALPHABET = "aAiI\u0130kK\u212a\u00eb\u00cb\u00df\u1e9e\u03c3\u03a3\u03c2\u00f6\u00d6]^-*?[x\u0307 "


def test_matching_glob_finds_what_lower_case_finds() -> None:
    connection = apsw.Connection(":memory:")
    chosen = random.Random(7)
    for _ in range(5_000):
        text = "".join(chosen.choice(ALPHABET) for _ in range(chosen.randint(0, 6)))
        query = "".join(chosen.choice(ALPHABET) for _ in range(chosen.randint(0, 3)))
        pattern = substring_pattern(query)
        [(globbed,)] = connection.execute("SELECT ? GLOB ?", (text, pattern.glob)).fetchall()
        wanted = query.lower() in text.lower()
        # Never narrower; wider only when it says so (then candidates are checked).
        assert globbed or not wanted, (text, query, pattern.glob)
        assert not (pattern.exact and globbed and not wanted), (text, query, pattern.glob)
        checked = entity_matches(pattern, "", name=text, entity_key="", type="", observations=())
        assert checked == wanted


def test_matching_lists_every_case_of_a_letter() -> None:
    pattern = substring_pattern("ZO\u00cb")
    assert pattern.lowered == "zo\u00eb"
    assert pattern.glob == "*[zZ][oO][\u00eb\u00cb]*"
    assert pattern.exact
