"""A response recalld cuts on purpose (a REST export whose token was revoked) ends with
recalld's own WARNING line alone: uvicorn also logged "ASGI callable returned without
completing response." at ERROR for it (adversarial pass d68)."""

from __future__ import annotations

import logging

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from recalld.adapters.http_connections import BoundedRequestHead
from recalld.adapters.http_streams import abort_response
from tests.adapters.uvicorn_serving import serving

pytestmark = pytest.mark.anyio


async def _cut_export(scope: Scope, receive: Receive, send: Send) -> None:
    """An export of one line, then cut as ``_Authentication`` cuts a revoked token's."""
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}\n", "more_body": True})
    abort_response(scope)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def test_a_cut_stream_logs_no_error_of_uvicorns_and_its_client_sees_it_cut() -> None:
    records = _Records()
    uvicorn_errors = logging.getLogger("uvicorn.error")
    async with serving(BoundedRequestHead, _cut_export, log_level="info") as port:
        uvicorn_errors.addHandler(records)  # after uvicorn configured its loggers
        url = f"http://127.0.0.1:{port}/v1/export"
        async with (
            httpx.AsyncClient(timeout=30) as client,
            client.stream("GET", url) as answer,
        ):
            assert answer.status_code == 200
            with pytest.raises(httpx.RemoteProtocolError):  # not taken for a whole one
                await answer.aread()
    # The server is stopped: whatever its request's task logged is logged.
    uvicorn_errors.removeHandler(records)
    errors = [record.getMessage() for record in records.records if record.levelno >= 30]
    assert errors == []
