"""Recall in languages written without spaces: a word a note holds, found (adversarial pass a69).

FTS5's tokenizer reads a run of Chinese, Japanese or Korean as one word, so a word
inside the run was not found until migration 32 indexed its character pairs. This
probe writes a few dozen short notes in Chinese, Japanese, Korean, Thai, mixed
English and CJK, and three space-separated controls (German, Russian, Spanish),
all in one database (each note the others' distractors), then asks for a word each
note holds (two-character words mostly; one single character; a katakana loanword;
a Korean noun its particle is glued to in the note). It reports hit@1 and hit@3 per
language at the default ``min_score``, for each embedder asked (``none``: the
keyword channel alone; ``minilm``: the default).

Run from the repository root (one JSON object on stdout)::

    .venv/bin/python bench/languages_probe.py [--embedders none,minilm] [--db URL]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

from recalld import MemoryService, Settings

# (language, note, query: a word the note holds)
CASES: tuple[tuple[str, str, str], ...] = (
    ("zh", "我昨天在北京吃了烤鸭", "烤鸭"),
    ("zh", "下个月我要去上海出差", "上海"),
    ("zh", "我女儿喜欢弹钢琴", "钢琴"),
    ("zh", "公司的年会定在十二月", "年会"),
    ("zh", "他对花生过敏\uff0c不能吃坚果", "花生"),
    ("zh", "我们的服务器在新加坡机房", "服务器"),
    ("zh", "周末带狗去公园散步", "狗"),
    ("ja", "東京で寿司を食べました", "寿司"),
    ("ja", "来週の会議は大阪で行います", "大阪"),
    ("ja", "佐藤さんはコーヒーが好きです", "コーヒー"),
    ("ja", "娘はピアノを習っています", "ピアノ"),
    ("ja", "新しいパソコンを買いました", "パソコン"),
    ("ja", "京都の桜がとてもきれいでした", "京都"),
    ("ja", "毎朝六時に起きて走る", "六時"),
    ("ko", "서울에서 친구를 만났다", "친구"),
    ("ko", "다음 주에 부산으로 출장을 간다", "부산"),
    ("ko", "아내는 커피를 좋아한다", "커피"),
    ("ko", "딸이 피아노를 배우고 있다", "피아노"),
    ("ko", "회의는 매주 월요일에 있다", "회의"),
    ("ko", "새 노트북을 샀다", "노트북"),
    ("th", "ฉันชอบกินข้าวผัดที่กรุงเทพ", "กรุงเทพ"),
    ("th", "พรุ่งนี้ฉันจะไปเชียงใหม่", "เชียงใหม่"),
    ("th", "ลูกสาวเรียนเปียโนทุกวันเสาร์", "เปียโน"),
    ("th", "ประชุมทีมทุกวันจันทร์", "ประชุม"),
    ("mixed", "meeting with 田中さん at 3pm", "田中"),
    ("mixed", "Deploy the 新版本 on Friday", "版本"),
    ("mixed", "Lunch at 소문난 식당 with Anna", "식당"),
    ("mixed", "Flight to 名古屋 on JL123", "名古屋"),
    ("de", "Ich habe in Berlin Kaffee getrunken", "Kaffee"),
    ("de", "Die Besprechung ist am Montag", "Besprechung"),
    ("ru", "Вчера я был в Москве", "Москве"),
    ("ru", "Моя дочь играет на пианино", "пианино"),
    ("es", "Mañana viajo a Madrid por trabajo", "Madrid"),
    ("es", "Mi hija toma clases de piano", "piano"),
)

# Queries about nothing the notes hold, per language: the share that still gets a hit at
# the default min_score (the README: a query about nothing stored returns nothing).
UNRELATED = (
    ("zh", "飞机"),
    ("zh", "股票市场"),
    ("zh", "火山爆发的原因"),
    ("ja", "富士山に登った"),
    ("ko", "화산 폭발"),
    ("th", "ภูเขาไฟ"),
    ("en", "volcano eruption"),
)


def _share(values: Sequence[bool]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def measure(service: MemoryService, ids: Sequence[str]) -> dict[str, Any]:
    """hit@1 and hit@3 per language (see the module docstring), and the misses."""
    first: dict[str, list[bool]] = {}
    third: dict[str, list[bool]] = {}
    missed: list[str] = []
    started = time.perf_counter()
    for (language, _, query), memory_id in zip(CASES, ids, strict=True):
        found = [hit.memory.id for hit in service.search(query, limit=3)]
        first.setdefault(language, []).append(bool(found) and found[0] == memory_id)
        third.setdefault(language, []).append(memory_id in found)
        if memory_id not in found:
            missed.append(query)
    elapsed = time.perf_counter() - started
    answered: dict[str, list[bool]] = {}
    for language, query in UNRELATED:
        answered.setdefault(language, []).append(bool(service.search(query, limit=3)))
    return {
        "hit_at_1": {language: _share(values) for language, values in first.items()},
        "hit_at_3": {language: _share(values) for language, values in third.items()},
        "missed_at_3": missed,
        "unrelated_answered": {language: _share(values) for language, values in answered.items()},
        "recall_ms_mean": round(1000 * elapsed / len(CASES), 2),
    }


def run(database: str | Path, embedder: str) -> dict[str, Any]:
    """The notes written into ``database`` (fresh), every query asked."""
    chosen = cast(Literal["none", "minilm", "hashing"], embedder)
    settings = Settings(db=database, embedder=chosen, purge_interval_seconds=3600)
    with MemoryService.open(settings) as service:
        ids = [service.remember(note).id for _, note, _ in CASES]
        service.indexing.catch_up([service.settings.namespace])
        return {"embedder": embedder, **measure(service, ids)}


def main(argv: Sequence[str] | None = None) -> None:
    """Run the probe for each embedder, print the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", default="none,minilm", help="comma-separated")
    parser.add_argument(
        "--db", default=None, help="a PostgreSQL URL (a fresh database each run; default SQLite)"
    )
    arguments = parser.parse_args(argv)
    runs = []
    for embedder in arguments.embedders.split(","):
        if embedder not in ("none", "minilm", "hashing"):
            parser.error(f"--embedders: {embedder!r} is not none, minilm or hashing")
        if arguments.db is not None:
            runs.append(run(arguments.db, embedder))
            continue
        with tempfile.TemporaryDirectory() as directory:
            runs.append(run(Path(directory) / "languages.db", embedder))
    result = {
        "benchmark": "languages_probe",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "notes": len(CASES),
        "runs": runs,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
