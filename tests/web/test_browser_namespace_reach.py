"""The memory browser against what its namespace, a double click, a large import, a late
answer, untrusted text or the next user in the tab did to it: a namespace no HTTP header
can name, an export outrun by a switch of namespace, a save clicked twice, an import
refused line by line or cancelled, the late answer of a graph depth or an intention state
changed since, combining marks over the navigation, a bidi override in the address, and
what Sign out left behind. Headless Chromium against a real `recalld serve` (keyword-only,
the rule-based graph extractor); adversarial pass b69.

One server with an admin token (``*:read+write``) and a token for two namespaces, one of
them named in Greek (the CLI, MCP and the library take any letters; a browser's header
carries Latin-1 only). Each test works in a namespace of its own.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from tests.web.browser_support import (
    NAMESPACE_KEY,
    Browsed,
    api_client,
    browsed_server,
    count_is,
    create_token,
    drawn,
    element,
    ok,
    open_page,
    remember,
    text_appears,
    unique_namespace,
    wait_for,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GREEK = "Ωmega"
LATIN = "reachable"


@pytest.fixture(scope="module")
def browsed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browsed]:
    with browsed_server(
        tmp_path_factory.mktemp("browser_namespace_reach"),
        ("mixed", {GREEK: "read+write", LATIN: "read+write"}),
    ) as found:
        yield found


def test_browser_a_namespace_no_header_can_name_is_listed_not_offered(browsed: Browsed) -> None:
    # "Ωmega" (made by the CLI) was offered by the switcher; chosen, every request failed
    # in the browser ("the recalld server did not answer"), and once kept in the tab even
    # GET /v1/session did: the page said it could not ask who you are, with no way out.
    with browsed.api(LATIN) as client:
        remember(client, content="a memory of the namespace the browser can reach")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.token, "browse", namespace=GREEK)
    text_appears(driver, "#browse-list", "the namespace the browser can reach")
    switcher = Select(element(driver, "#namespace"))
    assert switcher.first_selected_option.get_attribute("value") == LATIN
    greek = driver.find_element(By.CSS_SELECTOR, f"#namespace option[value='{GREEK}']")
    assert greek.get_attribute("disabled") is not None
    assert "not reachable from a browser" in greek.text
    assert driver.execute_script("return sessionStorage.getItem(arguments[0])", NAMESPACE_KEY) == (
        LATIN
    )


def test_browser_a_namespace_no_header_can_name_is_reached_as_the_token_default(
    browsed: Browsed,
) -> None:
    # A token whose only namespace is "Ωmega-…": the server's default for it, which a
    # request naming no namespace works in, so the browser names none.
    db = browsed.server.db
    assert isinstance(db, Path)
    namespace = f"{GREEK}-{uuid.uuid4().hex[:6]}"
    token = create_token(db, "greek only", {namespace: "read+write"})
    with api_client(browsed.base_url, token, namespace="") as client:
        remember(client, content="a memory only a Greek namespace holds")
    driver = browsed.driver
    open_page(driver, browsed.base_url, token, "browse")
    text_appears(driver, "#browse-list", "only a Greek namespace holds")
    switcher = Select(element(driver, "#namespace"))
    assert switcher.first_selected_option.get_attribute("value") == namespace


# Holds back the answer of GET /v1/export until the test lets it go (``window.__release()``).
HOLD_BACK_THE_EXPORT = """
const original = window.fetch;
window.fetch = async function (...parameters) {
  const response = await original.apply(this, parameters);
  if (String(parameters[0]).startsWith("/v1/export")) {
    await new Promise((resolve) => { window.__release = resolve; });
  }
  return response;
};
"""


def test_browser_export_is_named_after_the_namespace_it_was_asked_of(browsed: Browsed) -> None:
    # A large export still on its way when the user switched namespace was saved under
    # the name of the namespace switched to, holding the first one's memories.
    asked = unique_namespace("exported")
    other = unique_namespace("switched-to")
    for namespace in (asked, other):
        with browsed.api(namespace) as client:
            remember(client, content=f"a memory of {namespace}")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "transfer", asked)
    driver.execute_script(HOLD_BACK_THE_EXPORT)
    element(driver, "#export-download").click()
    wait_for(driver, lambda current: current.execute_script("return !!window.__release"), "export")
    Select(element(driver, "#namespace")).select_by_value(other)
    drawn(driver, "transfer")
    driver.execute_script("window.__release()")

    def saved(_driver: object) -> list[Path] | None:
        files = [
            path for path in browsed.downloads.iterdir() if asked in path.name or other in path.name
        ]
        return files if files and not any(path.suffix == ".crdownload" for path in files) else None

    files = wait_for(driver, saved, "the export saved")
    assert len(files) == 1
    assert files[0].name.startswith(f"recalld-{asked}-")
    lines = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert {line["namespace"] for line in lines} == {asked}


# Counts the PATCH requests the page sends (``window.__patches``).
COUNT_PATCHES = """
window.__patches = 0;
const original = window.fetch;
window.fetch = function (...parameters) {
  if ((parameters[1] || {}).method === "PATCH") window.__patches += 1;
  return original.apply(this, parameters);
};
window.__alerts = [];
new MutationObserver(() => {
  const said = document.getElementById("alerts").textContent;
  if (said) window.__alerts.push(said);
}).observe(
  document.getElementById("alerts"), { childList: true, subtree: true, characterData: true },
);
"""


def test_browser_edit_saved_twice_is_sent_once_and_said_saved(browsed: Browsed) -> None:
    # The second save of a double click went with the same If-Match and was refused as a
    # change made elsewhere: a screen reader was told "Not saved" after the edit was saved.
    namespace = unique_namespace("save-twice")
    with browsed.api(namespace) as client:
        memory_id = remember(client, content="saved once, clicked twice")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{memory_id}", namespace)
    driver.execute_script(COUNT_PATCHES)
    element(driver, "#memory-edit").click()
    element(driver, "#edit-title").send_keys("a title")
    driver.execute_script(
        "const form = arguments[0]; form.requestSubmit(); form.requestSubmit();",
        element(driver, "#memory-editor"),
    )
    text_appears(driver, "#memory-notice", "Saved (title)")
    text_appears(driver, "#announcements", "Saved (title)")
    assert driver.execute_script("return window.__patches") == 1
    assert driver.execute_script("return window.__alerts") == []


def test_browser_import_lists_the_first_refusals_and_counts_the_rest(
    browsed: Browsed, tmp_path: Path
) -> None:
    # Every refusal of a file of junk lines was a line of the page: a million froze the tab.
    namespace = unique_namespace("junk-import")
    with browsed.api(namespace) as client:
        remember(client, content="already here before the import")
    upload = tmp_path / "junk.jsonl"
    upload.write_text("".join(f"not json {number}\n" for number in range(150)))
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "transfer", namespace)
    element(driver, "#import-file").send_keys(str(upload))
    element(driver, "#import-upload").click()
    assert "150 refused" in text_appears(driver, "#import-notice", "Imported").text
    count_is(driver, "#import-report li", 100)
    assert "line 1:" in driver.find_element(By.CSS_SELECTOR, "#import-report li").text
    unlisted = element(driver, "#import-errors-unlisted").text
    assert unlisted == "The first 100 refusals are listed; 50 more are not."


def test_browser_import_counts_the_refusals_the_server_did_not_list(
    browsed: Browsed, tmp_path: Path
) -> None:
    # Integration read, stop 69: the server lists the first 1000 refusals and counts all in
    # errors_total; the page counted the listed ones, so 1500 junk lines said "1000 refused".
    namespace = unique_namespace("junk-import-total")
    upload = tmp_path / "junk.jsonl"
    upload.write_text("".join(f"not json {number}\n" for number in range(1500)))
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "transfer", namespace)
    element(driver, "#import-file").send_keys(str(upload))
    element(driver, "#import-upload").click()
    assert "1500 refused" in text_appears(driver, "#import-notice", "Imported").text
    count_is(driver, "#import-report li", 100)
    unlisted = element(driver, "#import-errors-unlisted").text
    assert unlisted == "The first 100 refusals are listed; 1400 more are not."


# Holds back the first request whose address holds ``arguments[0]`` until the test lets it
# go (``window.__releaseLate()``); ``window.__late``: "waiting", then "answered" once the
# page has had the answer.
HOLD_BACK_ONE_REQUEST = """
window.__late = null;
const held = arguments[0];
const original = window.fetch;
window.fetch = async function (...parameters) {
  if (!String(parameters[0]).includes(held) || window.__late !== null) {
    return original.apply(this, parameters);
  }
  window.__late = "waiting";
  await new Promise((resolve) => { window.__releaseLate = resolve; });
  const response = await original.apply(this, parameters);
  setTimeout(() => { window.__late = "answered"; }, 300);
  return response;
};
"""


def _release_late(driver: Chrome) -> None:
    """Let the request held back go, and wait until the page has had its answer."""
    driver.execute_script("window.__releaseLate()")
    wait_for(
        driver,
        lambda current: current.execute_script("return window.__late") == "answered",
        "the late answer",
    )


def test_browser_graph_drops_the_late_drawing_of_a_depth_changed_since(browsed: Browsed) -> None:
    # 3 hops (slow), then 1: the 3-hop answer, arriving last, was drawn under "1 hop".
    namespace = unique_namespace("graph-depth")
    with browsed.api(namespace) as client:
        memory_id = remember(client, content="Kate: my sister Anna moved to Porto.")
        wait_for(
            browsed.driver,
            lambda _driver: ok(client.get("/v1/graph/mentions", params={"memory": memory_id}))[
                "entities"
            ],
            "the entities extracted",
        )
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "graph/Anna", namespace)
    element(driver, "#graph-view")
    driver.execute_script(HOLD_BACK_ONE_REQUEST, "depth=3")
    depth = Select(element(driver, "#graph-depth"))
    depth.select_by_value("3")
    wait_for(driver, lambda current: current.execute_script("return window.__late"), "3 hops")
    driver.execute_script("document.getElementById('graph-view').dataset.stale = 'yes'")
    depth.select_by_value("1")
    wait_for(
        driver,
        lambda current: current.execute_script(
            "const view = document.getElementById('graph-view');return view && !view.dataset.stale;"
        ),
        "1 hop drawn",
    )
    driver.execute_script("document.getElementById('graph-view').dataset.depth = '1'")
    _release_late(driver)
    assert driver.execute_script("return document.getElementById('graph-view').dataset.depth") == (
        "1"
    )


def test_browser_intentions_drop_the_late_list_of_a_state_left_since(browsed: Browsed) -> None:
    # "all" (slow), then "active": the late "all" list was shown under "active".
    namespace = unique_namespace("intentions-state")
    with browsed.api(namespace) as client:
        created = ok(
            client.post("/v1/intentions", json={"action": "call the plumber", "tags": ["house"]})
        )
        ok(client.delete(f"/v1/intentions/{created['id']}"))
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "intentions", namespace)
    text_appears(driver, "#intentions-notice", "No active intentions")
    driver.execute_script(HOLD_BACK_ONE_REQUEST, "state=all")
    state = Select(element(driver, "#intention-state"))
    state.select_by_value("all")
    wait_for(driver, lambda current: current.execute_script("return window.__late"), "all")
    state.select_by_value("done")
    text_appears(driver, "#intentions-notice", "No done intentions")
    _release_late(driver)
    assert element(driver, "#intentions-notice").text == "No done intentions."
    assert not driver.find_elements(By.CSS_SELECTOR, "#intention-list .card")


def test_browser_a_flood_of_combining_marks_stays_off_the_navigation(browsed: Browsed) -> None:
    # 499 combining marks on one letter (a title the API takes) drew up over the top bar:
    # the navigation, the namespace menu and Sign out.
    namespace = unique_namespace("marks")
    marks = "".join(chr(0x0301 + number % 10) for number in range(499))
    with browsed.api(namespace) as client:
        flooded = remember(client, content="a flooded title", title=f"Z{marks}")
        plain = remember(client, content="a plain title", title="Z")
    driver = browsed.driver
    bars = []
    for memory_id in (plain, flooded):
        open_page(driver, browsed.base_url, browsed.admin, f"memory/{memory_id}", namespace)
        drawn(driver, "memory")
        bars.append(element(driver, ".topbar").screenshot_as_png)
    assert bars[0] == bars[1]


# Where the page's own words after the name in ``arguments[0]`` (a message holding one
# isolated name) begin, and where the name ends.
WORDS_AFTER_THE_NAME = """
const notice = document.querySelector(arguments[0]);
const name = notice.querySelector("bdi");
const range = document.createRange();
range.selectNodeContents(name.nextSibling);
return [name.getBoundingClientRect().right, range.getBoundingClientRect().left,
        name.nextSibling.textContent];
