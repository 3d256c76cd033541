// The sign-in form, shown when the server asks for a token (401). The token goes to
// sessionStorage (this tab only) and is sent as a bearer header; it is never put in a
// URL or a cookie. The form is never submitted to the server (form-action 'none').

import { h, status } from "./dom.js";
import { tokenProblem } from "./session.js";

/**
 * Render the form into ``root`` with ``message`` (``tone``: info or error);
 * ``onToken(token)`` runs when one is given.
 */
export function renderLogin(root, message, tone, onToken) {
  const input = h("input", {
    type: "password",
    id: "token",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    placeholder: "rcd_…",
    // The focus lands here: a screen reader says why the form is back ("not accepted").
    "aria-describedby": "login-notice",
  });
  const notice = h("p", { hidden: true, id: "login-notice" });
  if (message) status(notice, message, tone);
  const form = h("form", {
    class: "card login",
    onsubmit: (event) => {
      event.preventDefault();
      const token = input.value.trim();
      if (!token) {
        status(notice, "Give a token.", "error");
        return;
      }
      const problem = tokenProblem(token);
      if (problem) {
        status(notice, problem, "error");
        return;
      }
      input.value = "";
      onToken(token);
    },
  },
  h("h1", {}, "Sign in"),
  h("p", {}, "This server needs an API token (create one with ",
    h("code", {}, "recalld token create NAME --scope NAMESPACE:read+write"),
    "). It is kept in this browser tab only and sent as a bearer header."),
  h("label", { for: "token" }, "API token"),
  input,
  h("button", { type: "submit", id: "sign-in" }, "Sign in"),
  notice);
  root.append(form);
  input.focus();
}
