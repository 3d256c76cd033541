// Graph: the entities the worker extracted from the memories (GET /v1/graph/entities,
// searched by name or type, a page at a time), one entity in full (GET
// /v1/graph/entities/{name}: aliases, observations, mentions linked to their memories,
// relations) and its neighbourhood (GET /v1/graph/neighbourhood) drawn as a small
// force layout; clicking a node opens that entity. #/graph/<name> opens one directly.

import { definitions, h, localTime, replace, status, token, userText, viewerTime } from "../dom.js";
import { networkDrawing } from "../network.js";

const PAGE_SIZE = 50;
const MOST_NODES = 40;
const KNOWN_TYPES = [
  "person", "organization", "place", "date", "event", "product", "work", "group", "language",
  "topic", "name", "tag",
];

// Path segments a URL resolves away: an entity so named cannot be reached by its address.
const DOT_SEGMENTS = new Set([".", ".."]);

// The last listing's filters, so opening an entity keeps the list as it was.
let previous = null;

/** Whether ``answer`` is one entity in full, as GET /v1/graph/entities/{name} gives it. */
function isEntityEntry(answer) {
  return answer !== null && typeof answer === "object"
    && answer.entity !== null && typeof answer.entity === "object" && typeof answer.entity.name === "string"
    && ["aliases", "observations", "mentions", "relations"].every((part) => Array.isArray(answer[part]));
}

function entityPath(name) {
  return `/v1/graph/entities/${encodeURIComponent(name)}`;
}

function entityLink(name, navigate, attributes = {}) {
  return h("a", {
    href: `#/graph/${encodeURIComponent(name)}`,
    class: "entity-link",
    dataset: { entity: name },
    onclick: (event) => {
      event.preventDefault();
      navigate("graph", name);
    },
    ...attributes,
  }, name);
}

function memoryLink(memoryId, text, navigate) {
  return h("a", {
    href: `#/memory/${encodeURIComponent(memoryId)}`,
    class: "memory-link",
    dataset: { memoryId },
    onclick: (event) => {
      event.preventDefault();
      navigate("memory", memoryId);
    },
  }, text);
}

function plural(count, one, many) {
  return `${count} ${count === 1 ? one : many}`;
}

/** The nodes and links of a neighbourhood answer, at most MOST_NODES nodes. */
function network(around) {
  const nodes = new Map();
  const add = (name, type, mentions, role) => {
    if (!nodes.has(name) && nodes.size < MOST_NODES) nodes.set(name, { id: name, type, mentions, role });
  };
  add(around.entity.name, around.entity.type, around.entity.mentions, "centre");
  for (const entity of around.entities) add(entity.name, entity.type, entity.mentions, "related");
  for (const shared of around.co_mentioned) add(shared.name, shared.type, shared.memories, "co-mentioned");
  const links = around.relations.map((relation) => ({
    source: relation.subject, target: relation.object, kind: "relation", label: relation.predicate,
  }));
  const centre = around.entity.name;
  // A co-mention that is also a relation of the centre is drawn once, as the relation.
  const relatedToCentre = new Set(links
    .filter((link) => link.source === centre || link.target === centre)
    .map((link) => (link.source === centre ? link.target : link.source)));
  for (const shared of around.co_mentioned) {
    if (relatedToCentre.has(shared.name)) continue;
    links.push({ source: centre, target: shared.name, kind: "co-mention", weight: shared.memories });
  }
  return { nodes: [...nodes.values()], links: links.filter((link) => nodes.has(link.source) && nodes.has(link.target)) };
}

