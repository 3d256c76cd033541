"""The memory browser against what a hurried user, a slow network or a hand-typed address
does: double clicks and late answers, dot and broken addresses, a failing network,
unusual text. Headless Chromium against a real `recalld serve` (keyword-only).

One server with an admin token (``*:read+write``) and a token for one namespace only
(``scoped:read+write``, which is not told the database's size). Each test works in a
namespace of its own.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

from tests.web.browser_support import (
    TOKEN_KEY,
    Browsed,
    browsed_server,
    count_is,
    element,
    ok,
    open_page,
    remember,
    settle,
    text_appears,
    unique_namespace,
    wait_for,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Holds back the first request for a further page (``cursor=``) until the test lets it
# go (``window.__releaseLate()``); ``window.__late`` says where it is: "waiting", then
# "answered" once the page has had the answer.
HOLD_BACK_THE_NEXT_PAGE = """
window.__late = null;
const original = window.fetch;
window.fetch = async function (...parameters) {
  if (!String(parameters[0]).includes("cursor=") || window.__late !== null) {
    return original.apply(this, parameters);
  }
  window.__late = "waiting";
  await new Promise((resolve) => { window.__releaseLate = resolve; });
  const response = await original.apply(this, parameters);
  setTimeout(() => { window.__late = "answered"; }, 300);
  return response;
};
"""


@pytest.fixture(scope="module")
def browsed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browsed]:
    with browsed_server(
        tmp_path_factory.mktemp("browser_hardening"), ("scoped", {"scoped": "read+write"})
    ) as found:
        yield found


def _rows(driver: Chrome, selector: str, attribute: str) -> list[str]:
    return [
        row.get_attribute(attribute) or ""
        for row in driver.find_elements(By.CSS_SELECTOR, selector)
    ]


# -- "Load more": one request at a time, late answers dropped ---------------------


def test_browser_browse_load_more_clicked_twice_asks_for_the_next_page_once(
    browsed: Browsed,
) -> None:
    namespace = unique_namespace("twice")
    with browsed.api(namespace) as client:
        ids = [remember(client, content=f"twice item {number}") for number in range(60)]
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "browse", namespace=namespace)
    count_is(driver, "#browse-list .memory-row", 25)
    # Two clicks in one go, before the first answer: the second must not ask again.
    driver.execute_script(
        "const more = arguments[0]; more.click(); more.click();", element(driver, "#browse-more")
    )
    count_is(driver, "#browse-list .memory-row", 50)
    settle(driver)
    shown = _rows(driver, "#browse-list .memory-row", "data-memory-id")
    assert shown == list(reversed(ids))[:50]
    element(driver, "#browse-more").click()
    count_is(driver, "#browse-list .memory-row", 60)


def test_browser_browse_drops_a_late_page_of_the_listing_a_filter_replaced(
    browsed: Browsed,
) -> None:
    namespace = unique_namespace("late")
    with browsed.api(namespace) as client:
        older = [
            remember(client, content=f"older item {number}", tags=["older"]) for number in range(30)
        ]
        for number in range(30):
            remember(client, content=f"newer item {number}")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "browse", namespace=namespace)
    count_is(driver, "#browse-list .memory-row", 25)
    driver.execute_script(HOLD_BACK_THE_NEXT_PAGE)
    element(driver, "#browse-more").click()
    wait_for(driver, lambda current: current.execute_script("return window.__late"), "held")
    # While that page is on its way, the user filters: the late page belongs to a listing
    # no longer shown, and must neither join this one nor replace its cursor.
    element(driver, "#browse-tag").send_keys("older")
    element(driver, "#browse-apply").click()
    newest_older = list(reversed(older))
    wait_for(
        driver,
        lambda current: (
            _rows(current, "#browse-list .memory-row", "data-memory-id") == newest_older[:25]
        ),
        "the filtered listing",
    )
    driver.execute_script("window.__releaseLate()")
    wait_for(
        driver,
        lambda current: current.execute_script("return window.__late") == "answered",
        "the late answer",
    )
    assert _rows(driver, "#browse-list .memory-row", "data-memory-id") == newest_older[:25]
    element(driver, "#browse-more").click()  # continues the filtered listing
    count_is(driver, "#browse-list .memory-row", 30)
    assert _rows(driver, "#browse-list .memory-row", "data-memory-id") == newest_older


def _import_entities(client: httpx.Client, names: list[str]) -> None:
    lines = [
        json.dumps(
            {
                "type": "entity",
                "name": name,
                "entityType": "thing",
                # One observation: a memory, so the browser offers the namespace.
                "observations": ["the first one"] if number == 0 else [],
            }
        )
        for number, name in enumerate(names)
    ]
    report = ok(
        client.post("/v1/import", params={"format": "mcp-memory"}, content="\n".join(lines))
    )
    assert report["errors"] == []


def test_browser_graph_load_more_clicked_twice_asks_for_the_next_page_once(
    browsed: Browsed,
) -> None:
    namespace = unique_namespace("graph-twice")
    names = [f"Entity {number:02d}" for number in range(55)]
    with browsed.api(namespace) as client:
        _import_entities(client, names)
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "graph", namespace=namespace)
    count_is(driver, "#entity-list .entity-row", 50)
    driver.execute_script(
        "const more = arguments[0]; more.click(); more.click();", element(driver, "#entity-more")
    )
    count_is(driver, "#entity-list .entity-row", 55)
    settle(driver)
    assert _rows(driver, "#entity-list .entity-row", "data-entity") == names


def test_browser_graph_drops_a_late_page_of_the_list_a_search_replaced(
    browsed: Browsed,
) -> None:
    namespace = unique_namespace("graph-late")
    names = [f"Entity {number:02d}" for number in range(55)]
    with browsed.api(namespace) as client:
        _import_entities(client, names)
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "graph", namespace=namespace)
    count_is(driver, "#entity-list .entity-row", 50)
    driver.execute_script(HOLD_BACK_THE_NEXT_PAGE)
    element(driver, "#entity-more").click()
    wait_for(driver, lambda current: current.execute_script("return window.__late"), "held")
    element(driver, "#entity-query").send_keys("Entity 0")
    element(driver, "#entity-search").click()
    wanted = [f"Entity 0{number}" for number in range(10)]
    wait_for(
        driver,
        lambda current: _rows(current, "#entity-list .entity-row", "data-entity") == wanted,
        "the searched list",
    )
    driver.execute_script("window.__releaseLate()")
    wait_for(
        driver,
        lambda current: current.execute_script("return window.__late") == "answered",
        "the late answer",
    )
    assert _rows(driver, "#entity-list .entity-row", "data-entity") == wanted


# -- addresses: dot ids, answers that are not what was asked, broken escapes ---------

# Answers GET requests for ``arguments[0]`` (a path prefix) as ``arguments[1]`` would be
# answered: what a browser does to /v1/memories/. (it resolves to /v1/memories/).
ANSWER_AS = """
const [asked, instead] = arguments;
const original = window.fetch;
window.fetch = function (...parameters) {
  if (String(parameters[0]).startsWith(asked)) parameters[0] = instead;
  return original.apply(this, parameters);
};
"""
# Fails GET requests for ``arguments[0]`` as an unreachable server does.
NETWORK_DOWN_FOR = """
const asked = arguments[0];
const original = window.fetch;
window.fetch = function (...parameters) {
  if (!String(parameters[0]).startsWith(asked)) return original.apply(this, parameters);
  return Promise.reject(new TypeError("Failed to fetch"));
};
"""


def _go(driver: Chrome, address: str) -> None:
    driver.execute_script("location.hash = arguments[0]", address)


def test_browser_memory_view_refuses_dot_ids_and_an_answer_that_is_not_the_memory(
    browsed: Browsed,
) -> None:
    namespace = unique_namespace("dots")
    with browsed.api(namespace) as client:
        remember(client, content="The listing answers for /v1/memories/.")
    driver = browsed.driver
    for address in (".", "%2e", "..", "%2E%2E"):
        open_page(driver, browsed.base_url, browsed.admin, f"memory/{address}", namespace)
        notice = text_appears(driver, "#memory-notice", "a URL resolves it away")
        assert "“.”" in notice.text or "“..”" in notice.text
        assert driver.find_elements(By.CSS_SELECTOR, "#memory-forget, #memory-edit") == []
        assert "undefined" not in element(driver, "#page").text

    # Whatever answers in the memory's place, it is shown only when it is that memory.
    open_page(driver, browsed.base_url, browsed.admin, "browse", namespace)
    element(driver, "#browse-list .memory-row")
    driver.execute_script(ANSWER_AS, "/v1/memories/impostor", "/v1/memories?limit=5")
    _go(driver, "#/memory/impostor")
    text_appears(driver, "#memory-notice", "is not that memory")
    assert driver.find_elements(By.CSS_SELECTOR, "#memory-forget, #memory-edit") == []
    assert "undefined" not in element(driver, "#page").text


def test_browser_graph_refuses_a_dot_name_and_an_answer_that_is_not_an_entity(
    browsed: Browsed,
) -> None:
    namespace = unique_namespace("graph-dots")
    with browsed.api(namespace) as client:
        _import_entities(client, ["Ada Lovelace"])
    driver = browsed.driver
    for address in (".", ".."):
        open_page(driver, browsed.base_url, browsed.admin, f"graph/{address}", namespace)
        text_appears(driver, "#entity-notice", "cannot be opened")
        assert "This page failed" not in element(driver, "#page").text
    open_page(driver, browsed.base_url, browsed.admin, "graph", namespace)
    element(driver, "#entity-list .entity-row")
    driver.execute_script(ANSWER_AS, "/v1/graph/entities/impostor", "/v1/graph/entities")
    _go(driver, "#/graph/impostor")
    text_appears(driver, "#entity-notice", "is not an entity")
    assert "This page failed" not in element(driver, "#page").text
    assert driver.find_elements(By.ID, "entity-name") == []


def test_browser_a_network_failure_shows_its_message(browsed: Browsed) -> None:
    namespace = unique_namespace("down")
    with browsed.api(namespace) as client:
        memory_id = remember(client, content="Out of reach for a moment")
        _import_entities(client, ["Grace Hopper"])
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "browse", namespace)
    element(driver, "#browse-list .memory-row")
    driver.execute_script(NETWORK_DOWN_FOR, "/v1/memories/")
    _go(driver, f"#/memory/{memory_id}")
    # Said as what happened and what to do (stop 67), not the browser's "Failed to fetch".
    notice = text_appears(driver, "#memory-notice", "the recalld server did not answer").text
    assert "recalld serve" in notice
    driver.execute_script(NETWORK_DOWN_FOR, "/v1/graph/entities/")
    _go(driver, "#/graph/Grace%20Hopper")
    notice = text_appears(driver, "#entity-notice", "the recalld server did not answer").text
    assert "Failed to fetch" not in notice
    assert "describe" not in element(driver, "#page").text


def test_browser_a_broken_escape_in_the_address_shows_not_found(browsed: Browsed) -> None:
    driver = browsed.driver
    # A fresh load of such an address rendered nothing at all (a URIError escaped).
    open_page(driver, browsed.base_url, browsed.admin, "memory/%")
    text_appears(driver, "#route-notice", "Not found")
    assert element(driver, "#nav a.nav-link[href='#/browse']")
    _go(driver, "#/graph/%E0%A4%A")
    text_appears(driver, "#page-graph #route-notice", "Not found")
    _go(driver, "#/search")
    element(driver, "#search-query")  # the next address renders as usual


# -- the speaker: shown, filtered on, edited --------------------------------------


def test_browser_shows_filters_on_and_edits_the_speaker(browsed: Browsed) -> None:
    namespace = unique_namespace("speaker")
    word = f"lakehouse{uuid.uuid4().hex[:6]}"
    with browsed.api(namespace) as client:
        frank = remember(
            client, content=f"The {word} Wi-Fi password is on the fridge", speaker="Frank"
        )
        grace = remember(client, content=f"The {word} key is under the mat", speaker="Grace")
        plain = remember(client, content=f"The {word} has a blue door")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{frank}", namespace)
    assert element(driver, "#memory-speaker").text == "Frank"

    open_page(driver, browsed.base_url, browsed.admin, "browse", namespace)
    count_is(driver, "#browse-list .memory-row", 3)
    badges = {
        row.get_attribute("data-memory-id"): [
            badge.text for badge in row.find_elements(By.CSS_SELECTOR, ".badge.speaker")
        ]
        for row in driver.find_elements(By.CSS_SELECTOR, "#browse-list .memory-row")
    }
    assert badges == {frank: ["by Frank"], grace: ["by Grace"], plain: []}
    element(driver, "#browse-speaker").send_keys("Grace")
    element(driver, "#browse-apply").click()
    wait_for(
        driver,
        lambda current: _rows(current, "#browse-list .memory-row", "data-memory-id") == [grace],
        "only what Grace said",
    )

    open_page(driver, browsed.base_url, browsed.admin, "search", namespace)
    element(driver, "#search-query").send_keys(word)
    driver.find_element(By.CSS_SELECTOR, ".filters summary").click()
    element(driver, "#search-speaker").send_keys("Frank")
    element(driver, "#search-submit").click()
    hit = element(driver, "#search-results .hit")
    settle(driver)
    assert _rows(driver, "#search-results .hit", "data-memory-id") == [frank]
    assert hit.find_element(By.CSS_SELECTOR, ".badge.speaker").text == "by Frank"

    open_page(driver, browsed.base_url, browsed.admin, f"memory/{plain}", namespace)
    element(driver, "#memory-edit").click()
    element(driver, "#edit-speaker").send_keys("Heidi")
    element(driver, "#edit-save").click()
    assert text_appears(driver, "#memory-notice", "Saved").text == "Saved (speaker)."
    assert element(driver, "#memory-speaker").text == "Heidi"
    with browsed.api(namespace) as client:
        assert ok(client.get(f"/v1/memories/{plain}"))["speaker"] == "Heidi"


# -- counts and states the pages report ---------------------------------------------


def test_browser_export_counts_memories_apart_from_the_other_records(browsed: Browsed) -> None:
    namespace = unique_namespace("export")
    with browsed.api(namespace) as client:
        remember(client, content="first exported memory")
        remember(client, content="second exported memory")
        ok(client.post("/v1/core/user", json={"action": "add", "content": "Name: Sam"}))
        exported = client.get("/v1/export").text.splitlines()
    assert len(exported) > 2  # the core memory's line(s) besides the two memories
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "transfer", namespace)
    element(driver, "#export-download").click()
    notice = text_appears(driver, "#export-notice", "Exported").text
    others = len(exported) - 2
    assert notice == (
        f"Exported 2 memories and {others} other record{'s' if others > 1 else ''}"
        f" (core memory) from {namespace}."
    )


def test_browser_status_shows_no_size_to_a_token_not_told_it(browsed: Browsed) -> None:
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.token, "status", "scoped")
    text_appears(driver, "#status-overview", "database size")
    size = driver.find_element(
        By.XPATH, "//section[@id='status-overview']//dt[.='database size']/following-sibling::dd[1]"
    )
    assert size.text == "—"  # not "0 B": GET /v1/stats says null to this token


def test_browser_core_shows_the_stored_entries_after_a_refused_batch(browsed: Browsed) -> None:
    namespace = unique_namespace("core")
    with browsed.api(namespace) as client:
        remember(client, content="A memory, so the browser offers the namespace")
        ok(
            client.post(
                "/v1/core/memory",
                json={
                    "operations": [
                        {"action": "add", "content": "Agent note: check the boiler daily"},
                        {"action": "add", "content": "Agent note: water the ferns"},
                    ]
                },
            )
        )
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "core", namespace)
    entry = text_appears(driver, "#entries-memory .core-entry", "boiler")
    entry.find_element(By.XPATH, ".//button[.='edit']").click()
    field = element(driver, "#entries-memory input.entry-edit")
    field.clear()
    field.send_keys("Agent note: check the boiler weekly")
    driver.find_element(By.XPATH, "//button[.='Keep change']").click()
    # Meanwhile another client removes that entry: the batch is refused.
    with browsed.api(namespace) as client:
        ok(client.post("/v1/core/memory", json={"action": "remove", "old_text": "boiler"}))
    element(driver, "#apply-memory").click()
    wait_for(
        driver,
        lambda current: "boiler" not in element(current, "#entries-memory").text,
        "the entries as stored now",
    )
    assert "water the ferns" in element(driver, "#entries-memory").text
    notice = element(driver, "#core-notice-memory")
    assert "error" in (notice.get_attribute("class") or "")
    assert "boiler" in element(driver, "#batch-memory").text  # kept, to undo or discard


def test_browser_map_caption_says_no_neighbour_within_reach(browsed: Browsed) -> None:
    namespace = unique_namespace("reach")
    with browsed.api(namespace) as client:
        alone = remember(
            client, content="A bench by the river", place={"lat": 38.7139, "lon": -9.1394}
        )
        # About 5 km away: it has a place, but place recall does not reach it.
        remember(client, content="The far lighthouse", place={"lat": 38.7589, "lon": -9.1394})
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{alone}", namespace)
    caption = text_appears(driver, ".map figcaption", "memory").text
    assert (
        caption == "no other memory placed within reach of place recall (about 1.2 km by default)"
    )


def test_browser_map_draws_a_neighbour_across_the_antimeridian_beside_the_memory(
    browsed: Browsed,
) -> None:
    namespace = unique_namespace("antimeridian")
    with browsed.api(namespace) as client:
        west = remember(
            client, content="The dock on the west bank", place={"lat": -16.5, "lon": 179.9995}
        )
        # About 107 m east, across the 180th meridian (longitude -179.9995).
        east = remember(
            client, content="The shed on the east bank", place={"lat": -16.5, "lon": -179.9995}
        )
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{west}", namespace)
    dot = element(driver, f'#place-map .map-neighbour[data-memory-id="{east}"]')
    x, y = float(dot.get_attribute("cx") or "nan"), float(dot.get_attribute("cy") or "nan")
    # Inside the 360 x 240 drawing (it was far off it), and east (right) of the centre.
    assert 180 < x <= 360
    assert 0 <= y <= 240


# -- long and bidirectional user text -------------------------------------------------


def _page_width_fits(driver: Chrome) -> bool:
    width, visible = driver.execute_script(
        "const root = document.documentElement; return [root.scrollWidth, root.clientWidth];"
    )
    return bool(width <= visible)


def test_browser_long_unbroken_text_wraps_inside_the_page(browsed: Browsed) -> None:
    namespace = unique_namespace("long")  # each field at its longest (tags: 100, category: 200)
    word = f"unbroken{uuid.uuid4().hex[:6]}"
    with browsed.api(namespace) as client:
        memory_id = remember(
            client,
            content=f"A {word} memory",
            title="W" * 300,
            tags=["T" * 100],
            category="C" * 200,
        )
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "browse", namespace)
    element(driver, "#browse-list .memory-row")
    assert _page_width_fits(driver)
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{memory_id}", namespace)
    element(driver, "#memory-content")
    assert _page_width_fits(driver)
    open_page(driver, browsed.base_url, browsed.admin, "search", namespace)
    element(driver, "#search-query").send_keys(word)
    element(driver, "#search-submit").click()
    element(driver, "#search-results .hit")
    assert _page_width_fits(driver)


def test_browser_a_bidi_override_in_a_title_stays_inside_it(browsed: Browsed) -> None:
    namespace = unique_namespace("bidi")
    with browsed.api(namespace) as client:
        centre = remember(client, content="The tiled kiosk", place={"lat": 38.7139, "lon": -9.1394})
        remember(
            client,
            content="The tram stop two streets up",
            title="\u202etram stop",  # a right-to-left override, never closed
            place={"lat": 38.7152, "lon": -9.1371},
        )
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{centre}", namespace)
    element(driver, "#map-neighbours li a")
    link_right, distance_left, distance = driver.execute_script(
        """
        const item = document.querySelector("#map-neighbours li");
        const range = document.createRange();
        range.selectNodeContents(item.lastChild);
        return [item.querySelector("a").getBoundingClientRect().right,
                range.getBoundingClientRect().left, item.lastChild.textContent];
        """
    )
    assert distance.startswith(" — ")
    # The distance the page wrote after the title is shown after it, not mirrored before it.
    assert distance_left >= link_right - 1


def test_browser_a_bidi_override_in_an_intention_stays_inside_it(browsed: Browsed) -> None:
    namespace = unique_namespace("bidi-intention")
    with browsed.api(namespace) as client:
        created = ok(
            client.post(
                "/v1/intentions",
                json={
                    "action": "\u202ecall the plumber",  # right-to-left overrides, never closed
                    "at": "2031-05-06T09:00:00+00:00",
                    "mention": ["\u202eAnna"],
                },
            )
        )
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "intentions", namespace)
    card = f'#intention-list [data-intention-id="{created["id"]}"]'
    element(driver, f"{card} .trigger-mention")
    quoted_right, after_left, after = driver.execute_script(
        """
        const item = document.querySelector(arguments[0] + " .trigger-mention");
        // The text node holding the author's mention; what follows it is the page's words.
        const walker = document.createTreeWalker(item, NodeFilter.SHOW_TEXT);
        let node = walker.nextNode();
        while (node && !node.textContent.includes("Anna")) node = walker.nextNode();
        const end = node.textContent.indexOf("Anna") + 4;
        const mention = document.createRange();
        mention.setStart(node, end - 5);  // the override and the name
        mention.setEnd(node, end);
        const after = document.createRange();
        after.setStart(node, end);
        after.setEndAfter(item.lastChild);
        return [mention.getBoundingClientRect().right,
                after.getBoundingClientRect().left, after.toString()];
        """,
        card,
    )
    assert after == "” is mentioned"
    # The words the page wrote after the mention are shown after it, not mirrored before it.
    assert after_left >= quoted_right - 1
    element(driver, f"{card} .intention-cancel").click()
    question = element(driver, "#confirm-dialog p")
    # The action is isolated in the question, so "will never fire again" reads as written.
    isolated = question.find_elements(By.CSS_SELECTOR, ".user-text")
    assert [item.get_attribute("textContent") for item in isolated] == ["\u202ecall the plumber"]
    element(driver, "#confirm-cancel").click()
    # The notices after a cancel and a create isolate the action too.
    element(driver, f"{card} .intention-cancel").click()
    element(driver, "#confirm-accept").click()
    cancelled = text_appears(driver, "#intentions-notice", "Cancelled")
    assert cancelled.get_attribute("textContent") == "Cancelled “\u202ecall the plumber”."
    isolated = cancelled.find_elements(By.CSS_SELECTOR, ".user-text")
    assert [item.get_attribute("textContent") for item in isolated] == ["\u202ecall the plumber"]
    driver.execute_script(
        "document.querySelector('#intention-action').value = arguments[0];", "\u202ewater the figs"
    )
    element(driver, "#intention-at").send_keys("2031-05-06T09:00:00+00:00")
    element(driver, "#intention-submit").click()
    remembered = text_appears(driver, "#intention-form-notice", "Remembered")
    isolated = remembered.find_elements(By.CSS_SELECTOR, ".user-text")
    assert [item.get_attribute("textContent") for item in isolated] == ["\u202ewater the figs"]


def test_browser_a_large_integer_in_meta_is_shown_and_saved_as_written(browsed: Browsed) -> None:
    namespace = unique_namespace("bigint")
    order = 12345678901234567891  # past 2**53: a JavaScript number would round it
    with browsed.api(namespace) as client:
        memory = remember(
            client, content="The order for the new desk", meta={"order": order, "shop": "north"}
        )
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{memory}", namespace)
    shown = element(driver, "#page-memory pre.meta").text
    assert f'"order": {order}' in shown
    element(driver, "#memory-edit").click()
    meta = element(driver, "#edit-meta")
    assert f'"order": {order}' in (meta.get_attribute("value") or "")
    # Another key edited: the whole object is sent back, the order id with it.
    driver.execute_script(
        "arguments[0].value = arguments[0].value.replace('north', 'south');", meta
    )
    element(driver, "#edit-save").click()
    assert text_appears(driver, "#memory-notice", "Saved").text == "Saved (meta)."
    with browsed.api(namespace) as client:
        stored = client.get(f"/v1/memories/{memory}").json()["meta"]
    assert stored == {"order": order, "shop": "south"}


def test_browser_why_not_takes_any_threshold_the_api_takes(browsed: Browsed) -> None:
    namespace = unique_namespace("threshold")
    with browsed.api(namespace) as client:
        memory = remember(client, content="The heron nests by the mill pond")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"explain/{memory}", namespace)
    element(driver, "#explain-query").send_keys("heron nest")
    # Not a multiple of any step: the form must still be sent (min_score is any 0-1).
    element(driver, "#explain-min-score").send_keys("0.123")
    element(driver, "#explain-submit").click()
    result = element(driver, "#explain-result")
    values = {
        row.find_element(By.CSS_SELECTOR, ".bar-name").get_attribute("textContent"): (
            row.find_element(By.CSS_SELECTOR, ".bar-value").get_attribute("textContent")
        )
        for row in result.find_elements(By.CSS_SELECTOR, ".hit-score .bar-row")
    }
    assert values["threshold"] == "0.123"


def test_browser_a_token_pasted_with_a_typographic_character_is_refused_at_sign_in(
    browsed: Browsed,
) -> None:
    driver = browsed.driver
    driver.get(f"{browsed.base_url}/ui/favicon.svg")
    driver.execute_script("sessionStorage.clear()")
    driver.get(f"{browsed.base_url}/#/search")
    # A curly apostrophe cannot go in an HTTP header: the tab was left with no sign-in form.
    element(driver, "#token").send_keys("rcd_0000000000000000_pasted\u2019from-a-document")
    element(driver, "#sign-in").click()
    notice = text_appears(driver, "#page-login .notice", "position").text
    assert "“\u2019” (U+2019) at position 27" in notice
    assert driver.execute_script("return sessionStorage.getItem(arguments[0])", TOKEN_KEY) is None
    # The form is still there, and a good token signs in.
    field = element(driver, "#token")
    field.clear()
    field.send_keys(browsed.token)
    element(driver, "#sign-in").click()
    element(driver, "#page-search")


def test_browser_a_stored_token_that_cannot_be_sent_asks_for_another(browsed: Browsed) -> None:
    driver = browsed.driver
    driver.get(f"{browsed.base_url}/ui/favicon.svg")
    driver.execute_script(
        "sessionStorage.clear(); sessionStorage.setItem(arguments[0], arguments[1]);",
        TOKEN_KEY,
        "rcd_0000000000000000_stored\u2019before",
    )
    driver.get(f"{browsed.base_url}/#/search")
    element(driver, "#token")  # the sign-in form, not a dead end


def test_browser_a_file_named_with_an_invisible_character_imports(
    browsed: Browsed, tmp_path: Path
) -> None:
    namespace = unique_namespace("zwj-import")
    with browsed.api(namespace) as client:
        remember(client, content="already here before the import")
    # A zero-width joiner, as inside many emoji: the server refuses it in a name, and the
    # name alone refused the whole upload.
    upload = tmp_path / "family\u200dnotes é.jsonl"
    upload.write_text(json.dumps({"content": "imported from a file with a joined name"}) + "\n")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "transfer", namespace)
    element(driver, "#import-file").send_keys(str(upload))
    element(driver, "#import-upload").click()
    assert "1 created" in text_appears(driver, "#import-notice", "Imported").text
    with browsed.api(namespace) as client:
        contents = {m["content"] for m in ok(client.get("/v1/memories"))["memories"]}
    assert "imported from a file with a joined name" in contents
