// One memory: every field, its place on an offline map with its nearest neighbours,
// `at` in the local time where it happened; edit in place (PATCH, only the fields
// changed) and forget after a confirmation (DELETE).

import { confirmAction } from "../dialog.js";
import {
  definitions, excerpt, fixed, h, localTime, replace, setBusy, sourceLink, status,
  tokenRefused, userText, viewerTime,
} from "../dom.js";
import { parseJson } from "../api.js";
import { formatDistance, distanceMetres, placeMap } from "../map.js";
import { listMemoryActions } from "../registry.js";

// What the page says once a refused edit or forget shows the memory as it is now.
const EDIT_DISCARDED = "This is the memory as it is now; your edit was discarded.";
const NOT_FORGOTTEN = "This is the memory as it is now; it was not forgotten.";

const NEIGHBOURS = 8;
// How far a place-only recall finds memories with the default place settings (50 m
// "same place" plus the 1 km scale out to a place similarity of 0.25): a memory
// placed farther away is no neighbour, though it has a place.
const PLACE_REACH = "1.2 km";
// Path segments a URL resolves away: no memory id is one (the server refuses them).
const DOT_SEGMENTS = new Set([".", ".."]);

function memoryPath(id) {
  return `/v1/memories/${encodeURIComponent(id)}`;
}

/** Whether ``answer`` is memory ``id`` itself: a memory object with that very id. */
function isMemory(answer, id) {
  return answer !== null && typeof answer === "object" && !Array.isArray(answer)
    && typeof answer.id === "string" && answer.id === id && typeof answer.content === "string";
}

function placeText(place) {
  if (!place) return null;
  const parts = [`${fixed(place.lat, 5)}, ${fixed(place.lon, 5)}`, `geohash ${place.geohash}`];
  if (place.name) parts.unshift(place.name);
  return parts.join(" · ");
}

async function neighboursOf(api, session, memory, navigate) {
  // A place-only context recall: the memories stored nearest this one (no side effects),
  // as many as RECALLD_MAX_LIMIT lets one recall ask.
  const hits = await api.read("/v1/context/recall", {
    lat: memory.place.lat, lon: memory.place.lon, k: session.limit(NEIGHBOURS + 1),
  });
  return hits
    .filter((hit) => hit.memory.id !== memory.id && hit.memory.place)
    .slice(0, NEIGHBOURS)
    .map((hit) => ({
      id: hit.memory.id,
      place: hit.memory.place,
      label: hit.memory.title || excerpt(hit.memory.content, 60),
      onSelect: () => navigate("memory", hit.memory.id),
    }));
}

function fieldRows(memory) {
  return [
    ["id", h("code", {}, memory.id)],
    ["seq", String(memory.seq)],
    ["namespace", memory.namespace],
    ["key", memory.key],
    ["title", memory.title],
    ["content", h("pre", { class: "content", id: "memory-content" }, memory.content)],
    ["speaker", memory.speaker ? h("span", { id: "memory-speaker" }, memory.speaker) : null],
    ["kind", memory.kind],
    ["category", memory.category],
    ["tags", (memory.tags || []).join(", ")],
    ["salience", memory.salience === null || memory.salience === undefined ? null : fixed(memory.salience)],
    ["source", sourceLink(memory.source)],
    ["at (local time there)", memory.at ? h("time", { id: "memory-at", datetime: memory.at }, localTime(memory.at)) : null],
    ["place", placeText(memory.place)],
    ["stored", viewerTime(memory.created_at)],
    ["updated", viewerTime(memory.updated_at)],
    ["expires", memory.expires_at ? viewerTime(memory.expires_at) : "never"],
    ["accessed", `${memory.access_count} time${memory.access_count === 1 ? "" : "s"}`],
    ["last accessed", memory.last_accessed_at ? viewerTime(memory.last_accessed_at) : "never"],
    ["index state", h("span", { class: `badge state-${memory.index_state}` }, memory.index_state)],
    ["meta", Object.keys(memory.meta || {}).length ? h("pre", { class: "meta" }, JSON.stringify(memory.meta, null, 2)) : null],
  ];
}

