"""A worker process for the crash test: it claims a batch, says so, then hangs until killed.

Run as ``python -m tests.worker_child DB MARKER``: the embedder writes MARKER when
the first batch reaches it and then blocks, so the parent can kill -9 the
process while it holds leased jobs it has not completed.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from recalld.embeddings.base import Vectors
from recalld.embeddings.hashing import HashingEmbedder
from recalld.service import MemoryService
from tests.semantic_support import semantic_settings


class HangingEmbedder(HashingEmbedder):
    """Signals the marker file, then never returns."""

    def __init__(self, marker: Path) -> None:
        super().__init__(64)
        self._marker = marker

    @property
    def name(self) -> str:
        return "hashing-64"

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        # Written beside the marker, then renamed: the parent, which kills this process
        # as soon as the marker exists, must never find it still empty.
        partial = self._marker.with_name(self._marker.name + ".partial")
        partial.write_text(str(len(texts)))
        partial.replace(self._marker)
        threading.Event().wait()
        raise AssertionError("unreachable")


def main() -> None:
    """Claim one batch with a long lease and hang inside the embedder."""
    database, marker = Path(sys.argv[1]), Path(sys.argv[2])
    settings = semantic_settings(database, worker_lease_seconds=60, worker_batch_size=8)
    store = MemoryService.open(settings.model_copy(update={"embedder": "none"})).store
    service = MemoryService(store, settings, embedder=HangingEmbedder(marker))
    service.new_worker(worker_id="doomed").run_until_idle()


if __name__ == "__main__":
    main()
