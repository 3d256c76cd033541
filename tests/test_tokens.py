"""API tokens: hashed at rest, scoped to namespaces, revocable, checked in constant time."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.errors import AuthenticationError, PermissionDeniedError, ValidationError
from recalld.store.sqlite import SQLiteStore
from recalld.tokens import Caller, TokenRegistry, hash_token, parse_scope
from tests.conftest import FakeClock


@pytest.fixture
def store(db_path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(db_path, synchronous="NORMAL")
    yield opened
    opened.close()


@pytest.fixture
def registry(store: SQLiteStore, clock: FakeClock) -> TokenRegistry:
    return TokenRegistry(store, clock=clock)


def test_tokens_create_stores_only_the_hash(
    registry: TokenRegistry, store: SQLiteStore, db_path: Path
) -> None:
    issued = registry.create("ci", {"default": "read+write"})
    assert issued.token.startswith(f"rcd_{issued.info.id}_")
    assert len(issued.token) > 50
    record = store.find_token(issued.info.id)
    assert record is not None
    assert record.token_hash == hashlib.sha256(issued.token.encode()).hexdigest()
    store.compact_after_forget()
    # The secret is everything after the id: it may itself hold "_" (URL-safe base64), and
    # a split at its last "_" left a piece so short that it was found by chance.
    secret = issued.token.removeprefix(f"rcd_{issued.info.id}_").encode()
    assert len(secret) >= 32
    for suffix in ("", "-wal"):
        path = Path(f"{db_path}{suffix}")
        if path.exists():
            assert secret not in path.read_bytes()


def test_tokens_authenticate_returns_scoped_caller(registry: TokenRegistry) -> None:
    issued = registry.create("agent", {"alpha": "read+write", "beta": "read"})
    caller = registry.authenticate(issued.token)
    assert caller.token_id == issued.info.id
    assert caller.can("alpha", write=True)
    assert caller.can("beta", write=False)
    assert not caller.can("beta", write=True)
    assert not caller.can("gamma", write=False)
    with pytest.raises(PermissionDeniedError, match="may not write namespace 'beta'"):
        caller.authorize("beta", write=True)
    assert not caller.all_namespaces


def test_tokens_wildcard_scope_covers_every_namespace(registry: TokenRegistry) -> None:
    caller = registry.authenticate(registry.create("admin", {"*": "read"}).token)
    assert caller.can("anything", write=False)
    assert not caller.can("anything", write=True)
    assert caller.all_namespaces
    assert Caller.trusted().can("x", write=True)
    assert Caller.trusted().all_namespaces


@pytest.mark.parametrize(
    "token",
    [
        "",
        "not-a-token",
        "rcd_0123456789abcdef_" + "x" * 43,
        "Bearer rcd_0123456789abcdef_" + "x" * 43,
    ],
)
def test_tokens_unknown_or_malformed_are_refused(registry: TokenRegistry, token: str) -> None:
    registry.create("real", {"default": "read"})
    with pytest.raises(AuthenticationError) as raised:
        registry.authenticate(token)
    if token:
        assert token not in str(raised.value)


def test_tokens_tampered_secret_is_refused(registry: TokenRegistry) -> None:
    issued = registry.create("real", {"default": "read"})
    tampered = issued.token[:-1] + ("A" if issued.token[-1] != "A" else "B")
    with pytest.raises(AuthenticationError):
        registry.authenticate(tampered)


def test_tokens_revoke_stops_the_token(registry: TokenRegistry) -> None:
    issued = registry.create("temp", {"default": "read"})
    assert registry.any_active()
    assert registry.revoke(issued.info.id) is True
    assert registry.revoke(issued.info.id) is False
    assert not registry.any_active()
    with pytest.raises(AuthenticationError):
        registry.authenticate(issued.token)
    [listed] = registry.list()
    assert listed.revoked_at is not None


def test_tokens_last_used_is_recorded_at_most_once_a_minute(
    registry: TokenRegistry, store: SQLiteStore, clock: FakeClock
) -> None:
    issued = registry.create("used", {"default": "read"})
    assert registry.list()[0].last_used_at is None
    registry.authenticate(issued.token)
    first = registry.list()[0].last_used_at
    assert first == clock.now
    clock.advance(10)
    registry.authenticate(issued.token)
    assert registry.list()[0].last_used_at == first
    clock.advance(60)
    registry.authenticate(issued.token)
    assert registry.list()[0].last_used_at == clock.now


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("default:read", ("default", "read")),
        ("team/a:read+write", ("team/a", "read+write")),
        ("*:read+write", ("*", "read+write")),
    ],
)
def test_tokens_parse_scope(text: str, expected: tuple[str, str]) -> None:
    assert parse_scope(text) == expected


@pytest.mark.parametrize("text", ["default", ":read", "default:write", "bad space:read"])
def test_tokens_parse_scope_refuses_bad_scopes(text: str) -> None:
    with pytest.raises(ValidationError) as raised:
        parse_scope(text)
    assert raised.value.field in {"scope", "namespace"}


def test_tokens_create_validates_name_and_scopes(registry: TokenRegistry) -> None:
    with pytest.raises(ValidationError, match="name"):
        registry.create("  ", {"default": "read"})
    with pytest.raises(ValidationError, match="scope"):
        registry.create("none", {})


def test_tokens_hash_is_sha256_hex() -> None:
    assert hash_token("abc") == hashlib.sha256(b"abc").hexdigest()


def test_tokens_cli_create_list_revoke(tmp_path: Path) -> None:
    runner = CliRunner()
    db = str(tmp_path / "cli.db")
    created = runner.invoke(
        cli,
        ["--db", db, "token", "create", "laptop", "--scope", "default:read+write", "--json"],
        catch_exceptions=False,
    )
    assert created.exit_code == 0, created.output
    issued = json.loads(created.stdout)
    assert issued["token"].startswith("rcd_")
    listed = runner.invoke(cli, ["--db", db, "token", "list", "--json"], catch_exceptions=False)
    [info] = json.loads(listed.stdout)
    assert info["name"] == "laptop"
    assert info["scopes"] == {"default": "read+write"}
    assert "token" not in info
    assert issued["token"] not in listed.stdout
    revoked = runner.invoke(
        cli, ["--db", db, "token", "revoke", info["id"], "--json"], catch_exceptions=False
    )
    assert json.loads(revoked.stdout) == {"revoked": True}
    again = runner.invoke(cli, ["--db", db, "token", "revoke", info["id"]], catch_exceptions=False)
    assert again.exit_code == 1
    bad = runner.invoke(cli, ["--db", db, "token", "create", "x", "--scope", "default:admin"])
    assert bad.exit_code != 0
