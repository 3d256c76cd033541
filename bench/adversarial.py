"""Adversarial probes of recalld's promises (issue 10), against real processes.

Four parts, each reported in the JSON summary:

* **namespace walls**: a token for namespace A probes what namespace B holds
  (by id, key, query, tag, place, listing, export, stats, import, core memory,
  pending recollections, look-alike namespace headers); a probe *leaks* when an
  answer A may see carries B's marker, and is an *oracle* when an id that
  exists in B gets a different answer than an id that exists nowhere;
* **bad input**: about a thousand malformed requests (wrong types, booleans
  for numbers, huge and non-finite numbers, control characters, deep JSON,
  lone surrogates, invalid UTF-8, oversized bodies ...) over every JSON
  endpoint; every answer must be a 4xx, never a 5xx or a dropped connection;
* **byte scans**: a marker is written, then dropped through each path that
  drops content (REST, CLI and MCP forget, key overwrite, update, core-memory
  remove and patch, TTL purge, an import that replaces a record, a forget while
  another process holds a read snapshot); afterwards the database files must
  not contain a byte of it;
* **disk full** (root only: needs a small tmpfs): writes until the disk is
  full, then checks the answer says so and that a forget still succeeds.

Run it from the repository root::

    .venv/bin/python bench/adversarial.py [--skip-disk-full]

Progress goes to stderr; the last line of stdout is one JSON object. The exit
status is 1 if any promise broke.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw
import httpx
from mcp import Client, StdioServerParameters

from recalld.store.sqlite import SQLiteStore
from recalld.tokens import Access, TokenRegistry

STARTUP_SECONDS = 60.0


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def environment(**extra: str) -> dict[str, str]:
    """A clean environment: no stray RECALLD_* settings, keyword-only recall."""
    clean = {name: value for name, value in os.environ.items() if not name.startswith("RECALLD_")}
    clean.update({"RECALLD_EMBEDDER": "none", **extra})
    return clean


class Server:
    """``recalld serve`` on a free port, reached at :attr:`url`."""

    def __init__(self, db: Path, **settings: str) -> None:
        self.db = db
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        log = db.with_name(f"{db.name}-server.log")
        command = [sys.executable, "-m", "recalld", "--db", str(db), "serve"]
        command += ["--port", str(self.port), "--log-level", "warning"]
        with log.open("ab") as output:
            self.process = subprocess.Popen(
                command, stdout=output, stderr=subprocess.STDOUT, env=environment(**settings)
            )
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(log.read_text(errors="replace")[-2000:])
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("recalld serve did not start")

    def stop(self) -> None:
        """SIGTERM, then wait (SIGKILL if it does not stop)."""
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def _token(db: Path, scopes: dict[str, Access]) -> str:
    store = SQLiteStore(db)
    try:
        return TokenRegistry(store).create("adversary", scopes).token
    finally:
        store.close()


def _database_bytes(db: Path) -> bytes:
    return b"".join(
        Path(f"{db}{suffix}").read_bytes()
        for suffix in ("", "-wal", "-shm", "-journal")
        if Path(f"{db}{suffix}").exists()
    )


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


# -- namespace walls --------------------------------------------------------------


def namespace_walls(directory: Path) -> dict[str, Any]:
    """Probe B's data with A's token; count probes, leaks and existence oracles."""
    db = directory / "walls.db"
    with Server(db) as server:
        return _walls(server, db)


def _walls(server: Server, db: Path) -> dict[str, Any]:
    marker = f"zqxwall{uuid.uuid4().hex[:10]}"
    token_a = _token(db, {"alpha": "read+write"})
    token_b = _token(db, {"beta": "read+write"})
    as_a = {"Authorization": f"Bearer {token_a}", "X-Recalld-Namespace": "alpha"}
    as_b = {"Authorization": f"Bearer {token_b}", "X-Recalld-Namespace": "beta"}
    place = {"lat": 48.8642, "lon": 2.3475}
    statuses: Counter[int] = Counter()
    leaks: list[str] = []
    oracles: list[str] = []
    probes = 0
    with httpx.Client(base_url=server.url, timeout=60) as client:
        b_ids = []
        for index in range(5):
            receipt = client.post(
                "/v1/memories",
                json={
                    "content": f"beta secret {marker} number {index}",
                    "title": f"{marker} title",
                    "tags": [f"{marker}tag", "shared"],
                    "key": f"{marker}-key-{index}",
                    "place": place,
                    "meta": {"secret": marker},
                    "id": f"beta-{index}",
                },
                headers=as_b,
            ).json()
            b_ids.append(receipt["id"])
        client.put("/v1/kv/shared.key", json={"value": f"beta kv {marker}"}, headers=as_b)
        client.post(
            "/v1/core/user", json={"action": "add", "content": f"B is {marker}"}, headers=as_b
        )
        client.post(
            "/v1/experiences", json={"content": f"beta cafe {marker}", **place}, headers=as_b
        )
        client.post("/v1/sense", json={"text": f"beta cafe {marker}", **place}, headers=as_b)
        client.post("/v1/memories", json={"content": "alpha's own"}, headers=as_a)

        def probe(method: str, path: str, **options: Any) -> httpx.Response:
            nonlocal probes
            probes += 1
            headers = {**as_a, **options.pop("headers", {})}
            response = client.request(method, path, headers=headers, **options)
            statuses[response.status_code] += 1
            if response.status_code < 400 and marker in response.text:
                leaks.append(f"{method} {path} {options} -> {response.status_code}")
            return response

        # By id and key: B's ids and keys, then look-alikes of them.
        candidates = b_ids + [f"{marker}-key-{index}" for index in range(5)]
        candidates += [f" {b_ids[0]}", f"{b_ids[0]} ", b_ids[0].upper(), f"{b_ids[0]}%00"]
        for candidate in candidates:
            probe("GET", f"/v1/memories/{candidate}")
            probe("PATCH", f"/v1/memories/{candidate}", json={"title": "hijack"})
            probe("DELETE", f"/v1/memories/{candidate}")
            probe("GET", f"/v1/kv/{candidate}")
        for key in ("shared.key", f"{marker}-key-0", f"{marker}-key-1"):
            probe("GET", f"/v1/kv/{key}")
        # Queries for B's words, tags and place.
        for query in (marker, f"{marker} title", "beta secret", f"{marker}tag", "shared"):
            for path in ("/v1/search", "/v1/recall"):
                probe("POST", path, json={"query": query, "limit": 50})
                probe(
                    "POST", path, json={"query": query, "filters": {"tags_any": [f"{marker}tag"]}}
                )
            probe("POST", "/recall", json={"query": query})
            probe("POST", "/v1/context/recall", json={"query": query, **place, "k": 50})
            probe("POST", "/v1/sense", json={"text": query, **place})
        for parameters in (
            {},
            {"tag": f"{marker}tag"},
            {"order": "updated"},
            {"kind": "experience"},
        ):
            probe("GET", "/v1/memories", params={**parameters, "limit": 1000})
        probe("GET", "/v1/recollections/pending", params={"drain": "false"})
        probe("GET", "/v1/recollections/pending")
        probe("GET", "/v1/core")
        probe("GET", "/v1/export")
        probe("GET", "/v1/stats")
        probe("GET", "/status")
        # Header games: B itself, look-alikes, several at once, the wildcard.
        # (HTTP strips spaces around a header value, so "beta " is "beta" on the wire.)
        for header in (
            "beta",
            "BETA",
            "Beta",
            "alpha,beta",
            "beta,alpha",
            "alpha, beta",
            "*",
            "../beta",
            "alpha/../beta",
            "beta.",
            "beta:",
            "beta/",
            "%62eta",
        ):
            for method, path, body in (
                ("GET", "/v1/memories", None),
                ("GET", "/v1/export", None),
                ("GET", "/v1/stats", None),
                ("GET", "/v1/core", None),
                ("POST", "/v1/search", {"query": marker}),
                ("GET", "/v1/recollections/pending", None),
                ("POST", "/v1/memories", {"content": "planted"}),
            ):
                probe(method, path, headers={"X-Recalld-Namespace": header}, json=body)
        # Imports naming B, or B's ids.
        line = {
            "content": "planted by alpha",
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2030-01-01T00:00:00Z",
        }
        for record in (
            {**line, "id": "planted-1", "namespace": "beta"},
            {**line, "id": b_ids[0]},
            {**line, "id": b_ids[1], "namespace": "alpha"},
        ):
            probe("POST", "/v1/import", content=json.dumps(record).encode())
        # The existence oracle: an id B holds must get the answer an unknown id gets.
        # (b_ids[0] and b_ids[1] were just imported into alpha: they are alpha's own now.)
        for index in range(2, 5):
            known = probe("POST", "/v1/memories", json={"content": "x", "id": b_ids[index]})
            unknown = probe("POST", "/v1/memories", json={"content": "x", "id": f"nowhere-{index}"})
            if (known.status_code, known.json().get("status")) != (
                unknown.status_code,
                unknown.json().get("status"),
            ):
                oracles.append(f"id {b_ids[index]}: {known.status_code} vs {unknown.status_code}")
        size = probe("GET", "/v1/stats").json().get("db_size_bytes")
        if size is not None:
            oracles.append("/v1/stats reports the file size to a namespace-scoped token")
        # B's data is intact after all of A's attempts.
        intact = all(
            client.get(f"/v1/memories/{memory_id}", headers=as_b).status_code == 200
            for memory_id in b_ids
        )
    return {
        "probes": probes,
        "leaks": len(leaks),
        "leak_sample": leaks[:5],
        "oracles": len(oracles),
        "oracle_sample": oracles[:5],
        "statuses": dict(sorted(statuses.items())),
        "beta_intact": intact,
    }


# -- bad input ----------------------------------------------------------------------

BAD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    2**70,
    -(2**70),
    1e308,
    -1e308,
    "",
    " ",
    "\x00",
    "a\x00b",
    "\n",
    "\u202e",
    "x" * 70_000,
    [],
    [1, 2],
    {},
    {"a": 1},
    _nested(40),
    _nested(400),
    ["\x00"],
    [None],
    [""],
    "2026-13-45T99:99:99Z",
    "NaN",
    "0001-01-01T00:00:00+05:00",
]
ENDPOINTS: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "/v1/memories", {"content": "valid content"}),
    ("PUT", "/v1/kv/sweep", {"value": "valid value"}),
    ("POST", "/v1/search", {"query": "valid"}),
    ("POST", "/v1/recall", {"query": "valid"}),
    ("POST", "/remember", {"content": "valid content"}),
    ("POST", "/recall", {"query": "valid"}),
    ("POST", "/v1/experiences", {"content": "valid", "lat": 1.0, "lon": 2.0}),
    ("POST", "/v1/context/recall", {"query": "valid"}),
    ("POST", "/v1/sense", {"text": "valid"}),
    ("POST", "/v1/core/user", {"action": "add", "content": "valid entry"}),
]
FIELDS: dict[str, list[str]] = {
    "/v1/memories": [
        "content",
        "id",
        "key",
        "title",
        "kind",
        "category",
        "tags",
        "salience",
        "source",
        "at",
        "ttl_seconds",
        "place",
        "meta",
    ],
    "/v1/kv/sweep": ["value", "tags", "ttl_seconds", "title", "kind", "meta"],
    "/v1/search": ["query", "limit", "filters"],
    "/v1/recall": ["query", "limit", "filters"],
    "/remember": ["content", "source", "id", "kind", "captured_at", "metadata"],
    "/recall": ["query", "limit"],
    "/v1/experiences": [
        "content",
        "lat",
        "lon",
        "geohash",
        "at",
        "tags",
        "salience",
        "image",
        "audio",
        "biometrics",
        "title",
    ],
    "/v1/context/recall": ["query", "k", "lat", "geohash", "tags", "biometrics"],
    "/v1/sense": ["text", "lat", "geohash", "at", "biometrics"],
    "/v1/core/user": ["action", "content", "old_text", "operations"],
}
RAW_BODIES: list[bytes] = [
    b"",
    b"{",
    b"[]",
    b"null",
    b"true",
    b"123",
    b'"text"',
    b"NaN",
    b'{"content": NaN}',
    b'{"content": Infinity}',
    b'{"content": "\\ud800"}',
    b"\xff\xfe\x00",
    b'{"content": "a"}' * 3,
    b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 3000 + b"1" + b"}" * 3000,
]


def bad_input(directory: Path) -> dict[str, Any]:
    """Send malformed requests everywhere; count answers by status, and every 5xx."""
    with Server(directory / "sweep.db") as server:
        return _sweep(server)


def _sweep(server: Server) -> dict[str, Any]:
    statuses: Counter[int] = Counter()
    server_errors: list[str] = []
    dropped: list[str] = []
    sent = 0
    with httpx.Client(base_url=server.url, timeout=60) as client:
        receipt = client.post("/v1/memories", json={"content": "target of patches"}).json()

        def send(method: str, path: str, **options: Any) -> None:
            nonlocal sent
            sent += 1
            try:
                response = client.request(method, path, **options)
            except httpx.TransportError as error:
                dropped.append(f"{method} {path}: {error}")
                return
            statuses[response.status_code] += 1
            if response.status_code >= 500:
                server_errors.append(
                    f"{method} {path} {str(options)[:200]} -> {response.text[:200]}"
                )

        for method, path, valid in ENDPOINTS:
            for field in FIELDS[path]:
                for value in BAD_VALUES:
                    send(method, path, json={**valid, field: value})
            for raw in RAW_BODIES:
                send(method, path, content=raw, headers={"content-type": "application/json"})
            send(method, path, content=b"x" * (1024 * 1024 + 1))
        for field in (
            "content",
            "title",
            "tags",
            "salience",
            "at",
            "ttl_seconds",
            "place",
            "meta",
            "kind",
            "source",
        ):
            for value in BAD_VALUES:
                send("PATCH", f"/v1/memories/{receipt['id']}", json={field: value})
        for value in BAD_VALUES[:12]:
            params = {"limit": str(value), "since": str(value), "cursor": str(value)}
            send("GET", "/v1/memories", params=params)
            send("GET", "/v1/recollections/pending", params={"limit": str(value)})
        for header in ("", "a" * 200, "a,b,c", "../x", "\u00e9t\u00e9", "x y"):
            send(
                "GET",
                "/v1/stats",
                headers={"X-Recalld-Namespace": header.encode("latin-1")},
            )
        for line in (b"[" * 10_000 + b"]" * 10_000, b'{"id": "x"}', b"\xff", b"{}" * 1000):
            send("POST", "/v1/import", content=line)
        for path in ("/v1/kv/%00", "/v1/kv/%20", "/v1/memories/%00", "/v1/kv/" + "k" * 300):
            send("GET", path)
    return {
        "requests": sent,
        "statuses": dict(sorted(statuses.items())),
        "server_errors": len(server_errors),
        "server_error_sample": server_errors[:5],
        "dropped_connections": len(dropped),
    }


# -- byte scans ----------------------------------------------------------------------


def _cli(db: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recalld", "--db", str(db), *arguments],
        capture_output=True,
        text=True,
        env=environment(),
        timeout=120,
        check=False,
    )


async def _mcp_forget(db: Path, content: str) -> dict[str, Any]:
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "recalld", "--db", str(db), "mcp"], env=environment()
    )
    async with Client(parameters) as client:
        stored = await client.call_tool("remember", {"content": content})
        memory_id = json.loads(stored.content[0].text)["id"]  # type: ignore[union-attr]
        forgotten = await client.call_tool("forget", {"id": memory_id})
        answer: dict[str, Any] = json.loads(forgotten.content[0].text)  # type: ignore[union-attr]
        return answer


def byte_scans(directory: Path) -> dict[str, Any]:
    """Drop a marker through every content-dropping path; scan the files for it."""
    db = directory / "scan.db"
    settings = {"RECALLD_PURGE_INTERVAL_SECONDS": "0.5", "RECALLD_SCRUB_WAIT_SECONDS": "1"}
    with Server(db, **settings) as server:
        results = _scans(server, db)
    wal = Path(f"{db}-wal")
    return {
        "paths": len(results),
        "left_in_files": sorted(
            name for name, result in results.items() if result["left_in_files"]
        ),
        "results": results,
        "wal_bytes_after_sigterm": wal.stat().st_size if wal.exists() else 0,
    }


def _scans(server: Server, db: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}

    def check(name: str, drop: Any) -> None:
        marker = f"zqxscan{uuid.uuid4().hex[:12]}"
        answer = drop(marker)
        present = marker.encode() in _database_bytes(db)
        results[name] = {"left_in_files": present, "answer": answer}
        _log(f"byte scan {name}: {'LEFT IN FILES' if present else 'clean'}")

    with httpx.Client(base_url=server.url, timeout=60) as client:
        for index in range(20):
            client.post("/v1/memories", json={"content": f"filler {index}"})

        def rest_forget(marker: str) -> Any:
            receipt = client.post(
                "/v1/memories", json={"content": f"{marker} body", "title": marker}
            ).json()
            return client.delete(f"/v1/memories/{receipt['id']}").json()

        def rest_kv_delete(marker: str) -> Any:
            client.put(f"/v1/kv/{marker}", json={"value": f"{marker} value"})
            return client.delete(f"/v1/kv/{marker}").json()

        def rest_kv_overwrite(marker: str) -> Any:
            client.put("/v1/kv/overwritten", json={"value": f"{marker} old value"})
            return client.put("/v1/kv/overwritten", json={"value": "new value"}).json()["scrub"]

        def rest_patch(marker: str) -> Any:
            receipt = client.post("/v1/memories", json={"content": f"{marker} old"}).json()
            return client.patch(
                f"/v1/memories/{receipt['id']}", json={"content": "new"}
            ).status_code

        def rest_core_remove(marker: str) -> Any:
            client.post("/v1/core/user", json={"action": "add", "content": f"Name {marker}"})
            answer = client.post("/v1/core/user", json={"action": "remove", "old_text": marker})
            return answer.json()["scrub"]

        def rest_core_patch(marker: str) -> Any:
            client.post("/v1/core/memory", json={"action": "add", "content": f"Host {marker}"})
            body = {"action": "patch", "old_text": marker, "content": "db.local"}
            return client.post("/v1/core/memory", json=body).json()["scrub"]

        def rest_ttl_purge(marker: str) -> Any:
            client.put(f"/v1/kv/{marker}", json={"value": f"{marker} brief", "ttl_seconds": 0.2})
            time.sleep(1.0)  # past the TTL and the purge interval: the next request purges
            client.get("/v1/memories")
            deadline = time.monotonic() + 30
            while marker.encode() in _database_bytes(db) and time.monotonic() < deadline:
                time.sleep(0.1)  # the purge's scrub runs in the background
            return "purged"

        def rest_import_replace(marker: str) -> Any:
            line = {
                "id": f"imp-{uuid.uuid4().hex[:8]}",  # the id stays: no marker in it
                "content": f"{marker} imported",
                "created_at": "2026-01-01T00:00:00Z",
                "updated_at": "2026-01-01T00:00:00Z",
            }
            client.post("/v1/import", content=json.dumps(line).encode())
            line.update(content="replaced", updated_at="2027-01-01T00:00:00Z")
            return client.post("/v1/import", content=json.dumps(line).encode()).json()["updated"]

        def cli_forget(marker: str) -> Any:
            memory_id = json.loads(_cli(db, "remember", f"{marker} via cli", "--json").stdout)["id"]
            return json.loads(_cli(db, "forget", memory_id, "--json").stdout)

        def cli_update(marker: str) -> Any:
            memory_id = json.loads(_cli(db, "remember", f"{marker} via cli", "--json").stdout)["id"]
            return _cli(db, "update", memory_id, "--content", "updated", "--json").returncode

        def cli_core_remove(marker: str) -> Any:
            _cli(db, "core", "add", "user", f"Alias {marker}")
            return _cli(db, "core", "remove", "user", marker, "--json").returncode

        def mcp_forget(marker: str) -> Any:
            return asyncio.run(_mcp_forget(db, f"{marker} via mcp"))

        def forget_behind_a_reader(marker: str) -> Any:
            receipt = client.post("/v1/memories", json={"content": f"{marker} held"}).json()
            reader = apsw.Connection(str(db))
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM memories").fetchall()
            started = time.monotonic()
            answer = json.loads(_cli(db, "forget", receipt["id"], "--json").stdout)
            returned_after = time.monotonic() - started
            held = marker.encode() in _database_bytes(db)
            reader.execute("COMMIT")
            released = time.monotonic()
            deadline = released + 60
            while marker.encode() in _database_bytes(db) and time.monotonic() < deadline:
                time.sleep(0.05)
            reader.close()
            return {
                "answer": answer,
                "cli_returned_after_s": round(returned_after, 2),
                "left_while_held": held,
                "scrubbed_after_release_s": round(time.monotonic() - released, 2),
            }

        for name, drop in (
            ("rest_forget", rest_forget),
            ("rest_kv_delete", rest_kv_delete),
            ("rest_kv_overwrite", rest_kv_overwrite),
            ("rest_patch", rest_patch),
            ("rest_core_remove", rest_core_remove),
            ("rest_core_patch", rest_core_patch),
            ("rest_ttl_purge", rest_ttl_purge),
            ("rest_import_replace", rest_import_replace),
            ("cli_forget", cli_forget),
            ("cli_update", cli_update),
            ("cli_core_remove", cli_core_remove),
            ("mcp_forget", mcp_forget),
            ("forget_behind_a_reader", forget_behind_a_reader),
        ):
            check(name, drop)
    return results


# -- disk full ---------------------------------------------------------------------


def disk_full(directory: Path) -> dict[str, Any]:
    """Fill a 6 MiB tmpfs through the server; the answer must say so, forget must work."""
    mount = directory / "small"
    mount.mkdir()
    if shutil.which("mount") is None:  # a minimal image: nothing to mount a tmpfs with
        return {"measured": False, "reason": "no mount command"}
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        return {"measured": False, "reason": mounted.stderr.strip()}
    try:
        return _fill(mount)
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(mount: Path) -> dict[str, Any]:
    acknowledged: list[str] = []
    answer: dict[str, Any] = {}
    with (
        Server(mount / "full.db", RECALLD_SYNCHRONOUS="FULL") as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        for index in range(10_000):
            response = client.post("/v1/memories", json={"content": f"{index} " + "y" * 30_000})
            if response.status_code != 200:
                answer = {"status": response.status_code, **response.json()["error"]}
                break
            acknowledged.append(response.json()["id"])
        forgotten = client.delete(f"/v1/memories/{acknowledged[0]}")
        forget_answer = {"status": forgotten.status_code, **forgotten.json()}
        after = client.post("/v1/memories", json={"content": "after freeing"})
    with (
        Server(mount / "full.db") as restarted,
        httpx.Client(base_url=restarted.url, timeout=60) as client,
    ):
        present = {json.loads(line)["id"] for line in client.get("/v1/export").text.splitlines()}
    missing = [memory_id for memory_id in acknowledged[1:] if memory_id not in present]
    return {
        "measured": True,
        "acknowledged": len(acknowledged),
        "full_answer": answer,
        "forget_on_full_disk": forget_answer,
        "write_after_forget_status": after.status_code,
        "acknowledged_missing_after_restart": len(missing),
    }


def main() -> None:
    """Run every part and print the summary; exit 1 if a promise broke."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--skip-disk-full", action="store_true")
    arguments = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="recalld-adversarial-") as name:
        directory = Path(name)
        _log("namespace walls ...")
        walls = namespace_walls(directory)
        _log(f"  {walls['probes']} probes, {walls['leaks']} leaks, {walls['oracles']} oracles")
        _log("bad input ...")
        sweep = bad_input(directory)
        _log(f"  {sweep['requests']} requests, {sweep['server_errors']} 5xx")
        _log("byte scans ...")
        scans = byte_scans(directory)
        full = {"measured": False, "reason": "--skip-disk-full"}
        if not arguments.skip_disk_full:
            _log("disk full ...")
            full = disk_full(directory)
    summary = {
        "benchmark": "adversarial",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
        "namespace_walls": walls,
        "bad_input": sweep,
        "byte_scans": {key: value for key, value in scans.items() if key != "results"},
        "byte_scan_answers": {name: result["answer"] for name, result in scans["results"].items()},
        "disk_full": full,
        "seconds": round(time.monotonic() - started, 1),
    }
    print(json.dumps(summary))
    broken = (
        walls["leaks"]
        or walls["oracles"]
        or not walls["beta_intact"]
        or sweep["server_errors"]
        or sweep["dropped_connections"]
        or scans["left_in_files"]
        or (full.get("measured") and full.get("acknowledged_missing_after_restart"))
    )
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
