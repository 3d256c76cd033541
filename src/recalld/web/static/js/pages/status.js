// Status: the background queue by state, embedding progress per model, worker
// heartbeats, failed jobs and their errors (GET /v1/status); counts per kind and
// category (GET /v1/stats); memories over time (GET /v1/stats/timeline).

import { countBars, timelineChart, timelineTable } from "../charts.js";
import { bar, bytes, definitions, fixed, h, replace, status, token, viewerTime } from "../dom.js";

const UNITS = { day: 30, week: 26, month: 24 };

function table(headings, rows, id) {
  if (!rows.length) return h("p", { class: "empty" }, "none");
  return h("div", { class: "table-scroll" }, h("table", { id },
    h("thead", {}, h("tr", {}, headings.map((heading) => h("th", {}, heading)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((cell) => h("td", {}, cell)))))));
}

function embeddingRows(state, stats) {
  const models = Object.entries(state.embeddings);
  if (state.embedder && !models.some(([model]) => model === state.embedder)) models.unshift([state.embedder, 0]);
  if (!models.length) return h("p", { class: "empty" }, state.embedder ? "no vectors yet" : "keyword recall only (no embedder configured)");
  return h("div", { class: "embeddings" }, models.map(([model, count]) => {
    const total = Math.max(stats.count, count);
    return h("div", { class: "bar-row embedding", dataset: { model } },
      h("span", { class: "bar-name" }, model, model === state.embedder ? " (current)" : ""),
      bar(total ? count / total : 0, { kind: "progress", label: `${model} embedded` }),
      h("span", { class: "bar-value" }, `${count}/${total}`));
  }));
}

/** The database's size; null when this token may not know it (it holds one namespace only). */
function databaseSize(count) {
  if (count === null || count === undefined) {
    return h("span", { id: "database-size", title: "shown to a token for every namespace (*) only" }, "—");
  }
  return h("span", { id: "database-size" }, bytes(count));
}

/** Render the page. */
export async function render(root, { api, navigate }) {
  const notice = h("p", { hidden: true });
  const overview = h("section", { class: "card", id: "status-overview" });
  const queue = h("section", { class: "card", id: "status-queue" });
  const embeddings = h("section", { class: "card", id: "status-embeddings" });
  const workers = h("section", { class: "card wide", id: "status-workers" });
  const failures = h("section", { class: "card wide", id: "status-failed" });
  const kinds = h("section", { class: "card", id: "status-kinds" });
  const categories = h("section", { class: "card", id: "status-categories" });
  const unit = h("select", { id: "timeline-unit", "aria-label": "bucket size" }, Object.keys(UNITS).map((name) => h("option", { value: name }, `per ${name}`)));
  const field = h("select", { id: "timeline-field", "aria-label": "count memories" },
    h("option", { value: "created" }, "by when stored"),
    h("option", { value: "at" }, "by when it happened"));
  const chart = h("div", { class: "chart" });
  const timeline = h("section", { class: "card wide", id: "status-timeline" },
    h("h2", {}, "Memories over time ", unit, " ", field), chart);
  const refresh = h("button", { type: "button", id: "status-refresh" }, "Refresh");
  root.append(h("h1", {}, "Status ", refresh), notice,
    h("div", { class: "status-grid" }, overview, queue, embeddings, workers, kinds, categories, timeline, failures));

  async function loadTimeline() {
    try {
      const data = await api.get("/v1/stats/timeline", { unit: unit.value, buckets: UNITS[unit.value], field: field.value });
      replace(chart, timelineChart(data), h("p", { class: "hint" }, `${data.total} in the last ${data.buckets.length} ${data.unit}s (UTC)`),
        timelineTable(data));
    } catch (error) {
      replace(chart, h("p", { class: "notice error" }, error.describe ? error.describe() : error.message));
    }
  }

  async function load() {
    status(notice, "");
    try {
      const [state, stats] = await Promise.all([api.get("/v1/status"), api.get("/v1/stats")]);
      replace(overview, h("h2", {}, "Store"), definitions([
        ["memories", String(stats.count)],
        ["search backend", stats.search_backend],
        ["backends in use", state.search_backends.join(", ")],
        ["embedder", state.embedder || "none (keyword only)"],
        ["database size", databaseSize(stats.db_size_bytes)],
        ["schema version", String(stats.schema_version)],
        ["expired, not yet purged", String(stats.expired_pending_purge)],
        ["vector index", state.index ? `${state.index.vectors} vectors${state.index.ann ? " (HNSW)" : ""}` : "—"],
      ]));
      replace(queue, h("h2", {}, "Queue by state"), countBars(state.queue, "queue"),
        h("h3", {}, "Memories by index state"), countBars(state.memories_by_index_state, "index-state"));
      replace(embeddings, h("h2", {}, "Embeddings per model"), embeddingRows(state, stats));
      replace(workers, h("h2", {}, "Workers"), table(
        ["worker", "host", "pid", "model", "state", "heartbeat", "processed", "failed"],
        state.workers.map((worker) => [
          h("code", {}, worker.id), worker.host, String(worker.pid), worker.model,
          // A token of some namespaces sees no state or counts (they move with every namespace's jobs).
          h("span", { class: `badge ${worker.alive ? "alive" : "dead"}` }, worker.alive ? (worker.state ?? "alive") : `${worker.state ?? "stopped"} (silent)`),
          `${fixed(worker.heartbeat_age_seconds, 1)} s ago`, worker.processed === null ? "—" : String(worker.processed), worker.failed === null ? "—" : String(worker.failed),
        ]), "workers-table"));
      replace(failures, h("h2", {}, "Failed jobs"), table(
        ["memory", "model", "state", "attempts", "error", "when"],
        state.failed_jobs.map((job) => [
          h("a", {
            href: `#/memory/${encodeURIComponent(job.memory_id)}`,
            onclick: (event) => {
              event.preventDefault();
              navigate("memory", job.memory_id);
            },
          }, job.memory_id),
          job.model, h("span", { class: `badge state-${token(job.state)}` }, job.state), String(job.attempts),
          h("span", { class: "error-text" }, job.error || ""), viewerTime(job.updated_at),
        ]), "failed-table"));
      replace(kinds, h("h2", {}, "Kinds"), countBars(stats.by_kind, "kind"));
      replace(categories, h("h2", {}, "Categories"), countBars(stats.by_category, "category"));
    } catch (error) {
      status(notice, error.describe ? error.describe() : error.message, "error");
    }
    await loadTimeline();
  }

  unit.addEventListener("change", loadTimeline);
  field.addEventListener("change", loadTimeline);
  refresh.addEventListener("click", load);
  await load();
}
