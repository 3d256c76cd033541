"""A REST stream (``GET /v1/export``) is cut once the token that opened it is revoked.

Only ``/mcp``'s streams were re-checked: an export started before ``recalld token
revoke`` went on to its last memory. The body is cut without its end, so the client's
read fails rather than taking a shortened export for a whole one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.types import Message

from recalld.adapters.http_streams import REST_CHECK_EVERY, StreamCut, cut_when_revoked
from recalld.model import NewMemory
from recalld.service import MemoryService
from recalld.tokens import TokenRegistry

CHUNK: Message = {"type": "http.response.body", "body": b"{}\n", "more_body": True}
END: Message = {"type": "http.response.body", "body": b"", "more_body": False}


@pytest.mark.anyio
async def test_http_rest_stream_is_cut_without_its_end_once_the_token_is_revoked(
    service: MemoryService,
) -> None:
    registry = TokenRegistry.for_store(service.store)
    caller = registry.authenticate(registry.create("exporter", {"default": "read"}).token)
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    checked = cut_when_revoked({"path": "/v1/export"}, send, caller, registry)
    await checked(CHUNK)
    assert caller.token_id is not None
    assert registry.revoke(caller.token_id)
    for _ in range(REST_CHECK_EVERY - 1):
        await checked(CHUNK)
    with pytest.raises(StreamCut):  # the next check finds it revoked: the endpoint stops
        await checked(CHUNK)
    with pytest.raises(StreamCut):
        await checked(END)
    assert len(sent) == REST_CHECK_EVERY
    assert END not in sent  # cut: the client cannot take it for a whole export


def test_http_export_started_before_a_revocation_does_not_run_to_its_end(
    client: TestClient, service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.remember_many([NewMemory(content=f"memory {n}") for n in range(5)])
    registry = TokenRegistry.for_store(service.store)
    issued = registry.create("exporter", {"default": "read"})
    exported = service.export
    lines_sent = REST_CHECK_EVERY * 3

    def export_then_revoke(*args: Any, **kwargs: Any) -> Iterator[str]:
        line = next(iter(exported(*args, **kwargs)))
        yield line
        registry.revoke(issued.info.id)  # while the export streams
        for _ in range(lines_sent - 1):
            yield line

    monkeypatch.setattr(service, "export", export_then_revoke)
    headers = {"Authorization": f"Bearer {issued.token}"}
    with client.stream("GET", "/v1/export", headers=headers) as response:
        assert response.status_code == 200
        received = b""
        for chunk in response.iter_bytes():
            received += chunk
    assert 0 < received.count(b"\n") <= REST_CHECK_EVERY + 1


def test_http_export_cut_for_a_revoked_token_stops_reading_the_memories(
    client: TestClient, service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Cut, the export went on reading every memory to its end (sending them nowhere), its
    # client waiting all that time for a body that would never end, its token's share held.
    service.remember_many([NewMemory(content="memory")])
    registry = TokenRegistry.for_store(service.store)
    issued = registry.create("exporter", {"default": "read"})
    exported = service.export
    produced = 0

    def export_then_revoke(*args: Any, **kwargs: Any) -> Iterator[str]:
        nonlocal produced
        line = next(iter(exported(*args, **kwargs)))
        for number in range(REST_CHECK_EVERY * 8):
            produced += 1
            yield line
            if number == 0:
                registry.revoke(issued.info.id)  # while the export streams

    monkeypatch.setattr(service, "export", export_then_revoke)
    headers = {"Authorization": f"Bearer {issued.token}"}
    with client.stream("GET", "/v1/export", headers=headers) as response:
        assert response.status_code == 200
        received = b"".join(response.iter_bytes())
    assert 0 < received.count(b"\n") <= REST_CHECK_EVERY
    assert produced <= REST_CHECK_EVERY + 1  # the line found revoked, then no more
