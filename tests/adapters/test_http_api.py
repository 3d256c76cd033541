"""The REST API over a real server: every endpoint, batbox shapes, errors as JSON 4xx."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.model import QUERY_MAX_CHARS, Filters
from recalld.service import MemoryService
from tests.adapters.http_support import ServerProcess
from tests.adapters.mcp_support import INITIALIZE

pytestmark = pytest.mark.slow


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """The REST API over a SQLite file, and (pytest --postgres) over PostgreSQL."""
    directory: Path = tmp_path_factory.mktemp("http_api")
    if request.param == "postgres":
        url: str = request.getfixturevalue("postgres_database")()
        running = ServerProcess(url, log_path=directory / "server.log").start()
    else:
        running = ServerProcess(directory / "api.db").start()
    yield running
    running.stop()


@pytest.fixture
def client(server: ServerProcess) -> Iterator[httpx.Client]:
    """A client working in a namespace of its own, so tests sharing the server do not meet."""
    namespace = f"test-{uuid.uuid4().hex[:12]}"
    with httpx.Client(
        base_url=server.base_url, headers={"X-Recalld-Namespace": namespace}, timeout=30
    ) as opened:
        yield opened


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"type", "field", "message"}
    error: dict[str, Any] = body["error"]
    return error


def test_http_health_openapi_and_docs(client: httpx.Client) -> None:
    assert _ok(client.get("/healthz")) == {"status": "ok"}
    spec = _ok(client.get("/openapi.json"))
    for path in (
        "/remember",
        "/recall",
        "/status",
        "/v1/memories",
        "/v1/memories/{memory_id}",
        "/v1/recall",
        "/v1/search",
        "/v1/kv/{key}",
        "/v1/stats",
        "/v1/export",
        "/v1/import",
    ):
        assert path in spec["paths"], path
    assert "HTTPBearer" in spec["components"]["securitySchemes"]
    docs = client.get("/docs")
    assert docs.status_code == 200
    assert "swagger" in docs.text.lower()


def test_http_batbox_remember_recall_status_shapes(client: httpx.Client) -> None:
    receipt = _ok(
        client.post(
            "/remember",
            json={
                "content": "The indexing issue is documented in the queue runbook.",
                "source": "file:///docs/runbook.md",
                "kind": "reference",
                "captured_at": "2026-10-25T16:20:00Z",
                "metadata": {"author": "Mnemo", "record_type": "reference"},
            },
        )
    )
    assert receipt["status"] == "created"
    assert {"id", "job_id", "index_state", "created"} <= set(receipt)
    results = _ok(client.post("/recall", json={"query": "where is the indexing issue documented"}))
    assert len(results) == 1
    result = results[0]
    assert result["id"] == receipt["id"]
    assert result["source"] == "file:///docs/runbook.md"
    assert result["kind"] == "reference"
    assert result["captured_at"].startswith("2026-10-25T16:20:00")
    assert result["backend"] in {"fts", "like"}
    assert result["metadata"] == {"author": "Mnemo", "record_type": "reference"}
    assert 0 <= result["score"] <= 1
    status = _ok(client.get("/status"))
    assert status["memories"] == 1
    assert status["queue"]["depth"] == 0
    assert status["search_backend"] in {"fts", "like"}
    assert {"embeddings", "graph", "retry_errors", "schema_version"} <= set(status)


def test_http_batbox_remember_defaults_and_client_id_retries(client: httpx.Client) -> None:
    first = _ok(client.post("/remember", json={"content": "retry me", "id": "batbox-1"}))
    again = _ok(client.post("/remember", json={"content": "retry me", "id": "batbox-1"}))
    assert (first["status"], again["status"]) == ("created", "unchanged")
    conflict = _error(client.post("/remember", json={"content": "other", "id": "batbox-1"}), 409)
    assert conflict["field"] == "id"
    memory = _ok(client.get("/v1/memories/batbox-1"))
    assert memory["kind"] == "note"
    assert memory["source"] is None
    assert memory["at"] is not None


def test_http_memories_create_get_patch_delete(client: httpx.Client) -> None:
    receipt = _ok(
        client.post(
            "/v1/memories",
            json={
                "content": "Through the second door on the left; a 5 cm step down.",
                "title": "kitchen entrance",
                "category": "spatial",
                "tags": ["indoor"],
                "salience": 0.75,
                "place": {"lat": 37.78, "lon": -122.41},
                "at": "2026-10-25T08:10:00-07:00",
            },
        )
    )
    memory_id = receipt["id"]
    memory = _ok(client.get(f"/v1/memories/{memory_id}"))
    assert memory["title"] == "kitchen entrance"
    assert memory["place"]["geohash"].startswith("9q8yy")
    assert memory["at"] == "2026-10-25T08:10:00-07:00"
    patched = _ok(client.patch(f"/v1/memories/{memory_id}", json={"title": None, "tags": ["x"]}))
    assert patched["title"] is None
    assert patched["tags"] == ["x"]
    assert patched["content"] == memory["content"]
    assert _ok(client.delete(f"/v1/memories/{memory_id}")) == {
        "deleted": True,
        "scrubbed": True,
        "scrub": "done",
    }
    assert _ok(client.delete(f"/v1/memories/{memory_id}")) == {
        "deleted": False,
        "scrubbed": True,
        "scrub": "none",
    }
    missing = _error(client.get(f"/v1/memories/{memory_id}"), 404)
    assert missing["type"] == "not_found"
    assert _error(client.patch(f"/v1/memories/{memory_id}", json={"title": "t"}), 404)


def test_http_an_instant_outside_the_years_1_to_9999_in_utc_is_refused_and_changes_nothing(
    client: httpx.Client,
) -> None:
    # RFC 3339 allows the first day of year 1 with a positive offset and the last day of
    # year 9999 with a negative one, but they are outside years 1-9999 in UTC, which no
    # store can hold: refused naming the field, on a create and on a patch.
    for early in ("0001-01-01T00:00:00+00:07", "9999-12-31T23:59:00-01:00"):
        refused = _error(client.post("/v1/memories", json={"content": "x", "at": early}), 422)
        assert refused["field"] == "at"
        assert "out of the representable range" in refused["message"]
    memory_id = _ok(client.post("/v1/memories", json={"content": "kept as it was"}))["id"]
    before = _ok(client.get(f"/v1/memories/{memory_id}"))
    refused = _error(
        client.patch(f"/v1/memories/{memory_id}", json={"at": "0001-01-01T00:00:00+00:07"}), 422
    )
    assert refused["field"] == "at"
    assert _ok(client.get(f"/v1/memories/{memory_id}")) == before
    assert [memory["id"] for memory in _ok(client.get("/v1/memories"))["memories"]] == [memory_id]


def test_http_memories_list_filters_and_cursor_pages(client: httpx.Client) -> None:
    for index in range(5):
        category = "fact" if index % 2 else "goal"
        body = {"content": f"memory {index}", "category": category, "tags": [f"t{index}"]}
        _ok(client.post("/v1/memories", json=body))
    seen: list[str] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 2}
        if cursor is not None:
            params["cursor"] = cursor
        page = _ok(client.get("/v1/memories", params=params))
        seen += [memory["content"] for memory in page["memories"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"memory {index}" for index in reversed(range(5))]
    facts = _ok(client.get("/v1/memories", params={"category": "fact"}))
    assert {memory["content"] for memory in facts["memories"]} == {"memory 1", "memory 3"}
    tagged = _ok(client.get("/v1/memories", params=[("tag", "t0"), ("tag", "t4")]))
    assert {memory["content"] for memory in tagged["memories"]} == {"memory 0", "memory 4"}
    recent = _ok(client.get("/v1/memories", params={"order": "updated", "limit": 1}))
    assert recent["memories"][0]["content"] == "memory 4"
    bad_cursor = _error(client.get("/v1/memories", params={"cursor": "nonsense"}), 422)
    assert bad_cursor["field"] == "cursor"


def test_http_recall_counts_access_and_search_does_not(client: httpx.Client) -> None:
    _ok(client.post("/v1/memories", json={"content": "the staging database is in Melbourne"}))
    _ok(client.post("/v1/memories", json={"content": "lunch is at noon", "kind": "reference"}))
    searched = _ok(client.post("/v1/search", json={"query": "staging database"}))
    assert [hit["memory"]["access_count"] for hit in searched] == [0]
    recalled = _ok(client.post("/v1/recall", json={"query": "staging database", "limit": 5}))
    assert recalled[0]["memory"]["access_count"] == 1
    assert recalled[0]["backends"]
    assert recalled[0]["channels"]["keyword"] > 0
    filtered = _ok(
        client.post("/v1/search", json={"query": "noon", "filters": {"kind": "reference"}})
    )
    assert [hit["memory"]["content"] for hit in filtered] == ["lunch is at noon"]


def test_http_key_value_put_get_overwrite_delete(client: httpx.Client) -> None:
    first = _ok(client.put("/v1/kv/staging.region", json={"value": "Melbourne", "tags": ["infra"]}))
    assert first["status"] == "created"
    second = _ok(client.put("/v1/kv/staging.region", json={"value": "Sydney"}))
    assert (second["status"], second["id"]) == ("overwritten", first["id"])
    value = _ok(client.get("/v1/kv/staging.region"))
    assert (value["content"], value["kind"], value["key"]) == ("Sydney", "kv", "staging.region")
    with_ttl = _ok(client.put("/v1/kv/session/token", json={"value": "v", "ttl_seconds": 3600}))
    assert with_ttl["status"] == "created"
    assert _ok(client.get("/v1/kv/session/token"))["expires_at"] is not None
    assert _ok(client.delete("/v1/kv/staging.region")) == {
        "deleted": True,
        "scrubbed": True,
        "scrub": "done",
    }
    assert _ok(client.delete("/v1/kv/staging.region")) == {
        "deleted": False,
        "scrubbed": True,
        "scrub": "none",
    }
    assert _error(client.get("/v1/kv/staging.region"), 404)["type"] == "not_found"


def test_http_stats_export_and_import(client: httpx.Client) -> None:
    for index in range(3):
        _ok(client.post("/v1/memories", json={"content": f"export me {index}", "category": "c"}))
    stats = _ok(client.get("/v1/stats"))
    assert stats["count"] == 3
    assert stats["by_category"] == {"c": 3}
    exported = client.get("/v1/export")
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    lines = exported.text.splitlines()
    assert len(lines) == 3
    assert {json.loads(line)["content"] for line in lines} == {f"export me {i}" for i in range(3)}
    target = f"import-{uuid.uuid4().hex[:8]}"
    records = [json.loads(line) for line in lines]
    for record in records:
        record["namespace"] = None
    upload = "\n".join(json.dumps(record) for record in records) + "\n{broken\n"
    report = _ok(
        client.post(
            "/v1/import",
            content=upload.encode(),
            headers={"X-Recalld-Namespace": target, "Content-Type": "application/x-ndjson"},
        )
    )
    assert report["created"] == 3  # ids are per namespace: new in the target namespace
    assert [error["line"] for error in report["errors"]] == [4]
    again = _ok(client.post("/v1/import", content=upload.encode()))  # back into the source
    assert (again["created"], again["unchanged"]) == (0, 3)
    assert [error["line"] for error in again["errors"]] == [4]
    assert _ok(client.get("/v1/stats"))["count"] == 3
    assert _ok(client.get("/v1/stats", headers={"X-Recalld-Namespace": target}))["count"] == 3
    # A line that is not UTF-8 (Latin-1) is a bad line, never stored with U+FFFD.
    latin = json.dumps({"id": "latin-1", "content": "café"}, ensure_ascii=False)
    mixed = client.post("/v1/import", content=upload.encode() + latin.encode("latin-1"))
    assert [error["line"] for error in _ok(mixed)["errors"]] == [4, 5]
    assert "is not UTF-8 text (byte 0xe9" in _ok(mixed)["errors"][1]["error"]
    assert _ok(client.get("/v1/stats"))["count"] == 3


def test_http_stats_over_several_namespaces(client: httpx.Client) -> None:
    namespace = client.headers["X-Recalld-Namespace"]
    other = f"{namespace}-other"
    _ok(client.post("/v1/memories", json={"content": "one"}))
    _ok(
        client.post("/v1/memories", json={"content": "two"}, headers={"X-Recalld-Namespace": other})
    )
    both = _ok(client.get("/v1/stats", headers={"X-Recalld-Namespace": f"{namespace},{other}"}))
    assert both["by_namespace"] == {namespace: 1, other: 1}
    single = _error(
        client.post(
            "/v1/memories",
            json={"content": "x"},
            headers={"X-Recalld-Namespace": f"{namespace},{other}"},
        ),
        422,
    )
    assert single["field"] == "namespace"


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/v1/memories", {}, "content"),
        ("POST", "/v1/memories", {"content": "   "}, "content"),
        ("POST", "/v1/memories", {"content": "x", "colour": "red"}, "colour"),
        ("POST", "/v1/memories", {"content": "x", "salience": 2}, "salience"),
        ("POST", "/v1/memories", {"content": "x", "at": "yesterday"}, "at"),
        ("POST", "/v1/memories", {"content": "x", "ttl_seconds": 1e300}, "ttl_seconds"),
        ("POST", "/v1/memories", {"content": "x", "at": "0001-01-01T00:00:00+05:00"}, "at"),
        ("POST", "/v1/memories", {"content": "x", "tags": [f"t{i}" for i in range(65)]}, "tags"),
        ("POST", "/v1/memories", {"content": "x" * 70_000}, "content"),
        ("POST", "/v1/memories", {"content": "x", "meta": {"k": "v" * 20_000}}, "meta"),
        ("POST", "/v1/recall", {"query": "x", "limit": 5000}, "limit"),
        ("POST", "/v1/recall", {"query": "x", "limit": 0}, "limit"),
        ("POST", "/recall", {"query": "x", "limit": 1001}, "limit"),
        ("POST", "/remember", {"content": "x", "captured_at": "soon"}, "captured_at"),
        ("POST", "/remember", {"content": "x", "metadata": {"k": "v" * 20_000}}, "metadata"),
        ("POST", "/v1/search", {"query": "x", "filters": {"since": "never"}}, "since"),
        (
            "POST",
            "/v1/search",
            {"query": "x", "filters": {"since": "2026-02-01", "until": "2026-01-01"}},
            "until",
        ),
        ("POST", "/v1/search", {"query": "x", "filters": {"kind": ""}}, "kind"),
        ("POST", "/v1/recall", {"query": "x", "filters": {"category": " "}}, "category"),
        ("POST", "/v1/search", {"query": "x", "filters": {"speaker": "\u200b"}}, "speaker"),
        ("POST", "/v1/search", {"query": "x", "filters": "note"}, "filters"),
        ("POST", "/v1/search", {"query": None}, "query"),
        ("PATCH", "/v1/memories/any", {}, "changes"),
    ],
)
def test_http_bad_input_is_4xx_json_naming_the_field(
    client: httpx.Client, method: str, path: str, body: dict[str, Any], field: str
) -> None:
    error = _error(client.request(method, path, json=body), 422)
    assert error["field"] == field
    assert error["message"]


def test_http_query_limit_and_blank_filters_say_what_the_library_says(
    client: httpx.Client, tmp_path: Path
) -> None:
    """The query's length is the service's rule (REST publishes it as maxLength), so REST
    refuses a long query with the library's field and message; blank name filters too."""
    spec = _ok(client.get("/openapi.json"))["components"]["schemas"]
    for model in ("QueryRequest", "ExplainRequest", "BatboxRecall"):
        assert spec[model]["properties"]["query"]["maxLength"] == QUERY_MAX_CHARS
    longest = "x" * QUERY_MAX_CHARS
    assert _ok(client.post("/v1/search", json={"query": longest})) == []
    with MemoryService.open(Settings(db=tmp_path / "lib.db", embedder="none")) as library:
        with pytest.raises(ValidationError) as too_long:
            library.search(longest + "x")
        with pytest.raises(ValidationError) as blank:
            library.list_memories(filters=Filters(kind=" "))
    for path, body in (
        ("/v1/search", {"query": longest + "x"}),
        ("/v1/recall", {"query": longest + "x"}),
        ("/v1/explain", {"query": longest + "x", "id": "any"}),
        ("/recall", {"query": longest + "x"}),
    ):
        error = _error(client.post(path, json=body), 422)
        assert (error["field"], error["message"]) == (too_long.value.field, too_long.value.message)
    error = _error(client.get("/v1/memories", params={"kind": " "}), 422)
    assert (error["field"], error["message"]) == (blank.value.field, blank.value.message)
    for name in ("category", "speaker"):
        assert _error(client.get("/v1/memories", params={name: "\u200b"}), 422)["field"] == name


