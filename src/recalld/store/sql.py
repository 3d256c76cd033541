"""SQL helpers shared by the SQLite and PostgreSQL stores (no connection, no driver).

Both stores keep the same tables under the same names (``memories`` with its
``at_utc`` instant, ``memory_tags``, ``jobs`` …), so the clause that makes rows
visible to a :class:`~recalld.store.base.Scope` is built once here. Only the
placeholder syntax (``:name`` for apsw, ``%(name)s`` for psycopg) and the form
in which an instant is bound (fixed-width UTC text for SQLite, a datetime for
PostgreSQL) differ; the caller passes both in.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from recalld.store.base import Counts, Scope
from recalld.store.retrieval import TURN_KIND

__all__ = [
    "EARLIEST_WALK",
    "EARLIEST_WORDS",
    "HELD_NAMESPACES",
    "PENDING_JOB_STATES",
    "Bind",
    "escape_like",
    "grouped_counts",
    "json_compact",
    "json_text",
    "like_words",
    "neighbour_pairs",
    "scope_clause",
    "substring_pattern",
]

# Bind(name, value) -> the placeholder to write into the SQL (and records the value).
Bind = Callable[[str, Any], str]

PENDING_JOB_STATES = ("queued", "running")
# Every namespace holding something an export carries (Store.namespaces; each store
# orders them): a namespace with only core memory or declared entities is no less one,
# and `export --all-namespaces` left it out of the backup.
HELD_NAMESPACES = (
    "SELECT namespace FROM memories UNION SELECT namespace FROM core_memory"
    " WHERE entries <> '[]' UNION SELECT namespace FROM graph_entities WHERE declared"
)


def escape_like(text: str) -> str:
    """``text`` with LIKE's wildcards escaped (use with ``ESCAPE '\\'``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


UNCATEGORIZED = "uncategorized"


def grouped_counts(rows: Iterable[Sequence[Any]]) -> dict[str, int]:
    """``(value, count)`` rows of a ``GROUP BY`` as a dict by value, in code point order
    (no value first, as :data:`UNCATEGORIZED`). Not the database's order: PostgreSQL sorts
    NULL last and by its collation, SQLite NULL first by bytes. A category written as
    "uncategorized" and memories with none are one entry, their counts added (the later
    row replaced the earlier one, so ``stats`` lost memories)."""
    ordered = sorted(rows, key=lambda row: (row[0] is not None, str(row[0] or "")))
    counts: dict[str, int] = {}
    for value, count in ordered:
        name = UNCATEGORIZED if value is None else str(value)
        counts[name] = counts.get(name, 0) + int(count)
    return counts


def counts_sql(scope: Scope, where: str, now: str, table: str = "memories m") -> str:
    """The one query behind :meth:`Store.counts`: rows ``(namespace, category, kind,
    visible, expired)`` grouped by the first three, over the rows ``where`` admits (the
    scope's clause with expired rows included), ``now`` the placeholder of its clock.

    One pass over the rows: three ``GROUP BY`` queries and an expired count were four
    (``/v1/stats``, which the browser reads on every search page, took 1.7-2.2 s at
    50,000 memories, and a timeline ran the four per bucket). ``table`` is the table as
    named in ``FROM`` (SQLite may be told to scan it rather than use an index)."""
    visible = "1 = 1" if scope.include_expired else f"m.expires_at IS NULL OR m.expires_at > {now}"
    return (
        "SELECT m.namespace, m.category, m.kind,"
        f" sum(CASE WHEN {visible} THEN 1 ELSE 0 END),"
        f" sum(CASE WHEN m.expires_at <= {now} THEN 1 ELSE 0 END)"
        f" FROM {table} WHERE {where} GROUP BY m.namespace, m.category, m.kind"
    )


def counts_of(rows: Iterable[Sequence[Any]]) -> Counts:
    """:class:`Counts` from the rows of :func:`counts_sql` (exact, as counted in its pass).
    A group whose rows are all expired counts only as expired (no namespace, category or
    kind entry of 0)."""
    by_namespace: list[tuple[Any, int]] = []
    by_category: list[tuple[Any, int]] = []
    by_kind: list[tuple[Any, int]] = []
    expired = 0
    for namespace, category, kind, visible, expired_here in rows:
        expired += int(expired_here or 0)
        if visible:
            by_namespace.append((namespace, int(visible)))
            by_category.append((category, int(visible)))
            by_kind.append((kind, int(visible)))
    namespaces = grouped_counts(by_namespace)
    return Counts(
        count=sum(namespaces.values()),
        by_category=grouped_counts(by_category),
        by_kind=grouped_counts(by_kind),
        by_namespace=namespaces,
        expired=expired,
    )


def substring_pattern(text: str) -> str:
    """What a query without word terms searches as a substring: its printable characters
    (a NUL would end the LIKE pattern early and match everything), trimmed, at most 200;
    nothing when they are punctuation alone ("?", "...", "-"): those name nothing, and
    found every memory holding one (a symbol such as an emoji or "$" is still looked for)."""
    pattern = "".join(c for c in text if c.isprintable() or c == " ").strip()[:200]
    if all(c == " " or unicodedata.category(c).startswith("P") for c in pattern):
        return ""
    return pattern


