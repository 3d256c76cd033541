"""What the native MCP dialect costs an agent in bytes: ``tools/list`` and a default recall.

Agents pay for every byte a tool list or a tool result puts into their context.
This bench opens the native dialect in-process over a fresh database (keyword
recall, so no model is loaded), stores ``--memories`` short notes that all
match one query, and measures:

* ``tools_list_bytes``: the JSON of the ``tools/list`` result (names,
  descriptions, input and output schemas), as the server sends it;
* ``tools_list_without_output_schemas_bytes``: the same without the output
  schemas (what a client that only forwards names, descriptions and input
  schemas to the model pays);
* ``recall_bytes``: the JSON of one ``recall`` result with ``--hits`` hits,
  its default form (text content and structured content together);
* ``recall_text_bytes``: only its text content (what most clients show the model);
* ``recall_verbose_bytes``: the same recall with ``verbose: true`` when the
  tool has that argument (else null).

Run it from the repository root::

    .venv/bin/python bench/mcp_output_bench.py [--hits 7]

The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.types import CallToolResult

from recalld.adapters.mcp_server import build_server
from recalld.config import Settings
from recalld.service import MemoryService

NOTES = [
    "The staging database runs in the Melbourne region (australiaeast).",
    "Deploys to staging happen from the release branch every Tuesday.",
    "The staging cluster has three nodes; the third is a spot instance.",
    "Staging credentials live in the team vault under infra/staging.",
    "The staging load balancer terminates TLS with a wildcard certificate.",
    "Backups of the staging database are kept for seven days.",
    "The staging environment mirrors production's feature flags nightly.",
    "Staging alerts go to the #infra-staging channel, not to the pager.",
]


def _size(result: Any) -> int:
    return len(result.model_dump_json(by_alias=True, exclude_none=True).encode("utf-8"))


async def _measure(db: Path, hits: int) -> dict[str, Any]:
    settings = Settings(db=db, synchronous="NORMAL", embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        for index in range(max(hits, len(NOTES))):
            service.remember(
                NOTES[index % len(NOTES)] + f" (note {index})",
                tags=["infra", "staging"],
                category="fact",
            )
    server = build_server(lambda: MemoryService.open(settings), ["native"])
    async with Client(server) as client:
        listed = await client.list_tools()
        recall = next(tool for tool in listed.tools if tool.name == "recall")
        result = await client.call_tool("recall", {"query": "staging", "limit": hits})
        assert isinstance(result, CallToolResult)
        assert not result.is_error
        text = "".join(block.text for block in result.content if block.type == "text")
        verbose = None
        if "verbose" in (recall.input_schema.get("properties") or {}):
            verbose_result = await client.call_tool(
                "recall", {"query": "staging", "limit": hits, "verbose": True}
            )
            verbose = _size(verbose_result)
    return {
        "tools": len(listed.tools),
        "tools_list_bytes": _size(listed),
        "tools_list_without_output_schemas_bytes": _size(
            listed.model_copy(
                update={
                    "tools": [
                        tool.model_copy(update={"output_schema": None}) for tool in listed.tools
                    ]
                }
            )
        ),
        "recall_hits": hits,
        "recall_bytes": _size(result),
        "recall_text_bytes": len(text.encode("utf-8")),
        "recall_verbose_bytes": verbose,
    }


def main() -> None:
    """Measure and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=7, help="hits of the measured recall")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        measured = asyncio.run(_measure(Path(directory) / "bench.db", arguments.hits))
    measured.update(
        {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": platform.machine(),
            "python": platform.python_version(),
        }
    )
    print(json.dumps(measured))


if __name__ == "__main__":
    main()
