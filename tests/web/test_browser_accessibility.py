"""The memory browser for keyboard-only and screen-reader users (WCAG 2.2 AA as the
yardstick): names on every control, messages in live regions, the forget dialog named and
giving the focus back, the focus kept where a keyboard user works, reflow at 320 px and the
contrast of text. Headless Chromium against a real `recalld serve` (keyword-only)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from functools import partial

import pytest
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.web.browser_support import (
    Browsed,
    browsed_server,
    drawn,
    element,
    ok,
    open_page,
    remember,
    text_appears,
    wait_for,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = ("search", "explain", "browse", "core", "graph", "recollections", "intentions", "status")
PAGES_WITH_FORMS = (*PAGES, "transfer")
CONTROLS = "main input, main select, main textarea, main button, header select, header button"

# The contrast of each visible text's colour with the first opaque background behind it.
LOW_CONTRAST_SCRIPT = """
function channel(value) {
  const c = value / 255;
  return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}
function luminance(rgb) {
  return 0.2126 * channel(rgb[0]) + 0.7152 * channel(rgb[1]) + 0.0722 * channel(rgb[2]);
}
function parse(colour) {
  const parts = colour.match(/[\\d.]+/g).map(Number);
  return { rgb: parts.slice(0, 3), alpha: parts.length > 3 ? parts[3] : 1 };
}
function background(node) {
  for (let current = node; current; current = current.parentElement) {
    const colour = parse(getComputedStyle(current).backgroundColor);
    if (colour.alpha === 1) return colour.rgb;
  }
  return [255, 255, 255];
}
const problems = [];
for (const node of document.querySelectorAll("main *, header *")) {
  const own = [...node.childNodes]
    .some((child) => child.nodeType === 3 && child.textContent.trim());
  if (!own || node.closest("svg") || !node.getClientRects().length) continue;
  const style = getComputedStyle(node);
  if (style.visibility === "hidden" || Number(style.opacity) < 1) continue;
  if (node.closest("button:disabled")) continue;
  const front = luminance(parse(style.color).rgb);
  const back = luminance(background(node));
  const ratio = (Math.max(front, back) + 0.05) / (Math.min(front, back) + 0.05);
  const size = parseFloat(style.fontSize);
  const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
  const name = `${node.tagName}.${node.className}`;
  if (ratio < (large ? 3 : 4.5)) problems.push(`${name}: ${ratio.toFixed(2)}`);
}
return problems;
"""

# Focusable elements inside an image role, which hides them from assistive technology.
HIDDEN_TAB_STOPS_SCRIPT = """
const inside = '[role="img"] [tabindex], [role="img"] a, [role="img"] button';
return [...document.querySelectorAll(inside)].map((node) => node.outerHTML.slice(0, 80));
"""


# Buttons, menus, fields and the header's links smaller than 24 by 24 px (WCAG 2.2 target
# size; links inside sentences are exempt).
SMALL_TARGETS_SCRIPT = """
const targets = document.querySelectorAll("button, select, input, header a");
return [...targets].filter((node) => node.getClientRects().length).map((node) => {
  const box = node.getBoundingClientRect();
  return [node.id || node.className || node.tagName, Math.round(box.width), Math.round(box.height)];
}).filter(([, width, height]) => width < 24 || height < 24);
"""


@pytest.fixture(scope="module")
def browsed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browsed]:
    with browsed_server(
        tmp_path_factory.mktemp("browser_accessibility"),
        ("reader", {"default": "read"}),
        RECALLD_EMBEDDER="none",
    ) as found:
        yield found


def _active_id(driver: Chrome) -> str:
    return str(
        driver.execute_script("return document.activeElement.id || document.activeElement.tagName")
    )


def _drawn(driver: Chrome, page: str) -> None:
    """Wait until ``page`` is drawn, and a memory's map (drawn after it) with its neighbours."""
    drawn(driver, page)
    if page.startswith("memory/"):
        element(driver, "#map-neighbours a")


def _placed_memories(browsed: Browsed) -> str:
    with browsed.api() as client:
        place = {"lat": -37.81, "lon": 144.96, "name": "harbour"}
        remember(client, content="Coffee at the harbour kiosk", place=place)
        return remember(client, content="Lunch at the harbour", title="Harbour", place=place)


