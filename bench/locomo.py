"""LoCoMo retrieval benchmark for recalld (issue 3): turn-level recall through the public API.

Every conversation of a LoCoMo-format file goes into its own fresh namespace
(its ``sample_id``) through ``MemoryService.remember_many``: each turn is one
memory of kind ``turn`` (as ``remember_conversation`` and ``recalld ingest``
store a conversation's turns, so recall reads a turn typed in several messages
as one, see ``recalld.retrieval.turns``) with text ``"<speaker>: <text>"``
plus ``" [image: <blip_caption>]"`` when the turn shared a photo (the same text
as the published baselines and the issue-3 figures, so numbers stay comparable),
``speaker`` = the turn's speaker, ``source`` = ``locomo://<sample_id>/session_<n>``
and ``at`` = the session's date-time plus the turn's index in seconds (real chats
carry one timestamp per message; this keeps the turns' order), and the ``dia_id``
in ``meta``. The embedding worker then indexes the queue until it is idle
(timed: that is the indexing time). Every QA item whose evidence is non-empty
after normalisation is a recall query over its own conversation.

Reported per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial) and overall over categories 1-4: R@1/5/10/20 (per question,
the share of its gold turns in the top k, averaged), All@5/10/20 (share of
questions with every gold turn in the top k) and nDCG@10 (binary gains).

Evidence ids are normalised as ``shared/bench/README.md`` describes: entries
holding several ids are split, ``D:11:26``-style and zero-padded ids are
repaired, ids that resolve to no turn are dropped.

Two ways to score (issue 11):

* the plain run ranks with the reranker shipped in the package, through
  ``MemoryService.recall`` at ``--min-score`` (default: ``RECALLD_MIN_SCORE``).
  On the dev split this is *in sample* (the shipped reranker was fitted on it;
  the output says so): use it on other LoCoMo-format files;
* ``--notes`` also writes the file's *observations* (LoCoMo's short facts
  about the speakers, each citing its turns) as plain notes, one namespace per
  conversation (see :func:`load_observations`), and reports the same figures
  for them under ``notes``: the regime of an agent's notes, without speakers
  or sessions, that the reranker's notes models are fitted on;
* ``--roles`` also writes a copy of every conversation with its two speakers
  renamed ``user`` and ``assistant`` (:func:`speakers_as_roles`), as an agent's
  chat log holds them, and reports the same figures for it under ``roles``:
  the questions still name the people, so they name no speaker recall knows
  (never fitted on; with ``--cv`` each copy is ranked by the fold that left its
  conversation out);
* ``--cv`` reports leave-one-conversation-out figures instead: for each
  conversation, the reranker is fitted on the others and ranks it, through the
  same code as ``bench/fit_reranker.py`` (candidate pool, features, runtime
  selection). It adds the pool's oracle recall (``pool_recall``: the share of
  gold turns anywhere among the ~100 keyword + ~100 vector candidates) and the
  abstention trade-off (R@5 and All@10 kept, and the share of category 1-4,
  category 5, foreign and unrelated questions left with no hit, per threshold);
* ``--cv --chats NAMES`` also writes hand-written chats of ``bench/chat_probe.py``
  (each in its own namespace, as :func:`chat_probe.as_conversation` describes) and
  fits the turns' models on them too, as ``bench/fit_reranker.py --chats`` does for
  the shipped file; each chat is a fold of its own and their figures (with the
  share of their questions about something never said left with no hit) are
  reported under ``chats``.

Run it from the repository root (the data is CC BY-NC 4.0: read it from where
it lives, never copy it into the repository)::

    .venv/bin/python bench/locomo.py --data ../shared/bench/locomo/dev.json \\
        [--cv] [--mode hybrid|keyword|vector] [--embedder minilm|hashing|none] \\
        [--graph-extractor spacy|rules|none] [--min-score S] [--notes] [--roles] [--db-dir DIR] \\
        [--chats trio,family,...]

Progress goes to stderr; the last line of stdout is one JSON object with
``overall`` (categories 1-4) and ``by_category`` (keys "1"..."5"), each holding
``R@1``, ``R@5``, ``R@10``, ``R@20``, ``All@5``, ``All@10``, ``All@20`` and
``nDCG@10``, plus the counts, the indexing time and the settings used (and,
with ``--cv``, ``pool_recall``, ``abstention`` and every channel set's figures).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import recalld
from recalld import MemoryService, Settings
from recalld.conversations import TURN_KIND
from recalld.model import NewMemory

KS = (1, 5, 10, 20)
ALL_KS = (5, 10, 20)
CATEGORIES = ("1", "2", "3", "4", "5")
OVERALL_CATEGORIES = ("1", "2", "3", "4")
DIA_ID = re.compile(r"^D(\d+):(\d+)$")

EmbedderChoice = Literal["minilm", "hashing", "none"]
Mode = Literal["hybrid", "keyword", "vector"]


@dataclass
class Conversation:
    """One conversation: its turns as memory drafts, and its retrieval queries."""

    sample_id: str
    turns: list[NewMemory]
    dia_ids: set[str]
    queries: list[tuple[str, str, list[str]]] = field(default_factory=list)
    # Questions about something the conversation never says (a hand-written chat's, see
    # bench/chat_probe.py; LoCoMo's category 5 questions cite evidence, so they are queries).
    unanswerable: list[str] = field(default_factory=list)
    # A query's other turns that answer it as well (a chat's): evidence when a model is
    # fitted, never required by All@k.
    acceptable: dict[str, list[str]] = field(default_factory=dict)
    # When its questions are asked (a chat's); None: when they are pooled.
    asked_at: datetime | None = None
    # Filled by ingest(): each turn's memory seq -> its dia_id.
    dia_of_seq: dict[int, str] = field(default_factory=dict)


def parse_session_time(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as an aware datetime (the data has no zone: UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def normalize_evidence(raw: Iterable[Any], dia_ids: set[str]) -> list[str]:
    """Split, repair and filter evidence ids (see the module docstring); keeps order, unique."""
    found: list[str] = []
    for entry in raw:
        for piece in re.split(r"[;,\s]+", str(entry)):
            piece = piece.strip()
            if not piece:
                continue
            piece = re.sub(r"^D:", "D", piece)
            match = DIA_ID.match(piece)
            if match is None:
                continue
            repaired = f"D{int(match.group(1))}:{int(match.group(2))}"
            if repaired in dia_ids and repaired not in found:
                found.append(repaired)
    return found


def load_conversations(path: Path) -> list[Conversation]:
    """Read a LoCoMo-format JSON file into turns and queries."""
    conversations = []
    for item in json.loads(path.read_text()):
        body = item["conversation"]
        turns: list[NewMemory] = []
        dia_ids: set[str] = set()
        number = 1
        while f"session_{number}" in body:
            at = parse_session_time(body[f"session_{number}_date_time"])
            source = f"locomo://{item['sample_id']}/session_{number}"
            for position, turn in enumerate(body[f"session_{number}"]):
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [image: {turn['blip_caption']}]"
                turns.append(
                    NewMemory(
                        content=text,
                        speaker=turn["speaker"],
                        kind=TURN_KIND,
                        source=source,
                        at=at + timedelta(seconds=position),
                        meta={"dia_id": turn["dia_id"]},
                    )
                )
                dia_ids.add(turn["dia_id"])
            number += 1
        conversation = Conversation(sample_id=item["sample_id"], turns=turns, dia_ids=dia_ids)
        for qa in item["qa"]:
            evidence = normalize_evidence(qa.get("evidence", []), dia_ids)
            if evidence:
                conversation.queries.append((str(qa["category"]), qa["question"], evidence))
        conversations.append(conversation)
    return conversations


def load_observations(path: Path) -> list[Conversation]:
    """The file's *observations* as plain notes, one :class:`Conversation` per item (in
    the order of :func:`load_conversations`; empty for an item without observations).

    LoCoMo annotates each session with short facts about its speakers
    ("Caroline attended an LGBTQ support group recently ..."), each citing the
    turn(s) it comes from. Each fact becomes a note as an agent would keep it:
    the fact's text, no speaker, no source, ``at`` = its session's date-time,
    and an id ``O<session>:<k>`` in ``meta["dia_id"]``. A question's gold notes
    are the facts citing one of its evidence turns (a question none cites is
    left out). This is the second regime recall's reranker is fitted on (its
    notes models, see ``recalld.retrieval.rerank``).
    """
    notes = []
    for item in json.loads(path.read_text()):
        body = item["conversation"]
        turn_ids = {
            str(turn["dia_id"])
            for key, session in body.items()
            if re.fullmatch(r"session_\d+", key)
            for turn in session
        }
        drafts: list[NewMemory] = []
        cited_by: dict[str, list[str]] = {}
        for key, speakers in (item.get("observation") or {}).items():
            number = re.fullmatch(r"session_(\d+)_observation", key)
            if number is None or not isinstance(speakers, dict):
                continue
            at = parse_session_time(body[f"session_{number.group(1)}_date_time"])
            facts = [fact for values in speakers.values() for fact in values]
            for position, (text, evidence) in enumerate(facts):
                note_id = f"O{number.group(1)}:{position}"
                drafts.append(NewMemory(content=str(text), at=at, meta={"dia_id": note_id}))
                cited = evidence if isinstance(evidence, list) else [evidence]
                for turn in normalize_evidence(cited, turn_ids):
                    cited_by.setdefault(turn, []).append(note_id)
        conversation = Conversation(
            sample_id=f"{item['sample_id']}-notes",
            turns=drafts,
            dia_ids={str(draft.meta["dia_id"]) for draft in drafts},
        )
        for qa in item["qa"]:
            evidence = normalize_evidence(qa.get("evidence", []), turn_ids)
            gold = list(dict.fromkeys(note for turn in evidence for note in cited_by.get(turn, [])))
            if gold:
                conversation.queries.append((str(qa["category"]), qa["question"], gold))
        notes.append(conversation)
    return notes


ROLES = ("user", "assistant")


def speakers_as_roles(conversations: Sequence[Conversation]) -> list[Conversation]:
    """Copies of ``conversations`` as an agent's chat log would hold them: the first
    speaker becomes ``user`` and the second ``assistant`` (the ``speaker`` field and the
    ``"<speaker>: "`` prefix of the text), so the questions, which name the people, name
    no speaker of the memories. Same turns, ids and questions; namespace
    ``<sample_id>-roles``. An evaluation of how recall answers questions that name nobody
    it knows as a speaker (see :func:`main`'s ``--roles``)."""
    copies = []
    for conversation in conversations:
        speakers = list(dict.fromkeys(str(turn.speaker) for turn in conversation.turns))
        roles = {name: ROLES[min(index, 1)] for index, name in enumerate(speakers)}
        turns = []
        for turn in conversation.turns:
            name = str(turn.speaker)
            prefix = f"{name}: "
            content = turn.content.removeprefix(prefix)
            turns.append(
                turn.model_copy(
                    update={"speaker": roles[name], "content": f"{roles[name]}: {content}"}
                )
            )
        copies.append(
            Conversation(
                sample_id=f"{conversation.sample_id}-roles",
                turns=turns,
                dia_ids=set(conversation.dia_ids),
                queries=list(conversation.queries),
            )
        )
    return copies


def ingest(service: MemoryService, conversations: Sequence[Conversation]) -> dict[str, float]:
    """Write every conversation into its own namespace, then index the queue until idle."""
    started = time.perf_counter()
    for conversation in conversations:
        receipts = service.remember_many(conversation.turns, namespace=conversation.sample_id)
        conversation.dia_of_seq = {
            receipt.seq: str(turn.meta["dia_id"])
            for receipt, turn in zip(receipts, conversation.turns, strict=True)
        }
    remembered = time.perf_counter() - started
    indexing = 0.0
    # The worker embeds and (issue 12) extracts the knowledge graph.
    if service.embedder is not None or service.indexing.extractor is not None:
        started = time.perf_counter()
        service.new_worker().run_until_idle()
        indexing = time.perf_counter() - started
    return {"remember_seconds": round(remembered, 3), "indexing_seconds": round(indexing, 3)}


def ranking_metrics(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, float]:
    gold_set = set(gold)
    result: dict[str, float] = {}
    for k in KS:
        result[f"R@{k}"] = len(gold_set & set(ranked[:k])) / len(gold_set)
    for k in ALL_KS:
        result[f"All@{k}"] = float(gold_set <= set(ranked[:k]))
    gains = sum(
        1.0 / math.log2(rank + 2) for rank, dia in enumerate(ranked[:10]) if dia in gold_set
    )
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(10, len(gold_set))))
    result["nDCG@10"] = gains / ideal
    return result


