"""Streamed responses that end when the token that opened them is revoked."""

from __future__ import annotations

import pytest
from starlette.types import Message

from recalld.adapters.http_streams import end_when_revoked
from recalld.errors import DatabaseUnavailableError
from recalld.service import MemoryService
from recalld.tokens import Caller, TokenRegistry

pytestmark = pytest.mark.anyio

EVENT: Message = {"type": "http.response.body", "body": b"event: ping\r\n\r\n", "more_body": True}
END: Message = {"type": "http.response.body", "body": b"", "more_body": False}


def _opened_by_token(service: MemoryService) -> tuple[TokenRegistry, Caller]:
    registry = TokenRegistry.for_store(service.store)
    issued = registry.create("watcher", {"default": "read+write"})
    return registry, registry.authenticate(issued.token)


async def test_http_streams_keep_a_stream_while_the_token_store_is_unreachable(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The token was checked when the stream opened; a re-check the store cannot answer
    # (PostgreSQL restarting) raised out of the response, and the client lost the
    # stream mid-body, a tool call's computed answer with it.
    registry, caller = _opened_by_token(service)
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    def unreachable(_token_id: str) -> None:
        raise DatabaseUnavailableError("the database server is restarting")

    monkeypatch.setattr(service.store, "find_token", unreachable)
    checked = end_when_revoked(send, caller, registry)
    await checked(EVENT)
    assert sent == [EVENT]


async def test_http_streams_end_a_stream_once_its_token_is_revoked(
    service: MemoryService,
) -> None:
    registry, caller = _opened_by_token(service)
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    checked = end_when_revoked(send, caller, registry)
    await checked(EVENT)
    assert caller.token_id is not None
    assert registry.revoke(caller.token_id)
    await checked(EVENT)
    await checked(END)  # what the endpoint still sends is dropped: the response has ended
    assert sent == [EVENT, END]
