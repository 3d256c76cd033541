"""Recall on an agent's plain notes: found when asked in other words, nothing when unrelated.

The reranker is fitted on LoCoMo's conversation turns (speakers, sessions, long
chats). An agent's memory is often something else: short notes with no speaker
and no session, asked about in other words. This probe measures that regime on
a small fixed set written for it (in this file, never used to fit anything):

* 40 notes an assistant might keep (the user's preferences, people, projects,
  infrastructure, schedules);
* 40 questions, each about one note, half of them sharing no content word with
  it (paraphrases: "when is the daily meeting?" for the stand-up note);
* 30 questions about nothing stored, a third of them sharing an incidental word
  with some note ("favourite football team" beside "favourite language").

It reports, at the default ``min_score`` and at 0: hit@1 and hit@3 of the
answerable questions (split by whether they share a word with their note), and
the share of unrelated questions that return nothing (split the same way).
``--reranker FILE`` scores with another reranker data file (a candidate from
``bench/fit_reranker.py --out``).

Run from the repository root (one JSON object on stdout)::

    .venv/bin/python bench/notes_probe.py [--embedder minilm|hashing] [--reranker FILE]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recalld import MemoryService, Settings
from recalld.retrieval.rerank import Reranker

NOTES = (
    "The staging database runs in Sydney on a db.r6g.large instance",
    "The user prefers dark mode in every editor and terminal",
    "Deploys go through scripts/deploy.sh, which needs AWS credentials in the environment",
    "Alice from accounting is allergic to peanuts",
    "The team stand-up is at 9:30 every weekday",
    "The production API key rotates on the first Monday of each month",
    "Bob's birthday is on March 14",
    "The user's favourite programming language is Rust",
    "Project Falcon's deadline moved to June 30",
    "The office wifi password is taped under the router in room 4",
    "The user lives in Hobart and moved there from Melbourne last spring",
    "The user is vegetarian and does not eat fish either",
    "Nightly backups are written to the bucket s3://acme-backups at 2 am UTC",
    "Carol is the user's manager and approves all expense reports",
    "The user wants commit messages written in the imperative mood",
    "The mobile app is built with Flutter and targets Android 10 and later",
    "The user's daughter plays the cello in the school orchestra",
    "The quarterly planning offsite is in Queenstown in September",
    "The user takes the 7:45 ferry to work on Tuesdays and Thursdays",
    "Our Postgres primary has 64 GB of RAM and the replica lags by about two seconds",
    "The user dislikes long meetings and prefers written updates",
    "Dave is on parental leave until the end of August",
    "The company VPN uses WireGuard; config files are in the IT wiki",
    "The user is learning Japanese and practises every evening",
    "Invoices must be sent to the client before the 25th of each month",
    "The user's car is a blue 2019 Subaru Outback",
    "The marketing site is hosted on Netlify and deploys from the main branch",
    "The user's dentist appointment is on Friday at 3 pm",
    "Eve leads the security team and must review every change to authentication",
    "The user runs 10 km every Saturday morning along the river",
    "The test suite takes about twelve minutes on CI",
    "The user's preferred airline seat is an aisle seat near the front",
    "Frank's phone number is in the shared contacts sheet, not in Slack",
    "The data warehouse is BigQuery and the nightly ETL loads it at 4 am",
    "The user has two cats named Miso and Tofu",
    "The legal team asked that customer names never appear in logs",
    "The user's laptop is a 14-inch MacBook Pro with 32 GB of memory",
    "Grace translated the onboarding guide into Spanish",
    "The user drinks oat milk flat whites and no sugar",
    "Production incidents are announced in the #incidents channel with a severity level",
)

# (question, index of its note, whether the question shares a content word with it)
ANSWERABLE = (
    ("Where is the staging database hosted?", 0, True),
    ("What colour scheme does the user like for their tools?", 1, False),
    ("How do I ship a new release to production?", 2, False),
    ("What can Alice not eat?", 3, True),
    ("When is the daily meeting?", 4, False),
    ("How often is the production API key changed?", 5, True),
    ("When is Bob's birthday?", 6, True),
    ("Which coding language does the user like best?", 7, False),
    ("When is Falcon due?", 8, True),
    ("How do I get onto the office internet?", 9, False),
    ("Which city does the user live in?", 10, True),
    ("What are the user's dietary restrictions?", 11, False),
    ("Where do the nightly backups go?", 12, True),
    ("Who signs off on my expenses?", 13, False),
    ("How should commit messages be phrased?", 14, True),
    ("What framework is the phone app written in?", 15, False),
    ("What instrument does the user's kid play?", 16, False),
    ("Where is the planning offsite this year?", 17, True),
    ("How does the user get to the office?", 18, False),
    ("How much memory does the main database server have?", 19, False),
    ("Does the user like meetings?", 20, True),
    ("When is Dave back at work?", 21, False),
    ("How do I connect to the VPN?", 22, True),
    ("Which foreign language is the user studying?", 23, False),
    ("What is the deadline for sending invoices?", 24, True),
    ("What does the user drive?", 25, False),
    ("Where is the marketing website hosted?", 26, True),
    ("When does the user see the dentist?", 27, True),
    ("Who has to approve changes to login code?", 28, False),
    ("What exercise does the user do at the weekend?", 29, False),
    ("How long do the tests take in continuous integration?", 30, True),
    ("Where does the user like to sit on a plane?", 31, False),
    ("How can I call Frank?", 32, False),
    ("Which warehouse product do we use for analytics?", 33, True),
    ("What pets does the user have?", 34, False),
    ("Can customer names be written to logs?", 35, True),
    ("What computer does the user work on?", 36, False),
    ("Who did the Spanish translation of the onboarding guide?", 37, True),
    ("How does the user take their coffee?", 38, False),
    ("Where are outages announced?", 39, False),
)

# (question, whether it shares an incidental word with some note)
UNRELATED = (
    ("What is the user's favourite football team?", True),
    ("xyzzy plugh", False),
    ("What is the capital of Kazakhstan?", False),
    ("Recipe for a chocolate cake", False),
    ("How many moons does Neptune have?", False),
    ("What is the boiling point of tungsten?", False),
    ("Who won the 1998 World Cup?", False),
    ("What is the user's blood type?", True),
    ("When is Alice's wedding?", True),
    ("What is the half-life of carbon-14?", False),
    ("Explain the difference between TCP and UDP", False),
    ("Which amendment abolished slavery?", False),
    ("What is the user's shoe size?", True),
    ("What is the torque spec for the cylinder head bolts?", False),
    ("Which enzyme unwinds DNA during replication?", False),
    ("What did Bob cook for dinner last night?", True),
    ("How tall is Mount Kilimanjaro?", False),
    ("What is the population of Ulaanbaatar?", False),
    ("Which bank does the company use for payroll?", True),
    ("What is Avogadro's number?", False),
    ("What is the wavelength of red light?", False),
    ("Which hotel did Carol book in Paris?", True),
    ("How do I defragment an ext4 partition?", False),
    ("What is the airspeed velocity of an unladen swallow?", False),
    ("What is the user's favourite film?", True),
    ("Who discovered the positron?", False),
    ("How many bytes are in a kibibyte?", False),
    ("What is the name of the user's dog?", True),
    ("What time does the museum open on Sundays?", True),
    ("How is the Gini coefficient computed?", False),
)


def _share(values: Sequence[bool]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def measure(service: MemoryService, ids: Sequence[str], min_score: float) -> dict[str, Any]:
    """hit@1, hit@3 and abstention at one threshold (see the module docstring)."""
    first: dict[bool, list[bool]] = {True: [], False: []}
    third: dict[bool, list[bool]] = {True: [], False: []}
    for question, note, shares_word in ANSWERABLE:
        found = [hit.memory.id for hit in service.search(question, limit=3, min_score=min_score)]
        first[shares_word].append(bool(found) and found[0] == ids[note])
        third[shares_word].append(ids[note] in found)
    empty: dict[bool, list[bool]] = {True: [], False: []}
    for question, shares_word in UNRELATED:
        empty[shares_word].append(not service.search(question, limit=3, min_score=min_score))
    return {
        "min_score": min_score,
        "hit_at_1": _share(first[True] + first[False]),
        "hit_at_3": _share(third[True] + third[False]),
        "hit_at_1_shared_word": _share(first[True]),
        "hit_at_1_paraphrase": _share(first[False]),
        "hit_at_3_paraphrase": _share(third[False]),
        "no_hits_unrelated": _share(empty[True] + empty[False]),
        "no_hits_unrelated_shared_word": _share(empty[True]),
        "no_hits_unrelated_no_shared_word": _share(empty[False]),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Write the notes into a fresh database, ask every question, print the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm")
    parser.add_argument("--reranker", type=Path, default=None, help="a reranker data file")
    arguments = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(
            db=Path(directory) / "notes.db",
            embedder=arguments.embedder,
            purge_interval_seconds=3600,
        )
        with MemoryService.open(settings) as service:
            if arguments.reranker is not None:
                reranker = Reranker(json.loads(arguments.reranker.read_text()))
                service.indexing.retriever.reranker = reranker
            ids = [service.remember(note).id for note in NOTES]
            service.indexing.catch_up([service.settings.namespace])
            default = service.settings.min_score
            result = {
                "benchmark": "notes_probe",
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "embedder": None if service.embedder is None else service.embedder.name,
                "reranker": str(arguments.reranker) if arguments.reranker else "shipped",
                "notes": len(NOTES),
                "answerable": len(ANSWERABLE),
                "unrelated": len(UNRELATED),
                "at_default_min_score": measure(service, ids, default),
                "at_min_score_0": measure(service, ids, 0.0),
            }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
