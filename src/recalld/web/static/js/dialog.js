// A confirmation dialog (<dialog>, not window.confirm, so it can say exactly what
// will happen and be styled like the rest).

import { h } from "./dom.js";

/**
 * Ask ``question``; resolves true if the user confirms with ``confirmLabel``
 * (``dismissLabel`` backs out).
 */
export function confirmAction(title, question, confirmLabel, dismissLabel = "Cancel") {
  return new Promise((resolve) => {
    const dialog = h("dialog", { class: "confirm", id: "confirm-dialog" });
    const finish = (answer) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    dialog.append(
      h("h2", {}, title),
      h("p", {}, question),
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
