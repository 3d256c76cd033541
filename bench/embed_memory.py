"""Memory and throughput of the embedding worker's batches: the arena given back per batch,
once when the queue drains, or never.

The worker embeds memories in batches of ``worker_batch_size`` texts, each padded to its
longest text, so onnxruntime sees a new shape almost every batch; its CPU arena keeps what
the largest asked for. Stop 55 had every batch shrink the arena (``--side per_batch``);
since stop 56 the worker calls ``release_memory`` once its queue has drained (``--side
release``, today's behaviour); ``--side keep`` never gives it back. Each side runs in a
fresh process and prints one JSON object: texts/s, CPU seconds per 1,000 texts, resident
memory after loading the model, after the batches and after the release, the peak, the
release's own milliseconds, and a short query's p50 afterwards.

Texts: the turns of a LoCoMo-format file (``--data``; read where it lives, never copied),
"speaker: text" as ``bench/locomo.py`` stores them, else synthetic sentences.

    .venv/bin/python bench/embed_memory.py --data ../shared/bench/locomo/dev.json

``--interleaved BLOCKS`` measures instead the CPU a batch costs with and without shrinking
the arena after it, alternating blocks of five batches in one process (a quieter
comparison than separate processes on a machine whose speed moves).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _texts(data: Path | None, count: int) -> list[str]:
    if data is None:
        from corpus import make_texts

        return make_texts(count, random.Random(7), "broad")
    texts: list[str] = []
    for sample in json.loads(data.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        for name, turns in conversation.items():
            if name.startswith("session_") and isinstance(turns, list):
                texts += [f"{turn['speaker']}: {turn['text']}" for turn in turns]
    return texts[:count]


def _resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_side(side: str, data: Path | None, count: int, batch: int) -> dict[str, Any]:
    """Embed ``count`` texts in batches of ``batch`` in this process; the figures."""
    from recalld.config import Settings
    from recalld.embeddings import create_embedder
    from recalld.embeddings.minilm import MiniLMEmbedder

    embedder = create_embedder(Settings(db=":memory:"))
    assert isinstance(embedder, MiniLMEmbedder)
    embedder.embed_batch(["load the model"])
    if side == "per_batch":
        # As stop 55 ran every batch (not a query): the release's run options on each run.
        session, options = embedder._session, embedder._release_options

        class _PerBatch:
            def run(self, outputs: Any, feeds: Any, *_: Any) -> Any:
                batch = feeds["input_ids"].shape[0] > 1
                return session.run(outputs, feeds, options if batch else None)

        embedder._session = _PerBatch()
    texts = _texts(data, count + 300)
    loaded = _resident_mb()
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, count, batch):
        embedder.embed_batch(texts[start : start + batch])
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    after_batches = _resident_mb()
    released = time.perf_counter()
    if side == "release":
        embedder.release_memory()
    release_ms = 1000 * (time.perf_counter() - released)
    after_release = _resident_mb()
    queries = []
    for text in texts[count : count + 300]:
        begun = time.perf_counter()
        embedder.embed_batch([" ".join(text.split()[:10])])
        queries.append(time.perf_counter() - begun)
    queries.sort()
    return {
        "side": side,
        "model": embedder.name,
        "texts": count,
        "batch": batch,
        "texts_per_s": round(count / wall, 1),
        "cpu_s_per_1000": round(1000 * cpu / count, 2),
        "resident_after_load_mb": round(loaded),
        "resident_after_batches_mb": round(after_batches),
        "resident_after_release_mb": round(after_release),
        "release_ms": round(release_ms, 1),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "query_p50_ms": round(1000 * queries[len(queries) // 2], 3),
    }


def interleaved(data: Path | None, blocks: int, batch: int) -> dict[str, Any]:
    """CPU seconds of a batch with and without arena shrinkage, in one process: blocks of
    five batches per side, alternating (the first batch of a block, which pays for the
    other side's arena, is not counted), so both sides share the machine's moments."""
    from recalld.config import Settings
    from recalld.embeddings import create_embedder
    from recalld.embeddings.minilm import MiniLMEmbedder

    embedder = create_embedder(Settings(db=":memory:"))
    assert isinstance(embedder, MiniLMEmbedder)
    embedder.embed_batch(["load the model"])
    session, options = embedder._session, embedder._release_options
    chosen: dict[str, Any] = {"options": None}

    class _Switched:
        def run(self, outputs: Any, feeds: Any, *_: Any) -> Any:
            return session.run(outputs, feeds, chosen["options"])

    embedder._session = _Switched()
    texts = _texts(data, blocks * 5 * batch)
    batches = [texts[start : start + batch] for start in range(0, len(texts), batch)]
    cpu: dict[str, list[float]] = {"keep": [], "per_batch": []}
    for block in range(blocks):
        sides = ("keep", "per_batch") if block % 2 == 0 else ("per_batch", "keep")
        for side in sides:
            chosen["options"] = options if side == "per_batch" else None
            for step in range(5):
                begun = time.process_time()
                embedder.embed_batch(batches[(block * 5 + step) % len(batches)])
                if step:
                    cpu[side].append(time.process_time() - begun)
    keep, shrink = sum(cpu["keep"]), sum(cpu["per_batch"])
    return {
        "benchmark": "embed_memory_interleaved",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
        "batches_each": len(cpu["keep"]),
        "keep_cpu_s": round(keep, 3),
        "per_batch_cpu_s": round(shrink, 3),
        "per_batch_over_keep": round(shrink / keep, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="a LoCoMo-format JSON file")
    parser.add_argument("--texts", type=int, default=1280)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--side", choices=["keep", "per_batch", "release"], default=None, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--interleaved",
        type=int,
        default=0,
        metavar="BLOCKS",
        help="instead: per-batch CPU with and without shrinkage, interleaved in one process",
    )
    arguments = parser.parse_args()
    if arguments.interleaved:
        result = interleaved(arguments.data, arguments.interleaved, arguments.batch)
        print(json.dumps(result))
        return
    if arguments.side is not None:
        result = run_side(arguments.side, arguments.data, arguments.texts, arguments.batch)
        print(json.dumps(result))
        return
    runs = []
    for _ in range(arguments.rounds):
        for side in ("keep", "per_batch", "release"):
            command = [sys.executable, __file__, "--side", side, "--texts", str(arguments.texts)]
            command += ["--batch", str(arguments.batch)]
            if arguments.data is not None:
                command += ["--data", str(arguments.data)]
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(runs[-1], file=sys.stderr)
    print(
        json.dumps(
            {
                "benchmark": "embed_memory",
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
                "runs": runs,
            }
        )
    )


if __name__ == "__main__":
    main()
