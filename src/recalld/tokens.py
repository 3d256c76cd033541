"""API tokens: bearer secrets scoped to namespaces, stored only as hashes.

A token looks like ``rcd_<id>_<secret>``: ``id`` (16 hex characters) is public
and names the token in ``recalld token list``; ``secret`` is 256 random bits
from :mod:`secrets`. The database keeps the SHA-256 of the whole token, never
the token; a plain hash is enough because the token is high-entropy (nothing
to brute-force), and the check compares digests with
:func:`hmac.compare_digest` so its timing says nothing about the stored hash.

Each token carries scopes: a namespace (or ``*`` for every namespace) and an
access, ``read`` or ``read+write``. The HTTP adapter turns a token into a
:class:`Caller` and asks it before every namespaced operation.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from recalld import _validate as check
from recalld._time import Clock, utc_now
from recalld.config import Settings
from recalld.errors import (
    AuthenticationError,
    PermissionDeniedError,
    StorageError,
    ValidationError,
)
from recalld.store.base import TokenRecord, TokenStore

if TYPE_CHECKING:
    from recalld.store.base import Store

__all__ = [
    "ALL_NAMESPACES",
    "CALLER_STATE_KEY",
    "Access",
    "Caller",
    "IssuedToken",
    "TokenInfo",
    "TokenRegistry",
    "hash_token",
    "parse_scope",
]

Access = Literal["read", "read+write"]
ALL_NAMESPACES = "*"
# Where the HTTP server's authentication leaves the Caller: ``scope["state"][CALLER_STATE_KEY]``
# (read by the REST routes and by MCP tools served at /mcp).
CALLER_STATE_KEY = "recalld_caller"
TOKEN_PREFIX = "rcd_"
TOKEN_PATTERN = re.compile(r"rcd_([0-9a-f]{16})_([A-Za-z0-9_-]{20,100})")
NAME_MAX_CHARS = 100
# Recording every use would turn each read into a write; once a minute is enough to see use.
LAST_USED_RESOLUTION = timedelta(seconds=60)


def hash_token(token: str) -> str:
    """The SHA-256 (hex) of a token: what the database keeps instead of the token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def parse_scope(text: str) -> tuple[str, Access]:
    """Parse ``NAMESPACE:read`` or ``NAMESPACE:read+write`` (``NAMESPACE`` may be ``*``)."""
    namespace, separator, access = text.rpartition(":")
    if not separator or not namespace:
        raise ValidationError(
            "scope", f"expected NAMESPACE:read or NAMESPACE:read+write, got {text!r}"
        )
    if access not in ("read", "read+write"):
        raise ValidationError("scope", f"access must be read or read+write, got {access!r}")
    if namespace != ALL_NAMESPACES:
        check.namespace(namespace)
    return namespace, "read" if access == "read" else "read+write"


class TokenInfo(BaseModel):
    """What ``recalld token list`` shows about a token (never the secret)."""

    id: str
    name: str
    scopes: dict[str, Access]
    created_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None


class IssuedToken(BaseModel):
    """A freshly created token: ``token`` is shown this once and cannot be recovered."""

    token: str
    info: TokenInfo = Field(description="the stored description of the token")


@dataclass(frozen=True)
class Caller:
    """Who is calling and what it may do; ``scopes=None`` means trusted with everything.

    Trusted callers exist only when no token is configured and the request came
    from loopback (see the HTTP adapter).
    """

    token_id: str | None = None
    scopes: Mapping[str, Access] | None = field(default=None)

    @classmethod
    def trusted(cls) -> Caller:
        """A caller allowed every namespace, read and write."""
        return cls()

    def can(self, namespace: str, *, write: bool) -> bool:
        """Whether this caller may read (or, with ``write``, change) ``namespace``."""
        if self.scopes is None:
            return True
        granted = [
            access for name, access in self.scopes.items() if name in (namespace, ALL_NAMESPACES)
        ]
        if write:
            return "read+write" in granted
        return bool(granted)

    def authorize(self, namespace: str, *, write: bool, field: str = "namespace") -> None:
        """Raise :class:`PermissionDeniedError` (naming ``field``) unless :meth:`can` allows
        the access."""
        if not self.can(namespace, write=write):
            access = "write" if write else "read"
            raise PermissionDeniedError(
                f"this token may not {access} namespace {namespace!r}", field
            )

    @property
    def only_namespace(self) -> str | None:
        """The one namespace a token is scoped to (None: several, every one, or trusted):
        a request that names no namespace works in it."""
        if self.scopes is None or len(self.scopes) != 1:
            return None
        (name,) = self.scopes
        return None if name == ALL_NAMESPACES else name

    @property
    def all_namespaces(self) -> bool:
        """Whether the caller may read every namespace (admin views such as metrics)."""
        return self.scopes is None or ALL_NAMESPACES in self.scopes


