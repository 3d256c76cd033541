// DOM helpers. Memory content is untrusted text an agent wrote, so nothing here
// ever parses a string as HTML: children are nodes or text nodes, attributes are
// set one by one, and styles only through the CSSOM (the page's
// Content-Security-Policy forbids style attributes in markup).

const SVG_NAMESPACE = "http://www.w3.org/2000/svg";

function appendChildren(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

function setAttributes(element, attributes) {
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else if (name === "dataset") {
      Object.assign(element.dataset, value);
    } else if (name === "style") {
      throw new Error("set styles through element.style, never as an attribute");
    } else if (value === true) {
      element.setAttribute(name, "");
    } else {
      element.setAttribute(name, String(value));
    }
  }
}

/** An HTML element with attributes and children (strings become text nodes). */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  setAttributes(element, attributes);
  return appendChildren(element, children);
}

/** An SVG element, the same way. */
export function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG_NAMESPACE, tag);
  setAttributes(element, attributes);
  return appendChildren(element, children);
}

/** Replace every child of ``element`` with ``children``. */
export function replace(element, ...children) {
  element.replaceChildren();
  return appendChildren(element, children);
}

/** A CSS class name made from server data (a channel or state name): letters, digits, - and _. */
export function token(text) {
  return String(text).toLowerCase().replace(/[^a-z0-9_-]/g, "-");
}

/** A horizontal bar filled to ``fraction`` (0-1); its width is set through the CSSOM. */
export function bar(fraction, { kind = "", label = "" } = {}) {
  const clamped = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0));
  const fill = h("span", { class: `bar-fill ${kind}`.trim() });
  fill.style.width = `${(clamped * 100).toFixed(1)}%`;
  const element = h("span", {
    class: "bar",
    role: "meter",
    "aria-valuemin": "0",
    "aria-valuemax": "1",
    "aria-valuenow": clamped.toFixed(3),
    "aria-label": label || null,
  }, fill);
  return element;
}

/** A labelled bar row: name, bar, value. */
export function barRow(name, fraction, value, kind = "") {
  return h("div", { class: "bar-row" },
    h("span", { class: "bar-name" }, name),
    bar(fraction, { kind, label: name }),
    h("span", { class: "bar-value" }, value));
}

/**
 * A message line (info, error or success) that replaces itself on the next call:
 * text, or text and nodes (author text isolated with ``userText``); empty hides it.
 * A screen reader is told each message ("3 hits", "Saved", an error) too: see announce.
 */
export function status(element, message, tone = "info") {
  element.className = `notice ${tone}`;
  replace(element, message);
  element.hidden = !element.textContent;
  if (element.textContent) announce(element.textContent, tone);
}

/**
 * Say in ``element`` that a change was refused because the token is no longer accepted,
 * while the page (and what the user typed) is kept: ``outcome`` ("Not saved"), ``kept``
 * (where their text still is), and a button ``buttonId`` opening the sign-in form
 * (``error.signIn``, see api.js ``keepPage``). One wording for every form that keeps its
 * text on a 401.
 */
export function tokenRefused(element, outcome, kept, buttonId, error) {
  status(element, [
    `${outcome}: the server no longer accepts your token (it was revoked, or the server's`
    + ` tokens changed). ${kept}, then `,
    h("button", { type: "button", id: buttonId, onclick: () => error.signIn?.() },
      "sign in again"),
  ], "error");
}

// The page's two live regions (index.html): present, empty and never hidden from the
// start, because a screen reader follows only changes inside a live region it already
// knows; a message line that appears (it was hidden) with its text is not reliably read.
const ANNOUNCEMENT_REGIONS = { polite: "announcements", assertive: "alerts" };
const announced = { polite: 0, assertive: 0 };

/**
 * Have a screen reader say ``text``: politely (after what it is saying), an error at once.
 * The region is emptied first and filled a moment later, so the same message twice ("Saved",
 * "Saved") is said twice; a newer message replaces one not yet written.
 */
export function announce(text, tone = "info") {
  const urgency = tone === "error" ? "assertive" : "polite";
  const region = document.getElementById(ANNOUNCEMENT_REGIONS[urgency]);
  if (!region) return;
  const ticket = ++announced[urgency];
  region.textContent = "";
  setTimeout(() => {
    if (ticket === announced[urgency]) region.textContent = text;
  }, 100);
}

const LOCAL_PATTERN = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::(\d{2}))?(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * A time in the offset it was written with ("2026-10-25 08:10:00 UTC+02:00"): the
 * local time of day where it happened, not converted to the viewer's zone.
 */
export function localTime(iso) {
  if (!iso) return "—";
  const match = LOCAL_PATTERN.exec(iso);
  if (!match) return iso;
  const [, date, minutes, seconds, offset] = match;
  const zone = !offset || offset === "Z" ? "UTC" : `UTC${offset}`;
  return `${date} ${minutes}${seconds ? `:${seconds}` : ""} ${zone}`;
}

/** A stored UTC time shown in the viewer's own zone (the raw value is in the tooltip). */
export function viewerTime(iso) {
  if (!iso) return "—";
  const moment = new Date(iso);
  if (Number.isNaN(moment.getTime())) return iso;
  return h("time", { datetime: iso, title: iso }, moment.toLocaleString());
}

/**
 * Untrusted text inside a sentence the page writes ("when “…” is mentioned"): in its own
 * bidirectional run (<bdi>), so a right-to-left override it holds cannot mirror the words
 * around it. ``quote`` adds the curly quotes.
 */
export function userText(text, { quote = false } = {}) {
  const isolated = h("bdi", { class: "user-text" }, text);
  return quote ? ["“", isolated, "”"] : isolated;
}

/** A link for http(s) sources only; any other scheme (javascript:, data:, file:) stays text. */
export function sourceLink(source) {
  if (!source) return "—";
  let url;
  try {
    url = new URL(source);
  } catch {
    return source;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return source;
  return h("a", { href: url.href, rel: "noopener noreferrer nofollow", target: "_blank" }, source);
}

/** The first line of a memory, cut to ``width`` characters. */
export function excerpt(text, width = 160) {
  const line = String(text || "").trim().split(/\r?\n/, 1)[0];
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}

/** A number with a fixed count of decimals, for scores and similarities. */
export function fixed(value, digits = 2) {
  return Number(value || 0).toFixed(digits);
}

/** Bytes as B / KiB / MiB. */
export function bytes(count) {
  const units = ["B", "KiB", "MiB", "GiB"];
  let value = Number(count || 0);
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit ? value.toFixed(1) : value} ${units[unit]}`;
}

/** A <dl> of [term, definition] pairs. */
export function definitions(pairs) {
  return h("dl", { class: "fields" }, pairs.map(([term, value]) => [
    h("dt", {}, term),
    h("dd", {}, value === null || value === undefined || value === "" ? "—" : value),
  ]));
}

// The buttons setBusy disabled while they had the focus.
const focusedWhenBusy = new WeakSet();

/**
 * Disable ``button`` while its request runs (one at a time), or enable it again. A focused
 * button that is disabled loses the focus to the document, which sends a keyboard user
 * back to the page's start: enabled again, it gets the focus back unless something else
 * took it meanwhile.
 */
export function setBusy(button, busy) {
  if (busy) {
    if (document.activeElement === button) focusedWhenBusy.add(button);
    button.disabled = true;
    return;
  }
  button.disabled = false;
  const hadFocus = focusedWhenBusy.delete(button);
  const active = document.activeElement;
  if (hadFocus && button.isConnected && (!active || active === document.body)) button.focus();
}
