// Who is using the browser: the API token (kept in this tab's sessionStorage only,
// never in a URL, a cookie or persistent local storage), what it may do (GET /v1/session),
// and the namespace being looked at.

const TOKEN_KEY = "recalld.token";
const NAMESPACE_KEY = "recalld.namespace";

export class Session {
  constructor(storage = window.sessionStorage) {
    this.storage = storage;
    this.token = storage.getItem(TOKEN_KEY) || "";
    this.namespace = storage.getItem(NAMESPACE_KEY) || "";
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

  /** Take the answer of GET /v1/session and pick a namespace it may read. */
  accept(info) {
    this.info = info;
    const readable = info.namespaces.map((entry) => entry.namespace);
    if (!readable.includes(this.namespace)) {
      this.namespace = readable.includes(info.default_namespace)
        ? info.default_namespace
        : readable[0] || "";
    }
    this.rememberNamespace();
  }

  /** Switch to ``namespace`` (one the token may read). */
  selectNamespace(namespace) {
    if (!this.namespaces().some((entry) => entry.namespace === namespace)) return;
    this.namespace = namespace;
    this.rememberNamespace();
  }

  rememberNamespace() {
    if (this.namespace) this.storage.setItem(NAMESPACE_KEY, this.namespace);
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
