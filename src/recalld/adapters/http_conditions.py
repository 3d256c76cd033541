"""Conditional edits over REST: ``If-Match`` on ``PATCH`` and ``DELETE /v1/memories/{id}``
and on ``PUT /v1/kv/{key}``.

``GET`` and ``PATCH /v1/memories/{id}`` send the memory's version as a strong
``ETag`` (:func:`recalld.versions.entity_tag`). A ``PATCH`` carrying ``If-Match``
writes only while the memory is still one of the versions it lists, checked in
the write's own transaction, else 412 and nothing changes: an edit made from a
copy that another tab, client or agent has edited since never overwrites that
edit unseen. ``If-Match: *`` asks only that the memory exists (as any ``PATCH``
does). A ``DELETE`` carrying it deletes only that version (412 else; a memory
that is not there answers ``deleted: false``, as without it). Without the header
both work as before. A ``PUT /v1/kv/{key}`` carrying it overwrites only while the
key holds a memory of one of those versions (the ETag of ``GET /v1/kv/{key}``), and
with ``*`` only while it holds one: 412 else, nothing written (RFC 9110: a
condition on a resource that does not exist is false). With ``If-None-Match: *`` it
writes only while the key holds no memory (RFC 9110: create, never overwrite), 412
else; ``POST /v1/memories`` with a ``key`` takes both as this ``PUT`` does. No other
write takes ``If-None-Match`` (422: ignored, it let a client that meant "create only"
overwrite what was there).
"""

from __future__ import annotations

import re

from starlette.datastructures import Headers

from recalld.errors import ValidationError
from recalld.versions import ABSENT, ANY_VERSION

__all__ = ["IF_MATCH", "IF_NONE_MATCH", "expected_versions", "key_condition"]

IF_MATCH = "If-Match"
IF_NONE_MATCH = "If-None-Match"


def expected_versions(headers: Headers) -> frozenset[str] | None:
    """The versions the request's ``If-Match`` accepts; None when it sets no condition.

    A weak tag (``W/"…"``) never matches: ``If-Match`` compares strongly (RFC 9110). A
    tag may hold a comma (``"a,b"`` is one tag); empty list elements are skipped. An
    ``If-None-Match`` is refused: only :func:`key_condition`'s write takes it.
    """
    if IF_NONE_MATCH in headers:
        raise ValidationError(
            IF_NONE_MATCH,
            "is not supported here (only PUT /v1/kv/{key} and POST /v1/memories with a key"
            " take it, as *): give If-Match with the ETag of a read (or *)",
        )
    values = headers.getlist(IF_MATCH)
    if not values:
        return None
    tags: list[str] = []
    for value in values:
        if not _LIST.fullmatch(value):
            raise ValidationError(
                IF_MATCH,
                "must be entity tags in double quotes (the ETag of GET /v1/memories/{id}),"
                " separated by commas, or *",
            )
        tags.extend(match.group(0) for match in _ELEMENT.finditer(value))
    if not tags:
        raise ValidationError(IF_MATCH, "is empty: give the memory's ETag, or leave it out")
    if "*" in tags:
        return None
    return frozenset(tag[1:-1] for tag in tags if not tag.startswith("W/"))


# RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E /
# obs-text; If-Match = "*" / #entity-tag (a list: commas, optional whitespace, empty
# elements allowed).
_ELEMENT = re.compile(r'\*|(?:W/)?"[\x21\x23-\x7e\x80-\xff]*"')
_LIST = re.compile(
    rf"[ \t,]*(?:(?:{_ELEMENT.pattern})(?:[ \t]*,[ \t,]*(?:{_ELEMENT.pattern}))*[ \t,]*)?"
)


def key_condition(headers: Headers) -> frozenset[str] | str | None:
    """What ``If-Match`` or ``If-None-Match`` asks of ``PUT /v1/kv/{key}``: the versions
    the key's memory must be one of, :data:`~recalld.versions.ANY_VERSION` (``If-Match:
    *``: only that the key holds a memory), :data:`~recalld.versions.ABSENT`
    (``If-None-Match: *``: that it holds none), or None (no header: write whatever the
    key holds, or create it)."""
    absent = headers.getlist(IF_NONE_MATCH)
    if absent:
        if headers.getlist(IF_MATCH):
            raise ValidationError(IF_NONE_MATCH, "give If-Match or If-None-Match, not both")
        if [value.strip() for value in absent] != ["*"]:
            # A list of tags would mean "unless it is one of these versions": no client
            # of a key needs it, and guessing would overwrite.
            raise ValidationError(
                IF_NONE_MATCH,
                f"takes only * here (write only while the key holds nothing), not"
                f" {', '.join(absent)!r}",
            )
        return ABSENT
    if not headers.getlist(IF_MATCH):
        return None
    versions = expected_versions(headers)
    return ANY_VERSION if versions is None else versions