# How many memories of a time range ``earliest_matches`` reads at most, and how many words
# it looks for (SQLite refuses an expression of ~1,000 ORs).
EARLIEST_WALK = 1_000
EARLIEST_WORDS = 64


def like_words(words: Sequence[str]) -> list[str]:
    """The words ``earliest_matches`` looks for: printable, non-empty (an empty word, or a
    NUL that would end the pattern, would match every memory), at most
    :data:`EARLIEST_WORDS`."""
    kept = (substring_pattern(word) for word in words)
    return [word for word in kept if word][:EARLIEST_WORDS]


def neighbour_pairs(visible: str, alive: str) -> str:
    """The query of each memory ``m`` that ``visible`` keeps (a WHERE condition over
    ``m``): its seq, the seqs of the previous and the next memory ``p`` of its namespace
    and source by (at, seq) that ``alive`` keeps (a condition over ``p`` starting with
    AND, or ""), and whether it is a conversation's turn. Served by the
    memories_source_order index (namespace, source, at_utc, seq)."""

    def side(operator: str, direction: str) -> str:
        return (
            "(SELECT p.seq FROM memories p WHERE p.namespace = m.namespace"
            " AND p.source = m.source"
            f" AND (p.at_utc, p.seq) {operator} (m.at_utc, m.seq){alive}"
            f" ORDER BY p.at_utc {direction}, p.seq {direction} LIMIT 1)"
        )

    return (
        f"SELECT m.seq, {side('<', 'DESC')}, {side('>', 'ASC')}, m.kind = '{TURN_KIND}'"
        f" FROM memories m WHERE {visible} AND m.source IS NOT NULL AND m.at_utc IS NOT NULL"
    )


def source_window(earlier: bool, beside: tuple[str, str] | None) -> tuple[str, str]:
    """The condition (starting with AND, or "") and the ORDER BY of ``by_source``: the
    memories after the placeholders ``beside`` (an ``at``, a seq) by (at, seq), or before
    them, nearest first, when ``earlier``. Served by the memories_source_order index."""
    operator, direction = ("<", "DESC") if earlier else (">", "ASC")
    condition = ""
    if beside is not None:
        condition = f" AND (m.at_utc, m.seq) {operator} ({beside[0]}, {beside[1]})"
    return condition, f"ORDER BY m.at_utc {direction}, m.seq {direction}"


def json_text(value: Any) -> str:
    """JSON as stored in a text column: UTF-8 kept readable (``ensure_ascii=False``)."""
    return json.dumps(value, ensure_ascii=False)


def json_compact(value: Any) -> str:
    """Compact JSON (no spaces), for ``meta`` objects."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def scope_clause(scope: Scope, bind: Bind, instant: Callable[[datetime], Any]) -> str:
    """The WHERE clause (over alias ``m``) that makes rows visible to ``scope``.

    ``bind`` turns a named value into a placeholder; ``instant`` converts a
    datetime into the form the store compares its time columns with.
    """
    clauses: list[str] = []
    names = [bind(f"ns{index}", namespace) for index, namespace in enumerate(scope.namespaces)]
    clauses.append(f"m.namespace IN ({', '.join(names)})" if names else "1 = 0")
    if not scope.include_expired:
        clauses.append(
            f"(m.expires_at IS NULL OR m.expires_at > {bind('now', instant(scope.now))})"
        )
    if scope.kind is not None:
        # Kinds are written in NFC; one stored decomposed by an earlier version is found too.
        # A filter kept with white space at its ends (an owned kind, " intention", as an
        # older version stored it) finds the kind trimmed too, as every kind filter does:
        # "intention " typed by accident found no reminder (review of pass a67).
        spellings = dict.fromkeys(
            unicodedata.normalize(form, kind)
            for kind in (scope.kind, scope.kind.strip())
            for form in ("NFC", "NFD")
        )
        named = [bind(f"kind{index}", spelling) for index, spelling in enumerate(spellings)]
        clauses.append(f"m.kind IN ({', '.join(named)})")
    if scope.category is not None:
        clauses.append(f"m.category = {bind('category', scope.category)}")
    if scope.speaker is not None:
        clauses.append(f"m.speaker = {bind('speaker', scope.speaker)}")
    if scope.has_key is not None:
        clauses.append("m.key IS NOT NULL" if scope.has_key else "m.key IS NULL")
    if scope.tags_any:
        wanted = [bind(f"any{index}", tag) for index, tag in enumerate(scope.tags_any)]
        clauses.append(
            "EXISTS (SELECT 1 FROM memory_tags t WHERE t.seq = m.seq"
            f" AND t.tag IN ({', '.join(wanted)}))"
        )
    for index, tag in enumerate(scope.tags_all):
        clauses.append(
            "EXISTS (SELECT 1 FROM memory_tags t WHERE t.seq = m.seq"
            f" AND t.tag = {bind(f'all{index}', tag)})"
        )
    for name, column, operator in (
        ("since", "at_utc", ">="),
        ("until", "at_utc", "<"),
        ("created_since", "created_at", ">="),
        ("created_until", "created_at", "<"),
    ):
        value = getattr(scope, name)
        if value is not None:
            clauses.append(f"m.{column} {operator} {bind(name, instant(value))}")
    return " AND ".join(clauses)