def test_http_malformed_bodies_and_headers(client: httpx.Client) -> None:
    broken = client.post(
        "/v1/memories", content=b'{"content": ', headers={"Content-Type": "application/json"}
    )
    assert _error(broken, 422)["field"] == "body"
    nan = client.post(
        "/v1/memories",
        content=b'{"content": "x", "salience": NaN}',
        headers={"Content-Type": "application/json"},
    )
    assert _error(nan, 422)["field"] == "body"
    digits = client.post(  # past Python's 4,300-digit limit for an integer
        "/v1/memories",
        content=b'{"content": "x", "salience": ' + b"1" * 5000 + b"}",
        headers={"Content-Type": "application/json"},
    )
    assert _error(digits, 422)["field"] == "body"
    surrogate = client.post(
        "/v1/memories",
        content=b'{"content": "a\\ud800b"}',
        headers={"Content-Type": "application/json"},
    )
    assert _error(surrogate, 422)["field"] == "content"
    bad_namespace = client.get("/v1/stats", headers={"X-Recalld-Namespace": "no spaces allowed"})
    assert _error(bad_namespace, 422)["field"] == "namespace"
    assert _error(client.get("/v1/memories", params={"limit": "many"}), 422)["field"] == "limit"
    assert _error(client.get("/nowhere"), 404)["type"] == "not_found"
    assert _error(client.put("/v1/stats"), 405)["type"] == "method_not_allowed"


