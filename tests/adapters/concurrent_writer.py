"""A library writer process for the concurrency test (`python -m tests.adapters.concurrent_writer`).

Writes ``--count`` memories with unique markers through :class:`MemoryService`
(no HTTP) and prints one JSON line: how many were acknowledged and every error seen.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from recalld.config import Settings
from recalld.errors import RecalldError
from recalld.service import MemoryService


def marker(writer: str, index: int) -> str:
    """The unique text written as memory ``index`` of ``writer``."""
    return f"marker-{writer}-{index:05d}"


def main() -> None:
    """Write the markers one remember (one transaction) at a time."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--writer", required=True)
    parser.add_argument("--count", type=int, required=True)
    arguments = parser.parse_args()
    acknowledged = 0
    errors: list[str] = []
    with MemoryService.open(Settings(db=arguments.db)) as service:
        for index in range(arguments.count):
            try:
                service.remember(marker(arguments.writer, index), tags=[arguments.writer])
            except RecalldError as error:
                errors.append(f"{index}: {error}")
            else:
                acknowledged += 1
    print(json.dumps({"writer": arguments.writer, "acknowledged": acknowledged, "errors": errors}))


if __name__ == "__main__":
    main()
