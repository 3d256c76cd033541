// The REST client: every request carries the session's bearer token (if any) and
// namespace header, exactly as any other API client would. There is no other way in.

export const NAMESPACE_HEADER = "X-Recalld-Namespace";

/** An error answer from the API: status, type, field, message and the body. */
export class ApiError extends Error {
  constructor(status, body) {
    const detail = (body && body.error) || {};
    super(detail.message || `the server answered ${status}`);
    this.status = status;
    this.type = detail.type || "error";
    this.field = detail.field || null;
    this.body = body;
  }

  /** "field: message", as shown to the user. */
  describe() {
    return this.field ? `${this.field}: ${this.message}` : this.message;
  }
}

/**
 * The server could not be reached (fetch's TypeError, "Failed to fetch"): a request that
 * never got an answer. Said as what happened and what to do, not the browser's words.
 * ``changes``: the request asked for a change (whether it was made is not known); a read,
 * even one sent as a POST (a search), is only to be tried again.
 */
export class NetworkError extends ApiError {
  constructor(changes) {
    super(0, {
      error: {
        type: "network_error",
        message: "the recalld server did not answer (it may have stopped, or the network is"
          + " down)" + (changes ? ": whether the change was made is not known,"
          + " so look before you try it again" : "")
          + "; check that `recalld serve` is running, then try again",
      },
    });
  }
}

/** An upload stopped by the user before the whole file was sent: the server got none of it. */
export class UploadCancelled extends ApiError {
  constructor() {
    super(0, {
      error: {
        type: "cancelled",
        message: "cancelled before the whole file was sent: nothing was imported",
      },
    });
  }
}

/** ``fetch``, its network failure turned into a :class:`NetworkError`. */
async function reach(path, init, changes) {
  try {
    return await fetch(path, init);
  } catch (error) {
    if (error instanceof TypeError) throw new NetworkError(changes);
    throw error;
  }
}

