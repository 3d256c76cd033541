"""What a conversation's send answers when the database fails after some of its turns.

``remember_conversation`` writes a long transcript in chunks of
:data:`recalld.conversations.CHUNK_TURNS` turns, one transaction each, so a database
failure in a later chunk (a lock held too long, a full disk, a conflict still there
after its re-runs) leaves the chunks before it written. The error said only "nothing
was written" (adversarial pass a68, stop 67's leftover), and a client took the kept
turns for lost. :func:`stopped_conversation` keeps the error's class (a busy database is
still REST's 503 ``database_busy``) and says where the send stopped and what it kept;
:func:`stopped_conversation_told` is that message with the cause a client is told in
place of the error's own (where the database is, the log's).
"""

from __future__ import annotations

import contextlib
import copy
import re
from collections.abc import Iterator, Sequence
from typing import Any

from recalld.conversation_model import ConversationReport
from recalld.errors import StorageError

__all__ = ["stopped_conversation", "stopped_conversation_told"]

_STOPPED = re.compile(
    r"the conversation (.*) stopped at message (\d+), whose chunk of turns was not written:"
    r" .*\. (The \d+ turns? before it (?:is|are) written and kept \(.*)",
    re.DOTALL,
)


@contextlib.contextmanager
def stopped_conversation(
    report: ConversationReport | None, chunk: Sequence[tuple[int, Any]]
) -> Iterator[None]:
    """Around one chunk of a send (``chunk``: its (message index, message) pairs),
    ``report`` what the chunks before it wrote (None before the first): a database
    failure after some turns were written says which, and that they are kept."""
    try:
        yield
    except StorageError as error:
        if report is None or not report.turns or not chunk:
            raise
        kept = len(report.turns)
        stopped = copy.copy(error)
        stopped.args = (
            f"the conversation {report.conversation!r} stopped at message {chunk[0][0]},"
            f" whose chunk of turns was not written: {error}. The {kept}"
            f" turn{'' if kept == 1 else 's'} before it {'is' if kept == 1 else 'are'}"
            f" written and kept ({report.created} created, {report.updated} updated,"
            f" {report.unchanged} unchanged, up to message {report.turns[-1].index}); send"
            " the conversation again once that is fixed: the kept turns are answered"
            " unchanged",
        )
        raise stopped from error


def stopped_conversation_told(error: BaseException, cause: str) -> str | None:
    """For a send a database failure stopped after some chunks (see
    :func:`stopped_conversation`): its message with ``cause`` (what a client is told) in
    place of the error's own (the log's); None for any other error."""
    stopped = _STOPPED.fullmatch(str(error))
    if stopped is None:
        return None
    return (
        f"the conversation {stopped[1]} stopped at message {stopped[2]}, whose chunk of"
        f" turns was not written: {cause}. {stopped[3]}"
    )
