"""axe-core over every view of the memory browser: no WCAG 2.0, 2.1 or 2.2 A/AA violation.

axe-core is a devDependency of ``tests/js`` (``npm ci --prefix tests/js``: ``make test``
and ``.ci/run`` do it); its ``axe.min.js`` is injected into the page by the driver (not a
page script, so the Content-Security-Policy stays as served). Each view is checked with
the content it shows: hits, a memory with its place and neighbours, core entries, graph
entities and an entity's neighbourhood, an entity's "More observations" (before and after
loading more), a fired reminder, intentions, the Status timeline's table, and the editor
and forget dialog of a memory. Headless Chromium against a real `recalld serve`
(keyword-only, the rule-based graph extractor).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from recalld.config import Settings
from recalld.service import MemoryService
from tests.web.browser_support import (
    WAIT_SECONDS,
    Browsed,
    browsed_server,
    count_is,
    element,
    ok,
    open_page,
    remember,
    text_appears,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

AXE_SCRIPT = Path(__file__).parents[1] / "js" / "node_modules" / "axe-core" / "axe.min.js"
# WCAG 2.0, 2.1 and 2.2 at levels A and AA (axe's tags; best practices are left out).
WCAG_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa")

# One more than an entity's detail shows (RECALLD_GRAPH_PAGE_SIZE, 100).
OBSERVATIONS = 101

RUN_AXE = """
const done = arguments[arguments.length - 1];
axe.run(document, { runOnly: { type: "tag", values: arguments[0] }, resultTypes: ["violations"] })
  .then((results) => done(results.violations.map((violation) => [
    violation.id,
    violation.nodes.slice(0, 5).map((node) => node.target.join(" ")).join(" | "),
  ])))
  .catch((error) => done([["axe-error", String(error)]]));
"""


@pytest.fixture(scope="module")
def browsed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browsed]:
    with browsed_server(
        tmp_path_factory.mktemp("browser_axe"),
        ("reader", {"default": "read"}),
        RECALLD_EMBEDDER="none",
        RECALLD_GRAPH_EXTRACTOR="rules",
    ) as found:
        yield found


def _axe_source() -> str:
    assert AXE_SCRIPT.is_file(), "run `npm ci --prefix tests/js` (make test does)"
    return AXE_SCRIPT.read_text(encoding="utf-8")


def _violations(driver: Chrome, source: str) -> list[list[str]]:
    """axe's WCAG A/AA violations of the page as it is now: [rule, its first targets]."""
    if not driver.execute_script("return typeof window.axe === 'object'"):
        driver.execute_script(source)
    found: list[list[str]] = driver.execute_async_script(RUN_AXE, list(WCAG_TAGS))
    return found


def _wait_until_extracted(client: httpx.Client, memory_ids: list[str]) -> None:
    """Poll (bounded) until the server's worker has extracted entities from every memory."""
    deadline = time.monotonic() + WAIT_SECONDS
    pending = set(memory_ids)
    while pending and time.monotonic() < deadline:
        for memory_id in list(pending):
            if ok(client.get("/v1/graph/mentions", params={"memory": memory_id}))["entities"]:
                pending.discard(memory_id)
        if pending:
            time.sleep(0.05)  # the worker is another thread of the server: no event to wait on
    assert not pending, f"not extracted in time: {sorted(pending)}"