def test_browser_every_control_has_an_accessible_name(browsed: Browsed) -> None:
    driver = browsed.driver
    memory_id = _placed_memories(browsed)
    for page in (*PAGES_WITH_FORMS, f"memory/{memory_id}"):
        open_page(driver, browsed.base_url, browsed.admin, page)
        _drawn(driver, page)
        # A placeholder is no label: it is gone once the user types (WCAG 3.3.2).
        unnamed = [
            control.get_attribute("id") or control.tag_name
            for control in driver.find_elements(By.CSS_SELECTOR, CONTROLS)
            if control.is_displayed()
            and control.accessible_name.strip()
            in ("", (control.get_attribute("placeholder") or "").strip())
        ]
        assert unnamed == [], page
        assert driver.execute_script(HIDDEN_TAB_STOPS_SCRIPT) == [], page


def test_browser_messages_are_live_regions_and_a_refusal_marks_its_field(
    browsed: Browsed,
) -> None:
    driver = browsed.driver
    with browsed.api() as client:
        memory_id = remember(client, content="The lantern is in the shed")
    open_page(driver, browsed.base_url, browsed.admin, "search")
    element(driver, "#search-query").send_keys("lantern", Keys.ENTER)
    # The page's live regions are there, empty, from the start (a region that appears
    # with its message is not reliably read), and say each message.
    polite = driver.find_element(By.ID, "announcements")
    assertive = driver.find_element(By.ID, "alerts")
    assert (polite.get_attribute("role"), polite.get_attribute("aria-live")) == ("status", "polite")
    assert (assertive.get_attribute("role"), assertive.get_attribute("aria-live")) == (
        "alert",
        "assertive",
    )
    text_appears(driver, "#page-search .notice", "1 hit")
    wait_for(driver, lambda _: polite.get_attribute("textContent") == "1 hit", "1 hit said")
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{memory_id}")
    assertive = driver.find_element(By.ID, "alerts")  # of the page loaded now
    element(driver, "#memory-edit").click()
    salience = element(driver, "#edit-salience")
    salience.clear()
    salience.send_keys("0.5")
    meta = element(driver, "#edit-meta")
    meta.clear()
    meta.send_keys("[1, 2]")
    element(driver, "#edit-save").click()
    text_appears(driver, "#edit-problem", "meta: must be a JSON object")
    wait_for(
        driver,
        lambda _: assertive.get_attribute("textContent") == "meta: must be a JSON object",
        "the refusal said at once",
    )
    assert element(driver, "#edit-meta").get_attribute("aria-invalid") == "true"
    assert element(driver, "#edit-meta").get_attribute("aria-describedby") == "edit-problem"
    assert _active_id(driver) == "edit-meta"
    # A refusal from the server marks the field it names the same way.
    meta.clear()
    meta.send_keys("{}")
    at = element(driver, "#edit-at")
    at.send_keys("yesterday")
    element(driver, "#edit-save").click()
    text_appears(driver, "#edit-problem", "at:")
    wait_for(driver, lambda _: "at:" in str(assertive.get_attribute("textContent")), "said")
    assert element(driver, "#edit-at").get_attribute("aria-invalid") == "true"
    assert element(driver, "#edit-meta").get_attribute("aria-invalid") is None
    assert _active_id(driver) == "edit-at"


def test_browser_editor_and_forget_dialog_give_the_focus_back(browsed: Browsed) -> None:
    driver = browsed.driver
    with browsed.api() as client:
        memory_id = remember(client, content="The spare key is under the pot")
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{memory_id}")
    element(driver, "#memory-edit").click()
    element(driver, "#edit-cancel").send_keys(Keys.ENTER)
    wait_for(driver, lambda current: _active_id(current) == "memory-edit", "focus on Edit")
    element(driver, "#memory-edit").send_keys(Keys.ENTER)
    title = element(driver, "#edit-title")
    assert _active_id(driver) == "edit-title"
    title.send_keys("Key", Keys.ENTER)  # Enter in a field submits the form
    text_appears(driver, "#memory-notice", "Saved (title)")
    wait_for(driver, lambda current: _active_id(current) == "memory-edit", "focus on Edit")
    # The confirmation is a named, described modal dialog; Escape backs out and the focus
    # goes back to Forget.
    element(driver, "#memory-forget").send_keys(Keys.ENTER)
    dialog = element(driver, "#confirm-dialog")
    assert dialog.aria_role == "dialog"
    assert dialog.accessible_name == "Forget this memory?"
    described = driver.find_element(By.ID, dialog.get_attribute("aria-describedby") or "")
    assert "cannot be recovered" in described.text
    assert driver.execute_script("return document.activeElement.closest('dialog') !== null")
    driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_for(driver, lambda current: _active_id(current) == "memory-forget", "focus on Forget")
    assert driver.find_elements(By.CSS_SELECTOR, "#confirm-dialog") == []
    with browsed.api() as client:
        assert ok(client.get(f"/v1/memories/{memory_id}"))["title"] == "Key"