// -- editing ------------------------------------------------------------------

function textInput(name, value, attributes = {}) {
  return h("input", { type: "text", name, id: `edit-${name}`, value: value ?? "", autocomplete: "off", ...attributes });
}

function editorInputs(memory) {
  const place = memory.place || {};
  return {
    title: textInput("title", memory.title),
    content: h("textarea", { name: "content", id: "edit-content", rows: 6, required: true }, memory.content),
    kind: textInput("kind", memory.kind, { required: true }),
    speaker: textInput("speaker", memory.speaker),
    category: textInput("category", memory.category),
    tags: textInput("tags", (memory.tags || []).join(", "), { placeholder: "comma-separated" }),
    salience: h("input", { type: "number", name: "salience", id: "edit-salience", min: 0, max: 1, step: "any", value: memory.salience ?? "" }),
    source: textInput("source", memory.source),
    at: textInput("at", memory.at, { placeholder: "2026-10-25T08:10:00+02:00" }),
    lat: h("input", { type: "number", name: "lat", id: "edit-lat", min: -90, max: 90, step: "any", value: place.lat ?? "" }),
    lon: h("input", { type: "number", name: "lon", id: "edit-lon", min: -180, max: 180, step: "any", value: place.lon ?? "" }),
    placeName: textInput("place-name", place.name),
    ttl: h("input", { type: "number", name: "ttl", id: "edit-ttl", min: 1, step: 1, placeholder: "unchanged" }),
    meta: h("textarea", { name: "meta", id: "edit-meta", rows: 4 }, JSON.stringify(memory.meta || {}, null, 2)),
  };
}

function blankToNull(text) {
  const value = text.trim();
  return value ? value : null;
}

class EditProblem extends Error {
  constructor(field, message) {
    super(message);
    this.field = field;
  }
}

/** What each control shows before the user types: a control may alter a stored value
 * (a one-line input drops line breaks, a textarea turns CRLF into LF), so a field
 * counts as edited only when its control no longer shows this. */
function shownValues(inputs) {
  return Object.fromEntries(Object.entries(inputs).map(([name, input]) => [name, input.value]));
}

/** The PATCH body: only the fields the user edited to differ from ``memory``. */
function changes(memory, inputs, shown) {
  const patch = {};
  const edited = (name) => inputs[name].value !== shown[name];
  const set = (name, value, original) => {
    if (JSON.stringify(value) !== JSON.stringify(original ?? null)) patch[name] = value;
  };
  if (edited("title")) set("title", blankToNull(inputs.title.value), memory.title);
  if (edited("content")) set("content", inputs.content.value, memory.content);
  if (edited("kind")) set("kind", inputs.kind.value.trim(), memory.kind);
  if (edited("speaker")) set("speaker", blankToNull(inputs.speaker.value), memory.speaker);
  if (edited("category")) set("category", blankToNull(inputs.category.value), memory.category);
  // Split only a list the user edited: a stored tag may hold a comma ("new york, ny").
  if (edited("tags")) {
    set("tags", inputs.tags.value.split(",").map((tag) => tag.trim()).filter(Boolean), memory.tags || []);
  }
  if (edited("salience")) {
    set("salience", inputs.salience.value === "" ? null : Number(inputs.salience.value), memory.salience);
  }
  if (edited("source")) set("source", blankToNull(inputs.source.value), memory.source);
  if (edited("at")) set("at", blankToNull(inputs.at.value), memory.at);
  if (edited("lat") || edited("lon") || edited("placeName")) {
    const lat = inputs.lat.value;
    const lon = inputs.lon.value;
    const original = memory.place;
    if (lat === "" && lon === "") {
      if (original) patch.place = null;
    } else if (lat === "" || lon === "") {
      throw new EditProblem("place", "give both latitude and longitude, or neither");
    } else {
      // A part left alone keeps its stored value (an unedited place has both coordinates).
      const place = {
        lat: edited("lat") ? Number(lat) : original.lat,
        lon: edited("lon") ? Number(lon) : original.lon,
        name: edited("placeName") ? blankToNull(inputs.placeName.value) : (original?.name ?? null),
      };
      // Coordinates left alone keep the stored geohash: a place given as a cell ("u09tv")
      // stays that cell, not its centre point.
      if (original && !edited("lat") && !edited("lon")) place.geohash = original.geohash;
      if (!original || place.lat !== original.lat || place.lon !== original.lon || place.name !== (original.name ?? null)) {
        patch.place = place;
      }
    }
  }
  if (inputs.ttl.value !== "") patch.ttl_seconds = Number(inputs.ttl.value);
  if (edited("meta")) {
    let meta;
    try {
      meta = parseJson(inputs.meta.value || "{}");
    } catch (error) {
      throw new EditProblem("meta", `is not valid JSON (${error.message})`);
    }
    // A large integer alone parses to a raw JSON value, an object that is no JSON object.
    if (meta === null || typeof meta !== "object" || Array.isArray(meta) || JSON.isRawJSON?.(meta)) {
      throw new EditProblem("meta", "must be a JSON object");
    }
    set("meta", meta, memory.meta || {});
  }
  return patch;
}

