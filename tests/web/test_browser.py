"""The memory browser in a real browser: headless Chromium against a real `recalld serve`.

One server (hashing embedder, embedded by its worker thread) with two tokens:
an admin (``*:read+write``) for the flows, and a reader (``default:read`` and
``shared:read+write``) for the read-only UI and the namespace switcher.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from tests.web.browser_support import (
    TOKEN_KEY,
    Browsed,
    browsed_server,
    console_problems,
    element,
    ok,
    open_page,
    pixel_spread,
    text_appears,
    wait_for,
    wait_until_indexed,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CORE_USER_CHARS = 120
EDIT_CONTROLS = (
    "#memory-edit",
    "#memory-forget",
    "#add-user",
    "#apply-user",
    "#pending-drain",
    "#sense-submit",
    "#import-upload",
)


@pytest.fixture(scope="module")
def browsed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browsed]:
    with browsed_server(
        tmp_path_factory.mktemp("browser"),
        ("reader", {"default": "read", "shared": "read+write"}),
        RECALLD_EMBEDDER="hashing",
        RECALLD_CORE_USER_CHARS=str(CORE_USER_CHARS),
    ) as found:
        yield found


def _remember(client: httpx.Client, **fields: Any) -> str:
    receipt = ok(client.post("/v1/memories", json=fields))
    return str(receipt["id"])


def _experience(client: httpx.Client, **fields: Any) -> str:
    return str(ok(client.post("/v1/experiences", json=fields))["id"])


def _assert_no_edit_controls(driver: Chrome) -> None:
    for selector in EDIT_CONTROLS:
        assert driver.find_elements(By.CSS_SELECTOR, selector) == [], selector
    labels = {button.text for button in driver.find_elements(By.TAG_NAME, "button")}
    assert not labels & {"Edit", "Forget", "Apply batch", "Drain", "Upload", "Sense", "edit"}


# -- flows ----------------------------------------------------------------------


def test_browser_search_shows_score_channel_bars_and_backends(browsed: Browsed) -> None:
    word = f"zephyr{uuid.uuid4().hex[:8]}"
    with browsed.api() as client:
        wanted = _remember(client, content=f"The {word} kite flies over the northern dunes")
        other = _remember(client, content=f"A {word} is also a light west wind")
        wait_until_indexed(client, [wanted, other])
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "search")
    element(driver, "#search-query").send_keys(f"{word} kite dunes")
    element(driver, "#search-submit").click()
    first = element(driver, "#search-results .hit")
    assert first.get_attribute("data-memory-id") == wanted
    assert float(first.find_element(By.CSS_SELECTOR, ".score").text) > 0
    channels = {
        row.get_attribute("data-channel"): row
        for row in first.find_elements(By.CSS_SELECTOR, ".channel")
    }
    assert {"keyword", "text"} <= set(channels)
    keyword_fill = channels["keyword"].find_element(By.CSS_SELECTOR, ".bar-fill")
    assert keyword_fill.size["width"] > 0
    backends = {badge.text for badge in first.find_elements(By.CSS_SELECTOR, ".backend")}
    assert {"fts", "vector"} <= backends
    assert console_problems(driver) == []


def test_browser_search_filters_by_kind(browsed: Browsed) -> None:
    word = f"quokka{uuid.uuid4().hex[:8]}"
    with browsed.api() as client:
        note = _remember(client, content=f"A {word} smiled at the camera")
        reference = _remember(client, content=f"The {word} field guide", kind="reference")
        wait_until_indexed(client, [note, reference])
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "search")
    element(driver, "#search-query").send_keys(word)
    driver.find_element(By.CSS_SELECTOR, ".filters summary").click()
    element(driver, "#search-kind").send_keys("reference")
    element(driver, "#search-submit").click()
    text_appears(driver, "#search-results", "field guide")
    ids = [
        hit.get_attribute("data-memory-id")
        for hit in driver.find_elements(By.CSS_SELECTOR, "#search-results .hit")
    ]
    assert ids == [reference]


def test_browser_search_page_asks_again_after_a_forget_or_an_edit(browsed: Browsed) -> None:
    # Coming back to Search shows the last search again: from the server, never from
    # hits kept in the page, which would still show a forgotten memory's text.
    namespace = f"again-{uuid.uuid4().hex[:8]}"
    word = f"wombat{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        doomed = _remember(client, content=f"The {word} password is hunter2", title="Secret")
        edited = _remember(client, content=f"The {word} burrow is under the gum tree")
        wait_until_indexed(client, [doomed, edited])
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "search", namespace=namespace)
    element(driver, "#search-query").send_keys(word)
    element(driver, "#search-submit").click()
    text_appears(driver, "#search-results", "hunter2")
    text_appears(driver, "#search-results", "gum tree")
    with browsed.api(namespace) as client:
        ok(client.patch(f"/v1/memories/{edited}", json={"content": f"The {word} moved house"}))
        wait_until_indexed(client, [edited])
    element(driver, f"#search-results .hit[data-memory-id='{doomed}'] a.memory-link").click()
    element(driver, "#memory-forget").click()
    element(driver, "#confirm-accept").click()
    text_appears(driver, "#page-browse .notice", "Forgotten")
    element(driver, "#nav a.nav-link[href='#/search']").click()
    results = text_appears(driver, "#search-results", "moved house")
    assert element(driver, "#search-query").get_attribute("value") == word
    assert "hunter2" not in results.text
    assert "gum tree" not in results.text
    ids = [
        hit.get_attribute("data-memory-id")
        for hit in driver.find_elements(By.CSS_SELECTOR, "#search-results .hit")
    ]
    assert ids == [edited]


def test_browser_memory_detail_map_local_time_and_edit_in_place(browsed: Browsed) -> None:
    with browsed.api() as client:
        centre = _experience(
            client,
            content="Pastel de nata at the tiled kiosk",
            lat=38.7139,
            lon=-9.1394,
            at="2026-10-25T08:10:00+02:00",
            tags=["kiosk"],
        )
        neighbour = _experience(
            client, content="The tram stop two streets up", lat=38.7152, lon=-9.1371
        )
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{centre}")
    # `at` is shown in the offset it happened in, not the viewer's zone (UTC-3 here).
    assert element(driver, "#memory-at").text == "2026-10-25 08:10:00 UTC+02:00"
    element(driver, "#place-map .map-centre")
    dots = wait_for(
        driver,
        lambda current: current.find_elements(By.CSS_SELECTOR, "#place-map .map-neighbour"),
        "the neighbours on the map",
    )
    assert neighbour in {dot.get_attribute("data-memory-id") for dot in dots}

    element(driver, "#memory-edit").click()
    title = element(driver, "#edit-title")
    title.clear()
    title.send_keys("Breakfast kiosk")
    tags = element(driver, "#edit-tags")
    tags.clear()
    tags.send_keys("kiosk, breakfast")
    element(driver, "#edit-save").click()
    text_appears(driver, "#memory-notice", "Saved")
    assert element(driver, "#memory-title").text == "Breakfast kiosk"
    with browsed.api() as client:
        stored = ok(client.get(f"/v1/memories/{centre}"))
    assert stored["title"] == "Breakfast kiosk"
    assert sorted(stored["tags"]) == ["breakfast", "kiosk"]
    assert stored["content"] == "Pastel de nata at the tiled kiosk"  # untouched fields stay


def test_browser_edit_sends_only_what_was_changed(browsed: Browsed) -> None:
    # Content with CRLF line endings, a tag holding a comma, a salience off the 0.05 grid:
    # changing the title alone must leave all three as stored.
    with browsed.api() as client:
        memory_id = _remember(
            client,
            content="line one\r\nline two",
            tags=["new york, ny", "x"],
            salience=0.37,
        )
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{memory_id}")
    element(driver, "#memory-edit").click()
    title = element(driver, "#edit-title")
    title.clear()
    title.send_keys("Two lines")
    element(driver, "#edit-save").click()
    text_appears(driver, "#memory-notice", "Saved")
    with browsed.api() as client:
        stored = ok(client.get(f"/v1/memories/{memory_id}"))
    assert stored["title"] == "Two lines"
    assert stored["content"] == "line one\r\nline two"
    assert stored["tags"] == ["new york, ny", "x"]
    assert stored["salience"] == 0.37


def test_browser_edit_keeps_untouched_fields_a_one_line_input_would_alter(
    browsed: Browsed,
) -> None:
    # A one-line input drops line breaks, and saving trims: a title or a place name the
    # user left alone must keep its line break and its spaces, even when another part
    # of the place (its latitude) is edited.
    title = "  Line one\nLine two "
    with browsed.api() as client:
        memory_id = _remember(
            client,
            content="Upper and lower town",
            title=title,
            place={"lat": 1.5, "lon": 2.5, "name": "Upper  Lower"},
        )
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{memory_id}")
    element(driver, "#memory-edit").click()
    salience = element(driver, "#edit-salience")
    salience.clear()
    salience.send_keys("0.5")
    latitude = element(driver, "#edit-lat")
    latitude.clear()
    latitude.send_keys("1.25")
    element(driver, "#edit-save").click()
    assert text_appears(driver, "#memory-notice", "Saved").text == "Saved (salience, place)."
    with browsed.api() as client:
        stored = ok(client.get(f"/v1/memories/{memory_id}"))
    assert stored["title"] == title
    assert stored["salience"] == 0.5
    assert (stored["place"]["lat"], stored["place"]["lon"]) == (1.25, 2.5)
    assert stored["place"]["name"] == "Upper  Lower"


def test_browser_renaming_a_place_keeps_its_cell(browsed: Browsed) -> None:
    # Typing only a name sent the cell's centre as lat/lon: "u09tv" (an area) became a point.
    with browsed.api() as client:
        memory_id = _remember(client, content="Walked along the Seine", place={"geohash": "u09tv"})
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{memory_id}")
    element(driver, "#memory-edit").click()
    element(driver, "#edit-place-name").send_keys("Left bank")
    element(driver, "#edit-save").click()
    assert text_appears(driver, "#memory-notice", "Saved").text == "Saved (place)."
    with browsed.api() as client:
        stored = ok(client.get(f"/v1/memories/{memory_id}"))
    assert (stored["place"]["geohash"], stored["place"]["name"]) == ("u09tv", "Left bank")


def test_browser_why_not_explains_a_returned_and_a_missing_memory(browsed: Browsed) -> None:
    namespace = f"explain-{uuid.uuid4().hex[:8]}"
    word = f"quokka{uuid.uuid4().hex[:6]}"
    with browsed.api(namespace) as client:
        wanted = _remember(client, content=f"The {word} kite flies over the northern dunes")
        missing = _remember(client, content="Tomatoes ripen slowly in a cold August")
        wait_until_indexed(client, [wanted, missing])
        expected = ok(client.post("/v1/explain", json={"query": f"{word} kite", "id": missing}))
    assert expected["stage"] != "returned"
    driver = browsed.driver
    # From the memory's detail view, "Why not?" opens the page with the memory filled in.
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{missing}", namespace=namespace)
    element(driver, "#memory-action-explain").click()
    wait_for(driver, lambda current: current.current_url.endswith(f"#/explain/{missing}"), "url")
    assert element(driver, "#explain-memory").get_attribute("value") == missing
    element(driver, "#explain-query").send_keys(f"{word} kite")
    element(driver, "#explain-submit").click()
    result = element(driver, "#explain-result")
    assert result.get_attribute("data-stage") == expected["stage"]
    assert element(driver, "#explain-reason").text == expected["reason"]

    # The memory the query is about: returned, first, with the reranker's weighing.
    field = element(driver, "#explain-memory")
    field.clear()
    field.send_keys(wanted)
    element(driver, "#explain-submit").click()
    wait_for(
        driver,
        lambda current: (
            element(current, "#explain-result").get_attribute("data-stage") == "returned"
        ),
        "the returned verdict",
    )
    assert element(driver, "#explain-stage").text == "Returned"
    assert "1 of" in element(driver, "#explain-result").text
    rows = driver.find_elements(By.CSS_SELECTOR, "#explain-contributions tbody tr")
    assert rows, "the reranker's features are listed"
    features = {row.get_attribute("data-feature") for row in rows}
    assert "keyword" in features
    assert console_problems(driver) == []


def test_browser_forget_asks_then_the_memory_is_gone(browsed: Browsed) -> None:
    with browsed.api() as client:
        # A survivor keeps the list from being empty when this test runs alone.
        survivor = _remember(client, content=f"Keep me {uuid.uuid4().hex}")
        doomed = _remember(client, content=f"Forget me {uuid.uuid4().hex}")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{doomed}")
    element(driver, "#memory-forget").click()
    element(driver, "#confirm-cancel").click()  # first, change our mind: nothing happens
    with browsed.api() as client:
        assert client.get(f"/v1/memories/{doomed}").status_code == 200
    element(driver, "#memory-forget").click()
    element(driver, "#confirm-accept").click()
    text_appears(driver, "#page-browse .notice", "Forgotten")
    element(driver, "#browse-list .memory-row")
    listed = {
        row.get_attribute("data-memory-id")
        for row in driver.find_elements(By.CSS_SELECTOR, "#browse-list .memory-row")
    }
    assert doomed not in listed
    assert survivor in listed
    with browsed.api() as client:
        assert client.get(f"/v1/memories/{doomed}").status_code == 404


def test_browser_browse_pages_with_the_cursor(browsed: Browsed) -> None:
    namespace = f"pages-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        ids = [_remember(client, content=f"page item {number}") for number in range(30)]
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "browse", namespace=namespace)
    wait_for(
        driver,
        lambda current: len(current.find_elements(By.CSS_SELECTOR, ".memory-row")) == 25,
        "the first page of 25",
    )
    first = driver.find_elements(By.CSS_SELECTOR, ".memory-row")[0]
    assert first.get_attribute("data-memory-id") == ids[-1]  # newest first
    element(driver, "#browse-more").click()
    wait_for(
        driver,
        lambda current: len(current.find_elements(By.CSS_SELECTOR, ".memory-row")) == 30,
        "the second page",
    )
    shown = [
        row.get_attribute("data-memory-id")
        for row in driver.find_elements(By.CSS_SELECTOR, ".memory-row")
    ]
    assert shown == list(reversed(ids))
    assert driver.find_element(By.ID, "browse-more").is_displayed() is False  # no more pages


def test_browser_browse_load_more_keeps_the_filters_of_the_listing_shown(
    browsed: Browsed,
) -> None:
    # A kind typed but not applied must not change the listing "Load more" continues.
    namespace = f"more-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        ids = [
            _remember(client, content=f"old decision {number}", kind="decision")
            for number in range(3)
        ]
        ids += [_remember(client, content=f"note {number}") for number in range(27)]
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "browse", namespace=namespace)
    wait_for(
        driver,
        lambda current: len(current.find_elements(By.CSS_SELECTOR, ".memory-row")) == 25,
        "the first page of 25",
    )
    element(driver, "#browse-kind").send_keys("decision")
    element(driver, "#browse-more").click()
    wait_for(
        driver,
        lambda current: len(current.find_elements(By.CSS_SELECTOR, ".memory-row")) > 25,
        "the second page",
    )
    shown = [
        row.get_attribute("data-memory-id")
        for row in driver.find_elements(By.CSS_SELECTOR, ".memory-row")
    ]
    assert shown == list(reversed(ids))


def test_browser_core_memory_budget_bar_and_overflow_refused(browsed: Browsed) -> None:
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "core")
    budget = element(driver, "#budget-text-user")
    assert budget.text.startswith(f"0/{CORE_USER_CHARS}")
    meter = driver.find_element(By.CSS_SELECTOR, "#budget-user .bar")
    assert float(meter.get_attribute("aria-valuenow") or "1") == 0

    element(driver, "#add-user").send_keys("Name: Sam")
    text_appears(driver, "#budget-text-user", f"9/{CORE_USER_CHARS}")  # live, before applying
    element(driver, "#add-button-user").click()
    element(driver, "#add-user").send_keys("Prefers metric units")
    element(driver, "#add-button-user").click()
    element(driver, "#apply-user").click()
    text_appears(driver, "#core-notice-user", "Done.")
    text_appears(driver, "#entries-user", "Prefers metric units")
    expected = len("Name: Sam\nPrefers metric units")
    text_appears(driver, "#budget-text-user", f"{expected}/{CORE_USER_CHARS}")
    fraction = float(
        driver.find_element(By.CSS_SELECTOR, "#budget-user .bar").get_attribute("aria-valuenow")
        or "0"
    )
    assert fraction == pytest.approx(expected / CORE_USER_CHARS, abs=1e-3)

    long_entry = "Works on " + "very " * 25 + "long projects"
    element(driver, "#add-user").send_keys(long_entry)
    over = text_appears(driver, "#budget-text-user", "over the limit")
    assert "over" in (over.get_attribute("class") or "")
    element(driver, "#add-button-user").click()
    element(driver, "#apply-user").click()
    refused = element(driver, "#refused-user")
    assert "Refused" in refused.text
    assert "Name: Sam" in refused.text
    assert "Prefers metric units" in refused.text
    with browsed.api() as client:
        core = ok(client.get("/v1/core"))
    assert core["user"]["entries"] == ["Name: Sam", "Prefers metric units"]


def test_browser_recollections_peek_then_drain(browsed: Browsed) -> None:
    namespace = f"recall-{uuid.uuid4().hex[:8]}"
    cue = {
        "text": "Espresso at the marble counter of the station café",
        "lat": 48.8443,
        "lon": 2.3744,
    }
    with browsed.api(namespace) as client:
        _experience(client, content=cue["text"], lat=cue["lat"], lon=cue["lon"])
        fired = ok(client.post("/v1/sense", json=cue))
    assert fired, "the cue should fire the memory it repeats"
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "recollections", namespace=namespace)
    text_appears(driver, "#pending-list", "marble counter")  # the page peeks on load
    with browsed.api(namespace) as client:
        assert len(ok(client.get("/v1/recollections/pending", params={"drain": "false"}))) == 1
    element(driver, "#pending-drain").click()
    text_appears(driver, "#pending-notice", "delivered")
    element(driver, "#pending-peek").click()
    text_appears(driver, "#pending-notice", "Nothing pending")
    with browsed.api(namespace) as client:
        assert ok(client.get("/v1/recollections/pending", params={"drain": "false"})) == []


def test_browser_sense_form_fires_a_matching_memory(browsed: Browsed) -> None:
    namespace = f"sense-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        _experience(
            client,
            content="Rain on the glass roof of the botanical garden",
            lat=51.4787,
            lon=-0.2956,
        )
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "recollections", namespace=namespace)
    element(driver, "#sense-text").send_keys("Rain on the glass roof of the botanical garden")
    element(driver, "#sense-lat").send_keys("51.4787")
    element(driver, "#sense-lon").send_keys("-0.2956")
    element(driver, "#sense-submit").click()
    text_appears(driver, "#sense-notice", "fired")
    text_appears(driver, "#sense-results", "glass roof")


def test_browser_read_only_token_signs_in_and_gets_no_edit_controls(browsed: Browsed) -> None:
    with browsed.api() as client:
        memory_id = _remember(client, content="Read-only visitors may look but not touch")
    with browsed.api("secret") as client:
        _remember(client, content="Nobody with the reader token may see this namespace")
    driver = browsed.driver
    driver.get(f"{browsed.base_url}/ui/favicon.svg")
    driver.execute_script("sessionStorage.clear()")
    driver.get(f"{browsed.base_url}/#/search")
    element(driver, "#token").send_keys("rcd_0000000000000000_not-a-real-token-at-all")
    element(driver, "#sign-in").click()
    text_appears(driver, "#page-login .notice", "not accepted")
    element(driver, "#token").send_keys(browsed.token)
    element(driver, "#sign-in").click()
    element(driver, "#page-search")
    assert element(driver, "#read-only").text == "read-only"
    # The token lives in this tab's sessionStorage, never in the URL or a cookie.
    assert driver.execute_script("return sessionStorage.getItem(arguments[0])", TOKEN_KEY) == (
        browsed.token
    )
    assert browsed.token not in driver.current_url
    assert driver.execute_script("return document.cookie") == ""
    options = [
        option.get_attribute("value") for option in Select(element(driver, "#namespace")).options
    ]
    assert options == ["default", "shared"]  # not "secret"

    for page in (f"memory/{memory_id}", "core", "recollections", "transfer", "browse"):
        driver.get(f"{browsed.base_url}/#/{page}")
        element(driver, f"#page-{page.split('/')[0]}")
        ready = {
            "memory": "#memory-title",
            "core": "#entries-user",
            "recollections": "#pending-notice",
            "transfer": "#export-download",
            "browse": "#browse-list .memory-row",
        }[page.split("/")[0]]
        element(driver, ready)
        _assert_no_edit_controls(driver)

    Select(element(driver, "#namespace")).select_by_value("shared")
    wait_for(driver, lambda current: not current.find_elements(By.ID, "read-only"), "write UI")
    driver.get(f"{browsed.base_url}/#/core")
    element(driver, "#add-user")  # read+write on "shared": the edit controls are back

    element(driver, "#sign-out").click()
    element(driver, "#token")
    assert driver.execute_script("return sessionStorage.getItem(arguments[0])", TOKEN_KEY) is None


def test_browser_untrusted_markup_is_shown_as_text_and_never_runs(browsed: Browsed) -> None:
    marker = uuid.uuid4().hex[:8]
    payload = (
        f"<script>window.__recalld_pwned = 1</script>xss{marker} "
        '<img src=x onerror="window.__recalld_pwned = 2">'
    )
    with browsed.api() as client:
        memory_id = _remember(
            client,
            content=payload,
            title=f'<b onmouseover="window.__recalld_pwned = 3">bold{marker}</b>',
            tags=['<svg onload="window.__recalld_pwned = 4">'],
            source="javascript:window.__recalld_pwned = 5",
            meta={"note": "<iframe src=javascript:window.__recalld_pwned=6>"},
        )
        wait_until_indexed(client, [memory_id])
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "search")
    element(driver, "#search-query").send_keys(f"xss{marker}")
    element(driver, "#search-submit").click()
    hit = element(driver, "#search-results .hit")
    assert f'<b onmouseover="window.__recalld_pwned = 3">bold{marker}</b>' in hit.text
    driver.get(f"{browsed.base_url}/#/browse")
    text_appears(driver, "#browse-list", f"bold{marker}")
    driver.get(f"{browsed.base_url}/#/memory/{memory_id}")
    content = element(driver, "#memory-content")
    assert content.text == payload  # shown literally, as text
    page = driver.find_element(By.ID, "page")
    for tag in ("script", "img", "iframe", "b"):
        assert page.find_elements(By.TAG_NAME, tag) == [], tag
    assert not page.find_elements(By.CSS_SELECTOR, "a[href^='javascript']")
    assert driver.execute_script("return window.__recalld_pwned") is None
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.accept()


def test_browser_status_page_shows_queue_embeddings_workers_and_timeline(
    browsed: Browsed,
) -> None:
    namespace = f"status-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        ids = [
            _remember(client, content=f"status sample {number}", kind=kind, category="fact")
            for number, kind in enumerate(["note", "note", "reference"])
        ]
        wait_until_indexed(client, ids)
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "status", namespace=namespace)
    embedding = text_appears(driver, "#status-embeddings", "hashing")
    assert "3/3" in embedding.text
    text_appears(driver, "#status-queue", "done")
    text_appears(driver, "#workers-table", "hashing")
    kinds = text_appears(driver, "#status-kinds", "reference").text
    assert "note" in kinds
    assert "2" in kinds
    columns = wait_for(
        driver,
        lambda current: current.find_elements(By.CSS_SELECTOR, "#timeline-chart .chart-column"),
        "the timeline",
    )
    assert len(columns) == 30
    heights = [float(column.get_attribute("height") or 0) for column in columns]
    assert heights[-1] > 0
    assert heights[:-1] == [0.0] * 29  # everything was stored today
    Select(element(driver, "#timeline-unit")).select_by_value("month")
    wait_for(
        driver,
        lambda current: len(current.find_elements(By.CSS_SELECTOR, ".chart-column")) == 24,
        "the monthly timeline",
    )


def test_browser_import_with_progress_and_export_download(browsed: Browsed, tmp_path: Path) -> None:
    namespace = f"transfer-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        _remember(client, content="already here before the import")
    records = [
        {
            "id": f"imported-{number}-{namespace}",
            "content": f"imported line {number}",
            "created_at": f"2026-01-0{number + 1}T00:00:00Z",
            "updated_at": f"2026-01-0{number + 1}T00:00:00Z",
        }
        for number in range(2)
    ]
    upload = tmp_path / "memories.jsonl"
    upload.write_text("\n".join(json.dumps(record) for record in records) + "\nnot json\n")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "transfer", namespace=namespace)
    element(driver, "#import-file").send_keys(str(upload))
    element(driver, "#import-upload").click()
    text_appears(driver, "#import-notice", "2 created")
    assert "1 refused" in element(driver, "#import-notice").text
    text_appears(driver, "#import-report", "line 3")
    assert element(driver, "#import-progress").get_attribute("value") == "1"

    element(driver, "#export-download").click()
    text_appears(driver, "#export-notice", "Exported 3")

    def downloaded(_driver: Chrome) -> Path | None:
        for path in browsed.downloads.glob(f"recalld-{namespace}-*.jsonl"):
            if path.stat().st_size:
                return path
        return None

    exported = wait_for(driver, downloaded, "the export download")
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert {record["id"] for record in records} <= {line["id"] for line in lines}
    assert len(lines) == 3


def test_browser_every_main_page_renders_something_without_csp_errors(
    browsed: Browsed, tmp_path: Path
) -> None:
    with browsed.api() as client:
        memory_id = _experience(
            client, content="Screenshot sample by the river", lat=45.76, lon=4.83
        )
    driver = browsed.driver
    pages = {
        "search": "#search-query",
        "browse": "#browse-list .memory-row",
        f"memory/{memory_id}": "#place-map",
        "core": "#budget-user",
        "recollections": "#pending-notice",
        "status": "#timeline-chart",
        "transfer": "#export-download",
        "explain": "#explain-query",
    }
    open_page(driver, browsed.base_url, browsed.admin, "search")
    console_problems(driver)
    for page, ready in pages.items():
        driver.get(f"{browsed.base_url}/#/{page}")
        element(driver, ready)
        shot = tmp_path / f"{page.split('/')[0]}.png"
        driver.save_screenshot(str(shot))
        spread, colours = pixel_spread(shot)
        assert spread > 10, (page, spread)
        assert colours > 20, (page, colours)
        assert console_problems(driver) == [], page

    driver.get(f"{browsed.base_url}/docs")
    element(driver, ".swagger-ui .opblock")  # Swagger UI ran from the package, offline
    shot = tmp_path / "docs.png"
    driver.save_screenshot(str(shot))
    spread, colours = pixel_spread(shot)
    assert spread > 10, ("docs", spread)
    assert colours > 20, ("docs", colours)
    assert console_problems(driver) == []
