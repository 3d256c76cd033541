"""Auth over a real server: the 401/403 matrix, trusted loopback, and the bind policy."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from recalld.store.sqlite import SQLiteStore
from recalld.tokens import Access, TokenRegistry
from tests.adapters.http_support import ServerProcess, free_port, server_environment

pytestmark = pytest.mark.slow


def _create_token(db: Path, name: str, scopes: dict[str, Access]) -> tuple[str, str]:
    store = SQLiteStore(db)
    try:
        issued = TokenRegistry(store).create(name, scopes)
    finally:
        store.close()
    return issued.token, issued.info.id


@dataclass
class Tokens:
    writer: str
    reader: str
    other: str
    admin: str
    revoked: str


@dataclass
class SecuredServer:
    server: ServerProcess
    tokens: Tokens


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredServer]:
    db = tmp_path_factory.mktemp("http_auth") / "auth.db"
    server = ServerProcess(db).start()
    # Tokens are created after the server started: it must notice them at once.
    revoked, revoked_id = _create_token(db, "revoked", {"alpha": "read+write"})
    tokens = Tokens(
        writer=_create_token(db, "writer", {"alpha": "read+write"})[0],
        reader=_create_token(db, "reader", {"alpha": "read"})[0],
        other=_create_token(db, "other", {"beta": "read+write"})[0],
        admin=_create_token(db, "admin", {"*": "read+write"})[0],
        revoked=revoked,
    )
    store = SQLiteStore(db)
    TokenRegistry(store).revoke(revoked_id)
    store.close()
    yield SecuredServer(server, tokens)
    server.stop()


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    body: Any = None
    writes: bool = False

    def send(self, base_url: str, token: str | None, namespace: str = "alpha") -> httpx.Response:
        headers = {"X-Recalld-Namespace": namespace}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        content = None
        if self.path == "/v1/import":
            content = json.dumps({**self.body}).encode() if self.body else b""
            headers["Content-Type"] = "application/x-ndjson"
            return httpx.request(
                self.method, base_url + self.path, content=content, headers=headers, timeout=30
            )
        return httpx.request(
            self.method, base_url + self.path, json=self.body, headers=headers, timeout=30
        )


CALLS = [
    Call("POST", "/remember", {"content": "batbox write"}, writes=True),
    Call("POST", "/recall", {"query": "write"}),
    Call("GET", "/status"),
    Call("POST", "/v1/memories", {"content": "native write"}, writes=True),
    Call("GET", "/v1/memories"),
    Call("GET", "/v1/memories/auth-fixed-id"),
    Call("PATCH", "/v1/memories/auth-fixed-id", {"title": "patched"}, writes=True),
    Call("POST", "/v1/recall", {"query": "write"}),
    Call("POST", "/v1/search", {"query": "write"}),
    Call("PUT", "/v1/kv/auth.key", {"value": "v"}, writes=True),
    Call("GET", "/v1/kv/auth.key"),
    Call("GET", "/v1/stats"),
    Call("GET", "/v1/export"),
    Call(
        "POST",
        "/v1/import",
        {
            "id": "auth-imported",
            "content": "imported",
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
        },
        writes=True,
    ),
    Call("DELETE", "/v1/kv/auth.key", writes=True),
    Call("DELETE", "/v1/memories/auth-gone", writes=True),
]
IDS = [f"{call.method} {call.path}" for call in CALLS]


@pytest.fixture(scope="module")
def seeded(secured: SecuredServer) -> SecuredServer:
    """The memories the GET/PATCH and kv calls address."""
    base = secured.server.base_url
    for call in (
        Call("POST", "/v1/memories", {"content": "fixed", "id": "auth-fixed-id"}),
        Call("PUT", "/v1/kv/auth.key", {"value": "v"}),
    ):
        assert call.send(base, secured.tokens.writer).status_code == 200
    return secured


def _assert_error(response: httpx.Response, status: int) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["type"] == {401: "unauthorized", 403: "forbidden"}[status]
    if status == 401:
        assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("call", CALLS, ids=IDS)
def test_http_auth_missing_or_bad_token_is_401(seeded: SecuredServer, call: Call) -> None:
    base = seeded.server.base_url
    _assert_error(call.send(base, None), 401)
    _assert_error(call.send(base, "not-a-token"), 401)
    forged = "rcd_0123456789abcdef_" + "A" * 43
    _assert_error(call.send(base, forged), 401)
    _assert_error(call.send(base, seeded.tokens.revoked), 401)


@pytest.mark.parametrize("call", CALLS, ids=IDS)
def test_http_auth_other_namespace_is_403(seeded: SecuredServer, call: Call) -> None:
    _assert_error(call.send(seeded.server.base_url, seeded.tokens.other), 403)


@pytest.mark.parametrize("call", [call for call in CALLS if call.writes], ids=str)
def test_http_auth_read_only_token_writing_is_403(seeded: SecuredServer, call: Call) -> None:
    _assert_error(call.send(seeded.server.base_url, seeded.tokens.reader), 403)


@pytest.mark.parametrize("call", CALLS, ids=IDS)
def test_http_auth_right_token_is_2xx(seeded: SecuredServer, call: Call) -> None:
    base = seeded.server.base_url
    token = seeded.tokens.writer if call.writes else seeded.tokens.reader
    response = call.send(base, token)
    assert 200 <= response.status_code < 300, response.text
    assert 200 <= call.send(base, seeded.tokens.admin).status_code < 300


def test_http_auth_import_refuses_lines_for_unscoped_namespaces(seeded: SecuredServer) -> None:
    lines = [
        {"id": f"auth-line-{index}", "content": f"line {index}", "namespace": namespace}
        for index, namespace in enumerate(["alpha", "beta", None])
    ]
    for line in lines:
        line.update(created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z")
    response = httpx.post(
        f"{seeded.server.base_url}/v1/import",
        content="\n".join(json.dumps(line) for line in lines).encode(),
        headers={
            "Authorization": f"Bearer {seeded.tokens.writer}",
            "X-Recalld-Namespace": "alpha",
            "Content-Type": "application/x-ndjson",
        },
    )
    report = response.json()
    assert response.status_code == 200, report
    assert report["created"] == 2
    assert [error["line"] for error in report["errors"]] == [2]
    assert "beta" in report["errors"][0]["error"]


def test_http_auth_metrics_need_an_all_namespaces_token(seeded: SecuredServer) -> None:
    url = f"{seeded.server.base_url}/metrics"
    assert httpx.get(url).status_code == 401
    writer = httpx.get(url, headers={"Authorization": f"Bearer {seeded.tokens.writer}"})
    _assert_error(writer, 403)
    admin = httpx.get(url, headers={"Authorization": f"Bearer {seeded.tokens.admin}"})
    assert admin.status_code == 200
    assert "recalld_http_requests_total" in admin.text


def test_http_auth_public_paths_need_no_token(seeded: SecuredServer) -> None:
    base = seeded.server.base_url
    assert httpx.get(f"{base}/healthz").status_code == 200
    assert httpx.get(f"{base}/openapi.json").status_code == 200


def test_http_auth_a_token_anywhere_in_the_url_stays_out_of_the_access_log(
    tmp_path: Path,
) -> None:
    db = tmp_path / "logged.db"
    token, token_id = _create_token(db, "writer", {"alpha": "read+write"})
    names = ("token", "access_token", "authorization", "bearer", "auth", "api-key", "X_Key")
    server = ServerProcess(db, arguments=("--log-level", "info")).start()  # access log on
    try:
        base = server.base_url
        for name in names:
            misplaced = httpx.get(f"{base}/v1/stats", params={name: token})
            assert misplaced.status_code == 401  # only the Authorization header counts
        assert httpx.get(f"{base}/v1/stats?{token}").status_code == 401
        # A value the log shows (a limit, an order) is still searched for a token.
        shown = httpx.get(f"{base}/v1/memories", params={"limit": token, "order": "updated"})
        assert shown.status_code == 401
        in_path = httpx.get(
            f"{base}/v1/memories/{token}", headers={"Authorization": f"Bearer {token}"}
        )
        assert in_path.status_code == 404
        log = server.log()
    finally:
        server.stop()
    for name in names:
        assert f"/v1/stats?{name}=*** " in log
    assert "/v1/stats?*** " in log  # a bare word may be the secret itself
    assert f"/v1/memories?limit=rcd_{token_id}_***&order=updated " in log
    assert f"/v1/memories/rcd_{token_id}_*** " in log
    assert token.split("_", 2)[2] not in log


def test_http_auth_tokens_never_reach_the_log(seeded: SecuredServer) -> None:
    log = seeded.server.log()
    for token in (seeded.tokens.writer, seeded.tokens.reader, seeded.tokens.revoked):
        assert token not in log
        # The secret is everything after "rcd_<id>_" (it may itself hold "_").
        assert token.split("_", 2)[2] not in log


def test_http_auth_loopback_without_tokens_is_trusted_until_one_exists(tmp_path: Path) -> None:
    db = tmp_path / "open.db"
    server = ServerProcess(db).start()
    try:
        url = f"{server.base_url}/v1/memories"
        for namespace in ("one", "two"):
            response = httpx.post(
                url, json={"content": "trusted"}, headers={"X-Recalld-Namespace": namespace}
            )
            assert response.status_code == 200, response.text
        _create_token(db, "first", {"one": "read"})
        assert httpx.post(url, json={"content": "now refused"}).status_code == 401
    finally:
        server.stop()


def test_http_auth_non_loopback_bind_without_tokens_is_refused(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "exposed.db", host="0.0.0.0")
    server.port = free_port()
    result = subprocess.run(
        server.command(),
        capture_output=True,
        text=True,
        timeout=120,
        env=server_environment(),
        check=False,
    )
    assert result.returncode == 1
    assert "refusing to listen on 0.0.0.0" in result.stderr
    assert "recalld token create" in result.stderr
    assert result.stdout == ""


def test_http_auth_non_loopback_bind_with_a_token_always_needs_one(tmp_path: Path) -> None:
    db = tmp_path / "exposed.db"
    token, token_id = _create_token(db, "remote", {"default": "read+write"})
    server = ServerProcess(db, host="0.0.0.0").start()
    try:
        url = f"{server.base_url}/v1/stats"
        assert httpx.get(url).status_code == 401
        assert httpx.get(url, headers={"Authorization": f"Bearer {token}"}).status_code == 200
        store = SQLiteStore(db)
        TokenRegistry(store).revoke(token_id)
        store.close()
        # With every token revoked the exposed server does not fall back to trusting anyone.
        assert httpx.get(url).status_code == 401
    finally:
        server.stop()


def test_http_auth_cli_serve_uses_python_m_recalld() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "recalld", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env=server_environment(),
        check=False,
    )
    assert result.returncode == 0
    assert "--host" in result.stdout
    assert "--port" in result.stdout