/** Render the page; ``argument`` is the entity to open (its name), if any. */
export async function render(root, { api, navigate, session }, argument) {
  const inputs = {
    query: h("input", { type: "search", id: "entity-query", placeholder: "a name or part of one", autocomplete: "off" }),
    type: h("input", { type: "text", id: "entity-type", list: "entity-types", placeholder: "any type", autocomplete: "off" }),
  };
  const summary = h("p", { class: "hint", id: "graph-summary" });
  const listNotice = h("p", { hidden: true, id: "entity-list-notice" });
  const list = h("ol", { class: "entity-list", id: "entity-list" });
  const more = h("button", { type: "button", id: "entity-more", hidden: true }, "Load more");
  const detail = h("div", { class: "graph-detail", id: "entity-detail" });
  let cursor = null;
  // What the list on screen was found with: "Load more" continues that list, whatever has
  // been typed in the boxes since (the cursor does not carry them).
  let listing = null;
  // Each request's number: an answer to one that a newer request superseded (a search
  // made while "Load more" was on its way) is dropped, never mixed into the list.
  let generation = 0;

  async function loadList(reset) {
    const ticket = ++generation;
    if (reset) {
      list.replaceChildren();
      cursor = null;
      more.hidden = true;
      listing = { query: inputs.query.value, type: inputs.type.value };
    }
    previous = { namespace: session.namespace, ...listing };
    // One request at a time: a second click would ask for the same page again.
    more.disabled = true;
    try {
      const page = await api.get("/v1/graph/entities", {
        query: listing.query.trim(), type: listing.type.trim(), limit: session.limit(PAGE_SIZE), cursor,
      });
      if (ticket !== generation) return;
      const firstNew = list.children.length;
      for (const entity of page.entities) {
        list.append(h("li", {
          class: "entity-row",
          dataset: { entity: entity.name },
          "aria-current": entity.name === argument ? "true" : null,
        },
        entityLink(entity.name, navigate),
        h("span", { class: `badge entity-type type-${token(entity.type)}` }, entity.type),
        h("span", { class: "entity-count", title: "memories that mention it" }, String(entity.mentions))));
      }
      // "More" disabled itself while loading (the focus dropped to the page's start): the
      // focus goes to the first entity loaded.
      if (!reset) list.children[firstNew]?.querySelector("a")?.focus();
      cursor = page.next_cursor;
      more.hidden = !cursor;
      const shown = list.children.length;
      status(listNotice, shown ? "" : "No entity matches. The worker builds the graph from new memories in the background.");
    } catch (error) {
      if (ticket !== generation) return;
      status(listNotice, error.describe ? error.describe() : error.message, "error");
    } finally {
      if (ticket === generation) more.disabled = false;
    }
  }

  const form = h("form", {
    class: "entity-search",
    onsubmit: (event) => {
      event.preventDefault();
      loadList(true);
    },
  },
  h("label", { class: "field" }, h("span", {}, "name"), inputs.query),
  h("label", { class: "field" }, h("span", {}, "type"), inputs.type),
  h("button", { type: "submit", id: "entity-search" }, "Find"),
  h("datalist", { id: "entity-types" }, KNOWN_TYPES.map((value) => h("option", { value }))));
  more.addEventListener("click", () => {
    if (!more.disabled) loadList(false);
  });

  root.append(h("h1", {}, "Graph"), summary,
    h("div", { class: "graph-layout" },
      // A section, not an <aside>: a complementary landmark nested in <main> is announced as
      // a second page region, though the list is this page's own content.
      h("section", { class: "card graph-entities" }, h("h2", {}, "Entities"), form, listNotice, list, more),
      detail));
  if (previous && previous.namespace === session.namespace) {
    inputs.query.value = previous.query;
    inputs.type.value = previous.type;
  }

  const work = [loadList(true), describeGraph(api, summary)];
  if (argument) work.push(showEntity(detail, { api, navigate, session }, argument));
  else replace(detail, h("p", { class: "card hint" }, "Pick an entity to see its memories, its relations and its neighbourhood."));
  await Promise.all(work);
}

async function describeGraph(api, summary) {
  try {
    const { graph } = await api.get("/v1/status");
    if (!graph) return;
    const counts = `${plural(graph.entities, "entity", "entities")}, ${plural(graph.relations, "relation", "relations")}, ${plural(graph.mentions, "mention", "mentions")}`;
    summary.textContent = graph.state === "disabled"
      ? "No graph extractor is configured (RECALLD_GRAPH_EXTRACTOR=none): the graph is not built."
      : `${counts} · ${graph.state} · extractor ${graph.extractor || "none"}${graph.warning ? ` · ${graph.warning}` : ""}`;
  } catch {
    // The counts are a courtesy: the page works without them.
  }
}

