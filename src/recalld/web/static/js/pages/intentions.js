// Intentions: "remind me when…" (GET /v1/intentions?state=), each with its triggers in
// words, next due, firings and state; a small form to create one (POST /v1/intentions),
// showing how the server read each time it was given; cancel after a confirmation
// (DELETE /v1/intentions/{id}). A read-only token sees the list only.

import { confirmAction } from "../dialog.js";
import { h, localTime, replace, setBusy, status, tokenRefused, userText } from "../dom.js";
import { intentionCard } from "../triggers.js";

const STATES = ["active", "done", "cancelled", "expired", "all"];
const RECURRENCES = ["daily", "weekdays", "weekly", "monthly", "FREQ=WEEKLY;BYDAY=MO,TH"];

// The state last listed, kept while the user moves between pages.
let shownState = "active";

function field(label, input, hint = "", extraClass = "") {
  return h("label", { class: `field ${extraClass}`.trim() }, h("span", {}, label), input, hint ? h("small", {}, hint) : null);
}

function browserZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  } catch {
    return "";
  }
}

function listOf(text) {
  return text.split(",").map((item) => item.trim()).filter(Boolean);
}

class FormProblem extends Error {
  constructor(field, message) {
    super(message);
    this.field = field;
  }
}

/** The POST body from the form: only the fields given. */
function requestBody(inputs) {
  const body = { action: inputs.action.value.trim() };
  const text = (input) => input.value.trim();
  if (text(inputs.at)) body.at = text(inputs.at);
  if (text(inputs.every)) body.every = text(inputs.every);
  if (text(inputs.zone)) body.zone = text(inputs.zone);
  const lat = inputs.lat.value;
  const lon = inputs.lon.value;
  if ((lat === "") !== (lon === "")) throw new FormProblem("place", "give both latitude and longitude, or neither");
  if (lat !== "") {
    body.place = { lat: Number(lat), lon: Number(lon) };
    if (text(inputs.placeName)) body.place.name = text(inputs.placeName);
  }
  if (inputs.radius.value !== "") body.radius_m = Number(inputs.radius.value);
  const mentions = listOf(inputs.mention.value);
  if (mentions.length) body.mention = mentions;
  const tags = listOf(inputs.tags.value);
  if (tags.length) body.tags = tags;
  const signals = listOf(inputs.signal.value);
  if (signals.length) body.signals = signals;
  return body;
}

/** Render the page. */
export async function render(root, { api, navigate, canWrite }) {
  const state = h("select", { id: "intention-state", "aria-label": "state" },
    STATES.map((name) => h("option", { value: name, selected: name === shownState }, name)));
  const notice = h("p", { hidden: true, id: "intentions-notice" });
  const list = h("div", { class: "results intention-list", id: "intention-list" });

  function memoryLink(intention) {
    return h("a", {
      href: `#/memory/${encodeURIComponent(intention.id)}`,
      class: "memory-link",
      onclick: (event) => {
        event.preventDefault();
        navigate("memory", intention.id);
      },
    }, h("code", {}, intention.id));
  }

  async function cancel(intention) {
    const confirmed = await confirmAction(
      "Cancel this intention?",
      [userText(intention.action, { quote: true }), " will never fire again, and a reminder of it still queued is dropped. Its memory stays (listed as cancelled) until you forget it."],
      "Cancel intention",
      "Keep it");
    if (!confirmed) return;
    try {
      await api.remove(`/v1/intentions/${encodeURIComponent(intention.id)}`);
      await load();
      status(notice, ["Cancelled ", userText(intention.action, { quote: true }), "."], "success");
    } catch (error) {
      status(notice, error.describe ? error.describe() : error.message, "error");
    }
  }

  // Each listing's number: the answer for a state the menu has left since (a slow "all",
  // then "active") is dropped, never listed under the other state's name.
  let listing = 0;
  async function load() {
    const ticket = ++listing;
    const asked = state.value;
    shownState = asked;
    try {
      const { intentions } = await api.get("/v1/intentions", { state: asked });
      if (ticket !== listing) return;
      replace(list, intentions.map((intention) => intentionCard(intention, {
        memoryLink: memoryLink(intention),
        controls: canWrite && intention.state === "active"
          ? [h("button", {
            type: "button",
            class: "danger intention-cancel",
            dataset: { intentionId: intention.id },
            onclick: () => cancel(intention),
          }, "Cancel")]
          : [],
      })));
      status(notice, intentions.length
        ? `${intentions.length} intention${intentions.length === 1 ? "" : "s"} ${asked === "all" ? "in all" : asked}`
        : `No ${asked === "all" ? "" : `${asked} `}intentions.`);
    } catch (error) {
      if (ticket !== listing) return;
      status(notice, error.describe ? error.describe() : error.message, "error");
    }
  }
  state.addEventListener("change", load);

  root.append(h("h1", {}, "Intentions"),
    h("p", { class: "hint" }, "Things to remember to do when a situation comes up: a place, a time, a name, a tag or a signal. All the triggers of one must hold; it fires into the pending queue as a reminder."));
  if (canWrite) root.append(createForm(api, async (created) => {
    state.value = "active";
    await load();
    const card = list.querySelector(`[data-intention-id="${CSS.escape(created.id)}"]`);
    if (card) card.classList.add("just-created");
  }));
  root.append(h("section", { class: "card" },
    h("h2", {}, "Intentions ", state), notice, list));
  await load();
}

