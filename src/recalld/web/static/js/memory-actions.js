// Actions on a memory's detail view (registered in pages.js, shown when the server
// has their endpoint): the entities the memory mentions (GET /v1/graph/mentions), and
// an intention's triggers (GET /v1/intentions/{id}). Each shows what it found in the
// detail view's output element.

import { h, replace, status, token, userText } from "./dom.js";
import { intentionCard } from "./triggers.js";

function failure(output, error) {
  const notice = h("p", {});
  status(notice, error.describe ? error.describe() : error.message, "error");
  replace(output, notice);
}

/** List the entities ``memory`` mentions, each linking to the Graph page. */
export async function showEntities(memory, { api, navigate }, output) {
  let answer;
  try {
    answer = await api.get("/v1/graph/mentions", { memory: memory.id });
  } catch (error) {
    failure(output, error);
    return;
  }
  const entities = answer.entities;
  replace(output, h("section", { class: "card memory-entities", id: "memory-entities" },
    h("h2", {}, "Entities in this memory"),
    entities.length
      ? h("ul", { class: "entity-chips" }, entities.map((item) => h("li", {},
        h("a", {
          href: `#/graph/${encodeURIComponent(item.entity.name)}`,
          class: "entity-link",
          dataset: { entity: item.entity.name },
          onclick: (event) => {
            event.preventDefault();
            navigate("graph", item.entity.name);
          },
        }, item.entity.name),
        " ", h("span", { class: `badge entity-type type-${token(item.entity.type)}` }, item.entity.type),
        item.surface !== item.entity.name ? h("span", { class: "hint" }, " as ", userText(item.surface, { quote: true })) : null,
        item.count > 1 ? h("span", { class: "hint" }, ` ×${item.count}`) : null)))
      : h("p", { class: "empty" }, "No entity found in it (yet: the worker extracts them in the background, unless no graph extractor is configured).")));
}

/** Show the triggers and firing state of an intention's memory. */
export async function showIntention(memory, { api, navigate }, output) {
  let intention;
  try {
    intention = await api.get(`/v1/intentions/${encodeURIComponent(memory.id)}`);
  } catch (error) {
    failure(output, error);
    return;
  }
  replace(output, h("div", { id: "memory-intention" },
    intentionCard(intention),
    h("p", { class: "hint" }, h("a", {
      href: "#/intentions",
      onclick: (event) => {
        event.preventDefault();
        navigate("intentions");
      },
    }, "All intentions →"))));
}
