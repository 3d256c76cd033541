"""A database path naming a device, pipe or socket is refused by name.

Before, ``recalld.open("/dev/null")`` or a named pipe failed inside SQLite with
``StorageError: IOError: disk I/O error``, naming neither the path nor why.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import recalld
from recalld.errors import StorageError


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_no_database(tmp_path: Path) -> None:
    pipe = tmp_path / "memories.db"
    os.mkfifo(pipe)
    with pytest.raises(StorageError, match="is not a regular file") as refused:
        recalld.open(pipe, embedder="none")
    assert str(pipe) in str(refused.value)


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_a_device_is_no_database() -> None:
    with pytest.raises(StorageError, match=r"/dev/null is not a regular file"):
        recalld.open("/dev/null", embedder="none")
