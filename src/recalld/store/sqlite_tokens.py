"""The SQLite store's ``tokens`` table (:class:`~recalld.store.base.TokenStore`): API tokens,
kept as their hashes."""

from __future__ import annotations

import json
from datetime import datetime

from recalld._time import to_storage
from recalld.store.base import TokenRecord
from recalld.store.sqlite_connection import SQLiteDatabase
from recalld.store.sqlite_rows import TOKEN_COLUMNS, row_to_token, stamp

__all__ = ["SQLiteTokens"]


class SQLiteTokens:
    """The token methods of :class:`~recalld.store.sqlite.SQLiteStore` (its base class)."""

    _database: SQLiteDatabase

    def insert_token(self, record: TokenRecord) -> None:
        self._database.changes(
            "INSERT INTO tokens(id, name, token_hash, scopes, created_at, last_used_at,"
            " revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                record.id,
                record.name,
                record.token_hash,
                json.dumps(record.scopes, sort_keys=True),
                to_storage(record.created_at),
                stamp(record.last_used_at),
                stamp(record.revoked_at),
            ),
        )

    def find_token(self, token_id: str) -> TokenRecord | None:
        rows = self._database.read(f"SELECT {TOKEN_COLUMNS} FROM tokens WHERE id = ?", (token_id,))
        return row_to_token(rows[0]) if rows else None

    def list_tokens(self) -> list[TokenRecord]:
        rows = self._database.read(
            f"SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY created_at, id", ()
        )
        return [row_to_token(row) for row in rows]

    def revoke_token(self, token_id: str, now: datetime) -> bool:
        changed = self._database.changes(
            "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
            (to_storage(now), token_id),
        )
        return changed > 0

    def touch_token(self, token_id: str, now: datetime) -> None:
        self._database.changes(
            "UPDATE tokens SET last_used_at = ? WHERE id = ?", (to_storage(now), token_id)
        )

    def has_active_tokens(self) -> bool:
        return bool(
            self._database.read("SELECT 1 FROM tokens WHERE revoked_at IS NULL LIMIT 1", ())
        )