class TokenRegistry:
    """Create, list, revoke and check API tokens kept in a :class:`TokenStore`."""

    def __init__(self, store: TokenStore, *, clock: Clock = utc_now) -> None:
        self._store = store
        self._clock = clock
        self._last_recorded: dict[str, datetime] = {}
        self._owned: Store | None = None

    @classmethod
    def open(cls, settings: Settings) -> TokenRegistry:
        """A registry on its own connection to ``settings.db`` (for the ``token`` commands).

        Only the store is opened (SQLite or PostgreSQL, by :func:`open_store`):
        managing tokens needs no embedder or worker.
        """
        from recalld.store.factory import open_store

        store = open_store(settings)
        try:
            registry = cls.for_store(store)
        except BaseException:
            store.close()
            raise
        registry._owned = store
        return registry

    def close(self) -> None:
        """Close the store if :meth:`open` opened it."""
        if self._owned is not None:
            self._owned.close()
            self._owned = None

    def __enter__(self) -> TokenRegistry:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @classmethod
    def for_store(cls, store: object, *, clock: Clock = utc_now) -> TokenRegistry:
        """A registry on ``store`` (a :class:`MemoryService`'s store), if it can keep tokens."""
        if not isinstance(store, TokenStore):
            raise StorageError(f"{type(store).__name__} cannot keep API tokens")
        return cls(store, clock=clock)

    def create(self, name: str, scopes: Mapping[str, Access]) -> IssuedToken:
        """Issue a new token with ``scopes`` (namespace or ``*`` → access)."""
        name = name.strip()
        if not name or len(name) > NAME_MAX_CHARS:
            raise ValidationError("name", f"must be 1-{NAME_MAX_CHARS} characters")
        if not scopes:
            raise ValidationError("scope", "give at least one NAMESPACE:read|read+write scope")
        for namespace, access in scopes.items():
            parse_scope(f"{namespace}:{access}")
        token_id = secrets.token_hex(8)
        token = f"{TOKEN_PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
        record = TokenRecord(
            id=token_id,
            name=name,
            token_hash=hash_token(token),
            scopes=dict(scopes),
            created_at=self._clock(),
        )
        self._store.insert_token(record)
        return IssuedToken(token=token, info=_info(record))

    def list(self) -> list[TokenInfo]:
        """Every token, revoked ones included, oldest first."""
        return [_info(record) for record in self._store.list_tokens()]

    def revoke(self, token_id: str) -> bool:
        """Revoke a token by its id; returns whether an active token was revoked."""
        return self._store.revoke_token(token_id, self._clock())

    def any_active(self) -> bool:
        """Whether at least one token is configured (and not revoked)."""
        return self._store.has_active_tokens()

    def is_active(self, token_id: str) -> bool:
        """Whether the token with that id exists and is not revoked (for a response that
        outlives the request it authenticated, such as an event stream)."""
        record = self._store.find_token(token_id)
        return record is not None and record.revoked_at is None

    def authenticate(self, token: str) -> Caller:
        """The caller a bearer token stands for; :class:`AuthenticationError` if it is not valid.

        The error never repeats the token: tokens must not reach logs.
        """
        match = TOKEN_PATTERN.fullmatch(token)
        record = None if match is None else self._store.find_token(match.group(1))
        # Compare against a dummy digest when the id is unknown, so the work done
        # (and the time taken) does not depend on whether the id exists.
        expected = record.token_hash if record is not None else hash_token("")
        matches = hmac.compare_digest(expected, hash_token(token))
        if record is None or not matches or record.revoked_at is not None:
            raise AuthenticationError("the bearer token is not valid")
        self._record_use(record)
        scopes: dict[str, Access] = {
            namespace: "read+write" if access == "read+write" else "read"
            for namespace, access in record.scopes.items()
        }
        return Caller(token_id=record.id, scopes=scopes)

    def _record_use(self, record: TokenRecord) -> None:
        now = self._clock()
        previous = self._last_recorded.get(record.id) or record.last_used_at
        if previous is not None and now - previous < LAST_USED_RESOLUTION:
            return
        self._last_recorded[record.id] = now
        self._store.touch_token(record.id, now)


def _info(record: TokenRecord) -> TokenInfo:
    return TokenInfo.model_validate(
        {
            "id": record.id,
            "name": record.name,
            "scopes": record.scopes,
            "created_at": record.created_at,
            "last_used_at": record.last_used_at,
            "revoked_at": record.revoked_at,
        }
    )