async function showEntity(detail, { api, navigate, session }, name) {
  const notice = h("p", { hidden: true, id: "entity-notice" });
  replace(detail, notice);
  if (DOT_SEGMENTS.has(name)) {
    // The browser resolves /v1/graph/entities/. to the listing (and .. to /v1/graph/).
    status(notice, `An entity named “${name}” cannot be opened: a URL resolves the name away.`, "error");
    return;
  }
  let entry;
  try {
    entry = await api.get(entityPath(name));
  } catch (error) {
    // A failure that is not the API's answer (the network, a TypeError) has no describe().
    const problem = error.describe ? error.describe() : error.message;
    status(notice, error.status === 404 ? `No entity named “${name}” in this namespace.` : problem, "error");
    return;
  }
  if (!isEntityEntry(entry)) {
    // Not an entity (another resource answered): show nothing of it.
    status(notice, `The server's answer for “${name}” is not an entity.`, "error");
    return;
  }
  const { entity } = entry;
  const depth = h("select", { id: "graph-depth", "aria-label": "relation hops" },
    [1, 2, 3].map((hops) => h("option", { value: hops }, plural(hops, "hop", "hops"))));
  const drawingSlot = h("div", { class: "graph-drawing", id: "graph-drawing" });
  const caption = h("figcaption", { id: "graph-caption" });

  // Each drawing's number: the answer for a depth the user has changed since (3 hops,
  // slow, then 1) is dropped, never drawn under the menu saying another depth.
  let drawing = 0;
  async function drawNeighbourhood() {
    const ticket = ++drawing;
    try {
      const around = await api.get("/v1/graph/neighbourhood", { entity: entity.name, depth: depth.value });
      if (ticket !== drawing) return;
      const { nodes, links } = network(around);
      replace(drawingSlot, networkDrawing(nodes, links, (picked) => navigate("graph", picked),
        `the neighbourhood of ${entity.name}`));
      const cut = around.truncated || nodes.length < 1 + around.entities.length;
      replace(caption,
        h("span", { class: "legend relation" }, "→ relation"), " ",
        h("span", { class: "legend co-mention" }, "┄ named in the same memories"), " · ",
        `${plural(nodes.length - 1, "neighbour", "neighbours")}`,
        cut ? " (the neighbourhood was cut to fit)" : "",
        nodes.length === 1 ? " — no relation or shared memory yet" : "");
    } catch (error) {
      if (ticket !== drawing) return;
      replace(drawingSlot, h("p", { class: "notice error" }, error.describe ? error.describe() : error.message));
    }
  }
  depth.addEventListener("change", drawNeighbourhood);

  const mentions = entry.mentions.length
    ? h("ol", { class: "mentions", id: "entity-mentions" }, entry.mentions.map((mention) => h("li", { class: "mention" },
      memoryLink(mention.memory_id, mention.prompt_line, navigate),
      h("span", { class: "mention-meta" },
        mention.surface !== entity.name ? [" as ", userText(mention.surface, { quote: true })] : "",
        mention.count > 1 ? ` ×${mention.count}` : "",
        mention.at ? ` · ${localTime(mention.at)}` : ""))))
    : h("p", { class: "empty" }, "no memory mentions it");
  const observationItem = (observation) => h("li", {}, memoryLink(observation.memory_id, observation.content, navigate));
  const observations = entry.observations.length
    ? h("ul", { class: "observations", id: "entity-observations" }, entry.observations.map(observationItem))
    : h("p", { class: "empty" }, "none");
  // The detail carries the first observations only; the rest come a page at a time from
  // GET /v1/graph/observations, continuing from the detail's observations_cursor.
  let observationsCursor = entry.observations_cursor || null;
  const observationsShown = h("p", { class: "hint", id: "entity-observations-more" });
  const moreObservations = h("button", { type: "button", id: "entity-observations-next" }, "More observations");
  function countObservations() {
    const listed = observations.children?.length ?? 0;
    observationsShown.className = "hint"; // a failed load's error shown there is replaced
    observationsShown.textContent = observationsCursor
      ? `The first ${plural(listed, "observation is", "observations are")} shown of ${entity.observations}.`
      : "";
    observationsShown.hidden = !observationsCursor;
    moreObservations.hidden = !observationsCursor;
  }
  moreObservations.addEventListener("click", async () => {
    // One request at a time: a second click would ask for the same page again.
    moreObservations.disabled = true;
    try {
      const page = await api.get("/v1/graph/observations", {
        entity: entity.name, limit: session.limit(PAGE_SIZE), cursor: observationsCursor,
      });
      const firstNew = observations.children.length;
      observations.append(...page.observations.map(observationItem));
      observationsCursor = page.next_cursor || null;
      countObservations();
      observations.children[firstNew]?.querySelector("a")?.focus();
    } catch (error) {
      status(observationsShown, error.describe ? error.describe() : error.message, "error");
    } finally {
      moreObservations.disabled = false;
    }
  });
  countObservations();
  const relations = entry.relations.length
    ? h("ul", { class: "relations", id: "entity-relations" }, entry.relations.map((relation) => h("li", { class: "relation" },
      relation.subject === entity.name ? h("strong", {}, relation.subject) : entityLink(relation.subject, navigate),
      h("span", { class: "predicate" }, ` —${relation.predicate}→ `),
      relation.object === entity.name ? h("strong", {}, relation.object) : entityLink(relation.object, navigate),
      h("span", { class: "relation-meta" },
        ` · ${plural(relation.sources, "memory", "memories")}`,
        relation.declared ? " · declared" : "",
        relation.at ? ` · ${localTime(relation.at)}` : ""))))
    : h("p", { class: "empty" }, "none");

  replace(detail, notice,
    h("section", { class: "card entity-card" },
      h("h2", { id: "entity-name" }, h("span", { class: "entity-title" }, entity.name), " ",
        h("span", { class: `badge entity-type type-${token(entity.type)}` }, entity.type)),
      definitions([
        ["key", h("code", {}, entity.key)],
        ["mentioned by", plural(entity.mentions, "memory", "memories")],
        ["observations", String(entity.observations)],
        ["other spellings", entry.aliases.length ? entry.aliases.join(", ") : null],
        ["declared", entity.declared ? "yes (through the knowledge tools)" : "no (extracted)"],
        ["first seen", viewerTime(entity.created_at)],
        ["updated", viewerTime(entity.updated_at)],
      ])),
    h("figure", { class: "card graph-figure" },
      h("h3", {}, "Neighbourhood ", depth),
      drawingSlot, caption),
    h("section", { class: "card" }, h("h3", {}, "Mentioned in"), mentions),
    h("section", { class: "card" }, h("h3", {}, "Relations"), relations,
      entry.relations_cursor
        ? h("p", { class: "hint", id: "entity-relations-more" },
          `The first ${plural(entry.relations.length, "relation is", "relations are")} shown; it has more (recalld graph relations --entity).`)
        : null),
    h("section", { class: "card" }, h("h3", {}, "Observations"), observations,
      observationsShown, moreObservations));
  await drawNeighbourhood();
}
