"""The memory browser under a lowered ``RECALLD_MAX_LIMIT``: its own page sizes (25 memories,
50 entities, 100 queued items) and its "how many" menus are held to the cap the server
tells it (``GET /v1/session``'s ``max_limit``), so no page is refused. Headless Chromium
against a real `recalld serve` (keyword-only)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from recalld.config import Settings
from recalld.service import MemoryService
from tests.web.browser_support import (
    Browsed,
    browsed_server,
    count_is,
    element,
    ok,
    open_page,
    text_appears,
    wait_for,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CAP = 4


@pytest.fixture(scope="module")
def browsed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browsed]:
    with browsed_server(
        tmp_path_factory.mktemp("browser_limits"),
        ("reader", {"default": "read"}),
        RECALLD_EMBEDDER="none",
        RECALLD_MAX_LIMIT=str(CAP),
    ) as found:
        yield found


def _rows(browsed: Browsed) -> int:
    return len(browsed.driver.find_elements(By.CSS_SELECTOR, ".memory-row"))


def test_browser_limits_browse_pages_by_the_cap(browsed: Browsed) -> None:
    namespace = f"capped-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        for number in range(CAP + 2):
            ok(client.post("/v1/memories", json={"content": f"capped item {number}"}))
    open_page(browsed.driver, browsed.base_url, browsed.admin, "browse", namespace=namespace)
    wait_for(browsed.driver, lambda _: _rows(browsed) == CAP, f"a first page of {CAP}")
    element(browsed.driver, "#browse-more").click()
    wait_for(browsed.driver, lambda _: _rows(browsed) == CAP + 2, "the second page")


def test_browser_limits_graph_and_recollections_are_not_refused(browsed: Browsed) -> None:
    namespace = f"capped-{uuid.uuid4().hex[:8]}"
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "graph", namespace=namespace)
    text_appears(driver, "#entity-list-notice", "No entity matches")
    open_page(driver, browsed.base_url, browsed.admin, "recollections", namespace=namespace)
    text_appears(driver, "#pending-notice", "Nothing pending")
    element(driver, "#pending-drain").click()
    text_appears(driver, "#pending-notice", "Nothing pending")


def test_browser_limits_search_and_explain_offer_no_count_above_the_cap(
    browsed: Browsed,
) -> None:
    namespace = f"capped-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        for number in range(CAP + 2):
            ok(client.post("/v1/memories", json={"content": f"lantern number {number}"}))
    driver = browsed.driver
    for page in ("search", "explain"):
        open_page(driver, browsed.base_url, browsed.admin, page, namespace=namespace)
        element(driver, f"#{page}-query")
        # The search page's menu is folded away among its filters: present, not shown.
        choices = Select(driver.find_element(By.ID, f"{page}-limit"))
        assert [int(option.get_attribute("value") or 0) for option in choices.options] == [CAP]
        assert choices.first_selected_option.get_attribute("value") == str(CAP)
    open_page(driver, browsed.base_url, browsed.admin, "search", namespace=namespace)
    element(driver, "#search-query").send_keys("lantern\n")
    wait_for(
        driver,
        lambda current: len(current.find_elements(By.CSS_SELECTOR, "#search-results .hit")) == CAP,
        f"{CAP} hits",
    )


def test_browser_limits_a_memory_page_shows_its_neighbours(browsed: Browsed) -> None:
    # The memory page asks a context recall for its 8 nearest neighbours and itself (k 9):
    # held to the cap, the map still shows them.
    namespace = f"capped-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        centre = ok(
            client.post(
                "/v1/experiences",
                json={"content": "Coffee at the corner kiosk", "lat": 38.7139, "lon": -9.1394},
            )
        )["id"]
        near = ok(
            client.post(
                "/v1/experiences",
                json={"content": "The tram stop up the hill", "lat": 38.7152, "lon": -9.1371},
            )
        )["id"]
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{centre}", namespace=namespace)
    dots = wait_for(
        driver,
        lambda current: current.find_elements(By.CSS_SELECTOR, "#place-map .map-neighbour"),
        "the neighbours on the map",
    )
    assert near in {dot.get_attribute("data-memory-id") for dot in dots}
    assert "neighbours unavailable" not in driver.find_element(By.TAG_NAME, "body").text


def test_browser_limits_why_not_ranks_a_memory_outside_the_pool_where_it_would_go(
    browsed: Browsed,
) -> None:
    """Review of pass c58: a memory recall did not find was "1 of 0 candidates" (or "3 of
    2"), as if it were one of them; it now says where it would go were it a candidate."""
    namespace = f"capped-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        ok(client.post("/v1/memories", json={"content": "The lantern hangs by the door"}))
        missing = ok(client.post("/v1/memories", json={"content": "Tomatoes ripen slowly"}))
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"explain/{missing['id']}", namespace)
    element(driver, "#explain-query").send_keys("lantern")
    element(driver, "#explain-submit").click()
    wait_for(
        driver,
        lambda current: (
            element(current, "#explain-result").get_attribute("data-stage") == "not_in_pool"
        ),
        "the not-in-pool verdict",
    )
    shown = element(driver, "#explain-result").text
    assert "would be 2 were it a candidate (1 found)" in shown
    assert "of 1 candidate" not in shown


def test_browser_limits_entity_page_says_it_shows_the_first_observations(
    browsed: Browsed,
) -> None:
    # The detail lists the first graph_page_size observations (lowered to the cap here) and
    # the page says how many there are (adversarial pass f64); it listed all of them.
    namespace = f"capped-{uuid.uuid4().hex[:8]}"
    settings = Settings(db=browsed.server.db, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        service.knowledge.create_entities(
            [
                {
                    "name": "Anna",
                    "entityType": "person",
                    "observations": [f"fact {number}" for number in range(CAP + 2)],
                }
            ],
            namespace=namespace,
        )
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "graph/Anna", namespace=namespace)
    text_appears(
        driver,
        "#entity-observations-more",
        f"The first {CAP} observations are shown of {CAP + 2}",
    )
    shown = driver.find_elements(By.CSS_SELECTOR, "#entity-observations li")
    assert [item.text for item in shown] == [f"fact {number}" for number in range(CAP)]
    # Past the first: "More observations" loads the rest a page at a time (adversarial pass
    # e65); the page pointed at open_nodes, which the browser cannot call.
    element(driver, "#entity-observations-next").click()
    count_is(driver, "#entity-observations li", CAP + 2)
    shown = driver.find_elements(By.CSS_SELECTOR, "#entity-observations li")
    assert [item.text for item in shown] == [f"fact {number}" for number in range(CAP + 2)]
    # The keyboard goes on where the list does: the first observation loaded has the focus.
    assert driver.switch_to.active_element.text == f"fact {CAP}"
    wait_for(
        driver,
        lambda current: (
            not current.find_element(By.CSS_SELECTOR, "#entity-observations-next").is_displayed()
        ),
        "no more observations to load",
    )
