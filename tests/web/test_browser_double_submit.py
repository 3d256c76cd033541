"""The memory browser against double submits and late answers: one request per action
(a double click on "Remember", "Apply batch", "Drain", "Sense"), a button that comes back
after a failed request, and the answer of a search or a "Why not?" that a newer one
replaced dropped. Headless Chromium against a real `recalld serve` (keyword-only).

Split from test_browser_hardening.py (adversarial pass d61's tests), which has the same
server: an admin token (``*:read+write``) and a token for one namespace only. Each test
works in a namespace of its own.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By

from tests.web.browser_support import (
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


@pytest.fixture(scope="module")
def browsed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browsed]:
    with browsed_server(
        tmp_path_factory.mktemp("browser_double_submit"), ("scoped", {"scoped": "read+write"})
    ) as found:
        yield found


# -- double submits: one request per action ----------------------------------------


def test_browser_intention_form_submitted_twice_creates_one_intention(browsed: Browsed) -> None:
    # Intentions are not deduplicated (two alike may be meant): a double submit (a double
    # click on "Remember", Enter pressed twice) made two, and the reminder fired twice
    # (adversarial pass d61).
    namespace = unique_namespace("intend-twice")
    with browsed.api(namespace) as client:
        remember(client, content="A memory, so the browser offers the namespace")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "intentions", namespace=namespace)
    element(driver, "#intention-action").send_keys("water the ferns")
    element(driver, "#intention-at").send_keys("tomorrow at 9")
    driver.execute_script(
        "const form = arguments[0]; form.requestSubmit(); form.requestSubmit();",
        element(driver, "#intention-form"),
    )
    text_appears(driver, "#intention-form-notice", "Remembered")
    count_is(driver, "#intention-list article[data-intention-id]", 1)
    settle(driver)
    with browsed.api(namespace) as client:
        assert len(ok(client.get("/v1/intentions"))["intentions"]) == 1
    # The form works again once the answer is in.
    element(driver, "#intention-action").send_keys("feed the cat")
    element(driver, "#intention-at").send_keys("tomorrow at 10")
    element(driver, "#intention-submit").click()
    count_is(driver, "#intention-list article[data-intention-id]", 2)


def test_browser_intention_form_comes_back_after_a_request_that_failed(
    browsed: Browsed,
) -> None:
    # The double-submit guard must not outlive a request that fails (the network, not the
    # server): the button is enabled again and Enter sends the form again (review of d61).
    namespace = unique_namespace("intend-failed")
    with browsed.api(namespace) as client:
        remember(client, content="A memory, so the browser offers the namespace")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "intentions", namespace=namespace)
    driver.execute_script(
        """
        const original = window.fetch;
        window.__failed = 0;
        window.fetch = function (...parameters) {
          if (String(parameters[0]).includes("/v1/intentions") && window.__failed === 0
              && (parameters[1] || {}).method === "POST") {
            window.__failed = 1;
            return Promise.reject(new TypeError("Failed to fetch"));
          }
          return original.apply(this, parameters);
        };
        """
    )
    element(driver, "#intention-action").send_keys("water the ferns")
    element(driver, "#intention-at").send_keys("tomorrow at 9")
    element(driver, "#intention-submit").click()
    text_appears(driver, "#intention-form-notice", "the recalld server did not answer")
    assert driver.execute_script("return window.__failed") == 1
    wait_for(
        driver,
        lambda current: element(current, "#intention-submit").is_enabled(),
        "the Remember button enabled again",
    )
    element(driver, "#intention-at").send_keys("\n")  # Enter: the form's implicit submit
    text_appears(driver, "#intention-form-notice", "Remembered")
    count_is(driver, "#intention-list article[data-intention-id]", 1)
    with browsed.api(namespace) as client:
        assert len(ok(client.get("/v1/intentions"))["intentions"]) == 1


def test_browser_core_batch_applied_twice_is_sent_once(browsed: Browsed) -> None:
    # "Apply batch" clicked twice sent the batch twice: the second was refused (its change
    # was already made) and the page showed that error over the first one's success
    # (adversarial pass d61).
    namespace = unique_namespace("core-twice")
    with browsed.api(namespace) as client:
        remember(client, content="A memory, so the browser offers the namespace")
        ok(
            client.post(
                "/v1/core/memory",
                json={"action": "add", "content": "Agent note: check the boiler daily"},
            )
        )
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "core", namespace)
    entry = text_appears(driver, "#entries-memory .core-entry", "boiler")
    entry.find_element(By.XPATH, ".//button[.='remove']").click()
    driver.execute_script(
        "const apply = arguments[0]; apply.click(); apply.click();",
        element(driver, "#apply-memory"),
    )
    wait_for(
        driver,
        lambda current: "boiler" not in element(current, "#entries-memory").text,
        "the entry removed",
    )
    settle(driver)
    notice = element(driver, "#core-notice-memory")
    assert "success" in (notice.get_attribute("class") or ""), notice.text


# Holds back the first request whose address holds arguments[0] (before it is sent) until
# the test lets it go (``window.__releaseHeld()``); ``window.__held`` is then "waiting", and
# "answered" once its answer is handed to the page. ``window.__sent`` counts the requests
# to that address, held or not.
HOLD_BACK_THE_FIRST = """
const fragment = arguments[0];
window.__held = null;
window.__sent = 0;
const original = window.fetch;
window.fetch = async function (...parameters) {
  if (!String(parameters[0]).includes(fragment)) return original.apply(this, parameters);
  window.__sent += 1;
  if (window.__held !== null) return original.apply(this, parameters);
  window.__held = "waiting";
  await new Promise((resolve) => { window.__releaseHeld = resolve; });
  const response = await original.apply(this, parameters);
  window.__held = "answered";
  return response;
};
"""


def _release_the_held_request(driver: Chrome) -> None:
    wait_for(
        driver,
        lambda current: current.execute_script("return window.__held") == "waiting",
        "the held request",
    )
    settle(driver)  # a second request, if the page sends one, is answered meanwhile
    driver.execute_script("window.__releaseHeld()")
    _held_request_answered(driver)


def _held_request_answered(driver: Chrome) -> None:
    """Wait until the held request's answer is in the page's hands, then let it act on it."""
    wait_for(
        driver,
        lambda current: current.execute_script("return window.__held") == "answered",
        "the held request's answer",
    )
    settle(driver)


def test_browser_drain_clicked_twice_keeps_what_it_delivered_on_screen(browsed: Browsed) -> None:
    # Each click on "Drain" sent a drain: one took the queue, the other got nothing, and
    # whichever answer came last was shown, so the recollections delivered could be
    # replaced by "Nothing pending" — delivered to no one (adversarial pass d61).
    namespace = unique_namespace("drain-twice")
    cue = {
        "text": "Espresso at the marble counter of the station café",
        "lat": 48.8443,
        "lon": 2.3744,
    }
    with browsed.api(namespace) as client:
        ok(
            client.post(
                "/v1/experiences", json={"content": cue["text"], "lat": 48.8443, "lon": 2.3744}
            )
        )
        assert ok(client.post("/v1/sense", json=cue)), "the cue should fire the memory it repeats"
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "recollections", namespace=namespace)
    text_appears(driver, "#pending-list", "marble counter")  # the page peeks on load
    driver.execute_script(HOLD_BACK_THE_FIRST, "/drain")
    driver.execute_script(
        "const drain = arguments[0]; drain.click(); drain.click();",
        element(driver, "#pending-drain"),
    )
    _release_the_held_request(driver)
    text_appears(driver, "#pending-notice", "delivered")
    assert driver.execute_script("return window.__sent") == 1
    assert "marble counter" in element(driver, "#pending-list").text
    assert "delivered" in element(driver, "#pending-notice").text


def test_browser_sense_submitted_twice_keeps_what_fired_on_screen(browsed: Browsed) -> None:
    # A second sense right after the first fires nothing (what matched fired just now): its
    # "Nothing fired" replaced the list of what the first one fired (adversarial pass d61).
    namespace = unique_namespace("sense-twice")
    text = "Rain on the glass roof of the botanical garden"
    with browsed.api(namespace) as client:
        ok(client.post("/v1/experiences", json={"content": text, "lat": 51.4787, "lon": -0.2956}))
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "recollections", namespace=namespace)
    element(driver, "#sense-text").send_keys(text)
    element(driver, "#sense-lat").send_keys("51.4787")
    element(driver, "#sense-lon").send_keys("-0.2956")
    driver.execute_script(HOLD_BACK_THE_FIRST, "/v1/sense")
    driver.execute_script(
        "const form = arguments[0]; form.requestSubmit(); form.requestSubmit();",
        element(driver, ".sense-form"),
    )
    _release_the_held_request(driver)
    text_appears(driver, "#sense-notice", "fired")
    assert driver.execute_script("return window.__sent") == 1
    assert "glass roof" in element(driver, "#sense-results").text
    assert "Nothing fired" not in element(driver, "#sense-notice").text


def test_browser_search_drops_the_late_answer_of_a_search_a_newer_one_replaced(
    browsed: Browsed,
) -> None:
    # A slow search, then another: the first one's answer, arriving last, was shown under
    # the second query (and remembered as its results) (adversarial pass d61).
    namespace = unique_namespace("search-late")
    with browsed.api(namespace) as client:
        remember(client, content="Bluebells flower in the beech wood in April")
        remember(client, content="The lighthouse keeper paints the railings every May")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "search", namespace=namespace)
    driver.execute_script(HOLD_BACK_THE_FIRST, "/v1/search")
    query = element(driver, "#search-query")
    query.send_keys("bluebells")
    element(driver, "#search-submit").click()
    wait_for(
        driver,
        lambda current: current.execute_script("return window.__held") == "waiting",
        "the held search",
    )
    query.clear()
    query.send_keys("lighthouse")
    element(driver, "#search-submit").click()
    text_appears(driver, "#search-results", "lighthouse keeper")
    driver.execute_script("window.__releaseHeld()")
    _held_request_answered(driver)
    shown = element(driver, "#search-results").text
    assert "lighthouse keeper" in shown
    assert "Bluebells" not in shown


def test_browser_why_not_drops_the_late_answer_of_a_question_a_newer_one_replaced(
    browsed: Browsed,
) -> None:
    # As search: the first question's late answer replaced the second's (pass d61).
    namespace = unique_namespace("explain-late")
    with browsed.api(namespace) as client:
        first = remember(client, content="Bluebells flower in the beech wood in April")
        second = remember(client, content="The lighthouse keeper paints the railings every May")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, "explain", namespace=namespace)
    driver.execute_script(HOLD_BACK_THE_FIRST, "/v1/explain")
    element(driver, "#explain-query").send_keys("railings")
    memory = element(driver, "#explain-memory")
    memory.send_keys(first)
    element(driver, "#explain-submit").click()
    wait_for(
        driver,
        lambda current: current.execute_script("return window.__held") == "waiting",
        "the held question",
    )
    memory.clear()
    memory.send_keys(second)
    element(driver, "#explain-submit").click()
    text_appears(driver, "#explain-output", second)
    driver.execute_script("window.__releaseHeld()")
    _held_request_answered(driver)
    shown = element(driver, "#explain-output").text
    assert second in shown
    assert first not in shown
