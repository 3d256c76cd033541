"""The memory browser's edit is conditional (If-Match): an edit made from a copy that another
tab, client or agent changed since is refused with a clear message, never written over that
change. Headless Chromium against a real `recalld serve` (keyword-only)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.web.browser_support import (
    Browsed,
    browsed_server,
    element,
    ok,
    open_page,
    remember,
    text_appears,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def browsed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browsed]:
    with browsed_server(
        tmp_path_factory.mktemp("browser_conflict"),
        ("reader", {"default": "read"}),
        RECALLD_EMBEDDER="none",
    ) as found:
        yield found


def test_browser_edit_made_from_a_stale_copy_is_refused_not_written_over(
    browsed: Browsed,
) -> None:
    with browsed.api() as client:
        memory_id = remember(client, content="The ferry leaves at nine", title="Ferry")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{memory_id}")
    element(driver, "#memory-edit").click()
    # Meanwhile an agent (or another tab) edits the memory.
    with browsed.api() as client:
        ok(client.patch(f"/v1/memories/{memory_id}", json={"content": "The ferry leaves at ten"}))
    title = element(driver, "#edit-title")
    title.clear()
    title.send_keys("Ferry times")
    content = element(driver, "#edit-content")
    content.clear()
    content.send_keys("The ferry leaves at eight")
    element(driver, "#edit-save").click()
    problem = text_appears(driver, "#edit-problem", "changed elsewhere")
    assert "Your edit is still in the form" in problem.text
    assert element(driver, "#edit-content").get_attribute("value") == "The ferry leaves at eight"
    with browsed.api() as client:
        stored = ok(client.get(f"/v1/memories/{memory_id}"))
    assert stored["content"] == "The ferry leaves at ten"
    assert stored["title"] == "Ferry"
    # Showing the memory as it is now; an edit from that copy saves.
    element(driver, "#edit-reload").click()
    text_appears(driver, "#memory-content", "at ten")
    element(driver, "#memory-edit").click()
    title = element(driver, "#edit-title")
    title.clear()
    title.send_keys("Ferry times")
    element(driver, "#edit-save").click()
    text_appears(driver, "#memory-notice", "Saved (title)")
    with browsed.api() as client:
        stored = ok(client.get(f"/v1/memories/{memory_id}"))
    assert (stored["title"], stored["content"]) == ("Ferry times", "The ferry leaves at ten")
    # The copy on screen is the one just saved: a second edit saves too.
    element(driver, "#memory-edit").click()
    title = element(driver, "#edit-title")
    title.clear()
    title.send_keys("Ferry")
    element(driver, "#edit-save").click()
    text_appears(driver, "#memory-notice", "Saved (title)")


def test_browser_forget_of_a_memory_changed_meanwhile_is_refused(browsed: Browsed) -> None:
    with browsed.api() as client:
        memory_id = remember(client, content="The gate code is 4411", title="Gate")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.admin, f"memory/{memory_id}")
    element(driver, "#memory-forget")
    # Meanwhile an agent (or another tab) changes it: forgetting the copy on screen would
    # delete a memory the user has not seen.
    with browsed.api() as client:
        ok(client.patch(f"/v1/memories/{memory_id}", json={"content": "The gate code is 9120"}))
    element(driver, "#memory-forget").click()
    element(driver, "#confirm-accept").click()
    text_appears(driver, "#memory-notice", "Not forgotten: this memory was changed elsewhere")
    with browsed.api() as client:
        assert ok(client.get(f"/v1/memories/{memory_id}"))["content"] == "The gate code is 9120"
    element(driver, "#forget-reload").click()
    text_appears(driver, "#memory-content", "9120")
    text_appears(driver, "#memory-notice", "it was not forgotten")
    # Forgetting the memory as it is now works.
    element(driver, "#memory-forget").click()
    element(driver, "#confirm-accept").click()
    text_appears(driver, "#page-browse .notice", "Forgotten: the memory")
    with browsed.api() as client:
        assert client.get(f"/v1/memories/{memory_id}").status_code == 404
