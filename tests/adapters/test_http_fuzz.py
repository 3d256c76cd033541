"""Fuzz every operation of the OpenAPI spec with schemathesis against a real server.

Both valid (positive) and invalid (negative) requests are generated for each
operation; checks: no 5xx, documented status codes and content types, and
responses that match their schema. Bounded (a few dozen examples per operation
and mode) so it stays within a minute or two on 2 cores.
"""

from __future__ import annotations

from collections.abc import Iterator
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
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.adapters.http_support import ServerProcess

pytestmark = pytest.mark.slow

EXAMPLES_PER_OPERATION = 100
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]

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
    results = list(schema.get_all_operations())
    assert all(isinstance(result, Ok) for result in results), "the OpenAPI spec is invalid"
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert len(operations) >= 16
    failures: list[str] = []
    for operation in operations:
        strategy = st.one_of(
            operation.as_strategy(GenerationMode.POSITIVE),
            operation.as_strategy(GenerationMode.NEGATIVE),
        )

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
