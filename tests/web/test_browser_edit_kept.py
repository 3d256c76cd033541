"""An edit in the memory browser is kept, and the user told why it was not saved, when its
token is revoked meanwhile or the server cannot be reached. Headless Chromium against a
real `recalld serve` (keyword-only).

A revoked token's 401 replaced the page with the sign-in form at once: the edit was lost
without a word. A server that did not answer showed the browser's own "Failed to fetch"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from recalld.store.sqlite import SQLiteStore
from recalld.tokens import TokenRegistry
from tests.web.browser_support import (
    Browsed,
    browsed_server,
    create_token,
    element,
    open_page,
    remember,
    text_appears,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EDITED = "The boat leaves at eight, from pier 4"


@pytest.fixture(scope="module")
def browsed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browsed]:
    with browsed_server(
        tmp_path_factory.mktemp("browser_kept"),
        ("editor", {"default": "read+write"}),
        RECALLD_EMBEDDER="none",
    ) as found:
        yield found


def _start_editing(browsed: Browsed, token: str) -> None:
    """Open a new memory's editor as ``token`` and type :data:`EDITED` into it."""
    with browsed.api() as client:
        memory_id = remember(client, content="The boat leaves at nine")
    open_page(browsed.driver, browsed.base_url, token, f"memory/{memory_id}")
    element(browsed.driver, "#memory-edit").click()
    content = element(browsed.driver, "#edit-content")
    content.clear()
    content.send_keys(EDITED)


def _revoke(browsed: Browsed, name: str) -> None:
    """Revoke the token called ``name`` (as `recalld token revoke` does)."""
    db = browsed.server.db
    assert not isinstance(db, str)
    store = SQLiteStore(db)
    try:
        registry = TokenRegistry(store)
        token_id = next(info.id for info in registry.list() if info.name == name)
        assert registry.revoke(token_id)
    finally:
        store.close()


def test_browser_edit_is_kept_and_explained_when_its_token_is_revoked(browsed: Browsed) -> None:
    db = browsed.server.db
    assert not isinstance(db, str)
    token = create_token(db, "revoked soon", {"default": "read+write"})
    _start_editing(browsed, token)
    _revoke(browsed, "revoked soon")
    element(browsed.driver, "#edit-save").click()
    problem = text_appears(browsed.driver, "#edit-problem", "no longer accepts your token")
    assert "Your edit is still in the form" in problem.text
    assert element(browsed.driver, "#edit-content").get_attribute("value") == EDITED
    element(browsed.driver, "#edit-sign-in").click()
    text_appears(browsed.driver, "#page", "not accepted")  # the sign-in form, saying why


def test_browser_edit_is_kept_and_explained_when_the_server_does_not_answer(
    browsed: Browsed,
) -> None:
    _start_editing(browsed, browsed.token)
    driver = browsed.driver
    driver.set_network_conditions(
        offline=True, latency=0, download_throughput=0, upload_throughput=0
    )
    try:
        element(driver, "#edit-save").click()
        problem = text_appears(driver, "#edit-problem", "the recalld server did not answer")
        assert "Failed to fetch" not in problem.text
        assert "recalld serve" in problem.text
        assert element(driver, "#edit-content").get_attribute("value") == EDITED
    finally:
        driver.set_network_conditions(
            offline=False, latency=0, download_throughput=-1, upload_throughput=-1
        )


# Fails the requests for ``arguments[0]`` as an unreachable server does.
NETWORK_DOWN_FOR = """
const asked = arguments[0];
const original = window.fetch;
window.fetch = function (...parameters) {
  if (!String(parameters[0]).startsWith(asked)) return original.apply(this, parameters);
  return Promise.reject(new TypeError("Failed to fetch"));
};
"""


def test_browser_a_search_the_server_did_not_answer_is_not_said_to_be_a_change(
    browsed: Browsed,
) -> None:
    # A search is a POST but changes nothing: "whether the change was made is not known,
    # so look before you try it again" sent the user looking for a change never asked for.
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.token, "search")
    driver.execute_script(NETWORK_DOWN_FOR, "/v1/search")
    element(driver, "#search-query").send_keys("boat")
    element(driver, "#search-submit").click()
    page = text_appears(driver, "#page", "the recalld server did not answer").text
    assert "recalld serve" in page
    assert "whether the change was made" not in page


def test_browser_an_intention_typed_is_kept_when_its_token_is_revoked(browsed: Browsed) -> None:
    # Only the memory editor kept its text: the intention form was replaced by the sign-in
    # form at once, what was typed lost without a word.
    db = browsed.server.db
    assert not isinstance(db, str)
    token = create_token(db, "intending", {"default": "read+write"})
    driver = browsed.driver
    open_page(driver, browsed.base_url, token, "intentions")
    element(driver, "#intention-action").send_keys("water the ferns")
    element(driver, "#intention-at").send_keys("tomorrow at 9")
    _revoke(browsed, "intending")
    element(driver, "#intention-submit").click()
    text_appears(driver, "#intention-form-notice", "no longer accepts your token")
    assert element(driver, "#intention-action").get_attribute("value") == "water the ferns"
    element(driver, "#intention-sign-in").click()
    text_appears(driver, "#page", "not accepted")  # the sign-in form, saying why


def test_browser_a_core_batch_is_kept_when_its_token_is_revoked(browsed: Browsed) -> None:
    # The core page's batch went with the page when the sign-in form replaced it.
    db = browsed.server.db
    assert not isinstance(db, str)
    token = create_token(db, "core editor", {"default": "read+write"})
    driver = browsed.driver
    open_page(driver, browsed.base_url, token, "core")
    element(driver, "#add-memory").send_keys("Agent note: the boat leaves at eight")
    element(driver, "#add-button-memory").click()
    text_appears(driver, "#batch-memory", "the boat leaves at eight")
    _revoke(browsed, "core editor")
    element(driver, "#apply-memory").click()
    text_appears(driver, "#core-notice-memory", "no longer accepts your token")
    assert "the boat leaves at eight" in element(driver, "#batch-memory").text
    element(driver, "#core-memory-sign-in").click()
    text_appears(driver, "#page", "not accepted")  # the sign-in form, saying why
