"""A mention is looked for in what was heard in time linear in the two: comparing the
phrase at each token cost haystack times phrase ("a " * 32,000 heard against the mention
"a " * 99 + "b": 0.13 s for each such reminder at each sense) (adversarial pass e63)."""

from __future__ import annotations

import pytest

from recalld.intentions.matching import contains_phrase, tokens


class _Counted(str):
    """A token that counts how often it is compared."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        _Counted.comparisons += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_a_phrase_almost_everywhere_is_not_compared_token_by_token() -> None:
    heard = [_Counted(token) for token in tokens("a " * 2_000)]
    phrase = [_Counted(token) for token in tokens("a " * 99 + "b")]
    _Counted.comparisons = 0
    assert not contains_phrase(heard, phrase)
    # Token by token it was about 2,000 times 100 comparisons.
    assert _Counted.comparisons <= len(heard) + len(phrase)


@pytest.mark.parametrize(
    ("heard", "phrase", "found"),
    [
        ("x a b c y", "a b c", True),
        ("a b", "a b", True),
        ("a b c", "c", True),
        ("x ab c", "b c", False),  # whole tokens only
        ("aa b", "a b", False),
        ("a b", "a b c", False),
        ("pick up the prescription, please", "the prescription", True),
        ("C++ and C#", "c#", True),
        ("", "a", False),
    ],
)
def test_a_phrase_is_found_as_whole_consecutive_tokens(
    heard: str, phrase: str, found: bool
) -> None:
    assert contains_phrase(tokens(heard), tokens(phrase)) is found
