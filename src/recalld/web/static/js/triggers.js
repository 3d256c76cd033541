// Intentions in words: each trigger as a sentence, and an intention's card (action,
// state, triggers, next due, firings). Used by the Intentions page and by the
// "triggers" action on an intention's memory. Every field is rendered as text.

import { fixed, h, localTime, token, userText, viewerTime } from "./dom.js";
import { formatDistance } from "./map.js";

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/** "Fri 2026-12-04 09:00 UTC+01:00": the wall clock in the time's own offset, with its weekday. */
export function wallClock(iso) {
  if (!iso) return "—";
  const match = /^(\d{4})-(\d{2})-(\d{2})T/.exec(iso);
  const shown = localTime(iso).replace(/(\d{2}:\d{2}):00 /, "$1 ");
  if (!match) return shown;
  const weekday = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))).getUTCDay();
  return `${WEEKDAYS[weekday]} ${shown}`;
}

function timeWords(trigger) {
  const zone = ` (${trigger.zone})`;
  if (trigger.every) {
    const rule = trigger.rrule && trigger.rrule !== trigger.every ? ` (${trigger.rrule})` : "";
    const start = trigger.at ? ` from ${wallClock(trigger.at)}` : "";
    const window = trigger.window_minutes ? `, for ${fixed(trigger.window_minutes, 0)} min after each` : "";
    return `${trigger.every}${rule}${start}${window}${zone}`;
  }
  if (trigger.at && trigger.until) return `between ${wallClock(trigger.at)} and ${wallClock(trigger.until)}${zone}`;
  if (trigger.at) {
    const window = trigger.window_minutes ? `, for ${fixed(trigger.window_minutes, 0)} min` : "";
    return `at ${wallClock(trigger.at)}${window}${zone}`;
  }
  return `a time${zone}`;
}

function signalWords(trigger) {
  const parts = [];
  if (trigger.above !== null && trigger.above !== undefined) parts.push(`above ${trigger.above}`);
  if (trigger.below !== null && trigger.below !== undefined) parts.push(`below ${trigger.below}`);
  const sustained = trigger.readings > 1 ? ` for ${trigger.readings} readings in a row` : "";
  return [userText(trigger.signal), ` ${parts.join(" and ")}${sustained}`];
}

/**
 * One trigger as a sentence: "within 100 m of pharmacy (48.85000, 2.35000)" (text and
 * nodes: what the intention's author wrote is isolated, see ``userText``).
 */
export function triggerWords(trigger) {
  switch (trigger.type) {
    case "place": {
      const where = `${fixed(trigger.lat, 5)}, ${fixed(trigger.lon, 5)}`;
      return [`within ${formatDistance(trigger.radius_m)} of `,
        trigger.name ? [userText(trigger.name), ` (${where})`] : where];
    }
    case "time":
      return timeWords(trigger);
    case "mention":
      return ["when ", userText(trigger.text, { quote: true }), " is mentioned"];
    case "tag":
      return ["when the context is tagged #", userText(trigger.tag)];
    case "signal":
      return ["when ", signalWords(trigger)];
    default:
      return JSON.stringify(trigger);
  }
}

function repeatWords(intention) {
  if (intention.repeat === "every_time") {
    const interval = intention.min_interval_seconds
      ? `, at most every ${formatSeconds(intention.min_interval_seconds)}`
      : "";
    return `every time${interval}`;
  }
  return intention.triggers.some((trigger) => trigger.type === "time" && trigger.every) ? "each occurrence" : "once";
}

function formatSeconds(seconds) {
  if (seconds < 120) return `${fixed(seconds, 0)} s`;
  if (seconds < 7200) return `${fixed(seconds / 60, 0)} min`;
  return `${fixed(seconds / 3600, 1)} h`;
}

/** "in 3 h", "in 2 days", "5 min ago" from now. */
export function fromNow(iso, now = Date.now()) {
  const moment = new Date(iso).getTime();
  if (Number.isNaN(moment)) return "";
  const seconds = (moment - now) / 1000;
  const size = Math.abs(seconds);
  let amount;
  if (size < 90) amount = `${Math.round(size)} s`;
  else if (size < 5400) amount = `${Math.round(size / 60)} min`;
  else if (size < 129600) amount = `${Math.round(size / 3600)} h`;
  else amount = `${Math.round(size / 86400)} days`;
  return seconds >= 0 ? `in ${amount}` : `${amount} ago`;
}

function due(iso) {
  if (!iso) return null;
  return h("span", { class: "next-due" }, wallClock(iso), h("span", { class: "hint" }, ` (${fromNow(iso)})`));
}

function facts(pairs) {
  return h("dl", { class: "intention-facts" }, pairs
    .filter(([, value]) => value !== null && value !== undefined && value !== "")
    .map(([term, value]) => h("div", { class: "fact" }, h("dt", {}, term), h("dd", {}, value))));
}

/**
 * An intention's card: its action, state, triggers in words, next due and firings;
 * ``controls`` (buttons) go at the bottom, ``memoryLink`` (a node) links its memory.
 */
export function intentionCard(intention, { controls = [], memoryLink = null } = {}) {
  const fired = intention.fire_count
    ? `${intention.fire_count} time${intention.fire_count === 1 ? "" : "s"}, last ${wallClock(intention.last_fired_at)}`
    : "not yet";
  return h("article", {
    class: `card intention state-${token(intention.state)}`,
    dataset: { intentionId: intention.id },
  },
  h("div", { class: "intention-head" },
    h("h3", { class: "intention-action" }, intention.action),
    h("span", { class: `badge intention-state state-${token(intention.state)}` }, intention.state),
    h("span", { class: "badge intention-repeat" }, repeatWords(intention))),
  h("ul", { class: "triggers" }, intention.triggers.map((trigger) =>
    h("li", { class: `trigger trigger-${token(trigger.type)}`, dataset: { trigger: trigger.type } },
      h("span", { class: "trigger-type" }, trigger.type), " ", triggerWords(trigger)))),
  facts([
    ["next due", intention.next_due ? due(intention.next_due) : (intention.state === "active" ? "when its context comes up" : null)],
    ["fired", fired],
    ["expires", intention.expires_at ? wallClock(intention.expires_at) : "never"],
    ["created", viewerTime(intention.created_at)],
    ["memory", memoryLink],
  ]),
  controls.length ? h("div", { class: "actions" }, controls) : null);
}
