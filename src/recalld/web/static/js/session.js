// Who is using the browser: the API token (kept in this tab's sessionStorage only,
// never in a URL, a cookie or persistent local storage), what it may do (GET /v1/session),
// and the namespace being looked at.

const TOKEN_KEY = "recalld.token";
const NAMESPACE_KEY = "recalld.namespace";
// Set by Sign out for the page it reloads, which then says so.
const SIGNED_OUT_KEY = "recalld.signed-out";
// What an HTTP header can carry: a token (rcd_<id>_<secret>) is visible ASCII only.
const SENDABLE = /^[\x21-\x7e]*$/;
// A character that shows as itself in a message: a letter, digit, punctuation or symbol.
const SHOWN = /^[\p{L}\p{N}\p{P}\p{S}]$/u;
// What the namespace header can carry from a browser (fetch takes ISO-8859-1 only): the
// CLI, MCP and the library take a namespace of any letters ("проект", "Ωmega"), but a
// header naming one fails in the browser itself, before anything is sent.
const HEADER_TEXT = /^[\x20-\x7e\xa0-\xff]*$/;

/** Whether ``namespace`` can be named in the X-Recalld-Namespace header from a browser. */
export function sendableNamespace(namespace) {
  return HEADER_TEXT.test(namespace);
}

/**
 * Why ``token`` cannot be sent as a bearer header (null if it can): a character pasted
 * with it from a document (a curly quote, a no-break space) made every request fail in
 * the browser itself, before reaching the server, with no way back to the sign-in form.
 */
export function tokenProblem(token) {
  if (SENDABLE.test(token)) return null;
  const position = [...token].findIndex((character) => !SENDABLE.test(character));
  const character = [...token][position];
  const code = `U+${character.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
  // An invisible one is named by its code alone: shown, a right-to-left override
  // (U+202E) would mirror the rest of this sentence.
  const named = SHOWN.test(character) ? `“${character}” (${code})` : code;
  return `A token is plain ASCII (rcd_…), and this one holds ${named} at position ${position}: copy it again from where it was printed.`;
}

export class Session {
  constructor(storage = window.sessionStorage) {
    this.storage = storage;
    this.token = storage.getItem(TOKEN_KEY) || "";
    // One that cannot be sent is forgotten, so the sign-in form asks for another.
    if (tokenProblem(this.token)) this.setToken("");
    this.namespace = storage.getItem(NAMESPACE_KEY) || "";
    // One that cannot be named in a header (kept by an older page) made even the first
    // request, GET /v1/session, fail: the tab was locked out until it was closed.
    if (!sendableNamespace(this.namespace)) {
      this.namespace = "";
      storage.removeItem(NAMESPACE_KEY);
    }
    this.info = null;
  }

  /** Keep ``token`` for this tab (empty: forget it). */
  setToken(token) {
    this.token = token.trim();
    if (this.token) this.storage.setItem(TOKEN_KEY, this.token);
    else this.storage.removeItem(TOKEN_KEY);
  }

  /** Forget the token and what it allowed. */
  clear() {
    this.setToken("");
    this.info = null;
  }

  /** Sign out: forget the token and the namespace, and note it for the page reloaded next. */
  signOut() {
    this.clear();
    this.storage.removeItem(NAMESPACE_KEY);
    this.storage.setItem(SIGNED_OUT_KEY, "1");
  }

  /** Whether this page was loaded by Sign out (said once). */
  takeSignedOut() {
    const signedOut = this.storage.getItem(SIGNED_OUT_KEY) === "1";
    this.storage.removeItem(SIGNED_OUT_KEY);
    return signedOut;
  }

  /** Take the answer of GET /v1/session and pick a namespace it may read (and reach). */
  accept(info) {
    this.info = info;
    const readable = info.namespaces.map((entry) => entry.namespace)
      .filter((namespace) => this.reachable(namespace));
    if (!readable.includes(this.namespace)) {
      this.namespace = readable.includes(info.default_namespace)
        ? info.default_namespace
        : readable[0] || "";
    }
    this.rememberNamespace();
  }

  /** Switch to ``namespace`` (one the token may read, and the browser reach). */
  selectNamespace(namespace) {
    if (!this.reachable(namespace)) return;
    if (!this.namespaces().some((entry) => entry.namespace === namespace)) return;
    this.namespace = namespace;
    this.rememberNamespace();
  }

  rememberNamespace() {
    if (this.namespace) this.storage.setItem(NAMESPACE_KEY, this.namespace);
  }

  /**
   * Whether the browser can work in ``namespace``: one its header can name, or the
   * server's default for this token (asked for by naming none).
   */
  reachable(namespace) {
    return sendableNamespace(namespace)
      || Boolean(this.info && namespace === this.info.default_namespace);
  }

  /** The X-Recalld-Namespace header's value for the current namespace (null: send none). */
  namespaceHeader() {
    if (!this.namespace) return null;
    if (sendableNamespace(this.namespace)) return this.namespace;
    if (this.reachable(this.namespace)) return null; // the default: the server picks it
    throw new Error(`namespace “${this.namespace}” cannot be named from a browser (an HTTP`
      + " header carries Latin-1 letters only): use the CLI or an MCP client for it");
  }

  /** The namespaces the token may read: [{namespace, write}]. */
  namespaces() {
    return this.info ? this.info.namespaces : [];
  }

  /** ``count`` held to the server's cap on every limit (max_limit, RECALLD_MAX_LIMIT): a
   * page size of the browser's own is never refused when the cap was lowered below it. */
  limit(count) {
    const most = this.info && Number.isInteger(this.info.max_limit) ? this.info.max_limit : count;
    return Math.min(count, most);
  }

  /** The choices of a "how many" menu the server accepts: each held to its cap. */
  limitChoices(choices) {
    return [...new Set(choices.map((count) => this.limit(count)))];
  }

  /** Whether the token may change the current namespace (else the UI is read-only). */
  canWrite() {
    const current = this.namespaces().find((entry) => entry.namespace === this.namespace);
    return Boolean(current && current.write);
  }
}
