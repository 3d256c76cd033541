"""The Graph and Intentions pages in a real browser: headless Chromium against `recalld serve`.

One server (keyword-only, the rule-based graph extractor run by its worker thread)
with an admin token (``*:read+write``) and a reader (``default:read``). Each test
works in a namespace of its own.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from tests.web.browser_support import (
    WAIT_SECONDS,
    Browsed,
    browsed_server,
    console_problems,
    element,
    ok,
    open_page,
    pixel_spread,
    text_appears,
    wait_for,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VIEW_WIDTH = 600
VIEW_HEIGHT = 420


@pytest.fixture(scope="module")
def browsed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browsed]:
    with browsed_server(
        tmp_path_factory.mktemp("browser_graph"),
        ("reader", {"default": "read"}),
        RECALLD_GRAPH_EXTRACTOR="rules",
    ) as found:
        yield found


def _remember(client: httpx.Client, content: str) -> str:
    return str(ok(client.post("/v1/memories", json={"content": content}))["id"])


def _wait_until_extracted(client: httpx.Client, memory_ids: list[str]) -> None:
    """Poll (bounded) until the server's worker has extracted entities from every memory."""
    deadline = time.monotonic() + WAIT_SECONDS
    pending = set(memory_ids)
    while pending and time.monotonic() < deadline:
        for memory_id in list(pending):
            found = ok(client.get("/v1/graph/mentions", params={"memory": memory_id}))
            if found["entities"]:
                pending.discard(memory_id)
        if pending:
            time.sleep(0.05)  # the worker is another thread of the server: no event to wait on
    assert not pending, f"not extracted in time: {sorted(pending)}"


def _screenshot_is_not_blank(driver: Chrome, path: Path) -> None:
    driver.save_screenshot(str(path))
    spread, colours = pixel_spread(path)
    assert spread > 10, (path.name, spread)
    assert colours > 20, (path.name, colours)


def _node_names(driver: Chrome) -> set[str]:
    return {
        node.get_attribute("data-entity") or ""
        for node in driver.find_elements(By.CSS_SELECTOR, "#graph-view .graph-node")
    }


def _wall_clock(iso: str) -> str:
    """An instant as the page shows it: its own date, hour and offset, with the weekday."""
    moment = datetime.fromisoformat(iso)
    offset = moment.strftime("%z")
    return f"{moment:%a %Y-%m-%d %H:%M} UTC{offset[:3]}:{offset[3:]}"


# -- the Graph page -------------------------------------------------------------


