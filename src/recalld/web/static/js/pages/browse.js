// Browse: every memory of the namespace, newest first (or recently updated), a page
// at a time through GET /v1/memories and its cursor.

import { memorySummary } from "../components.js";
import { h, status, viewerTime } from "../dom.js";

const PAGE_SIZE = 25;

/** Render the page; ``argument`` may be a notice to show (after a forget). */
export async function render(root, { api, navigate, session }, argument) {
  const order = h("select", { id: "browse-order" },
    h("option", { value: "created" }, "newest first"),
    h("option", { value: "updated" }, "recently updated"));
  const kind = h("input", { type: "text", id: "browse-kind", autocomplete: "off" });
  const tag = h("input", { type: "text", id: "browse-tag", autocomplete: "off" });
  const speaker = h("input", { type: "text", id: "browse-speaker", autocomplete: "off" });
  const notice = h("p", { hidden: true });
  const list = h("ol", { class: "memory-list", id: "browse-list" });
  const more = h("button", { type: "button", id: "browse-more", hidden: true }, "Load more");
  let cursor = null;
  let shown = 0;
  // The filters the listing on screen was made with: "Load more" continues that listing,
  // whatever has been typed in the boxes since (the cursor does not carry the filters).
  let listing = null;
  // Each request's number: an answer to one that a newer request superseded (a filter
  // applied while "Load more" was on its way) is dropped, never mixed into the list.
  let generation = 0;

  async function load(reset) {
    const ticket = ++generation;
    if (reset) {
      list.replaceChildren();
      cursor = null;
      shown = 0;
      more.hidden = true;
      listing = {
        order: order.value, kind: kind.value.trim(), tag: tag.value.trim(), speaker: speaker.value.trim(),
      };
    }
    // One request at a time: a second click would ask for the same page again.
    more.disabled = true;
    const params = { limit: session.limit(PAGE_SIZE), cursor, ...listing };
    try {
      const page = await api.get("/v1/memories", params);
      if (ticket !== generation) return;
      const firstNew = list.children.length;
      for (const memory of page.memories) {
        list.append(h("li", { class: "card memory-row", dataset: { memoryId: memory.id } },
          memorySummary(memory, navigate),
          h("div", { class: "row-times" }, "stored ", viewerTime(memory.created_at))));
      }
      // "Load more" disabled itself while loading (and may be hidden now), which drops the
      // focus to the page's start: it goes to the first memory loaded, where one reads on.
      if (!reset) list.children[firstNew]?.querySelector("a")?.focus();
      shown += page.memories.length;
      cursor = page.next_cursor;
      more.hidden = !cursor;
      if (!reset || argument !== "forgotten") {
        status(notice, shown ? `${shown} memor${shown === 1 ? "y" : "ies"} shown${cursor ? ", more below" : ""}` : "No memories here yet.");
      }
    } catch (error) {
      if (ticket !== generation) return;
      status(notice, error.describe ? error.describe() : error.message, "error");
    } finally {
      if (ticket === generation) more.disabled = false;
    }
  }

  more.addEventListener("click", () => {
    if (!more.disabled) load(false);
  });
  const form = h("form", {
    class: "card browse-form",
    onsubmit: (event) => {
      event.preventDefault();
      load(true);
    },
  },
  h("label", { class: "field" }, h("span", {}, "order"), order),
  h("label", { class: "field" }, h("span", {}, "kind"), kind),
  h("label", { class: "field" }, h("span", {}, "tag"), tag),
  h("label", { class: "field" }, h("span", {}, "speaker"), speaker),
  h("button", { type: "submit", id: "browse-apply" }, "Apply"));
  order.addEventListener("change", () => load(true));

  root.append(h("h1", {}, "Browse"), form, notice, list, more);
  if (argument === "forgotten") status(notice, "Forgotten: the memory and every trace of it are gone.", "success");
  await load(true);
}
