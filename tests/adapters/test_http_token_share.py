"""One token may have at most ``TOKEN_REQUESTS`` REST requests running at once.

Every request's work runs on one pool of 40 threads shared by every client: one token
sending hundreds at once took every thread and the others waited behind it. Past its
share a token's request is refused at once (429, ``Retry-After``) and nothing of it
runs; another token, a trusted caller and ``/mcp`` are not held to it. The requests
held running here wait on an event, never on time."""

from __future__ import annotations

import json

import anyio
import pytest
from starlette.types import Message, Receive, Scope, Send

from recalld.adapters.http_api import create_app
from recalld.adapters.http_token_share import TokenShare
from recalld.config import Settings
from recalld.service import MemoryService
from recalld.tokens import CALLER_STATE_KEY, Caller

pytestmark = pytest.mark.anyio

LIMIT = 3
WAIT_SECONDS = 30.0


def _scope(caller: Caller, path: str = "/v1/memories") -> Scope:
    return {"type": "http", "method": "GET", "path": path, "state": {CALLER_STATE_KEY: caller}}


def _caller(token_id: str | None) -> Caller:
    return Caller(token_id=token_id, scopes=None if token_id is None else {"default": "read"})


async def _receive() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


class _Held:
    """An app whose requests run until :attr:`release` is set; counts those inside."""

    def __init__(self) -> None:
        self.inside = 0
        self.entered = anyio.Event()
        self.release = anyio.Event()
        self.expected = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.inside += 1
        if self.inside >= self.expected:
            self.entered.set()
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def _answer(app: TokenShare, scope: Scope) -> tuple[int, dict[str, str], bytes]:
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, _receive, send)
    headers = {name.decode(): value.decode() for name, value in sent[0].get("headers", [])}
    return sent[0]["status"], headers, b"".join(m.get("body", b"") for m in sent[1:])


async def test_http_a_token_past_its_share_of_requests_is_refused_and_the_others_run() -> None:
    held = _Held()
    held.expected = LIMIT
    app = TokenShare(held, limit=LIMIT)
    busy = _caller("busy")
    with anyio.fail_after(WAIT_SECONDS):
        async with anyio.create_task_group() as group:
            for _ in range(LIMIT):
                group.start_soon(_answer, app, _scope(busy))
            await held.entered.wait()
            status, headers, body = await _answer(app, _scope(busy))
            assert status == 429
            assert headers["retry-after"] == "1"
            error = json.loads(body)["error"]
            assert error["type"] == "too_many_requests"
            assert f"the limit per token is {LIMIT}" in error["message"]
            assert held.inside == LIMIT  # nothing of the refused request ran
            # Another token, a trusted caller and /mcp are not held to this token's share.
            held.expected, held.entered = LIMIT + 3, anyio.Event()
            others = (_scope(_caller("other")), _scope(_caller(None)), _scope(busy, "/mcp"))
            statuses: list[int] = []

            async def answered(scope: Scope) -> None:
                statuses.append((await _answer(app, scope))[0])

            for scope in others:
                group.start_soon(answered, scope)
            await held.entered.wait()  # all three running beside the token's three
            held.release.set()
    assert statuses == [200, 200, 200]
    # Its requests answered, the token has its whole share again.
    held.expected = 1
    status, _, _ = await _answer(app, _scope(busy))
    assert status == 200


def test_http_the_app_holds_each_token_to_its_share_once_it_is_known(
    service: MemoryService, settings: Settings
) -> None:
    app = create_app(service, settings)
    order = [getattr(middleware.cls, "__name__", "") for middleware in app.user_middleware]
    assert "TokenShare" in order  # outermost first: the token checked, then its share
    assert order.index("_Authentication") < order.index("TokenShare")
