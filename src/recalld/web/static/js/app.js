// The browser's shell: session, navigation (from the page registry), namespace
// switcher and hash routing (#/page or #/page/argument). Pages render into a fresh
// element each time, so a slow answer for a page the user has left lands nowhere.

import { createApi } from "./api.js";
import { h, replace, status } from "./dom.js";
import { renderLogin } from "./login.js";
import "./pages.js";
import { findPage, listPages, needsApiPaths } from "./registry.js";
import { Session } from "./session.js";

const DEFAULT_PAGE = "search";
const session = new Session();
// This page was loaded by Sign out: the sign-in form says so.
const signedOut = session.takeSignedOut();
const api = createApi(session, () => {
  const hadToken = Boolean(session.token);
  session.clear();
  if (hadToken) showLogin("That token is not accepted (wrong or revoked).", "error");
  else showLogin(signedOut ? "Signed out." : "", "info");
});
let apiPaths = new Set();
let leavePage = null;

const navigation = document.getElementById("nav");
const sessionBar = document.getElementById("session");
const main = document.getElementById("page");

/** The page and its argument; ``malformed`` when the argument's %-escapes do not decode. */
function currentRoute() {
  const [, id = "", ...rest] = window.location.hash.split("/");
  const route = { id: id || DEFAULT_PAGE, argument: "", malformed: false };
  if (!rest.length) return route;
  try {
    route.argument = decodeURIComponent(rest.join("/"));
  } catch (error) {
    // A hand-typed or cut-off link ("#/memory/%", "#/graph/%E0%A4%A"): a URIError that
    // would otherwise escape the rendering and leave the page blank.
    if (!(error instanceof URIError)) throw error;
    route.malformed = true;
  }
  return route;
}

/** Go to page ``id`` (with an optional argument such as a memory id). */
export function navigate(id, argument = "") {
  const target = argument ? `#/${id}/${encodeURIComponent(argument)}` : `#/${id}`;
  if (window.location.hash === target) renderPage({ moveFocus: true });
  else window.location.hash = target;
}

function renderNavigation() {
  const { id } = currentRoute();
  const activeId = id === "memory" ? "browse" : id;
  replace(navigation, listPages(apiPaths).filter((page) => !page.hidden).map((page) =>
    h("a", {
      href: `#/${page.id}`,
      class: "nav-link",
      "aria-current": page.id === activeId ? "page" : null,
    }, page.title)));
}

/**
 * A namespace of the switcher. One the browser cannot name in its header (a CLI or MCP
 * client made "Ωmega") is listed, greyed out and saying why, rather than offered: chosen,
 * every request failed as if the server had not answered.
 */
function namespaceOption(entry) {
  const reachable = session.reachable(entry.namespace);
  const label = !reachable
    ? `${entry.namespace} (not reachable from a browser: use the CLI or MCP)`
    : entry.write ? entry.namespace : `${entry.namespace} (read-only)`;
  return h("option", {
    value: entry.namespace,
    selected: entry.namespace === session.namespace,
    disabled: !reachable,
  }, label);
}

function renderSessionBar() {
  const namespaces = session.namespaces();
  const select = h("select", {
    id: "namespace",
    "aria-label": "namespace",
    onchange: (event) => {
      session.selectNamespace(event.target.value);
      renderSessionBar();
      // The user is in this menu (arrow keys change it at once): the focus stays in it,
      // on the one just drawn, not on the page drawn again (WCAG 3.2.2, on input).
      keepFocus = document.getElementById("namespace");
      keepFocus.focus();
      const { id } = currentRoute();
      navigate(id === "memory" ? "browse" : id);
    },
  }, namespaces.map((entry) => namespaceOption(entry)));
  replace(sessionBar,
    h("label", { class: "namespace-label" }, "namespace ", select),
    session.canWrite() ? null : h("span", { class: "badge read-only", id: "read-only" }, "read-only"),
    session.token
      ? h("button", {
        type: "button",
        class: "link-button",
        id: "sign-out",
        onclick: () => {
          // The page is loaded afresh: what the pages keep while one moves between them
          // (the last search, question and its answer, graph query) went to whoever
          // signed in next in this tab; Search even asked the server again as them.
          // Without the address's #/page/argument too: a memory id or an entity name the
          // last user opened was the next user's first page.
          session.signOut();
          window.history.replaceState(null, "", window.location.pathname + window.location.search);
          window.location.reload();
        },
      }, "Sign out")
      : null);
}

