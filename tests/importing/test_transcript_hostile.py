"""Text transcripts built to be slow: long runs of spaces, many continuation lines.

Before adversarial pass e62 the first took minutes for one 64 KB line (a pattern tried
every split of its spaces) and the second grew with the square of the file (20 s for
2 MB); these assert what is read, the numbers are in bench/hostile_inputs.py.
"""

from __future__ import annotations

import pytest

from recalld.errors import ValidationError
from recalld.importing.transcript import read_transcript

LINE_CHARS = 64 * 1024


def test_a_line_of_spaces_then_words_continues_the_message_before_it() -> None:
    spaces = " " * LINE_CHARS
    fields = read_transcript(f"Ada: hello\n{spaces}x\n{spaces}Bob{spaces}:{spaces}hi\n")
    assert fields["messages"] == [
        {"speaker": "Ada", "content": "hello\nx"},
        {"speaker": "Bob", "content": "hi"},
    ]


def test_a_first_line_of_spaces_and_no_colon_names_the_line() -> None:
    with pytest.raises(ValidationError) as refused:
        read_transcript(" " * LINE_CHARS + "x" + " " * LINE_CHARS + "y")
    assert refused.value.field == "line 1"


def test_a_speaker_past_sixty_characters_is_no_speaker() -> None:
    fields = read_transcript("Ada: hi\n" + "B" * 61 + ": hello\n" + "C" * 60 + ":\tyes")
    assert fields["messages"] == [
        {"speaker": "Ada", "content": "hi\n" + "B" * 61 + ": hello"},
        {"speaker": "C" * 60, "content": "yes"},
    ]


def test_many_continuation_lines_are_one_message_in_order() -> None:
    lines = [f"line {number}" for number in range(200_000)]
    fields = read_transcript("Ada: start\n" + "\n".join(lines) + "\nBob: end")
    assert fields["messages"] == [
        {"speaker": "Ada", "content": "start\n" + "\n".join(lines)},
        {"speaker": "Bob", "content": "end"},
    ]
