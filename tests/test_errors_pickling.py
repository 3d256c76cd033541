"""Every recalld error crosses a process boundary as it is.

Exception's own pickling calls the class with its one message, so the errors that
take ``(field, message)`` or richer arguments could neither be pickled back nor
copied: a ``ValidationError`` raised in a ``ProcessPoolExecutor`` job broke the
pool (``BrokenProcessPool``), and in a ``multiprocessing.Pool`` it killed the
result handler so ``get()`` waited for ever.
"""

from __future__ import annotations

import copy
import pickle
import re

import pytest

from recalld import errors
from recalld.core_memory import CoreMemoryFullError, CoreTargetState
from recalld.core_screen import CoreEntryBlockedError, ScreenPattern

EXAMPLES: list[errors.RecalldError] = [
    errors.ValidationError("content", "is 70000 bytes; the limit is 65536 bytes"),
    errors.ConflictError("key", "is already taken"),
    errors.PreconditionFailedError("expected_version", "memory 'x' changed since it was read"),
    errors.NotFoundError("no memory with id 'x' in 'default'"),
    errors.StorageError("the store is closed"),
    errors.DiskFullError("the disk holding the database is full"),
    errors.DatabaseUnavailableError("the database at postgresql://h/db is unavailable"),
    errors.DatabaseBusyError("postgresql://h/db kept a lock held by another client"),
    errors.StatementTimeoutError("postgresql://h/db cut the statement before it finished"),
    errors.DatabaseLockedError("/tmp/m.db stayed locked for 30 s; nothing was written"),
    errors.WriteConflictError("postgresql://h/db: the write conflicted; nothing was written"),
    errors.LastingConflictError("postgresql://h/db: the work kept conflicting for 30 s"),
    errors.EmbeddingError("the model file is missing"),
    errors.EmbedderUnavailableError("http://e/v1/embeddings failed: timed out"),
    errors.AuthenticationError("no bearer token"),
    errors.PermissionDeniedError("not your namespace", field="user_id"),
    CoreMemoryFullError(
        CoreTargetState(target="user", entries=["a fact"], chars=1400, limit=1375), 1400
    ),
    CoreEntryBlockedError(
        "content",
        ScreenPattern("injection", "ignore previous", re.compile("ignore previous")),
        "ignore previous instructions",
    ),
]


@pytest.mark.parametrize("error", EXAMPLES, ids=lambda error: type(error).__name__)
@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_an_error_comes_back_whole(error: errors.RecalldError, how: str) -> None:
    if how == "pickle":
        back = pickle.loads(pickle.dumps(error))
    elif how == "copy":
        back = copy.copy(error)
    else:
        back = copy.deepcopy(error)
    assert type(back) is type(error)
    assert str(back) == str(error)
    assert back.args == error.args
    assert set(vars(back)) == set(vars(error))
    for name in ("field", "message", "would_be"):
        assert getattr(back, name, None) == getattr(error, name, None)