function createForm(api, onCreated) {
  const inputs = {
    action: h("input", { type: "text", id: "intention-action", required: true, placeholder: "pick up the prescription", autocomplete: "off" }),
    at: h("input", { type: "text", id: "intention-at", placeholder: "tomorrow at 9 · next Friday 18:00 · ISO 8601", autocomplete: "off" }),
    every: h("input", { type: "text", id: "intention-every", list: "intention-recurrences", placeholder: "once", autocomplete: "off" }),
    zone: h("input", { type: "text", id: "intention-zone", value: browserZone(), placeholder: "Europe/Paris or +01:00", autocomplete: "off" }),
    lat: h("input", { type: "number", id: "intention-lat", min: -90, max: 90, step: "any" }),
    lon: h("input", { type: "number", id: "intention-lon", min: -180, max: 180, step: "any" }),
    placeName: h("input", { type: "text", id: "intention-place-name", placeholder: "pharmacy", autocomplete: "off" }),
    radius: h("input", { type: "number", id: "intention-radius", min: 1, max: 50000, step: "any", placeholder: "150" }),
    mention: h("input", { type: "text", id: "intention-mention", placeholder: "Anna, the move", autocomplete: "off" }),
    tags: h("input", { type: "text", id: "intention-tags", placeholder: "errand", autocomplete: "off" }),
    signal: h("input", { type: "text", id: "intention-signal", placeholder: "heart_rate>150", autocomplete: "off" }),
  };
  const formNotice = h("p", { hidden: true, id: "intention-form-notice" });
  const resolved = h("ul", { class: "resolved", id: "intention-resolved", hidden: true });
  const submit = h("button", { type: "submit", id: "intention-submit" }, "Remember");
  // One creation at a time: intentions are not deduplicated (two alike may be meant), so a
  // double click or a second Enter before the answer made the reminder twice.
  let sending = false;

  const form = h("form", {
    class: "card intention-form",
    id: "intention-form",
    onsubmit: async (event) => {
      event.preventDefault();
      if (sending) return;
      let body;
      try {
        body = requestBody(inputs);
      } catch (error) {
        status(formNotice, `${error.field}: ${error.message}`, "error");
        return;
      }
      resolved.hidden = true;
      sending = true;
      setBusy(submit, true);
      try {
        const created = await api.postKept("/v1/intentions", body);
        status(formNotice, ["Remembered: ", userText(created.action, { quote: true }), "."], "success");
        replace(resolved, created.resolved.map((reading) => h("li", { dataset: { field: reading.field } },
          h("span", { class: "resolved-field" }, reading.field), ": ",
          h("q", {}, reading.text), " → ",
          h("strong", { class: "resolved-instant" }, localTime(reading.instant)))));
        resolved.hidden = !created.resolved.length;
        const zone = inputs.zone.value;
        form.reset();
        inputs.zone.value = zone;
        await onCreated(created);
      } catch (error) {
        if (error.status === 401) {
          // The page is kept (postKept): the sign-in form would replace it, and the form.
          tokenRefused(formNotice, "Not remembered",
            "What you wrote is still in the form: copy it", "intention-sign-in", error);
          return;
        }
        status(formNotice, error.describe ? error.describe() : error.message, "error");
      } finally {
        sending = false;
        setBusy(submit, false);
      }
    },
  },
  h("h2", {}, "Remind me"),
  h("div", { class: "field-grid" },
    field("action", inputs.action, "", "wide-field"),
    field("at (time or phrase)", inputs.at),
    field("every", inputs.every, "daily, weekdays, weekly, monthly or an RRULE"),
    field("zone", inputs.zone),
    field("latitude", inputs.lat),
    field("longitude", inputs.lon),
    field("place name", inputs.placeName),
    field("radius (m)", inputs.radius),
    field("when mentioned", inputs.mention, "comma-separated"),
    field("tags", inputs.tags, "comma-separated"),
    field("signal", inputs.signal, "e.g. heart_rate>150")),
  h("datalist", { id: "intention-recurrences" }, RECURRENCES.map((value) => h("option", { value }))),
  h("div", { class: "actions" }, submit),
  formNotice, resolved);
  return form;
}
