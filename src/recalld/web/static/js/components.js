// Pieces several pages show: a memory's one-line summary, a hit with its channel
// bars and backends, a recollection. Every memory field is rendered as text.

import { barRow, excerpt, fixed, h, localTime, token } from "./dom.js";

/** A time as written where it happened, machine-readable (<time datetime>) for assistive tools. */
function moment(iso) {
  return iso ? h("time", { datetime: iso }, localTime(iso)) : localTime(iso);
}

/** The badges under a memory: kind, who said it, category, tags, when it happened. */
export function memoryBadges(memory) {
  return h("div", { class: "badges" },
    h("span", { class: "badge kind" }, memory.kind),
    memory.speaker ? h("span", { class: "badge speaker", title: "speaker" }, `by ${memory.speaker}`) : null,
    memory.category ? h("span", { class: "badge category" }, memory.category) : null,
    (memory.tags || []).map((tag) => h("span", { class: "badge tag" }, `#${tag}`)),
    memory.at ? h("time", { class: "badge when", datetime: memory.at }, localTime(memory.at)) : null);
}

/** A memory's title (or first line) linking to its detail view, and its badges. */
export function memorySummary(memory, navigate) {
  const heading = memory.title || excerpt(memory.content, 120);
  return h("div", { class: "memory-summary" },
    h("a", {
      href: `#/memory/${encodeURIComponent(memory.id)}`,
      class: "memory-link",
      dataset: { memoryId: memory.id },
      onclick: (event) => {
        event.preventDefault();
        navigate("memory", memory.id);
      },
    }, heading),
    memory.title ? h("p", { class: "memory-excerpt" }, excerpt(memory.content, 240)) : null,
    memoryBadges(memory));
}

/** One bar per channel (similarity in [0, 1]), strongest first. */
export function channelBars(channels) {
  const entries = Object.entries(channels || {}).sort((left, right) => right[1] - left[1]);
  if (!entries.length) return null;
  return h("div", { class: "channels" }, entries.map(([name, value]) =>
    h("div", { class: "channel", dataset: { channel: name } },
      barRow(name, value, fixed(value), `channel-${token(name)}`))));
}

/** Which indexes found a hit (fts, like, vector, graph, context). */
export function backendBadges(backends) {
  return h("div", { class: "backends" }, "found by ",
    (backends || []).map((name) => h("span", { class: `badge backend backend-${token(name)}` }, name)));
}

/** A search/recall hit: score, the memory, channel bars and backends. */
export function hitCard(hit, navigate) {
  return h("article", { class: "card hit", dataset: { memoryId: hit.memory.id } },
    h("div", { class: "hit-score" },
      h("span", { class: "score" }, fixed(hit.score, 3)),
      barRow("score", hit.score, "", "score")),
    memorySummary(hit.memory, navigate),
    channelBars(hit.channels),
    hit.backends ? backendBadges(hit.backends) : null);
}

/**
 * A reminder (an intention that fired): its action, why (each trigger that held and
 * what it met), when it fired and when it was due; the memory is the intention.
 */
function reminderCard(recollection, navigate) {
  const reminder = recollection.reminder || {};
  const matched = reminder.matched || [];
  return h("article", {
    class: "card recollection reminder",
    dataset: { memoryId: recollection.memory.id, kind: "reminder" },
  },
  h("div", { class: "hit-score" },
    h("span", { class: "badge reminder-badge" }, "reminder"),
    h("span", { class: "fired" }, "fired ", moment(recollection.fired_at)),
    reminder.due_at ? h("span", { class: "fired" }, "due ", moment(reminder.due_at)) : null),
  memorySummary(recollection.memory, navigate),
  reminder.why ? h("p", { class: "reminder-why" }, "why: ", reminder.why) : null,
  matched.length > 1 || (matched.length === 1 && matched[0].detail !== reminder.why)
    ? h("ul", { class: "reminder-matched" }, matched.map((match) => h("li", {},
      h("span", { class: "trigger-type" }, match.trigger), " ", match.detail)))
    : null);
}

/** A recollection (or a reminder): when it fired, how strongly, why, and the memory. */
export function recollectionCard(recollection, navigate) {
  if (recollection.kind === "reminder") return reminderCard(recollection, navigate);
  return h("article", { class: "card recollection", dataset: { memoryId: recollection.memory.id } },
    h("div", { class: "hit-score" },
      h("span", { class: "score" }, fixed(recollection.score, 3)),
      h("span", { class: "fired" }, "fired ", moment(recollection.fired_at))),
    memorySummary(recollection.memory, navigate),
    channelBars(recollection.channels));
}