def test_browser_graph_lists_entities_draws_the_neighbourhood_and_navigates(
    browsed: Browsed, tmp_path: Path
) -> None:
    namespace = f"graph-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        sister = _remember(client, "Kate: my sister Anna moved to Porto.")
        bakery = _remember(client, "Anna's bakery is in Porto.")
        elsewhere = _remember(client, "Bruno went to Oslo.")
        _wait_until_extracted(client, [sister, bakery, elsewhere])
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "graph", namespace=namespace)
    listed = text_appears(driver, "#entity-list", "Anna").text
    assert {"Kate", "Porto", "Bruno", "Oslo"} <= set(listed.split())

    element(driver, "#entity-query").send_keys("port")
    element(driver, "#entity-search").click()
    wait_for(
        driver,
        lambda current: (
            [
                row.get_attribute("data-entity")
                for row in current.find_elements(By.CSS_SELECTOR, "#entity-list .entity-row")
            ]
            == ["Porto"]
        ),
        "the list narrowed to Porto",
    )
    element(driver, "#entity-query").clear()
    element(driver, "#entity-search").click()
    element(driver, '#entity-list a[data-entity="Anna"]').click()

    assert element(driver, "#entity-name").text.startswith("Anna")
    assert driver.current_url.endswith("#/graph/Anna")
    mentions = {
        link.get_attribute("data-memory-id")
        for link in driver.find_elements(By.CSS_SELECTOR, "#entity-mentions a.memory-link")
    }
    assert mentions == {sister, bakery}
    relations = element(driver, "#entity-relations").text
    assert "sister" in relations
    assert "has" in relations

    # The neighbourhood: Anna at the centre, her relations as arrows, co-mentions around.
    wait_for(driver, lambda current: "Kate" in _node_names(current), "the drawn neighbourhood")
    assert {"Anna", "Kate", "bakery", "Porto"} <= _node_names(driver)
    assert not {"Bruno", "Oslo"} & _node_names(driver)  # nothing links them to Anna
    centre = driver.find_element(By.CSS_SELECTOR, "#graph-view .graph-node.role-centre")
    assert centre.get_attribute("data-entity") == "Anna"
    assert len(driver.find_elements(By.CSS_SELECTOR, "#graph-view .graph-link.relation")) == 2
    labels = {
        label.text
        for label in driver.find_elements(By.CSS_SELECTOR, "#graph-view .graph-link-label")
    }
    assert labels == {"sister", "has"}
    points = []
    for node in driver.find_elements(By.CSS_SELECTOR, "#graph-view .graph-node"):
        match = re.fullmatch(
            r"translate\(([\d.]+) ([\d.]+)\)", node.get_attribute("transform") or ""
        )
        assert match, node.get_attribute("transform")
        x, y = float(match[1]), float(match[2])
        assert 0 < x < VIEW_WIDTH
        assert 0 < y < VIEW_HEIGHT
        points.append((x, y))
    assert len(set(points)) == len(points)  # the layout spread the nodes out
    _screenshot_is_not_blank(driver, tmp_path / "graph.png")
    assert console_problems(driver) == []

    # A node is a link to its entity; a mention is a link to its memory.
    element(driver, '#graph-view .graph-node[data-entity="Kate"]').click()
    text_appears(driver, "#entity-name", "Kate")
    assert driver.current_url.endswith("#/graph/Kate")
    wait_for(driver, lambda current: "Anna" in _node_names(current), "Kate's neighbourhood")
    element(driver, f'#entity-mentions a[data-memory-id="{sister}"]').click()
    text_appears(driver, "#memory-title", "my sister Anna")

    # The memory's "Entities" action lists what it mentions, each a link back to the graph.
    element(driver, "#memory-action-entities").click()
    chips = element(driver, "#memory-entities")
    assert {"Kate", "Anna", "Porto"} <= set(chips.text.split())
    element(driver, '#memory-entities a[data-entity="Porto"]').click()
    text_appears(driver, "#entity-name", "Porto")


def test_browser_graph_load_more_keeps_the_filters_of_the_list_shown(browsed: Browsed) -> None:
    # A type typed but not applied must not change the list "Load more" continues.
    namespace = f"graph-more-{uuid.uuid4().hex[:8]}"
    names = [f"Entity {number:02d}" for number in range(55)]
    lines = [
        json.dumps(
            {
                "type": "entity",
                "name": name,
                "entityType": "tool" if number in (10, 52, 53) else "thing",
                # One observation: a memory, so the browser offers the namespace.
                "observations": ["the first one"] if number == 0 else [],
            }
        )
        for number, name in enumerate(names)
    ]
    with browsed.api(namespace) as client:
        report = ok(
            client.post("/v1/import", params={"format": "mcp-memory"}, content="\n".join(lines))
        )
    assert report["errors"] == []
    assert report["details"] == {"entities": 55, "observations": 1}
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "graph", namespace=namespace)
    wait_for(
        driver,
        lambda current: len(current.find_elements(By.CSS_SELECTOR, ".entity-row")) == 50,
        "the first page of 50",
    )
    element(driver, "#entity-type").send_keys("tool")
    element(driver, "#entity-more").click()
    wait_for(
        driver,
        lambda current: len(current.find_elements(By.CSS_SELECTOR, ".entity-row")) > 50,
        "the second page",
    )
    listed = [
        row.get_attribute("data-entity")
        for row in driver.find_elements(By.CSS_SELECTOR, "#entity-list .entity-row")
    ]
    assert listed == names


# -- the Intentions page --------------------------------------------------------


