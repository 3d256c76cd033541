"""A thread that has ended leaves no SQLite connection open behind it.

Each thread using a service gets its own connection, and every one was kept until
``close()``: a program starting a thread per call (an agent framework's tool call, a
``ThreadPoolExecutor`` made per request) held one more connection, two file
descriptors and its page cache per thread it ever ran (1,500 threads: 3,000 descriptors
and 500 MB), until "too many open files" (adversarial pass a66).
"""

from __future__ import annotations

import threading
from typing import cast

from recalld.service import MemoryService
from recalld.store.sqlite import SQLiteStore


def _open_connections(service: MemoryService) -> int:
    return len(cast(SQLiteStore, service.store)._database._connections)


def test_an_ended_threads_connection_is_closed(service: MemoryService) -> None:
    service.remember("written by the thread that opened the service")
    opened = _open_connections(service)
    failures: list[BaseException] = []

    def one_call(number: int) -> None:
        try:
            service.remember(f"written by short-lived thread {number}")
            service.search("short-lived thread")
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            failures.append(error)

    for number in range(40):
        thread = threading.Thread(target=one_call, args=(number,))
        thread.start()
        thread.join(60)
        assert not thread.is_alive()
    assert failures == []
    assert _open_connections(service) == opened
    # The connections left open keep the write-ahead log in place: writes go on.
    service.remember("written after the threads ended")
    assert service.stats().count == 42
