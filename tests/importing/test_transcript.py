"""Transcript files for ``recalld ingest``: a JSON document that does not parse."""

from __future__ import annotations

import pytest

from recalld.errors import ValidationError
from recalld.importing.transcript import read_transcript


def test_read_transcript_names_where_a_multi_line_document_breaks() -> None:
    # Read as JSON lines, it was "line 1: not JSON ... column 15": line 1 is the document's
    # "{"messages": [", not the trailing comma on line 3 that broke it.
    text = '{"messages": [\n  {"role": "user", "content": "hi"},\n]}\n'
    with pytest.raises(ValidationError) as raised:
        read_transcript(text)
    assert raised.value.field == "file"
    assert "is not a JSON document" in str(raised.value)
    assert "line 3 column 1" in str(raised.value)


def test_read_transcript_json_lines_still_name_their_bad_line() -> None:
    text = '{"speaker": "A", "text": "hi"}\n[1,\n{"speaker": "B", "text": "yo"}\n'
    with pytest.raises(ValidationError) as raised:
        read_transcript(text)
    assert raised.value.field == "line 2"


def test_read_transcript_json_lines_with_a_bad_first_line_name_line_1() -> None:
    # Review 56d: a typo on line 1 of JSON lines was called "not a JSON document" with
    # the position of line 2, which is fine; it is line 1's error again.
    text = '{"role": "user", "content": "hi"\n{"role": "assistant", "content": "yo"}\n'
    with pytest.raises(ValidationError) as raised:
        read_transcript(text)
    assert raised.value.field == "line 1"
    assert "line 1 column 33" in raised.value.message