def test_browser_intention_form_shows_the_resolved_time_and_cancel_removes_it(
    browsed: Browsed, tmp_path: Path
) -> None:
    namespace = f"intend-{uuid.uuid4().hex[:8]}"
    marker = uuid.uuid4().hex[:6]
    with browsed.api(namespace) as client:
        _remember(client, "A memory, so the namespace is listed for the admin token")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "intentions", namespace=namespace)
    text_appears(driver, "#intentions-notice", "No active intentions")

    element(driver, "#intention-action").send_keys(f"send the report {marker}")
    element(driver, "#intention-at").send_keys("tomorrow at 9")
    zone = element(driver, "#intention-zone")
    zone.clear()
    zone.send_keys("Europe/Paris")
    element(driver, "#intention-submit").click()
    text_appears(driver, "#intention-form-notice", "Remembered")
    with browsed.api(namespace) as client:
        (stored,) = ok(client.get("/v1/intentions"))["intentions"]
    (time_trigger,) = stored["triggers"]
    assert time_trigger["zone"] == "Europe/Paris"
    # The instant the server read "tomorrow at 9" as, echoed in the zone's offset.
    resolved = element(driver, "#intention-resolved").text
    assert "tomorrow at 9" in resolved
    assert element(driver, "#intention-resolved .resolved-instant").text.startswith(
        datetime.fromisoformat(time_trigger["at"]).strftime("%Y-%m-%d 09:00")
    )
    card = element(driver, f'#intention-list [data-intention-id="{stored["id"]}"]')
    assert f"send the report {marker}" in card.text
    assert f"at {_wall_clock(time_trigger['at'])} (Europe/Paris)" in card.text
    assert "not yet" in card.text  # fired: not yet
    assert _wall_clock(stored["next_due"]) in card.find_element(By.CSS_SELECTOR, ".next-due").text

    # A second one by place, radius and mention: its triggers are listed in words.
    element(driver, "#intention-action").send_keys(f"pick up the prescription {marker}")
    element(driver, "#intention-lat").send_keys("48.85")
    element(driver, "#intention-lon").send_keys("2.35")
    element(driver, "#intention-place-name").send_keys("pharmacy")
    element(driver, "#intention-radius").send_keys("100")
    element(driver, "#intention-mention").send_keys("Anna")
    element(driver, "#intention-submit").click()
    text_appears(driver, "#intention-list", f"pick up the prescription {marker}")
    words = text_appears(driver, "#intention-list", "within 100 m of pharmacy").text
    assert "when “Anna” is mentioned" in words
    assert len(driver.find_elements(By.CSS_SELECTOR, "#intention-list .intention")) == 2
    _screenshot_is_not_blank(driver, tmp_path / "intentions.png")
    assert console_problems(driver) == []

    # A form mistake is named and nothing is stored.
    element(driver, "#intention-action").send_keys("no trigger at all")
    element(driver, "#intention-submit").click()
    text_appears(driver, "#intention-form-notice", "triggers")
    with browsed.api(namespace) as client:
        assert len(ok(client.get("/v1/intentions"))["intentions"]) == 2
    refused = console_problems(driver)  # the browser logs the 422 answer, and nothing else
    assert len(refused) == 1
    assert "422" in refused[0]

    cancel = f'.intention-cancel[data-intention-id="{stored["id"]}"]'
    element(driver, cancel).click()
    element(driver, "#confirm-cancel").click()  # "keep it": nothing happens
    with browsed.api(namespace) as client:
        assert ok(client.get(f"/v1/intentions/{stored['id']}"))["state"] == "active"
    element(driver, cancel).click()
    element(driver, "#confirm-accept").click()
    text_appears(driver, "#intentions-notice", "Cancelled")
    wait_for(
        driver,
        lambda current: (
            not current.find_elements(
                By.CSS_SELECTOR, f'#intention-list [data-intention-id="{stored["id"]}"]'
            )
        ),
        "the cancelled intention gone from the active list",
    )
    assert len(driver.find_elements(By.CSS_SELECTOR, "#intention-list .intention")) == 1
    with browsed.api(namespace) as client:
        assert ok(client.get(f"/v1/intentions/{stored['id']}"))["state"] == "cancelled"
    Select(element(driver, "#intention-state")).select_by_value("cancelled")
    listed = element(driver, f'#intention-list [data-intention-id="{stored["id"]}"]')
    assert "cancelled" in listed.text
    assert not listed.find_elements(By.CSS_SELECTOR, ".intention-cancel")
    assert console_problems(driver) == []


