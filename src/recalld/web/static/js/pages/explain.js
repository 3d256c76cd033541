// Why not? For a query and a memory, what recall does with that memory
// (POST /v1/explain, which changes nothing): the last stage it reached, its rank
// among the candidates, its score against the threshold, the channels and
// backends that found it, and each feature's share of the reranker's log-odds.
// Reached from the navigation, or from a memory's detail view (#/explain/<id>).

import { barRow, definitions, fixed, h, replace, status, token } from "../dom.js";

// What each stage means to someone asking why a memory did not come back.
const STAGES = {
  returned: "Returned",
  beyond_limit: "Ranked beyond the limit",
  collapsed: "Collapsed into a near-duplicate",
  below_threshold: "Scored below the threshold",
  not_in_pool: "Not among the candidates",
  excluded: "Excluded by a filter",
};

// What the user last asked (never its answer), so coming back to the page asks it again.
let previous = null;

function field(label, input) {
  return h("label", { class: "field" }, h("span", {}, label), input);
}

function memoryLink(id, navigate) {
  return h("a", {
    href: `#/memory/${encodeURIComponent(id)}`,
    class: "memory-link",
    dataset: { memoryId: id },
    onclick: (event) => {
      event.preventDefault();
      navigate("memory", id);
    },
  }, id);
}

function badges(names, kind) {
  if (!names || !names.length) return null;
  return h("span", { class: "badges" },
    names.map((name) => h("span", { class: `badge ${kind} ${kind}-${token(name)}` }, name)));
}

/** Each feature's value and its share of the log-odds, largest share first. */
function contributionTable(explanation) {
  const rows = Object.entries(explanation.contributions || {})
    .sort((left, right) => Math.abs(right[1]) - Math.abs(left[1]));
  if (!rows.length) return h("p", { class: "empty" }, "The model scored no feature.");
  const largest = Math.max(...rows.map(([, share]) => Math.abs(share)), 1e-9);
  return h("div", { class: "table-scroll" },
    h("table", { class: "contributions", id: "explain-contributions" },
      h("thead", {}, h("tr", {},
        h("th", {}, "feature"), h("th", {}, "value"), h("th", {}, "share of the log-odds"))),
      h("tbody", {}, rows.map(([name, share]) => {
        const value = (explanation.features || {})[name];
        return h("tr", { dataset: { feature: name, direction: share >= 0 ? "for" : "against" } },
          h("td", {}, name),
          h("td", {}, value === undefined || value === null ? "—" : fixed(value, 3)),
          h("td", {}, barRow(share >= 0 ? "for" : "against", Math.abs(share) / largest,
            `${share >= 0 ? "+" : ""}${fixed(share, 3)}`, share >= 0 ? "share-for" : "share-against")));
      }))));
}

function verdict(explanation, navigate) {
  const stage = explanation.stage;
  const candidates = explanation.candidates;
  // Excluded or not in the pool, it is no candidate: "1 of 0 candidates" read as a
  // contradiction, so its rank is where it would go among them.
  const outside = stage === "excluded" || stage === "not_in_pool";
  const rank = explanation.rank === null || explanation.rank === undefined
    ? "—"
    : outside
      ? `would be ${explanation.rank} were it a candidate (${candidates ? `${candidates} found` : "none found"})`
      : `${explanation.rank} of ${candidates} candidate${candidates === 1 ? "" : "s"}`;
  return h("section", { class: `card explanation stage-${token(stage)}`, id: "explain-result", dataset: { stage } },
    h("h2", { id: "explain-stage" }, STAGES[stage] || stage),
    h("p", { id: "explain-reason" }, explanation.reason),
    h("div", { class: "hit-score" },
      barRow("score", explanation.score, fixed(explanation.score, 3), "score"),
      barRow("threshold", explanation.min_score, fixed(explanation.min_score, 3), "threshold")),
    definitions([
      ["memory", memoryLink(explanation.memory_id, navigate)],
      ["rank", rank],
      ["limit", String(explanation.limit)],
      ["found by", badges(explanation.found_by, "backend")],
      ["excluded by", badges(explanation.excluded_by, "filter")],
      ["near-duplicate of", explanation.duplicate_of ? memoryLink(explanation.duplicate_of, navigate) : null],
      ["goes on with the turn of", explanation.turn_of ? memoryLink(explanation.turn_of, navigate) : null],
      ["embedding", explanation.index_state],
      ["model", explanation.model],
    ]),
    Object.keys(explanation.channels || {}).length
      ? h("div", { class: "channels" }, Object.entries(explanation.channels).map(([name, value]) =>
        barRow(name, value, fixed(value, 3), `channel-${token(name)}`)))
      : null,
    h("h3", {}, "What the reranker weighed"),
    contributionTable(explanation));
}

/** Render the page; ``memoryId`` (from #/explain/<id>) fills the memory field. */
export async function render(root, { api, navigate, session, mayFocus }, memoryId) {
  const inputs = {
    query: h("input", { type: "search", id: "explain-query", "aria-label": "query", required: true, placeholder: "the query recall was asked", autocomplete: "off" }),
    id: h("input", { type: "text", id: "explain-memory", required: true, placeholder: "memory id", autocomplete: "off", spellcheck: "false" }),
    limit: h("select", { id: "explain-limit" }, session.limitChoices([5, 10, 25, 50]).map((count) => h("option", { value: count }, count))),
    minScore: h("input", { type: "number", id: "explain-min-score", min: "0", max: "1", step: "any", placeholder: "server default" }),
  };
  inputs.limit.value = String(session.limit(10));
  const notice = h("p", { hidden: true, id: "explain-notice" });
  const result = h("div", { id: "explain-output" });

  // Each question's number: the answer to one a newer question replaced is dropped.
  let generation = 0;

  async function run() {
    const ticket = ++generation;
    const values = Object.fromEntries(Object.entries(inputs).map(([name, input]) => [name, input.value]));
    const body = { query: inputs.query.value, id: inputs.id.value.trim(), limit: Number(inputs.limit.value) };
    if (inputs.minScore.value !== "") body.min_score = Number(inputs.minScore.value);
    status(notice, "Explaining…");
    try {
      const explanation = await api.read("/v1/explain", body);
      if (ticket !== generation) return;
      previous = { namespace: session.namespace, values };
      show(explanation);
    } catch (error) {
      if (ticket !== generation) return;
      replace(result);
      status(notice, error.describe ? error.describe() : error.message, "error");
    }
  }

  function show(explanation) {
    status(notice, "");
    replace(result, verdict(explanation, navigate));
  }

  const form = h("form", {
    class: "card search-form",
    id: "explain-form",
    onsubmit: (event) => {
      event.preventDefault();
      run();
    },
  },
  h("div", { class: "search-line" }, inputs.query, h("button", { type: "submit", id: "explain-submit" }, "Why?")),
  h("div", { class: "field-grid" },
    field("memory", inputs.id),
    field("hits", inputs.limit),
    field("threshold", inputs.minScore)));

  root.append(h("h1", {}, "Why not?"),
    h("p", { class: "hint" }, "Ask why recall of a query does or does not return a memory: nothing is changed."),
    form, notice, result);
  const sameMemory = previous && previous.namespace === session.namespace
    && (!memoryId || previous.values.id === memoryId);
  if (sameMemory) {
    // Asked again, not shown as it was: the memory may have been edited or forgotten since
    // (a forgotten one was still said to be "Returned"), as Search does.
    for (const [name, value] of Object.entries(previous.values)) inputs[name].value = value;
    run();
  } else if (memoryId) {
    inputs.id.value = memoryId;
  }
  if (mayFocus) inputs.query.focus();
}
