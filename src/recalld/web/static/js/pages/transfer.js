// Import/export: upload JSON lines (the format /v1/export writes and `recalld import`
// reads) with a progress bar, and download the namespace's export. Both go through
// the API with the bearer header; the download is fetched, then saved from a blob.

import { UploadCancelled } from "../api.js";
import { h, replace, setBusy, status, userText } from "../dom.js";

const NDJSON = "application/x-ndjson";
// How many of an import's refusals are listed (each is a line of the page).
const ERRORS_LISTED = 100;

// The file's name only tells the server's format detection its kind (USER.md, MEMORY.md,
// .jsonl), and the server refuses a name holding an invisible character (the zero-width
// joiner inside many emoji), which refused the whole upload: anything but printable
// ASCII is sent as "_", which no kind depends on.
function uploadName(name) {
  return name.replace(/[^\x20-\x7e]/gu, "_");
}

// What an export's other lines hold, by their type (a memory line has none).
const RECORD_KINDS = {
  "recalld.core": "core memory",
  "recalld.entity": "declared graph",
  "recalld.relation": "declared graph",
  "recalld.senses": "senses",
  "recalld.intention": "reminders",
  "recalld.pending": "reminders",
};

/** How many lines of an export are memories, how many are other records, and what those hold. */
function countRecords(text) {
  let memories = 0;
  let others = 0;
  const kinds = new Set();
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let record = null;
    try {
      record = JSON.parse(line);
    } catch {
      // not JSON: not a memory
    }
    if (record && typeof record === "object" && !Array.isArray(record) && record.type === undefined) {
      memories += 1;
    } else {
      others += 1;
      const type = record && record.type;
      kinds.add(typeof type === "string" && Object.hasOwn(RECORD_KINDS, type) ? RECORD_KINDS[type] : "other");
    }
  }
  return { memories, others, kinds: [...kinds] };
}

/** Render the page. */
export async function render(root, { api, session, canWrite }) {
  const exportNotice = h("p", { hidden: true, id: "export-notice" });
  const exportButton = h("button", { type: "button", id: "export-download" }, "Download export (JSONL)");
  exportButton.addEventListener("click", async () => {
    // The namespace the export is asked of: the file is named after it, though the user
    // may switch to another before a large export has arrived (it was named after that one).
    const namespace = session.namespace;
    status(exportNotice, "Preparing…");
    try {
      const response = await api.download("/v1/export");
      const blob = await response.blob();
      const { memories, others, kinds } = countRecords(await blob.text());
      const link = h("a", {
        href: URL.createObjectURL(blob),
        download: `recalld-${namespace.replace(/[^A-Za-z0-9._-]/g, "_")}-${new Date().toISOString().slice(0, 10)}.jsonl`,
        hidden: true,
      });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
      const rest = others ? ` and ${others} other record${others === 1 ? "" : "s"} (${kinds.join(", ")})` : "";
      status(exportNotice, `Exported ${memories} memor${memories === 1 ? "y" : "ies"}${rest} from ${namespace}.`, "success");
    } catch (error) {
      status(exportNotice, error.describe ? error.describe() : error.message, "error");
    }
  });

  root.append(h("h1", {}, "Import/export"),
    h("section", { class: "card" },
      h("h2", {}, "Export"),
      h("p", { class: "hint" }, "Every live memory of this namespace, one JSON object per line (every field but seq)."),
      exportButton, exportNotice));

  if (!canWrite) return;
  const file = h("input", { type: "file", id: "import-file", accept: ".jsonl,.ndjson,.json,.md,application/x-ndjson,application/json,text/plain,text/markdown" });
  const progress = h("progress", { id: "import-progress", max: 1, value: 0, hidden: true });
  const notice = h("p", { hidden: true, id: "import-notice" });
  const report = h("div", { id: "import-report" });
  const upload = h("button", { type: "submit", id: "import-upload" }, "Upload");
  // Shown while the file is on its way: the server imports only once it has it all, so
  // stopping before then imports nothing. Once sent, the import runs: no cancel is offered.
  const cancel = h("button", { type: "button", id: "import-cancel", hidden: true }, "Cancel upload");
  let uploading = null;
  cancel.addEventListener("click", () => uploading?.abort());
  // Hidden, the button would drop a keyboard user's focus to the page's start: it goes
  // to the file chooser, from where one picks again.
  const hideCancel = () => {
    const focused = document.activeElement === cancel;
    cancel.hidden = true;
    if (focused) file.focus();
  };
  const form = h("form", {
    class: "card",
    onsubmit: async (event) => {
      event.preventDefault();
      const chosen = file.files && file.files[0];
      if (!chosen) {
        status(notice, "Choose a file first.", "error");
        return;
      }
      const namespace = session.namespace; // the one the upload goes to, whatever comes next
      progress.hidden = false;
      progress.value = 0;
      setBusy(upload, true);
      status(notice, ["Uploading ", userText(chosen.name), "…"]);
      try {
        const path = `/v1/import?name=${encodeURIComponent(uploadName(chosen.name))}`;
        uploading = new AbortController();
        cancel.hidden = false;
        const result = await api.upload(path, chosen, NDJSON, (fraction) => {
          progress.value = fraction;
        }, {
          signal: uploading.signal,
          onSent: () => {
            hideCancel();
            status(notice, ["Sent ", userText(chosen.name), ": the server is importing it…"]);
          },
        });
        status(notice, `Imported (${result.format}) into ${namespace}: ${result.created} created, ${result.updated} updated, ${result.unchanged} unchanged, ${result.skipped} skipped, ${result.errors_total} refused.`, result.errors_total ? "warn" : "success");
        const where = (problem) => [problem.item != null ? `item ${problem.item}` : null, problem.line != null ? `line ${problem.line}` : null].filter(Boolean).join(", ");
        // The first refusals only: a file of junk lines has one per line (a million of them
        // froze the tab); the count above says how many there are in all.
        const listed = result.errors.slice(0, ERRORS_LISTED);
        // The server keeps the first 1000 and counts all in errors_total (integration read, stop 69).
        const unlisted = result.errors_total - listed.length;
        replace(report, result.errors.length
          ? [h("ul", { class: "import-errors" }, listed.map((problem) => h("li", {}, `${where(problem)}: ${problem.error}`))),
            unlisted ? h("p", { class: "hint", id: "import-errors-unlisted" }, `The first ${listed.length} refusals are listed; ${unlisted} more are not.`) : null]
          : null);
      } catch (error) {
        const cancelled = error instanceof UploadCancelled;
        if (cancelled) progress.hidden = true;
        status(notice, error.describe ? error.describe() : error.message, cancelled ? "warn" : "error");
      } finally {
        uploading = null;
        hideCancel();
        setBusy(upload, false);
      }
    },
  },
  h("h2", {}, "Import"),
  h("p", { class: "hint" }, "A recalld export (JSON lines), or another tool's: the MCP memory server's memory.jsonl, a mem0 export, Hermes' MEMORY.md or USER.md, ChatGPT's or Claude's conversations.json (told apart by content). Importing again changes nothing; a bad line or item is reported by number and the rest still imports."),
  h("label", { class: "field", for: "import-file" }, "file to import"),
  file, upload, cancel, progress, notice, report);
  root.append(form);
}
