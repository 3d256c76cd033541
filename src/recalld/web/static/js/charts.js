// Small charts drawn as SVG (no library): counts as horizontal bars, and a column
// chart of memories over time.

import { barRow, h, svg } from "./dom.js";

/** One bar per entry of ``counts`` ({name: count}), largest first, relative to the largest. */
export function countBars(counts, kindPrefix) {
  const entries = Object.entries(counts || {}).sort((left, right) => right[1] - left[1]);
  if (!entries.length) return h("p", { class: "empty" }, "none yet");
  const largest = Math.max(...entries.map(([, count]) => count), 1);
  return h("div", { class: "count-bars" }, entries.map(([name, count]) =>
    barRow(name, count / largest, String(count), kindPrefix)));
}

function dayLabel(iso, unit) {
  const text = String(iso).slice(0, unit === "month" ? 7 : 10);
  return text;
}

/** A column per bucket of a timeline ({buckets: [{start, end, count}], unit}). */
export function timelineChart(timeline) {
  const width = 1000;
  const height = 170;
  const left = 32;
  const bottom = 22;
  const top = 10;
  const buckets = timeline.buckets;
  const largest = Math.max(1, ...buckets.map((bucket) => bucket.count));
  const slot = (width - left - 8) / Math.max(buckets.length, 1);
  const plot = height - bottom - top;
  return svg("svg", {
    class: "timeline-chart",
    id: "timeline-chart",
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": `memories per ${timeline.unit}`,
  },
  svg("line", { class: "chart-axis", x1: left, y1: height - bottom, x2: width - 4, y2: height - bottom }),
  svg("line", { class: "chart-axis", x1: left, y1: top, x2: left, y2: height - bottom }),
  svg("text", { class: "chart-label", x: left - 4, y: top + 8, "text-anchor": "end" }, String(largest)),
  svg("text", { class: "chart-label", x: left - 4, y: height - bottom, "text-anchor": "end" }, "0"),
  buckets.map((bucket, index) => {
    const barHeight = (bucket.count / largest) * plot;
    return svg("rect", {
      class: "chart-column",
      x: (left + index * slot + slot * 0.15).toFixed(1),
      y: (height - bottom - barHeight).toFixed(1),
      width: Math.max(1, slot * 0.7).toFixed(1),
      height: barHeight.toFixed(1),
    }, svg("title", {}, `${dayLabel(bucket.start, timeline.unit)}: ${bucket.count}`));
  }),
  buckets.length ? [
    svg("text", { class: "chart-label", x: left, y: height - 6 }, dayLabel(buckets[0].start, timeline.unit)),
    svg("text", { class: "chart-label", x: width - 4, y: height - 6, "text-anchor": "end" },
      dayLabel(buckets[buckets.length - 1].start, timeline.unit)),
  ] : null);
}

/**
 * The timeline's counts as a table, folded under the chart: the chart is an image whose
 * per-column counts only a mouse reaches (its tooltips), so a screen reader or keyboard
 * user reads them here.
 */
export function timelineTable(timeline) {
  return h("details", { class: "chart-table", id: "timeline-table" },
    h("summary", {}, "The counts as a table"),
    h("div", { class: "table-scroll" }, h("table", {},
      h("caption", {}, `Memories per ${timeline.unit} (UTC)`),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, timeline.unit), h("th", { scope: "col" }, "memories"))),
      h("tbody", {}, timeline.buckets.map((bucket) => h("tr", {},
        h("th", { scope: "row" }, h("time", { datetime: bucket.start }, dayLabel(bucket.start, timeline.unit))),
        h("td", {}, String(bucket.count))))))));
}