def test_browser_skip_link_and_a_new_page_put_the_focus_in_the_page(browsed: Browsed) -> None:
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "status")
    element(driver, "#page-status h1")
    driver.execute_script("document.activeElement.blur()")
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    assert _active_id(driver) == "skip-link"
    assert driver.switch_to.active_element.is_displayed()
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    assert driver.execute_script("return document.activeElement.closest('main') !== null")
    assert driver.current_url.endswith("#/status")
    # Following a menu link lands in the new page, on its heading.
    link = driver.find_element(By.CSS_SELECTOR, '#nav a[href="#/browse"]')
    link.send_keys(Keys.ENTER)
    wait_for(
        driver,
        lambda current: current.execute_script(
            "return document.activeElement.tagName === 'H1'"
            " && document.activeElement.closest('#page-browse') !== null"
        ),
        "focus on the Browse heading",
    )


def test_browser_pages_reflow_at_320_pixels_and_text_meets_contrast(browsed: Browsed) -> None:
    driver = browsed.driver
    memory_id = _placed_memories(browsed)
    with browsed.api() as client:
        ok(client.post("/v1/core/memory", json={"action": "add", "content": "boiler is old"}))
    pages = (*PAGES_WITH_FORMS, f"memory/{memory_id}")
    for page in pages:
        open_page(driver, browsed.base_url, browsed.admin, page)
        _drawn(driver, page)
        assert driver.execute_script(LOW_CONTRAST_SCRIPT) == [], page
        assert driver.execute_script(SMALL_TARGETS_SCRIPT) == [], page
    width = driver.get_window_size()["width"]
    driver.set_window_size(320, 900)
    try:
        for page in pages:
            open_page(driver, browsed.base_url, browsed.admin, page)
            _drawn(driver, page)
            sizes = driver.execute_script(
                "const root = document.documentElement; return [root.scrollWidth, root.clientWidth]"
            )
            assert sizes[0] <= sizes[1], (page, sizes)
    finally:
        driver.set_window_size(width, 900)


def test_browser_sign_in_refusal_describes_the_field_and_times_are_machine_readable(
    browsed: Browsed,
) -> None:
    driver = browsed.driver
    driver.get(f"{browsed.base_url}/ui/favicon.svg")
    driver.execute_script("sessionStorage.clear()")
    driver.get(f"{browsed.base_url}/#/browse")
    element(driver, "#token").send_keys("rcd_0000000000000000_not-a-real-token-at-all")
    element(driver, "#sign-in").click()
    text_appears(driver, "#page-login .notice", "not accepted")
    # The refused form comes back with the focus in the field, which the message describes.
    field = element(driver, "#token")
    assert _active_id(driver) == "token"
    described = driver.find_element(By.ID, field.get_attribute("aria-describedby") or "")
    assert "not accepted" in described.text
    with browsed.api() as client:
        memory_id = remember(client, content="Boarding at Piraeus", at="2026-10-25T08:10:00+03:00")
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{memory_id}")
    at = element(driver, "#memory-at")
    assert at.tag_name == "time"
    assert at.get_attribute("datetime") == "2026-10-25T08:10:00+03:00"
    assert at.text == "2026-10-25 08:10:00 UTC+03:00"
    open_page(driver, browsed.base_url, browsed.admin, "browse")
    badge = element(driver, f'#browse-list [data-memory-id="{memory_id}"] .badge.when')
    assert badge.tag_name == "time"
    assert badge.get_attribute("datetime") == "2026-10-25T08:10:00+03:00"