def average_metrics(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    names = [f"R@{k}" for k in KS] + [f"All@{k}" for k in ALL_KS] + ["nDCG@10"]
    if not rows:
        return {name: 0.0 for name in names}
    return {name: round(sum(row[name] for row in rows) / len(rows), 4) for name in names}


def evaluate(
    service: MemoryService,
    conversations: Sequence[Conversation],
    mode: Mode,
    min_score: float | None = None,
) -> dict[str, Any]:
    """Run every query; per-category and overall (categories 1-4) metrics, the share of
    questions left with no hit, and latency."""
    by_category: dict[str, list[dict[str, float]]] = {name: [] for name in CATEGORIES}
    empty: dict[str, int] = {name: 0 for name in CATEGORIES}
    latencies: list[float] = []
    for conversation in conversations:
        for category, question, gold in conversation.queries:
            started = time.perf_counter()
            hits = service.recall(
                question,
                limit=max(KS),
                namespace=conversation.sample_id,
                mode=mode,
                min_score=min_score,
            )
            latencies.append(time.perf_counter() - started)
            ranked = [str(hit.memory.meta.get("dia_id")) for hit in hits]
            by_category.setdefault(category, []).append(ranking_metrics(ranked, gold))
            empty[category] = empty.get(category, 0) + int(not hits)
    overall_rows = [row for name in OVERALL_CATEGORIES for row in by_category[name]]
    latencies.sort()
    return {
        "overall": average_metrics(overall_rows),
        "by_category": {name: average_metrics(rows) for name, rows in by_category.items()},
        "no_hits": {
            name: round(empty[name] / len(rows), 4) if rows else 0.0
            for name, rows in by_category.items()
        },
        "queries": {name: len(rows) for name, rows in by_category.items()},
        "queries_overall": len(overall_rows),
        "recall_p50_ms": round(1000 * latencies[len(latencies) // 2], 2) if latencies else 0.0,
    }


def cross_validated(
    service: MemoryService,
    conversations: Sequence[Conversation],
    mode: Mode,
    only_mode: bool = False,
    notes: Sequence[Conversation] = (),
    roles: Sequence[Conversation] = (),
    chats: Sequence[Conversation] = (),
) -> dict[str, Any]:
    """Leave-one-conversation-out figures (``bench/fit_reranker.py``'s code) for ``mode``,
    with the other channel sets' overall figures beside them (``only_mode``: only the
    keyword set's, which every reranker needs for candidates without a vector), the
    notes regime's under ``notes`` when ``notes`` (the observations) holds any, the
    turns renamed to roles (evaluated only, never fitted on) under ``roles``, and the
    hand-written ``chats`` (each a fold; fitted on as the turns are) under ``chats``."""
    from fit_reranker import report
    from recalld.retrieval.rerank import Channels, Reranker
    from reranker_pools import CHANNEL_SETS

    modes: tuple[Channels, ...] = (
        tuple(dict.fromkeys(("keyword", mode))) if only_mode else CHANNEL_SETS
    )
    results, _ = report(
        service,
        conversations,
        Reranker.default().keyword_parameters,
        modes=modes,
        notes=notes,
        roles=roles,
        chats=chats,
    )
    chosen = results[mode]
    return {
        **chosen,
        "queries": {
            name: sum(1 for c in conversations for q in c.queries if q[0] == name)
            for name in CATEGORIES
        },
        "channel_sets": {
            name: {
                "overall": result["overall"],
                "pool_recall": result["pool_recall"]["overall"],
                "chosen_min_score": result["chosen_min_score"],
            }
            for name, result in results.items()
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments, ingest, index, evaluate, and print the JSON result last."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--mode", choices=["hybrid", "keyword", "vector"], default="hybrid")
    parser.add_argument(
        "--embedder", choices=["minilm", "hashing", "none"], default="minilm", help="model"
    )
    parser.add_argument(
        "--graph-extractor", choices=["spacy", "rules", "none"], default="spacy", help="graph"
    )
    parser.add_argument("--db-dir", type=Path, default=None, help="keep the database here")
    parser.add_argument(
        "--cv", action="store_true", help="leave-one-conversation-out figures (refits)"
    )
    parser.add_argument(
        "--min-score", type=float, default=None, help="plain run: threshold (RECALLD_MIN_SCORE)"
    )
    parser.add_argument(
        "--notes",
        action="store_true",
        help="also the file's observations as plain notes (the reranker's notes regime)",
    )
    parser.add_argument(
        "--roles",
        action="store_true",
        help="also the turns with their speakers renamed user/assistant (questions name nobody)",
    )
    parser.add_argument(
        "--chats",
        default="",
        help="with --cv: also the hand-written chats of bench/chat_probe.py named here"
        " (comma-separated), fitted on as the file's turns, their figures under 'chats'",
    )
    arguments = parser.parse_args(argv)
    if arguments.chats and not arguments.cv:
        parser.error("--chats needs --cv (the shipped reranker is fitted on some of them)")
    if arguments.cv and arguments.mode != "keyword" and arguments.embedder == "none":
        parser.error("--cv with --embedder none needs --mode keyword")
    conversations = load_conversations(arguments.data)
    if arguments.cv and len(conversations) < 2:
        parser.error("--cv leaves one conversation out: the file needs at least two")
    with tempfile.TemporaryDirectory(dir=arguments.db_dir) as directory:
        settings = Settings(
            db=Path(directory) / "locomo.db",
            synchronous="NORMAL",
            embedder=arguments.embedder,
            graph_extractor=arguments.graph_extractor,
            purge_interval_seconds=3600,
        )
        chats: list[Conversation] = []
        if arguments.chats:
            from chat_probe import as_conversation, chat_names

            try:
                chats = [as_conversation(chat) for chat in chat_names(arguments.chats)]
            except argparse.ArgumentTypeError as error:
                parser.error(f"--chats: {error}")
        print(f"ingesting {len(conversations)} conversations ...", file=sys.stderr)
        with MemoryService.open(settings) as service:
            timings = ingest(service, [*conversations, *chats])
            notes = load_observations(arguments.data) if arguments.notes else []
            written = [conversation for conversation in notes if conversation.turns]
            if written:
                timings["notes_indexing_seconds"] = ingest(service, written)["indexing_seconds"]
            roles = speakers_as_roles(conversations) if arguments.roles else []
            if roles:
                timings["roles_indexing_seconds"] = ingest(service, roles)["indexing_seconds"]
            print(f"indexed in {timings['indexing_seconds']} s; querying ...", file=sys.stderr)
            if arguments.cv:
                result = cross_validated(
                    service, conversations, arguments.mode, notes=notes, roles=roles, chats=chats
                )
            else:
                result = evaluate(service, conversations, arguments.mode, arguments.min_score)
                if written:
                    result["notes"] = evaluate(
                        service, written, arguments.mode, arguments.min_score
                    )
                if roles:
                    result["roles"] = evaluate(service, roles, arguments.mode, arguments.min_score)
            minimum = service.settings.min_score
    fitted_on = _fitted_on()
    output = {
        "benchmark": "locomo",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "data": arguments.data.name,
        "scoring": "leave-one-conversation-out" if arguments.cv else "shipped reranker",
        "reranker_fitted_on": fitted_on,
        "in_sample": (not arguments.cv) and arguments.data.name in fitted_on,
        "min_score": None
        if arguments.cv
        else (minimum if arguments.min_score is None else arguments.min_score),
        "mode": arguments.mode,
        "embedder": arguments.embedder,
        "graph_extractor": settings.graph_extractor,
        "turns": sum(len(conversation.turns) for conversation in conversations),
        "chats": [chat.sample_id for chat in chats],
        **timings,
        "machine": {"cpu_count": _cpu_count(), "platform": platform.platform()},
        "recalld": recalld.__version__,
        **result,
    }
    print(json.dumps(output))


def _fitted_on() -> list[str]:
    """The data files the shipped reranker's models were fitted on (from its ``info``)."""
    from recalld.retrieval.rerank import Reranker

    info = Reranker.default().info
    return sorted({str(entry["data"]) for entry in info.values() if isinstance(entry, dict)})


def _cpu_count() -> int:
    import os

    return os.cpu_count() or 0


if __name__ == "__main__":
    main()