def _content(browsed: Browsed, namespace: str) -> str:
    """Something for every view to show in ``namespace``; the id of a placed memory."""
    # An entity with more observations than its page shows: "More observations" is drawn
    # (written first: the browse view lists the newest memories).
    settings = Settings(db=browsed.server.db, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        observations = [f"fact {number}" for number in range(OBSERVATIONS)]
        service.knowledge.create_entities(
            [{"name": "Ada", "entityType": "person", "observations": observations}],
            namespace=namespace,
        )
    with browsed.api(namespace) as client:
        place = {"lat": -37.81, "lon": 144.96, "name": "harbour"}
        remember(client, content="Coffee at the harbour kiosk", place=place, tags=["coffee"])
        memory_id = remember(
            client,
            content="Lunch at the harbour with Anna",
            title="Harbour",
            place=place,
            at="2026-10-25T08:10:00+03:00",
            tags=["lunch"],
            speaker="kate",
        )
        sister = remember(client, content="Kate: my sister Anna moved to Porto.")
        _wait_until_extracted(client, [sister])
        ok(client.post("/v1/core/memory", json={"action": "add", "content": "boiler is old"}))
        ok(
            client.post(
                "/v1/intentions", json={"action": "ask about the move", "mention": ["Anna"]}
            )
        )
        ok(client.post("/v1/intentions", json={"action": "water the plants", "mention": ["Porto"]}))
        assert ok(client.post("/v1/sense", json={"text": "Anna called this morning"}))
    return memory_id


def test_browser_every_view_has_no_wcag_a_or_aa_violation(browsed: Browsed) -> None:
    source = _axe_source()
    namespace = f"axe-{uuid.uuid4().hex[:8]}"
    memory_id = _content(browsed, namespace)
    driver = browsed.driver

    def search() -> None:
        element(driver, "#search-query").send_keys("harbour", Keys.ENTER)
        text_appears(driver, "#page-search .notice", "2 hits")

    def status() -> None:
        text_appears(driver, "#status-timeline", "in the last")
        for summary in driver.find_elements(By.CSS_SELECTOR, "#timeline-table summary"):
            summary.send_keys(Keys.ENTER)  # the counts' table, unfolded
            element(driver, "#timeline-table tbody tr")

    def edit() -> None:
        element(driver, "#memory-edit").click()
        element(driver, "#edit-title")

    def more_observations() -> None:
        element(driver, "#entity-observations-next").click()
        count_is(driver, "#entity-observations li", OBSERVATIONS)

    def forget() -> None:
        element(driver, "#memory-forget").click()
        element(driver, "#confirm-dialog")

    # Each view, and what shows it is ready (its content drawn).
    views: list[tuple[str, Callable[[], Any]]] = [
        ("search", search),
        ("explain", lambda: element(driver, "#explain-submit")),
        ("browse", lambda: element(driver, f'#browse-list [data-memory-id="{memory_id}"]')),
        (f"memory/{memory_id}", lambda: element(driver, "#map-neighbours a")),
        ("core", lambda: text_appears(driver, "#page-core", "boiler is old")),
        ("graph", lambda: element(driver, '#entity-list a[data-entity="Anna"]')),
        ("graph/Anna", lambda: element(driver, "#graph-drawing svg")),
        ("graph/Ada", lambda: element(driver, "#entity-observations-next")),
        ("graph/Ada", more_observations),
        ("recollections", lambda: element(driver, "#pending-list .reminder")),
        ("intentions", lambda: text_appears(driver, "#intention-list", "water the plants")),
        ("status", status),
        ("transfer", lambda: element(driver, "#import-file")),
        (f"memory/{memory_id}", edit),
        (f"memory/{memory_id}", forget),
    ]
    problems = {}
    for page, ready in views:
        open_page(driver, browsed.base_url, browsed.admin, page, namespace=namespace)
        ready()
        found = _violations(driver, source)
        if found:
            problems[f"{page} ({ready.__name__})"] = found
    # The sign-in form, with its refusal shown.
    driver.get(f"{browsed.base_url}/ui/favicon.svg")  # leave the app: it starts again
    driver.execute_script("sessionStorage.clear()")
    driver.get(f"{browsed.base_url}/#/search")
    element(driver, "#token").send_keys("rcd_0000000000000000_not-a-real-token-at-all")
    element(driver, "#sign-in").click()
    text_appears(driver, "#page-login .notice", "not accepted")
    found = _violations(driver, source)
    if found:
        problems["sign-in"] = found
    assert problems == {}
    # The forget dialog was left open: nothing was forgotten by looking at it.
    with browsed.api(namespace) as client:
        assert client.get(f"/v1/memories/{memory_id}").status_code == 200
