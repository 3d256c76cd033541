"""Fuzz every operation of the OpenAPI spec with schemathesis against a real server.

Both valid (positive) and invalid (negative) requests are generated for each
operation; checks: no 5xx, documented status codes, content types and headers,
responses that match their schema, and that the spec is true both ways: a
request it allows is accepted (positive data acceptance), one it forbids is
refused (negative data rejection), a missing required header is refused, an
undocumented method is refused and a 405 lists the allowed methods. Bounded (a
few dozen examples per operation and mode) so it stays within a minute or two
on 2 cores.

Three kinds of positive input cannot be described by any schema, so they are
left out of generation (each is covered by its own tests): an opaque listing
cursor (only ones the server handed out decode), media bytes (random base64 is
no picture or sound), and core-memory patches and removes (their ``old_text``
must match the entries stored at that moment), nor a core-memory entry holding a
zero-width (non-)joiner (allowed only between two letters, marks or emoji: the published
pattern allows both, the server tells where they stand); nor can a new intention's
(``POST /v1/intentions``): its times are phrases read by a natural-language
parser ("next Friday at 9") and its rules span fields (at least one trigger, a
radius needs a place), so only its negative cases are generated here and its
positive ones are tests/intentions/test_building.py's. Nor can a request that names its
namespace more than one way (``namespace``, mem0's ``user_id``/``agent_id``, the
``X-Recalld-Namespace`` header): any one is valid, two are refused rather than one
guessed, and OpenAPI cannot say "at most one of" across query and header (those
refusals are tests/adapters/test_http_scope.py's). Nor can an instant on the first day of
year 1 or the last of year 9999: RFC 3339 writes 0001-01-01T00:00+00:07, which is before the
first instant of year 1 in UTC, and no store holds it (refused naming the field; JSON
Schema cannot compare an offset with the time of day: tests/adapters/test_http_api.py
has those refusals). Nor can a transcript whose messages
repeat an id (refused: JSON Schema's ``uniqueItems`` compares whole items, not one field
of them; tests/test_service_conversations.py has those refusals). Nor can time bounds in the
wrong order (``since`` after ``until``, ``created_since`` after ``created_until``: refused
naming the later bound; JSON Schema cannot compare two fields, tests/test_service_listing.py
has those refusals). And one negative input is not
negative on the wire: a tag filter given as a non-list is sent as text, which is
a valid tag.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    content_type_conformance,
    missing_required_header,
    negative_data_rejection,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from tests.adapters.http_support import ServerProcess

pytestmark = pytest.mark.slow

EXAMPLES_PER_OPERATION = 100
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
    positive_data_acceptance,
    negative_data_rejection,
    missing_required_header,
    unsupported_method,
    allow_header_conformance,
]
MEDIA = ("image", "audio")
# The zero-width (non-)joiners a core-memory entry may hold, but only inside a word.
JOINERS = frozenset("\u200c\u200d")


def negatable(case: schemathesis.Case[Any]) -> bool:
    """Whether a negative case stays negative on the wire: a query string has only text,
    and every text is a valid tag, so a non-list "tag" (serialised as text) is not one."""
    query = case.query or {}
    return all(isinstance(query.get(name), list | type(None)) for name in ("tag", "all_tag"))


def describable(case: schemathesis.Case[Any]) -> bool:
    """Whether a generated request stays within what a schema can say (module docstring)."""
    if case.query and case.query.get("cursor") is not None:
        return False
    query = case.query or {}
    headers = {name.lower() for name in (case.headers or {})}
    named = [
        query.get("namespace") is not None,
        query.get("user_id") is not None or query.get("agent_id") is not None,
        "x-recalld-namespace" in headers,
    ]
    if sum(named) > 1:
        return False
    body = case.body if isinstance(case.body, dict) else {}
    if any(body.get(name) is not None for name in MEDIA):
        return False
    if _calendar_edge(case.body) or _calendar_edge(query):
        return False
    filters = body.get("filters")
    if _swapped_bounds(query) or (isinstance(filters, dict) and _swapped_bounds(filters)):
        return False
    messages = body.get("messages")
    if isinstance(messages, list):
        ids = [item.get("id") for item in messages if isinstance(item, dict)]
        given = [message_id for message_id in ids if message_id is not None]
        if len(given) != len(set(given)):
            return False
    actions = [body.get("action")]
    operations = body.get("operations")
    edits = [body]
    if isinstance(operations, list):
        edits += [item for item in operations if isinstance(item, dict)]
        actions += [item.get("action") for item in edits[1:]]
    texts = [edit.get(name) for edit in edits for name in ("content", "new_text")]
    if "/v1/core/" in case.path and any(
        isinstance(text, str) and JOINERS & set(text) for text in texts
    ):
        return False
    return "/v1/core/" not in case.path or not ({"patch", "remove"} & set(actions))


def _calendar_edge(value: object) -> bool:
    """Whether ``value`` holds, at any depth, a date-time on the first day of year 1 or the
    last of year 9999 (see the module docstring)."""
    if isinstance(value, str):
        return value[:10] in ("0001-01-01", "9999-12-31")
    if isinstance(value, dict):
        return any(_calendar_edge(item) for item in value.values())
    if isinstance(value, list):
        return any(_calendar_edge(item) for item in value)
    return False


def _swapped_bounds(fields: dict[str, Any]) -> bool:
    """Whether ``fields`` holds a pair of time bounds in the wrong order (the docstring)."""
    for start, end in (("since", "until"), ("created_since", "created_until")):
        first, last = fields.get(start), fields.get(end)
        if not (isinstance(first, str) and isinstance(last, str)):
            continue
        try:
            begins, ends = (_instant(first), _instant(last))
        except ValueError:
            continue  # not a time: the schema's own business
        if begins > ends:
            return True
    return False


def _instant(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("z", "Z"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# /v1/import takes JSON lines as text: send generated strings as they are.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory: Path = tmp_path_factory.mktemp("http_fuzz")
    running = ServerProcess(directory / "fuzz.db").start()
    yield running
    running.stop()


def test_http_fuzz_every_operation_conforms_and_never_5xx(fuzzed_server: ServerProcess) -> None:
    schema = schemathesis.openapi.from_url(f"{fuzzed_server.base_url}/openapi.json")
    # A negative example may be larger than the server's body limit (1 MiB, a list far
    # past its maxItems): refusing it by its size (413) is rejecting it too.
    rejection = schema.config.checks.negative_data_rejection
    rejection.expected_statuses = [*rejection.expected_statuses, "413"]
    results = list(schema.get_all_operations())
    assert all(isinstance(result, Ok) for result in results), "the OpenAPI spec is invalid"
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert len(operations) >= 16
    failures: list[str] = []
    for operation in operations:
        modes = []
        if (operation.method.upper(), operation.path) != ("POST", "/v1/intentions"):
            modes.append(operation.as_strategy(GenerationMode.POSITIVE).filter(describable))
        if operation.path != "/v1/import":
            # The import body is text: every text is a valid upload (bad lines are reported
            # one by one), so there is no negative body to generate.
            modes.append(operation.as_strategy(GenerationMode.NEGATIVE).filter(negatable))
        strategy = st.one_of(*modes)

        @given(case=strategy)
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def exercise(case: schemathesis.Case[Any]) -> None:
            case.call_and_validate(base_url=fuzzed_server.base_url, checks=CHECKS)

        try:
            exercise()
        except (Exception, BaseExceptionGroup) as error:  # noqa: BLE001 - report every operation
            failures.append(f"{operation.label}: {error}")
    assert not failures, "\n\n".join(failures)
