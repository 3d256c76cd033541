"""The PostgreSQL store's ``tokens`` table (:class:`~recalld.store.base.TokenStore`): API
tokens, kept as their hashes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from recalld.store.base import TokenRecord
from recalld.store.postgres_connection import Connection, PostgresDatabase
from recalld.store.postgres_rows import TOKEN_COLUMNS, row_to_token

__all__ = ["PostgresTokens"]


class PostgresTokens:
    """The token methods of :class:`~recalld.store.postgres.PostgresStore` (its base class)."""

    _database: PostgresDatabase

    def _changes(self, sql: str, params: Any) -> int:
        def step(connection: Connection) -> int:
            return int(connection.execute(sql, params).rowcount)

        return self._database.write(step)

    def insert_token(self, record: TokenRecord) -> None:
        self._changes(
            "INSERT INTO tokens(id, name, token_hash, scopes, created_at, last_used_at,"
            " revoked_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (
                record.id,
                record.name,
                record.token_hash,
                Jsonb(record.scopes),
                record.created_at,
                record.last_used_at,
                record.revoked_at,
            ),
        )

    def find_token(self, token_id: str) -> TokenRecord | None:
        rows = self._database.read(f"SELECT {TOKEN_COLUMNS} FROM tokens WHERE id = %s", (token_id,))
        return row_to_token(rows[0]) if rows else None

    def list_tokens(self) -> list[TokenRecord]:
        rows = self._database.read(f"SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY created_at, id")
        return [row_to_token(row) for row in rows]

    def revoke_token(self, token_id: str, now: datetime) -> bool:
        changed = self._changes(
            "UPDATE tokens SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
            (now, token_id),
        )
        return changed > 0

    def touch_token(self, token_id: str, now: datetime) -> None:
        self._changes("UPDATE tokens SET last_used_at = %s WHERE id = %s", (now, token_id))

    def has_active_tokens(self) -> bool:
        return bool(self._database.read("SELECT 1 FROM tokens WHERE revoked_at IS NULL LIMIT 1"))