"""


def test_browser_a_bidi_override_in_the_address_stays_inside_its_memory_id(
    browsed: Browsed,
) -> None:
    # A link anyone can write (#/memory/%E2%80%AE…) put a right-to-left override into the
    # page's "No memory … in namespace …" sentence, mirroring the page's own words.
    namespace = unique_namespace("bidi-address")
    with browsed.api(namespace) as client:
        remember(client, content="A memory, so the browser offers the namespace")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "memory/%E2%80%AEtoken expired", namespace)
    text_appears(driver, "#memory-notice", "namespace")
    name_right, words_left, words = driver.execute_script(WORDS_AFTER_THE_NAME, "#memory-notice")
    assert words == f" in namespace {namespace}."
    assert words_left >= name_right - 1


def test_browser_an_upload_cancelled_before_it_is_sent_imports_nothing(
    browsed: Browsed, tmp_path: Path
) -> None:
    # A large file chosen by mistake could not be stopped: the page waited for it all.
    namespace = unique_namespace("cancelled-import")
    with browsed.api(namespace) as client:
        remember(client, content="already here before the import")
    upload = tmp_path / "large.jsonl"
    line = json.dumps({"content": "an imported memory " + "x" * 900})
    upload.write_text("\n".join(line.replace("memory", f"memory {n}") for n in range(2000)))
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "transfer", namespace)
    element(driver, "#import-file").send_keys(str(upload))
    driver.set_network_conditions(
        offline=False, latency=5, download_throughput=-1, upload_throughput=64 * 1024
    )
    try:
        element(driver, "#import-upload").click()
        element(driver, "#import-cancel").click()
        notice = text_appears(driver, "#import-notice", "cancelled").text
    finally:
        driver.set_network_conditions(
            offline=False, latency=0, download_throughput=-1, upload_throughput=-1
        )
    assert notice == "cancelled before the whole file was sent: nothing was imported"
    assert not element(driver, "#import-upload").get_attribute("disabled")
    assert not driver.find_element(By.ID, "import-cancel").is_displayed()
    with browsed.api(namespace) as client:
        assert ok(client.get("/v1/memories"))["memories"][0]["content"] == (
            "already here before the import"
        )
        assert len(ok(client.get("/v1/memories"))["memories"]) == 1


def test_browser_sign_out_leaves_nothing_of_the_last_user_to_the_next(browsed: Browsed) -> None:
    # The last question and its answer on "Why not?" (and Search's query, asked again)
    # were shown to whoever signed in next in the same tab.
    with browsed.api(LATIN) as client:
        memory_id = remember(client, content="the surprise party is on Friday")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"explain/{memory_id}", LATIN)
    element(driver, "#explain-query").send_keys("surprise party")
    element(driver, "#explain-submit").click()
    element(driver, "#explain-result")
    element(driver, "#sign-out").click()
    assert text_appears(driver, "#login-notice", "Signed out.").text == "Signed out."
    element(driver, "#token").send_keys(browsed.token)
    element(driver, "#sign-in").click()
    drawn(driver, "search")  # the first page, not the last user's (the id was in the address)
    assert memory_id not in driver.current_url
    assert memory_id not in driver.page_source
    driver.execute_script("window.location.hash = '#/explain'")
    drawn(driver, "explain")
    assert element(driver, "#explain-query").get_attribute("value") == ""
    assert not driver.find_elements(By.ID, "explain-result")


def test_browser_a_long_namespace_keeps_the_top_bar_inside_320_pixels(browsed: Browsed) -> None:
    # A mem0-style namespace sized the menu past a phone's screen: the page scrolled
    # sideways and Sign out was off it.
    db = browsed.server.db
    assert isinstance(db, Path)
    namespace = f"user:alice.{uuid.uuid4().hex[:6]}@example.com/agent:assistant-production"
    token = create_token(db, "long namespace", {namespace: "read+write", LATIN: "read"})
    driver = browsed.driver
    driver.set_window_size(320, 700)
    try:
        open_page(driver, browsed.base_url, token, "search", namespace)
        drawn(driver, "search")
        widths = driver.execute_script(
            "const root = document.documentElement; return [root.scrollWidth, root.clientWidth,"
            " document.getElementById('sign-out').getBoundingClientRect().right]"
        )
    finally:
        driver.set_window_size(1280, 900)
    scrolled, shown, sign_out_right = widths
    assert scrolled <= shown
    assert sign_out_right <= shown


def test_browser_why_not_asks_again_when_one_comes_back_to_it(browsed: Browsed) -> None:
    # The last answer was shown as it was: a memory forgotten since was still "Returned".
    namespace = unique_namespace("why-again")
    with browsed.api(namespace) as client:
        memory_id = remember(client, content="the spare key is under the blue flowerpot")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"explain/{memory_id}", namespace)
    element(driver, "#explain-query").send_keys("spare key")
    element(driver, "#explain-submit").click()
    assert element(driver, "#explain-stage").text == "Returned"
    with browsed.api(namespace) as client:
        ok(client.delete(f"/v1/memories/{memory_id}"))
    driver.get(f"{browsed.base_url}/#/search")
    drawn(driver, "search")
    driver.get(f"{browsed.base_url}/#/explain")
    notice = text_appears(driver, "#explain-notice", memory_id).text
    assert "is not visible" in notice
    assert not driver.find_elements(By.ID, "explain-result")
