// Recollections: the pending queue of memories that surfaced by themselves (peek
// with GET, drain with POST /v1/recollections/drain: a GET never changes state
// here), and a "sense" form to try a cue (POST /v1/sense: strong matches fire).

import { recollectionCard } from "../components.js";
import { h, replace, setBusy, status } from "../dom.js";

// How many queued items a peek or a drain shows (held to the server's cap).
const QUEUE_SHOWN = 100;

function field(label, input) {
  return h("label", { class: "field" }, h("span", {}, label), input);
}

function describeCount(items) {
  const reminders = items.filter((item) => item.kind === "reminder").length;
  const recollections = items.length - reminders;
  const parts = [];
  if (recollections) parts.push(`${recollections} recollection${recollections === 1 ? "" : "s"}`);
  if (reminders) parts.push(`${reminders} reminder${reminders === 1 ? "" : "s"}`);
  return parts.join(" and ");
}

/** Render the page. */
export async function render(root, { api, navigate, session, canWrite }) {
  const notice = h("p", { hidden: true, id: "pending-notice" });
  const pendingList = h("div", { class: "results", id: "pending-list" });
  const peekButton = h("button", { type: "button", id: "pending-peek" }, "Peek");
  const drainButton = canWrite ? h("button", { type: "button", id: "pending-drain" }, "Drain") : null;

  // One peek or drain at a time: a second drain (a double click) got an empty queue, and
  // whichever answer came last was shown, so what the first delivered could be replaced
  // by "Nothing pending" and seen by no one.
  let asking = false;

  async function show(request, verb) {
    if (asking) return;
    asking = true;
    setBusy(peekButton, true);
    if (drainButton) setBusy(drainButton, true);
    try {
      const recollections = await request();
      replace(pendingList, recollections.map((item) => recollectionCard(item, navigate)));
      status(notice, recollections.length ? `${describeCount(recollections)} ${verb}` : "Nothing pending.");
    } catch (error) {
      status(notice, error.describe ? error.describe() : error.message, "error");
    } finally {
      asking = false;
      setBusy(peekButton, false);
      if (drainButton) setBusy(drainButton, false);
    }
  }
  const peek = () => show(() => api.get("/v1/recollections/pending", { drain: false, limit: session.limit(QUEUE_SHOWN) }), "pending (still queued)");
  peekButton.addEventListener("click", peek);
  if (drainButton) {
    drainButton.addEventListener("click", () => show(() => api.post("/v1/recollections/drain", undefined, { limit: session.limit(QUEUE_SHOWN) }), "delivered (removed from the queue)"));
  }

  root.append(h("h1", {}, "Recollections"),
    h("section", { class: "card" },
      h("h2", {}, "Pending"),
      h("p", { class: "hint" }, "Memories a sensed context brought back, and reminders of intentions that fired, oldest first. Peek leaves them queued; drain delivers each once."),
      h("div", { class: "actions" }, peekButton, drainButton),
      notice, pendingList));

  if (canWrite) {
    const inputs = {
      text: h("input", { type: "text", id: "sense-text", placeholder: "what is perceived now", autocomplete: "off" }),
      lat: h("input", { type: "number", id: "sense-lat", min: -90, max: 90, step: "any" }),
      lon: h("input", { type: "number", id: "sense-lon", min: -180, max: 180, step: "any" }),
      geohash: h("input", { type: "text", id: "sense-geohash", maxlength: 12, autocomplete: "off" }),
      at: h("input", { type: "text", id: "sense-at", placeholder: "now (or ISO 8601 with offset)", autocomplete: "off" }),
      tags: h("input", { type: "text", id: "sense-tags", placeholder: "comma-separated", autocomplete: "off" }),
    };
    const senseNotice = h("p", { hidden: true, id: "sense-notice" });
    const fired = h("div", { class: "results", id: "sense-results" });
    const senseButton = h("button", { type: "submit", id: "sense-submit" }, "Sense");
    // One sense at a time: a second one (a double submit) fires nothing (what matched
    // fired just now), and its "Nothing fired" replaced what the first one fired.
    let sensing = false;
    const form = h("form", {
      class: "card sense-form",
      onsubmit: async (event) => {
        event.preventDefault();
        if (sensing) return;
        const body = {};
        if (inputs.text.value.trim()) body.text = inputs.text.value.trim();
        if (inputs.lat.value !== "") body.lat = Number(inputs.lat.value);
        if (inputs.lon.value !== "") body.lon = Number(inputs.lon.value);
        if (inputs.geohash.value.trim()) body.geohash = inputs.geohash.value.trim();
        if (inputs.at.value.trim()) body.at = inputs.at.value.trim();
        const tags = inputs.tags.value.split(",").map((tag) => tag.trim()).filter(Boolean);
        if (tags.length) body.tags = tags;
        sensing = true;
        setBusy(senseButton, true);
        try {
          const recollections = await api.post("/v1/sense", body);
          replace(fired, recollections.map((item) => recollectionCard(item, navigate)));
          status(senseNotice, recollections.length
            ? `${describeCount(recollections)} fired (and queued as pending)`
            : "Nothing fired: no memory matched this context strongly enough (or it fired recently).");
        } catch (error) {
          status(senseNotice, error.describe ? error.describe() : error.message, "error");
        } finally {
          sensing = false;
          setBusy(senseButton, false);
        }
      },
    },
    h("h2", {}, "Sense"),
    h("p", { class: "hint" }, "Report a present context, as a phone or sensor would; the current time is always part of it."),
    h("div", { class: "field-grid" },
      field("text", inputs.text), field("latitude", inputs.lat), field("longitude", inputs.lon),
      field("geohash", inputs.geohash), field("at", inputs.at), field("tags", inputs.tags)),
    h("div", { class: "actions" }, senseButton),
    senseNotice, fired);
    root.append(form);
  }
  await peek();
}