def test_browser_core_memory_entry_buttons_say_their_entry_and_keep_the_focus(
    browsed: Browsed,
) -> None:
    with browsed.api() as client:
        for entry in ("likes green tea", "works nights"):
            ok(client.post("/v1/core/user", json={"action": "add", "content": entry}))
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "core")
    element(driver, "#entries-user .entry-controls")
    names = [
        button.accessible_name
        for button in driver.find_elements(By.CSS_SELECTOR, "#entries-user button")
    ]
    assert names[:4] == [
        "edit “likes green tea”",
        "remove “likes green tea”",
        "edit “works nights”",
        "remove “works nights”",
    ]
    # Edit an entry from the keyboard: the field is named, Keep change gives the focus
    # back to that entry's edit button.
    driver.find_elements(By.CSS_SELECTOR, "#entries-user button")[0].send_keys(Keys.ENTER)
    field = element(driver, "#entries-user input.entry-edit")
    assert field.accessible_name == "entry"
    field.send_keys(" a lot")
    driver.find_element(By.XPATH, "//button[.='Keep change']").send_keys(Keys.ENTER)
    wait_for(
        driver,
        lambda current: (
            current.switch_to.active_element.accessible_name == "edit “likes green tea”"
        ),
        "focus on the entry's edit",
    )
    undo = element(driver, "#batch-user button")
    assert undo.accessible_name == "undo patch “likes green tea”"
    undo.send_keys(Keys.ENTER)
    wait_for(driver, lambda current: _active_id(current) == "add-user", "focus on the new entry")


def test_browser_timeline_counts_are_readable_without_a_mouse(browsed: Browsed) -> None:
    namespace = f"timeline-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        for number in range(3):
            remember(client, content=f"timeline sample {number}")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "status", namespace=namespace)
    table = element(driver, "#timeline-table summary")
    table.send_keys(Keys.ENTER)  # unfold it from the keyboard
    rows = wait_for(
        driver,
        lambda current: current.find_elements(By.CSS_SELECTOR, "#timeline-table tbody tr") or None,
        "the table's rows",
    )
    assert len(rows) == 30
    headers = driver.find_elements(By.CSS_SELECTOR, "#timeline-table thead th")
    assert [header.text for header in headers] == ["day", "memories"]
    last = rows[-1].find_elements(By.CSS_SELECTOR, "th, td")
    assert last[0].find_element(By.TAG_NAME, "time").get_attribute("datetime")
    assert last[1].text == "3"
    assert sum(int(row.find_element(By.TAG_NAME, "td").text) for row in rows) == 3


def test_browser_switching_namespace_keeps_the_focus_in_its_menu(browsed: Browsed) -> None:
    # Arrow keys change a menu at once: a switch that took the focus to the page drawn again
    # (its heading, Search's query) would leave the keyboard user out of the menu after one
    # step (WCAG 3.2.2, on input).
    first, second = (f"switch-{uuid.uuid4().hex[:8]}" for _ in range(2))
    kind = f"kind{uuid.uuid4().hex[:6]}"
    with browsed.api(first) as client:
        remember(client, content="alpha note")
    with browsed.api(second) as client:
        remember(client, content="beta note", kind=kind)
    driver = browsed.driver
    switch = (
        "const menu = document.getElementById('namespace'); menu.focus();"
        "window.focusedSince = [];"
        "document.addEventListener('focusin', (event) => window.focusedSince.push("
        "  event.target.id || event.target.tagName));"
        "menu.value = arguments[0]; menu.dispatchEvent(new Event('change', { bubbles: true }));"
    )
    open_page(driver, browsed.base_url, browsed.admin, "browse", namespace=first)
    text_appears(driver, "#browse-list", "alpha note")
    driver.execute_script(switch, second)
    text_appears(driver, "#browse-list", "beta note")  # drawn: the page's render is over
    assert _active_id(driver) == "namespace"
    assert set(driver.execute_script("return window.focusedSince")) <= {"namespace"}
    open_page(driver, browsed.base_url, browsed.admin, "search", namespace=first)
    wait_for(driver, lambda _: _active_id(driver) == "search-query", "focus on the query")
    driver.execute_script(switch, second)
    wait_for(  # the kinds of the new namespace's stats: the page's render is over
        driver,
        lambda current: current.find_elements(By.CSS_SELECTOR, f'#known-kinds [value="{kind}"]'),
        "the new namespace's kinds",
    )
    assert _active_id(driver) == "namespace"
    assert set(driver.execute_script("return window.focusedSince")) <= {"namespace"}


