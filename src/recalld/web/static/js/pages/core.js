// Core memory: both targets with their entries and a live character budget bar.
// Edits (add, patch, remove) are collected into one batch and sent as one
// POST /v1/core/{target}: applied atomically, the limit checked on the result. A
// batch that would overflow is refused with the current entries, shown here.

import { projected, size } from "../core-budget.js";
import { bar, excerpt, h, replace, status, tokenRefused } from "../dom.js";

const TARGETS = [
  { id: "user", title: "User profile", hint: "who the user is" },
  { id: "memory", title: "Memory", hint: "the agent's own notes" },
];

// An entry's text inside the batch's sentences, isolated from them (see .user-text).
function quoted(text) {
  return ["“", h("bdi", { class: "user-text" }, text), "”"];
}

function describe(operation) {
  if (operation.action === "add") return ["add ", quoted(operation.content)];
  if (operation.action === "remove") return ["remove ", quoted(operation.old_text)];
  return ["change ", quoted(operation.old_text), " to ", quoted(operation.content)];
}

function targetCard(target, state, { api, canWrite }, { refreshBlock, showBlock }) {
  const operations = [];
  const meter = h("div", { class: "budget", id: `budget-${target.id}` });
  const entriesList = h("ol", { class: "core-entries", id: `entries-${target.id}` });
  const batchList = h("ul", { class: "core-batch", id: `batch-${target.id}` });
  const notice = h("p", { hidden: true, id: `core-notice-${target.id}` });
  const refused = h("div", { class: "refused", id: `refused-${target.id}`, hidden: true });
  const addInput = h("input", {
    type: "text", id: `add-${target.id}`, placeholder: "a new single-line entry", autocomplete: "off",
    "aria-label": `new entry for ${target.title}`,
  });
  const applyButton = h("button", { type: "button", id: `apply-${target.id}`, disabled: true }, "Apply batch");
  const discardButton = h("button", { type: "button", id: `discard-${target.id}`, disabled: true }, "Discard");

  function updateMeter() {
    const draft = addInput.value.trim() ? [{ action: "add", content: addInput.value }] : [];
    const chars = size(projected(state.entries, [...operations, ...draft]));
    const over = chars > state.limit;
    meter.replaceChildren(
      bar(chars / state.limit, { kind: over ? "over" : chars >= 0.9 * state.limit ? "warn" : "ok", label: `${target.id} budget` }),
      h("span", { class: `budget-text${over ? " over" : ""}`, id: `budget-text-${target.id}` },
        `${chars}/${state.limit} chars${operations.length || draft.length ? ` (now ${state.chars})` : ""}${over ? " — over the limit" : ""}`));
  }

  function renderBatch() {
    replace(batchList, operations.map((operation, index) => h("li", {},
      describe(operation), " ",
      h("button", {
        type: "button",
        class: "link-button",
        "aria-label": `undo ${operation.action} “${excerpt(operation.old_text ?? operation.content, 60)}”`,
        onclick: () => {
          operations.splice(index, 1);
          renderBatch();
          // The button is gone with the list: the focus goes on in the batch, not to the
          // page's start.
          const buttons = batchList.querySelectorAll("button");
          (buttons[Math.min(index, buttons.length - 1)] || addInput).focus();
        },
      }, "undo"))));
    applyButton.disabled = !operations.length;
    discardButton.disabled = !operations.length;
    updateMeter();
  }

  function entryItem(entry) {
    const item = h("li", { class: "core-entry" }, h("span", { class: "entry-text" }, entry));
    if (!canWrite) return item;
    const edit = () => {
      const input = h("input", { type: "text", value: entry, class: "entry-edit", "aria-label": "entry" });
      const keep = h("button", {
        type: "button",
        onclick: () => {
          if (input.value.trim() && input.value.trim() !== entry) {
            operations.push({ action: "patch", old_text: entry, content: input.value.trim() });
            renderBatch();
          }
          replace(item, h("span", { class: "entry-text" }, entry), controls());
          item.querySelector("button")?.focus(); // its "edit" again, not the page's start
        },
      }, "Keep change");
      replace(item, input, keep);
      input.focus();
    };
    // Each entry's buttons say which entry they act on: a list of "edit, remove, edit,
    // remove" tells a screen reader user nothing.
    const named = (verb) => `${verb} “${excerpt(entry, 60)}”`;
    const controls = () => h("span", { class: "entry-controls" },
      h("button", { type: "button", class: "link-button", "aria-label": named("edit"), onclick: edit }, "edit"),
      h("button", {
        type: "button",
        class: "link-button",
        "aria-label": named("remove"),
        onclick: () => {
          operations.push({ action: "remove", old_text: entry });
          renderBatch();
        },
      }, "remove"));
    item.append(controls());
    return item;
  }

  function renderEntries() {
    replace(entriesList, state.entries.length ? state.entries.map(entryItem) : h("li", { class: "empty" }, "(empty)"));
  }

  // After a refused batch: the entries as stored now (another client may have changed
  // them, which is often why the batch failed), the batch kept to undo or send again.
  async function reload() {
    try {
      const core = await api.get("/v1/core");
      state = core[target.id];
      renderEntries();
      updateMeter();
      showBlock(core.block);
    } catch {
      // The notice already says what failed; the next batch or a reload tries again.
    }
  }

  // One batch in flight at a time: a second click sent it again, and its refusal (the
  // change was already made) was shown over the first one's success.
  let applying = false;

  // Apply and Discard disable themselves (nothing left to send), which drops their focus to
  // the document: a keyboard user goes on from Apply (kept batch) or the new-entry field.
  const refocus = (button) => {
    // Still the button (now disabled: Chromium moves the focus only at its next update) or
    // already the document; anything else was chosen by the user meanwhile.
    const active = document.activeElement;
    if (active && active !== document.body && active !== button) return;
    (button.disabled ? addInput : button).focus();
  };

  applyButton.addEventListener("click", async () => {
    if (applying || !operations.length) return;
    applying = true;
    const focused = document.activeElement === applyButton;
    applyButton.disabled = true;
    refused.hidden = true;
    try {
      const result = await api.postKept(`/v1/core/${target.id}`, { operations });
      operations.length = 0;
      state = { ...state, entries: result.entries, chars: result.chars, limit: result.limit };
      renderEntries();
      renderBatch();
      refreshBlock();
      status(notice, [result.message, result.warning].filter(Boolean).join(" "), result.warning ? "warn" : "success");
    } catch (error) {
      if (error.type === "core_memory_full") {
        const detail = error.body.error;
        status(notice, error.message, "error");
        replace(refused,
          h("h3", {}, `Refused — stored now (${detail.usage} chars):`),
          h("ol", {}, detail.entries.map((entry) => h("li", {}, entry))),
          h("p", {}, "Nothing was changed. Remove or shorten entries in the same batch to make room."));
        refused.hidden = false;
      } else if (error.status === 401) {
        // The page is kept (postKept): the sign-in form would replace it, and the batch.
        tokenRefused(notice, "Not applied", "Your batch is still listed: copy what you wrote",
          `core-${target.id}-sign-in`, error);
      } else {
        status(notice, error.describe ? error.describe() : error.message, "error");
      }
      if (error.status !== 401) await reload();  // a 401 keeps the batch, as it was
    } finally {
      applying = false;
      applyButton.disabled = !operations.length;
      if (focused) refocus(applyButton);
    }
  });
  discardButton.addEventListener("click", () => {
    const focused = document.activeElement === discardButton;
    operations.length = 0;
    renderEntries();
    renderBatch();
    if (focused) refocus(discardButton);
  });
  addInput.addEventListener("input", updateMeter);

  const addForm = canWrite ? h("form", {
    class: "core-add",
    onsubmit: (event) => {
      event.preventDefault();
      if (!addInput.value.trim()) return;
      operations.push({ action: "add", content: addInput.value.trim() });
      addInput.value = "";
      renderBatch();
    },
  }, addInput, h("button", { type: "submit", id: `add-button-${target.id}` }, "Add to batch")) : null;

  renderEntries();
  updateMeter();
  return h("section", { class: "card core-target", id: `core-${target.id}` },
    h("h2", {}, target.title, " ", h("small", {}, `(${target.id}: ${target.hint})`)),
    meter,
    entriesList,
    addForm,
    canWrite ? h("div", { class: "batch" }, h("h3", {}, "Batch"), batchList, h("div", { class: "actions" }, applyButton, discardButton)) : null,
    notice,
    refused);
}

/** Render the page. */
export async function render(root, context) {
  const notice = h("p", { hidden: true });
  const targets = h("div", { class: "core-targets" });
  const block = h("pre", { class: "core-block", id: "core-block" });
  root.append(h("h1", {}, "Core memory"),
    h("p", { class: "hint" }, "Injected into every prompt. Edits gather into one batch per target, applied all at once."),
    notice, targets,
    h("details", { class: "card" }, h("summary", {}, "As injected into prompts"), block));

  async function refreshBlock() {
    try {
      block.textContent = (await context.api.get("/v1/core")).block;
    } catch (error) {
      status(notice, error.describe ? error.describe() : error.message, "error");
    }
  }

  async function load() {
    try {
      const core = await context.api.get("/v1/core");
      const callbacks = {
        refreshBlock,
        showBlock: (text) => {
          block.textContent = text;
        },
      };
      replace(targets, TARGETS.map((target) => targetCard(target, core[target.id], context, callbacks)));
      block.textContent = core.block;
    } catch (error) {
      status(notice, error.describe ? error.describe() : error.message, "error");
    }
  }
  await load();
}