function query(parameters) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters || {})) {
    if (value === null || value === undefined || value === "") continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

const INTEGER = /^-?\d+$/;

/**
 * ``JSON.parse``, keeping an integer past 2^53 as written (``JSON.rawJSON``, where the
 * browser has it) instead of rounding it: a meta value such as an order id
 * 12345678901234567891 is shown, and sent back by an edit, unchanged. ``JSON.stringify``
 * writes such a value out as its digits.
 */
export function parseJson(text) {
  if (typeof JSON.rawJSON !== "function") return JSON.parse(text);
  return JSON.parse(text, (key, value, context) => {
    if (typeof value === "number" && !Number.isSafeInteger(value) && context
      && typeof context.source === "string" && INTEGER.test(context.source)) {
      return JSON.rawJSON(context.source);
    }
    return value;
  });
}

async function readBody(response) {
  const type = response.headers.get("content-type") || "";
  if (type.includes("application/json")) return parseJson(await response.text());
  return response.text();
}

/**
 * A client bound to ``session`` (its token and namespace are read at each call, so
 * switching namespace needs no new client). ``onUnauthorized`` runs on any 401.
 */
export function createApi(session, onUnauthorized) {
  function headers(extra = {}) {
    const result = { Accept: "application/json", ...extra };
    if (session.token) result.Authorization = `Bearer ${session.token}`;
    const namespace = session.namespaceHeader();
    if (namespace) result[NAMESPACE_HEADER] = namespace;
    return result;
  }

  /**
   * ``keepPage``: on a 401 the error carries ``signIn`` (the sign-in ``onUnauthorized``
   * shows) for the page to offer, rather than the page being replaced by the sign-in form
   * at once: an edit in the form was lost without a word when its token was revoked.
   */
  async function request(method, path, { params, body, contentType, ifMatch, versioned, keepPage, reads } = {}) {
    const init = { method, headers: headers(), cache: "no-store", credentials: "omit" };
    if (ifMatch) init.headers["If-Match"] = ifMatch;
    if (body !== undefined) {
      init.headers["Content-Type"] = contentType || "application/json";
      init.body = contentType ? body : JSON.stringify(body);
    }
    const response = await reach(path + query(params), init, method !== "GET" && !reads);
    const data = await readBody(response);
    if (!response.ok) {
      const refused = new ApiError(response.status, data);
      if (response.status === 401 && onUnauthorized) {
        if (!keepPage) onUnauthorized();
        else refused.signIn = onUnauthorized;
      }
      throw refused;
    }
    return versioned ? { data, version: response.headers.get("ETag") } : data;
  }

  return {
    headers,
    get: (path, params) => request("GET", path, { params }),
    post: (path, body, params) => request("POST", path, { body: body ?? {}, params }),
    /**
     * A POST of what the user typed (a form, a batch): on a 401 the page is kept, with
     * what was typed, and the error carries ``signIn`` (see ``keepPage``).
     */
    postKept: (path, body) => request("POST", path, { body: body ?? {}, keepPage: true }),
    /**
     * A POST that only reads (a search, an explanation, a place recall): a server that
     * does not answer is said as for a GET, not as a change whose fate is unknown.
     */
    read: (path, body, params) => request("POST", path, { body: body ?? {}, params, reads: true }),
    patch: (path, body) => request("PATCH", path, { body }),
    /** A GET answering ``{data, version}``: the body and its ETag (null when none). */
    getVersioned: (path, params) => request("GET", path, { params, versioned: true }),
    /**
     * A PATCH made from the copy whose ETag is ``version`` (If-Match): the server refuses
     * it (412) if the resource changed since. Answers ``{data, version}``.
     */
    patchVersioned: (path, body, version) => request("PATCH", path, {
      body, ifMatch: version || undefined, versioned: true, keepPage: true,
    }),
    /** A DELETE; with ``version`` (an ETag) made from that copy (If-Match: 412 if changed). */
    remove: (path, version) => request("DELETE", path, { ifMatch: version || undefined }),
    /** The raw response of a GET (for downloads), with the same headers. */
    async download(path, params) {
      const response = await reach(path + query(params), {
        headers: headers({ Accept: "*/*" }), cache: "no-store", credentials: "omit",
      }, false);
      if (!response.ok) {
        if (response.status === 401 && onUnauthorized) onUnauthorized();
        throw new ApiError(response.status, await readBody(response));
      }
      return response;
    },
    /**
     * POST a file with upload progress (fetch cannot report it): resolves with the
     * JSON answer; ``onProgress`` gets the fraction sent. ``signal`` (an AbortSignal)
     * stops the upload, rejecting with an :class:`UploadCancelled`; ``onSent`` runs once
     * the whole file is sent (from then on the server is at work and stopping the upload
     * would only lose its answer).
     */
    upload(path, file, contentType, onProgress, { signal, onSent } = {}) {
      return new Promise((resolve, reject) => {
        if (signal?.aborted) {
          reject(new UploadCancelled());
          return;
        }
        const transfer = new XMLHttpRequest();
        signal?.addEventListener("abort", () => transfer.abort(), { once: true });
        transfer.upload.addEventListener("load", () => onSent?.());
        transfer.addEventListener("abort", () => reject(new UploadCancelled()));
        transfer.open("POST", path);
        transfer.withCredentials = false;
        for (const [name, value] of Object.entries(headers({ "Content-Type": contentType }))) {
          transfer.setRequestHeader(name, value);
        }
        transfer.upload.addEventListener("progress", (event) => {
          if (event.lengthComputable && onProgress) onProgress(event.loaded / event.total);
        });
        transfer.addEventListener("load", () => {
          let data = transfer.responseText;
          try {
            data = parseJson(transfer.responseText);
          } catch {
            // not JSON: keep the text for the error message
          }
          if (transfer.status >= 200 && transfer.status < 300) {
            if (onProgress) onProgress(1);
            resolve(data);
          } else {
            if (transfer.status === 401 && onUnauthorized) onUnauthorized();
            reject(new ApiError(transfer.status, data));
          }
        });
        transfer.addEventListener("error", () => reject(new NetworkError(true)));
        transfer.send(file);
      });
    },
  };
}
