// A confirmation dialog (<dialog>, not window.confirm, so it can say exactly what
// will happen and be styled like the rest).

import { h } from "./dom.js";

/**
 * Ask ``question``; resolves true if the user confirms with ``confirmLabel``
 * (``dismissLabel`` backs out).
 */
export function confirmAction(title, question, confirmLabel, dismissLabel = "Cancel") {
  return new Promise((resolve) => {
    // Named by its title and described by its question, so a screen reader says both on
    // opening; the browser's modal dialog keeps focus inside and gives it back on close.
    const dialog = h("dialog", {
      class: "confirm",
      id: "confirm-dialog",
      "aria-labelledby": "confirm-title",
      "aria-describedby": "confirm-question",
    });
    const finish = (answer) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    dialog.append(
      h("h2", { id: "confirm-title" }, title),
      h("p", { id: "confirm-question" }, question),
      h("div", { class: "actions" },
        h("button", { type: "button", id: "confirm-cancel", onclick: () => finish(false) }, dismissLabel),
        h("button", {
          type: "button", class: "danger", id: "confirm-accept", onclick: () => finish(true),
        }, confirmLabel)),
    );
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      finish(false);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
