"""Which namespace a call names: ``namespace``, or mem0-style ``user_id`` / ``agent_id``.

mem0 scopes memories by user and by agent; recalld scopes them by namespace.
The mapping is fixed and documented, so a mem0 client (or an export of one)
lands where a recalld client will look:

- ``user_id="alice"`` → namespace ``user:alice``
- ``agent_id="planner"`` → namespace ``agent:planner``
- both → ``user:alice/agent:planner``

An id is 1-44 letters, digits or ``. _ : @ -`` (no ``/``, so the combined form
cannot be forged from one id, and the result fits a namespace's 100
characters). A call that names a namespace both ways is refused naming the
arguments: there is no precedence to guess.
"""

from __future__ import annotations

import re

from recalld import _validate as check
from recalld._text import shown
from recalld.errors import ValidationError

__all__ = ["ID_MAX_CHARS", "ID_PATTERN", "mem0_namespace", "requested_namespace"]

ID_MAX_CHARS = 44
ID_PATTERN = r"[\w.:@-]{1,44}"
_ID = re.compile(ID_PATTERN)


def _checked(value: str, field: str) -> str:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise ValidationError(
            field,
            f"must be 1-{ID_MAX_CHARS} letters, digits or . _ : @ - (got {shown(value)})"
            + check.decomposed_note(value, _ID),
        )
    return value


def mem0_namespace(user_id: str | None, agent_id: str | None) -> str | None:
    """The namespace of a mem0 ``user_id``/``agent_id`` pair (None when neither is given)."""
    parts = []
    if user_id is not None:
        parts.append(f"user:{_checked(user_id, 'user_id')}")
    if agent_id is not None:
        parts.append(f"agent:{_checked(agent_id, 'agent_id')}")
    return "/".join(parts) or None


def requested_namespace(
    namespace: str | None, user_id: str | None = None, agent_id: str | None = None
) -> str | None:
    """The namespace one call asks for, checked (None: the caller's default)."""
    mapped = mem0_namespace(user_id, agent_id)
    if namespace is not None and mapped is not None:
        named = "user_id" if user_id is not None else "agent_id"
        raise ValidationError(
            named, f"give namespace or user_id/agent_id, not both ({namespace!r} and {mapped!r})"
        )
    chosen = namespace if namespace is not None else mapped
    return None if chosen is None else check.namespace(chosen)