// The control holding each field a refusal names ("place.lat" → latitude, "tags[1]" → tags).
const FIELD_INPUTS = { place: "lat", ttl_seconds: "ttl" };

/**
 * Mark the control of ``field`` (a field the refusal names) invalid, tied to the message
 * that says why (#edit-problem), and focus it; ``null`` clears every mark.
 */
function markInvalid(inputs, field) {
  for (const input of Object.values(inputs)) {
    input.removeAttribute("aria-invalid");
    input.removeAttribute("aria-describedby");
  }
  if (!field) return;
  const name = String(field).split(/[.[]/, 1)[0];
  const input = inputs[FIELD_INPUTS[name] || name];
  if (!input) return;
  input.setAttribute("aria-invalid", "true");
  input.setAttribute("aria-describedby", "edit-problem");
  input.focus();
}

function editorForm(memory, inputs, onSave, onCancel) {
  const row = (label, input) => [h("dt", {}, h("label", { for: input.id }, label)), h("dd", {}, input)];
  return h("form", {
    class: "memory-editor",
    id: "memory-editor",
    onsubmit: (event) => {
      event.preventDefault();
      onSave();
    },
  },
  h("dl", { class: "fields" },
    row("title", inputs.title),
    row("content", inputs.content),
    row("speaker", inputs.speaker),
    row("kind", inputs.kind),
    row("category", inputs.category),
    row("tags", inputs.tags),
    row("salience (0-1)", inputs.salience),
    row("source", inputs.source),
    row("at (ISO 8601 with offset)", inputs.at),
    row("latitude", inputs.lat),
    row("longitude", inputs.lon),
    row("place name", inputs.placeName),
    row("expire in (seconds)", inputs.ttl),
    row("meta (JSON object)", inputs.meta)),
  h("div", { class: "actions" },
    h("button", { type: "submit", id: "edit-save" }, "Save"),
    h("button", { type: "button", id: "edit-cancel", onclick: onCancel }, "Cancel")));
}

// -- the page -----------------------------------------------------------------

/** Render memory ``id``. */
export async function render(root, context, id) {
  const { api, navigate, canWrite, apiPaths, session } = context;
  const notice = h("p", { hidden: true, id: "memory-notice" });
  const body = h("div", { class: "memory-body" });
  const back = h("a", { href: "#/browse", class: "back" }, "← all memories");
  root.append(back, notice, body);
  if (!id) {
    status(notice, "No memory chosen.", "error");
    return;
  }
  if (DOT_SEGMENTS.has(id)) {
    // The browser resolves /v1/memories/. to the listing (and .. to /v1/): no memory can
    // have such an id, and the answer must never be taken for one.
    status(notice, ["No memory can have the id ", userText(id, { quote: true }), ": a URL resolves it away."], "error");
    return;
  }
  let memory;
  // The ETag of the copy on screen: an edit is sent with it (If-Match), so one made while
  // another tab or an agent changed the memory is refused instead of overwriting that change.
  let version = null;
  try {
    ({ data: memory, version } = await api.getVersioned(memoryPath(id)));
  } catch (error) {
    // A failure that is not the API's answer (the network, a TypeError) has no describe().
    const problem = error.describe ? error.describe() : error.message;
    // The id comes from the address, which anyone can write a link to: isolated, so a
    // right-to-left override in it cannot mirror the page's own words around it.
    status(notice, error.status === 404
      ? ["No memory ", userText(id), ` in namespace ${context.session.namespace}.`]
      : problem, "error");
    return;
  }
  if (!isMemory(memory, id)) {
    // Not the memory asked for (another resource answered): show nothing, offer no action.
    status(notice, ["The server's answer for ", userText(id), " is not that memory."], "error");
    return;
  }

  /** Show ``current``; ``focusEdit`` puts the focus back on Edit (leaving the editor). */
  function showDetail(current, { focusEdit = false } = {}) {
    memory = current;
    const actions = h("div", { class: "actions memory-actions" });
    if (canWrite) {
      actions.append(
        h("button", { type: "button", id: "memory-edit", onclick: () => showEditor() }, "Edit"),
        h("button", { type: "button", class: "danger", id: "memory-forget", onclick: forget }, "Forget"));
    }
    const actionOutput = h("div", { class: "memory-action-output", id: "memory-action-output" });
    for (const action of listMemoryActions(apiPaths, canWrite, memory)) {
      actions.append(h("button", {
        type: "button",
        id: `memory-action-${action.id}`,
        dataset: { action: action.id },
        onclick: () => action.run(memory, context, actionOutput),
      }, action.label));
    }
    const mapSlot = h("div", { class: "map-slot" });
    replace(body,
      h("h1", { id: "memory-title" }, memory.title || excerpt(memory.content, 100)),
      actions,
      actionOutput,
      h("div", { class: "memory-columns" }, definitions(fieldRows(memory)), mapSlot));
    if (memory.place) drawMap(mapSlot, memory);
    // The editor that had the focus is gone: give it to the control that opened it, not to
    // the page's end (a keyboard user would start over from the top).
    if (focusEdit) body.querySelector("#memory-edit")?.focus();
  }

  async function drawMap(slot, current) {
    let neighbours = [];
    let caption = "";
    try {
      neighbours = await neighboursOf(api, session, current, navigate);
      const farthest = neighbours.length ? Math.max(...neighbours.map((item) => distanceMetres(current.place, item.place))) : 0;
      caption = neighbours.length
        ? `${neighbours.length} nearest memor${neighbours.length === 1 ? "y" : "ies"}, within ${formatDistance(farthest)}`
        : `no other memory placed within reach of place recall (about ${PLACE_REACH} by default)`;
    } catch (error) {
      caption = `neighbours unavailable: ${error.message}`;
    }
    replace(slot, h("figure", { class: "card map" },
      placeMap(current.place, neighbours, current.place.name || "this memory"),
      h("figcaption", {}, caption,
        neighbours.length ? h("ol", { class: "neighbours", id: "map-neighbours" }, neighbours.map((item) => h("li", {},
          h("a", {
            href: `#/memory/${encodeURIComponent(item.id)}`,
            onclick: (event) => {
              event.preventDefault();
              item.onSelect();
            },
          }, item.label),
          ` — ${formatDistance(distanceMetres(current.place, item.place))}`))) : null)));
  }

  function showEditor() {
    const inputs = editorInputs(memory);
    const shown = shownValues(inputs);
    const problem = h("p", { hidden: true, id: "edit-problem" });
    // One save at a time: a second (a double click, Enter twice) went with the same
    // If-Match, was refused as a change made elsewhere, and said so over the first's "Saved".
    let saving = false;
    const save = async () => {
      if (saving) return;
      let patch;
      markInvalid(inputs, null);
      try {
        patch = changes(memory, inputs, shown);
      } catch (error) {
        status(problem, `${error.field}: ${error.message}`, "error");
        markInvalid(inputs, error.field);
        return;
      }
      if (!Object.keys(patch).length) {
        showDetail(memory, { focusEdit: true });
        status(notice, "Nothing changed.");
        return;
      }
      const saveButton = body.querySelector("#edit-save");
      saving = true;
      if (saveButton) setBusy(saveButton, true);
      try {
        const saved = await api.patchVersioned(memoryPath(memory.id), patch, version);
        version = saved.version;
        showDetail(saved.data, { focusEdit: true });
        status(notice, `Saved (${Object.keys(patch).join(", ")}).`, "success");
      } catch (error) {
        if (error.status === 412) {
          status(problem, [
            "Not saved: this memory was changed elsewhere (in another tab, or by an agent)"
            + " since you opened it, and saving would overwrite that change. Your edit is"
            + " still in the form. ",
            h("button", { type: "button", id: "edit-reload", onclick: () => reload(EDIT_DISCARDED) },
              "Discard my edit and show the memory as it is now"),
          ], "error");
          return;
        }
        if (error.status === 401) {
          // The page is kept (keepPage): the sign-in form would replace it, and the edit.
          tokenRefused(problem, "Not saved",
            "Your edit is still in the form: copy what you wrote", "edit-sign-in", error);
          return;
        }
        status(problem, error.describe ? error.describe() : error.message, "error");
        markInvalid(inputs, error.field);
      } finally {
        saving = false;
        if (saveButton) setBusy(saveButton, false);
      }
    };
    status(notice, "");
    replace(body,
      h("h1", {}, "Edit memory"),
      problem,
      editorForm(memory, inputs, save, () => showDetail(memory, { focusEdit: true })));
    inputs.title.focus();
  }

  /** Show the memory as it is now (its new version), saying ``message``. */
  async function reload(message) {
    let answer;
    try {
      answer = await api.getVersioned(memoryPath(memory.id));
    } catch (error) {
      const problem = error.describe ? error.describe() : error.message;
      showDetail(memory);
      status(notice, error.status === 404 ? `Memory ${memory.id} was forgotten meanwhile.` : problem, "error");
      return;
    }
    if (!isMemory(answer.data, memory.id)) {
      status(notice, `The server's answer for ${memory.id} is not that memory.`, "error");
      return;
    }
    version = answer.version;
    showDetail(answer.data, { focusEdit: true });
    status(notice, message);
  }

  async function forget() {
    const confirmed = await confirmAction(
      "Forget this memory?",
      "It is removed with its vectors, features, index entries and queued recollections, and cannot be recovered.",
      "Forget");
    if (!confirmed) return;
    try {
      // From the copy on screen (If-Match): a memory changed meanwhile is not forgotten
      // unseen, the user is shown it as it is now first.
      await api.remove(memoryPath(memory.id), version);
      navigate("browse", "forgotten");
    } catch (error) {
      if (error.status === 412) {
        status(notice, [
          "Not forgotten: this memory was changed elsewhere (in another tab, or by an agent)"
          + " since you opened it. ",
          h("button", { type: "button", id: "forget-reload", onclick: () => reload(NOT_FORGOTTEN) },
            "Show the memory as it is now"),
        ], "error");
        return;
      }
      status(notice, error.describe ? error.describe() : error.message, "error");
    }
  }

  showDetail(memory);
}
