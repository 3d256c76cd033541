// Search: hybrid ranking over POST /v1/search (which, unlike recall, counts no
// access: looking at memories is not the agent remembering them). Each hit shows its
// score, a bar per channel and the backends that found it.

import { hitCard } from "../components.js";
import { h, replace, status } from "../dom.js";

// What the last search asked (never its hits), so coming back to the page asks the
// server again: a memory forgotten or edited since must not show as it was.
let previous = null;

function field(label, input) {
  return h("label", { class: "field" }, h("span", {}, label), input);
}

function instant(value) {
  // datetime-local has no zone: it is the viewer's local time.
  if (!value) return null;
  const moment = new Date(value);
  return Number.isNaN(moment.getTime()) ? null : moment.toISOString();
}

function optionsList(id, values) {
  return h("datalist", { id }, values.map((value) => h("option", { value })));
}

/** Render the page. */
export async function render(root, { api, navigate, session, mayFocus }) {
  const inputs = {
    query: h("input", { type: "search", id: "search-query", "aria-label": "search memories", required: true, placeholder: "what do you remember about…", autocomplete: "off" }),
    kind: h("input", { type: "text", id: "search-kind", list: "known-kinds", autocomplete: "off" }),
    category: h("input", { type: "text", id: "search-category", list: "known-categories", autocomplete: "off" }),
    speaker: h("input", { type: "text", id: "search-speaker", autocomplete: "off" }),
    tags: h("input", { type: "text", id: "search-tags", placeholder: "any of: a, b", autocomplete: "off" }),
    since: h("input", { type: "datetime-local", id: "search-since" }),
    until: h("input", { type: "datetime-local", id: "search-until" }),
    limit: h("select", { id: "search-limit" }, session.limitChoices([10, 25, 50, 100]).map((count) => h("option", { value: count }, count))),
  };
  const notice = h("p", { hidden: true });
  const results = h("div", { class: "results", id: "search-results" });
  const kinds = optionsList("known-kinds", []);
  const categories = optionsList("known-categories", []);

  // Each search's number: the answer to one a newer search replaced (a slow query, then
  // another) is dropped, never shown under the newer query.
  let generation = 0;

  async function run() {
    const ticket = ++generation;
    const values = Object.fromEntries(Object.entries(inputs).map(([name, input]) => [name, input.value]));
    const filters = {};
    if (inputs.kind.value.trim()) filters.kind = inputs.kind.value.trim();
    if (inputs.category.value.trim()) filters.category = inputs.category.value.trim();
    if (inputs.speaker.value.trim()) filters.speaker = inputs.speaker.value.trim();
    const tags = inputs.tags.value.split(",").map((tag) => tag.trim()).filter(Boolean);
    if (tags.length) filters.tags_any = tags;
    if (instant(inputs.since.value)) filters.since = instant(inputs.since.value);
    if (instant(inputs.until.value)) filters.until = instant(inputs.until.value);
    const body = { query: inputs.query.value, limit: Number(inputs.limit.value), filters };
    status(notice, "Searching…");
    try {
      const hits = await api.read("/v1/search", body);
      if (ticket !== generation) return;
      previous = { namespace: session.namespace, values };
      show(hits);
    } catch (error) {
      if (ticket !== generation) return;
      status(notice, error.describe ? error.describe() : error.message, "error");
    }
  }

  function show(hits) {
    status(notice, hits.length ? `${hits.length} hit${hits.length === 1 ? "" : "s"}` : "Nothing found.");
    replace(results, hits.map((hit) => hitCard(hit, navigate)));
  }

  const form = h("form", {
    class: "card search-form",
    onsubmit: (event) => {
      event.preventDefault();
      run();
    },
  },
  h("div", { class: "search-line" }, inputs.query, h("button", { type: "submit", id: "search-submit" }, "Search")),
  h("details", { class: "filters" },
    h("summary", {}, "Filters"),
    h("div", { class: "field-grid" },
      field("kind", inputs.kind),
      field("category", inputs.category),
      field("speaker", inputs.speaker),
      field("tags", inputs.tags),
      field("happened since", inputs.since),
      field("happened before", inputs.until),
      field("hits", inputs.limit))),
  kinds, categories);

  root.append(h("h1", {}, "Search"), form, notice, results);
  if (previous && previous.namespace === session.namespace) {
    for (const [name, value] of Object.entries(previous.values)) inputs[name].value = value;
    run();
  }
  if (mayFocus) inputs.query.focus();
  try {
    const stats = await api.get("/v1/stats");
    replace(kinds, Object.keys(stats.by_kind).map((value) => h("option", { value })));
    replace(categories, Object.keys(stats.by_category).filter((value) => value !== "uncategorized").map((value) => h("option", { value })));
  } catch {
    // Suggestions only: the search works without them.
  }
}