/**
 * After a change of page, put the focus on its heading (unless the page focused a control
 * of its own, as Search its query): a screen reader then says where the user is, and the
 * next Tab goes on in the new page, not in the menu behind it.
 */
function focusPage(root) {
  if (!root.isConnected) return; // another page replaced it meanwhile
  const active = document.activeElement;
  if (active && active !== document.body && root.contains(active)) return;
  focusHeading(root);
}

/** Focus the first heading in ``container`` (made focusable for that), else the main area. */
function focusHeading(container) {
  const heading = container.querySelector("h1");
  if (heading) {
    heading.setAttribute("tabindex", "-1");
    heading.focus();
  } else {
    main.focus();
  }
}

// A control outside the page that keeps the focus through the next rendering of a page.
let keepFocus = null;

/**
 * The page is drawn: no longer busy, and the focus goes to ``keepFocus``, else (a change of
 * page) in it.
 */
function settleFocus(root, moveFocus) {
  root.removeAttribute("aria-busy");
  if (!root.isConnected) return; // another rendering replaced it: that one settles the focus
  const kept = keepFocus;
  keepFocus = null;
  if (kept && kept.isConnected) kept.focus();
  else if (moveFocus) focusPage(root);
}

async function renderPage({ moveFocus = false } = {}) {
  if (!session.info) return;
  if (leavePage) {
    leavePage();
    leavePage = null;
  }
  renderNavigation();
  const { id, argument, malformed } = currentRoute();
  const page = findPage(id, apiPaths) || findPage(DEFAULT_PAGE, apiPaths);
  // Busy until drawn: assistive technology waits to read it (and tests wait on it).
  const root = h("section", {
    class: `page page-${page.id}`, id: `page-${page.id}`, "aria-busy": "true",
  });
  replace(main, root);
  document.title = `${page.title} — recalld`;
  if (malformed) {
    document.title = "Not found — recalld";
    const notice = h("p", { id: "route-notice" });
    status(notice, "Not found: this address holds a broken %-escape, so it names nothing.", "error");
    root.append(h("h1", {}, "Not found"), notice);
    settleFocus(root, moveFocus);
    return;
  }
  // mayFocus: a page may put the focus in itself (Search on its query) unless it is kept.
  const context = {
    api, session, navigate, canWrite: session.canWrite(), apiPaths, mayFocus: !keepFocus,
  };
  try {
    const module = await page.load();
    const cleanup = await module.render(root, context, argument);
    if (typeof cleanup === "function") leavePage = cleanup;
  } catch (error) {
    const notice = h("p", {});
    status(notice, `This page failed: ${error.describe ? error.describe() : error.message}`, "error");
    root.append(notice);
  }
  settleFocus(root, moveFocus);
}

function showLogin(message, tone) {
  if (leavePage) {
    leavePage();
    leavePage = null;
  }
  replace(navigation);
  replace(sessionBar);
  const root = h("section", { class: "page page-login", id: "page-login" });
  replace(main, root);
  document.title = "Sign in — recalld";
  renderLogin(root, message, tone, (token) => {
    session.setToken(token);
    start();
  });
}

async function loadApiPaths() {
  if (!needsApiPaths()) return;
  try {
    const response = await fetch("/openapi.json", { cache: "no-store", credentials: "omit" });
    const spec = await response.json();
    apiPaths = new Set(Object.keys(spec.paths || {}));
  } catch {
    apiPaths = new Set();
  }
}

async function start() {
  try {
    session.accept(await api.get("/v1/session"));
  } catch (error) {
    if (error.status === 401) return; // the 401 handler shows the sign-in form
    const notice = h("p", {});
    status(notice, `The server could not be asked who you are: ${error.message}`, "error");
    replace(main, notice);
    return;
  }
  await loadApiPaths();
  renderSessionBar();
  renderPage();
}

window.addEventListener("hashchange", () => renderPage({ moveFocus: true }));
// The skip link moves the focus into the page; following its href would change the route.
document.getElementById("skip-link").addEventListener("click", (event) => {
  event.preventDefault();
  focusHeading(main);
});
start();