def test_http_body_size_cap_is_413(client: httpx.Client) -> None:
    big = json.dumps({"content": "x" * (2 * 1024 * 1024)}).encode()
    declared = client.post(
        "/v1/memories", content=big, headers={"Content-Type": "application/json"}
    )
    assert _error(declared, 413)["type"] == "payload_too_large"

    def chunks() -> Iterator[bytes]:
        for _ in range(40):
            yield b" " * 65536
        yield b'{"content": "x"}'

    streamed = client.post(
        "/v1/memories", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert _error(streamed, 413)["type"] == "payload_too_large"


def test_http_metrics_count_requests_by_route(client: httpx.Client) -> None:
    receipt = _ok(client.post("/v1/memories", json={"content": "measured"}))
    _ok(client.get(f"/v1/memories/{receipt['id']}"))
    metrics = client.get("/metrics")
    assert metrics.status_code == 200
    text = metrics.text
    assert 'recalld_http_requests_total{method="GET",route="/v1/memories/{memory_id}"' in text
    assert "recalld_http_request_duration_seconds_bucket" in text
    namespace = client.headers["X-Recalld-Namespace"]
    assert f'recalld_memories{{namespace="{namespace}"}} 1.0' in text
    assert "recalld_queue_depth 0.0" in text


def test_http_metrics_name_the_kv_and_entity_routes_as_before(client: httpx.Client) -> None:
    # The routes now match every character of a key or name; their label is unchanged,
    # so dashboards and alerts on route="/v1/kv/{key:path}" go on matching.
    _ok(client.put("/v1/kv/work/urgent", json={"value": "measured"}))
    client.get("/v1/graph/entities/Alice")
    text = client.get("/metrics").text
    assert 'recalld_http_requests_total{method="PUT",route="/v1/kv/{key:path}"' in text
    assert 'route="/v1/graph/entities/{name:path}"' in text
    assert "verbatim" not in text


def test_http_cors_is_off_unless_configured(client: httpx.Client, tmp_path: Path) -> None:
    preflight_headers = {
        "Origin": "http://app.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
    }
    closed = client.options("/v1/memories", headers=preflight_headers)
    assert "access-control-allow-origin" not in closed.headers
    plain = client.get("/healthz", headers={"Origin": "http://app.example"})
    assert "access-control-allow-origin" not in plain.headers
    server = ServerProcess(
        tmp_path / "cors.db", RECALLD_CORS_ORIGINS='["http://app.example"]'
    ).start()
    try:
        opened = httpx.options(f"{server.base_url}/v1/memories", headers=preflight_headers)
        assert opened.headers["access-control-allow-origin"] == "http://app.example"
        other = httpx.options(
            f"{server.base_url}/v1/memories",
            headers={**preflight_headers, "Origin": "http://evil.example"},
        )
        assert "access-control-allow-origin" not in other.headers
        # An origin written with a trailing slash is the origin browsers send without one.
        assert Settings(cors_origins=["http://app.example/"]).cors_origins == ["http://app.example"]
        # The origin the operator allowed is trusted without a token; another page is not.
        stats = f"{server.base_url}/v1/stats"
        assert httpx.get(stats, headers={"Origin": "http://app.example"}).status_code == 200
        assert httpx.get(stats, headers={"Origin": "http://evil.example"}).status_code == 401
        # /mcp accepts that page too (the MCP SDK's own check knew only loopback pages).
        answer = httpx.post(
            f"{server.base_url}/mcp",
            json=INITIALIZE,
            headers={
                "Origin": "http://app.example",
                "Accept": "application/json, text/event-stream",
            },
        )
        assert answer.status_code == 200, answer.text
        preflight = httpx.options(
            f"{server.base_url}/mcp",
            headers={
                "Origin": "http://app.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "mcp-session-id, mcp-protocol-version",
            },
        )
        assert preflight.status_code == 200, preflight.text
        assert "mcp-session-id" in answer.headers["access-control-expose-headers"].lower()
    finally:
        server.stop()


def test_http_min_score_explain_and_speaker(server: ServerProcess) -> None:
    namespace = f"test-{uuid.uuid4().hex[:12]}"
    headers = {"X-Recalld-Namespace": namespace}
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=30) as client:
        receipt = _ok(
            client.post(
                "/v1/memories",
                json={"content": "the bakery opens at seven", "speaker": "Caroline"},
            )
        )
        _ok(client.post("/v1/memories", json={"content": "grandma grows roses"}))
        assert _ok(client.get(f"/v1/memories/{receipt['id']}"))["speaker"] == "Caroline"
        patched = _ok(client.patch(f"/v1/memories/{receipt['id']}", json={"speaker": "Dana"}))
        assert patched["speaker"] == "Dana"
        assert _ok(client.post("/v1/search", json={"query": "xyzzy plugh"})) == []
        weak = _ok(client.post("/v1/search", json={"query": "bakery roses", "min_score": 0}))
        assert len(weak) == 2
        assert (
            _error(client.post("/v1/search", json={"query": "x", "min_score": 2}), 422)["field"]
            == "min_score"
        )
        assert (
            _error(client.post("/v1/recall", json={"query": "x", "min_score": -1}), 422)["field"]
            == "min_score"
        )
        explained = _ok(
            client.post(
                "/v1/explain", json={"query": "when does the bakery open", "id": receipt["id"]}
            )
        )
        assert explained["stage"] == "returned"
        assert explained["found_by"] == ["fts"]
        assert explained["min_score"] == 0.02
        unknown = _error(client.post("/v1/explain", json={"query": "x", "id": "01NOPE"}), 404)
        assert "not visible" in unknown["message"]
    with httpx.Client(
        base_url=server.base_url, headers={"X-Recalld-Namespace": f"{namespace}-2"}, timeout=30
    ) as elsewhere:
        hidden = _error(
            elsewhere.post("/v1/explain", json={"query": "bakery", "id": receipt["id"]}), 404
        )
        assert hidden["message"].replace(receipt["id"], "ID").replace(f"{namespace}-2", "NS") == (
            unknown["message"].replace("01NOPE", "ID").replace(namespace, "NS")
        )
