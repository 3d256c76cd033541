"""A tool error worth sending again says how long to wait in its ``_meta``
(``recalld/retryAfterSeconds``), the seconds REST's ``Retry-After`` gives for the same
failure, in every dialect; one not worth sending again says nothing of it (adversarial
pass e69)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recalld.errors import (
    DatabaseBusyError,
    DatabaseReadOnlyError,
    DatabaseUnavailableError,
    DiskFullError,
)
from recalld.service import MemoryService
from tests.adapters.mcp_support import call, in_process

pytestmark = pytest.mark.anyio

HINT = "recalld/retryAfterSeconds"


@pytest.mark.parametrize(
    ("error", "seconds"),
    [
        (DatabaseBusyError("busy"), 1),
        (DatabaseUnavailableError("down"), 1),
        (DatabaseReadOnlyError("standby"), 5),
        (DiskFullError("full"), 60),
    ],
    ids=["busy", "unavailable", "read_only", "disk_full"],
)
@pytest.mark.parametrize(
    ("dialect", "tool", "arguments"),
    [
        ("native", "recall", {"query": "x"}),
        ("batbox", "MemoryRecall", {"query": "x"}),
        ("rover", "rover_memory", {"action": "recall", "query": "x"}),
        ("chaoscore", "chaoscore_recall", {"query": "x"}),
    ],
)
async def test_tool_error_worth_sending_again_says_when(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    error: Exception,
    seconds: int,
    dialect: str,
    tool: str,
    arguments: dict[str, Any],
) -> None:
    def failing(*_arguments: Any, **_options: Any) -> Any:
        raise error

    async with in_process(tmp_path / "retry.db", dialect)() as client:
        monkeypatch.setattr(MemoryService, "search", failing)
        result = await call(client, tool, arguments)
    assert result.is_error
    assert (result.meta or {}).get(HINT) == seconds


async def test_tool_error_not_worth_sending_again_says_no_wait(tmp_path: Path) -> None:
    async with in_process(tmp_path / "retry.db", "native")() as client:
        result = await call(client, "remember", {"content": ""})
    assert result.is_error
    assert HINT not in (result.meta or {})


def test_tool_retry_hints_are_rests_retry_after() -> None:
    # The seconds are written twice (REST's headers, the tools' _meta): they must not
    # drift apart (review of pass e69).
    from recalld.adapters import http_api, http_token_share
    from recalld.adapters.dialects.failures import RETRY_AFTER_SECONDS

    rest = {
        "too_many_requests": http_token_share.RETRY_SECONDS,
        "database_busy": int(http_api.UNAVAILABLE_HEADERS["Retry-After"]),
        "database_unavailable": int(http_api.UNAVAILABLE_HEADERS["Retry-After"]),
        "database_read_only": int(http_api.READ_ONLY_HEADERS["Retry-After"]),
        "disk_full": int(http_api.DISK_FULL_HEADERS["Retry-After"]),
    }
    assert rest == RETRY_AFTER_SECONDS


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tool_retry_hint_reaches_the_sdk_client_in_every_era(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    # "auto" negotiates the sessionless 2026-07-28 protocol, "legacy" a 2025 handshake:
    # the client validates the result (with its _meta) against either's schema.
    def failing(*_arguments: Any, **_options: Any) -> Any:
        raise DatabaseBusyError("busy")

    async with in_process(tmp_path / "era.db", "native")(mode=mode) as client:
        monkeypatch.setattr(MemoryService, "search", failing)
        result = await call(client, "recall", {"query": "x"})
    assert result.is_error
    assert (result.meta or {}).get(HINT) == 1