def test_browser_reminders_fire_from_the_sense_form_and_render_in_the_pending_queue(
    browsed: Browsed,
) -> None:
    namespace = f"remind-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        _remember(client, "A memory, so the namespace is listed for the admin token")
        move = ok(
            client.post(
                "/v1/intentions", json={"action": "ask about the move", "mention": ["Anna"]}
            )
        )
        ok(client.post("/v1/intentions", json={"action": "buy bread", "tags": ["bakery"]}))
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "recollections", namespace=namespace)
    text_appears(driver, "#pending-notice", "Nothing pending")
    element(driver, "#sense-text").send_keys("Anna called this morning")
    element(driver, "#sense-tags").send_keys("bakery")
    element(driver, "#sense-submit").click()
    text_appears(driver, "#sense-notice", "2 reminders fired")
    fired = driver.find_elements(By.CSS_SELECTOR, '#sense-results .reminder[data-kind="reminder"]')
    assert len(fired) == 2

    with browsed.api(namespace) as client:
        queued = ok(client.get("/v1/recollections/pending", params={"drain": "false"}))
    why = {item["reminder"]["action"]: item["reminder"]["why"] for item in queued}
    assert set(why) == {"ask about the move", "buy bread"}
    element(driver, "#pending-peek").click()
    text_appears(driver, "#pending-notice", "2 reminders pending")
    card = element(driver, f'#pending-list .reminder[data-memory-id="{move["id"]}"]')
    assert "ask about the move" in card.text
    assert f"why: {why['ask about the move']}" in card.text
    bread = text_appears(driver, "#pending-list", "buy bread")
    assert f"why: {why['buy bread']}" in bread.text

    card.find_element(By.CSS_SELECTOR, "a.memory-link").click()
    element(driver, "#memory-action-triggers").click()
    shown = element(driver, f'#memory-intention [data-intention-id="{move["id"]}"]').text
    assert "when “Anna” is mentioned" in shown
    assert "done" in shown  # fired once, so done
    assert "1 time" in shown
    assert console_problems(driver) == []


def test_browser_reader_sees_intentions_and_the_graph_but_no_form_or_cancel(
    browsed: Browsed,
) -> None:
    with browsed.api() as client:
        intention = ok(
            client.post(
                "/v1/intentions",
                json={"action": f"read-only visitors look {uuid.uuid4().hex[:6]}", "tags": ["x"]},
            )
        )
        memory = _remember(client, "Ines: Lisbon again next spring.")
        _wait_until_extracted(client, [memory])
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.token, "intentions")
    assert element(driver, "#read-only").text == "read-only"
    element(driver, f'#intention-list [data-intention-id="{intention["id"]}"]')
    assert driver.find_elements(By.CSS_SELECTOR, "#intention-form") == []
    assert driver.find_elements(By.CSS_SELECTOR, ".intention-cancel") == []
    labels = {button.text for button in driver.find_elements(By.TAG_NAME, "button")}
    assert not labels & {"Cancel", "Remember"}

    driver.get(f"{browsed.base_url}/#/graph/Lisbon")
    text_appears(driver, "#entity-name", "Lisbon")
    element(driver, "#graph-view .graph-node.role-centre")
    assert console_problems(driver) == []


def test_browser_graph_and_intentions_show_untrusted_markup_as_text(browsed: Browsed) -> None:
    namespace = f"markup-{uuid.uuid4().hex[:8]}"
    tag = '<img src=x onerror="window.__recalld_pwned = 7">'
    action = "<script>window.__recalld_pwned = 8</script>water the plants"
    with browsed.api(namespace) as client:
        memory = ok(
            client.post("/v1/memories", json={"content": "Tagged by a prankster", "tags": [tag]})
        )["id"]
        ok(client.post("/v1/intentions", json={"action": action, "mention": ["<b>Anna</b>"]}))
        _wait_until_extracted(client, [memory])
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "graph", namespace=namespace)
    text_appears(driver, "#entity-list", tag)
    (link,) = [
        candidate
        for candidate in driver.find_elements(By.CSS_SELECTOR, "#entity-list a.entity-link")
        if candidate.get_attribute("data-entity") == tag
    ]
    link.click()
    text_appears(driver, "#entity-name", tag)
    wait_for(driver, lambda current: tag in _node_names(current), "the node of the tag")
    driver.get(f"{browsed.base_url}/#/intentions")
    text_appears(driver, "#intention-list", action)
    text_appears(driver, "#intention-list", "when “<b>Anna</b>” is mentioned")
    page = driver.find_element(By.ID, "page")
    for name in ("script", "img", "b"):
        assert page.find_elements(By.TAG_NAME, name) == [], name
    assert driver.execute_script("return window.__recalld_pwned") is None