def _focus_in_row(driver: Chrome, rows: str, index: int) -> bool:
    """Whether the focus is on a link in the ``index``-th element matching ``rows``."""
    return bool(
        driver.execute_script(
            "const row = document.querySelectorAll(arguments[0])[arguments[1]];"
            "return row !== undefined && row.contains(document.activeElement)"
            " && document.activeElement.tagName === 'A'",
            rows,
            index,
        )
    )


def test_browser_load_more_puts_the_focus_on_the_first_item_loaded(browsed: Browsed) -> None:
    # "Load more" disables itself while it loads (and hides when nothing is left): the focus
    # dropped to the page's start, and a keyboard user tabbed through every item again.
    namespace = f"more-{uuid.uuid4().hex[:8]}"
    lines = [
        json.dumps({"type": "entity", "name": f"Entity {number:02d}", "entityType": "thing"})
        for number in range(55)
    ]
    with browsed.api(namespace) as client:
        for number in range(30):
            remember(client, content=f"memory number {number:02d}")
        report = ok(
            client.post("/v1/import", params={"format": "mcp-memory"}, content="\n".join(lines))
        )
    assert report["errors"] == []
    driver = browsed.driver
    for page, more, rows, first_new in (
        ("browse", "#browse-more", "#browse-list > li", 25),
        ("graph", "#entity-more", "#entity-list > li", 50),
    ):
        open_page(driver, browsed.base_url, browsed.admin, page, namespace=namespace)
        drawn(driver, page)
        element(driver, more).send_keys(Keys.ENTER)
        wait_for(
            driver,
            partial(_focus_in_row, rows=rows, index=first_new),
            f"the focus on the first item loaded by {more}",
        )


def test_browser_a_button_busy_with_its_request_keeps_the_focus(browsed: Browsed) -> None:
    # A button disables itself while its request runs; a focused button that is disabled
    # loses the focus to the document, and the keyboard user was sent to the page's start.
    namespace = f"busy-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        remember(client, content="A memory, so the namespace is listed")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "recollections", namespace=namespace)
    drawn(driver, "recollections")
    element(driver, "#pending-peek").send_keys(Keys.ENTER)
    text_appears(driver, "#pending-notice", "Nothing pending")
    wait_for(driver, lambda current: _active_id(current) == "pending-peek", "focus on Peek")
    element(driver, "#sense-text").send_keys("nothing to see")
    element(driver, "#sense-submit").send_keys(Keys.ENTER)
    text_appears(driver, "#sense-notice", "Nothing fired")
    wait_for(driver, lambda current: _active_id(current) == "sense-submit", "focus on Sense")
    open_page(driver, browsed.base_url, browsed.admin, "intentions", namespace=namespace)
    drawn(driver, "intentions")
    element(driver, "#intention-action").send_keys("water the plants")
    element(driver, "#intention-mention").send_keys("Anna")
    element(driver, "#intention-submit").send_keys(Keys.ENTER)
    text_appears(driver, "#intention-list", "water the plants")
    wait_for(driver, lambda current: _active_id(current) == "intention-submit", "focus on Add")


def test_browser_core_apply_and_discard_leave_the_focus_in_the_card(browsed: Browsed) -> None:
    # Both disable themselves once the batch is gone: the focus went to the document.
    namespace = f"core-{uuid.uuid4().hex[:8]}"
    with browsed.api(namespace) as client:
        remember(client, content="A memory, so the namespace is listed")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "core", namespace=namespace)
    drawn(driver, "core")
    element(driver, "#add-user").send_keys("prefers tea", Keys.ENTER)
    element(driver, "#discard-user").send_keys(Keys.ENTER)
    wait_for(driver, lambda current: _active_id(current) == "add-user", "focus after Discard")
    element(driver, "#add-user").send_keys("prefers coffee", Keys.ENTER)
    element(driver, "#apply-user").send_keys(Keys.ENTER)
    text_appears(driver, "#entries-user", "prefers coffee")
    wait_for(driver, lambda current: _active_id(current) == "add-user", "focus after Apply")
