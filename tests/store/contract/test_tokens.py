"""API tokens: only hashes are kept; revocation and use are recorded."""

from __future__ import annotations

from datetime import timedelta

from recalld.store.base import Store, TokenRecord, TokenStore
from tests.store.contract.conftest import NOW, OpenStore


def test_store_keeps_tokens(store: Store, open_another: OpenStore) -> None:
    assert isinstance(store, TokenStore)
    assert store.has_active_tokens() is False
    token = TokenRecord(
        id="0123456789abcdef",
        name="ci",
        token_hash="ab" * 32,
        scopes={"default": "read", "*": "read+write"},
        created_at=NOW,
    )
    store.insert_token(token)
    store.insert_token(
        TokenRecord(
            id="fedcba9876543210",
            name="b",
            token_hash="cd" * 32,
            scopes={"x": "read"},
            created_at=NOW + timedelta(seconds=1),
        )
    )
    assert store.find_token("0123456789abcdef") == token
    assert store.find_token("nope") is None
    assert [record.id for record in store.list_tokens()] == ["0123456789abcdef", "fedcba9876543210"]
    store.touch_token("0123456789abcdef", NOW + timedelta(minutes=1))
    other = open_another()
    assert isinstance(other, TokenStore)
    found = other.find_token("0123456789abcdef")
    assert found is not None
    assert found.last_used_at == NOW + timedelta(minutes=1)
    assert other.revoke_token("0123456789abcdef", NOW + timedelta(minutes=2)) is True
    assert store.revoke_token("0123456789abcdef", NOW + timedelta(minutes=3)) is False
    revoked = store.find_token("0123456789abcdef")
    assert revoked is not None
    assert revoked.revoked_at == NOW + timedelta(minutes=2)
    assert store.has_active_tokens() is True
    store.revoke_token("fedcba9876543210", NOW)
    assert store.has_active_tokens() is False
