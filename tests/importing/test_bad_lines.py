"""A line of an import that is not JSON says where the parser stopped."""

from __future__ import annotations

import json

from recalld.service import MemoryService


def test_a_line_cut_mid_string_says_where_the_string_starts(service: MemoryService) -> None:
    # Adversarial pass e60: an export cut mid-line (a killed copy) was refused with
    # "line: is not JSON: Unterminated string starting at", ending on nothing.
    whole = json.dumps({"id": "a", "content": "kept"})
    cut = json.dumps({"id": "b", "content": "cut short here"})[:30]
    report = service.import_text(f'{whole}\n{cut}\n{{"id": "c",, }}\n')
    assert [(error.line, error.error) for error in report.errors] == [
        (2, "line: is not JSON: Unterminated string starting at column 24"),
        (3, "line: is not JSON: Expecting property name enclosed in double quotes at column 12"),
    ]
    assert report.created == 1
