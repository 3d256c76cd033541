// An entity's neighbourhood drawn as SVG: nodes placed by force.js, relations as
// arrows labelled with their predicate, co-mentions (entities named in the same
// memories) as dashed lines from the centre. Names are untrusted text: they go into
// text nodes and <title>s only. A node is a link: click it (or Enter) to open it.

import { svg, token } from "./dom.js";
import { forceLayout } from "./force.js";

const WIDTH = 600;
const HEIGHT = 420;
const LABEL_CHARS = 22;

function radiusOf(node) {
  if (node.role === "centre") return 14;
  return Math.min(12, 5 + 1.5 * Math.sqrt(node.mentions || 0));
}

function shortLabel(name) {
  return name.length <= LABEL_CHARS ? name : `${name.slice(0, LABEL_CHARS - 1)}…`;
}

/** Where a line from ``from`` towards ``to`` meets a circle of ``radius`` around ``to``. */
function trimmed(from, to, radius) {
  const dx = to.x - from.x;
  const dy = to.y - from.y;
  const length = Math.hypot(dx, dy) || 1;
  return { x: to.x - (dx / length) * radius, y: to.y - (dy / length) * radius };
}

/**
 * The drawing of ``nodes`` ([{id, type, mentions, role: centre|related|co-mentioned}],
 * id = the entity's name) and ``links`` ([{source, target, kind: relation|co-mention,
 * label?, weight?}]); ``onSelect(id)`` runs when a node is chosen.
 */
export function networkDrawing(nodes, links, onSelect, description) {
  const centre = nodes.find((node) => node.role === "centre");
  const positions = forceLayout(nodes, links, {
    width: WIDTH, height: HEIGHT, margin: 30, pinned: centre ? centre.id : null,
  });
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const drawnLinks = links.filter((link) => positions.has(link.source) && positions.has(link.target) && link.source !== link.target);

  const linkElements = drawnLinks.map((link) => {
    const from = positions.get(link.source);
    const to = positions.get(link.target);
    const end = link.kind === "relation" ? trimmed(from, to, radiusOf(byId.get(link.target)) + 3) : to;
    const line = svg("line", {
      class: `graph-link ${link.kind}`,
      x1: from.x.toFixed(1),
      y1: from.y.toFixed(1),
      x2: end.x.toFixed(1),
      y2: end.y.toFixed(1),
      "marker-end": link.kind === "relation" ? "url(#graph-arrow)" : null,
    }, svg("title", {}, link.kind === "relation"
      ? `${link.source} —${link.label}→ ${link.target}`
      : `${link.source} and ${link.target}: ${link.weight} memor${link.weight === 1 ? "y" : "ies"} together`));
    if (link.kind === "co-mention") line.style.strokeWidth = String(Math.min(1 + link.weight * 0.5, 4));
    return line;
  });
  const linkLabels = drawnLinks.filter((link) => link.kind === "relation").map((link) => {
    const from = positions.get(link.source);
    const to = positions.get(link.target);
    return svg("text", {
      class: "graph-link-label",
      "aria-hidden": "true", // the relations list says each one in words
      x: ((from.x + to.x) / 2).toFixed(1),
      y: ((from.y + to.y) / 2 - 3).toFixed(1),
      "text-anchor": "middle",
    }, link.label);
  });
  const nodeElements = nodes.map((node) => {
    const point = positions.get(node.id);
    const radius = radiusOf(node);
    const group = svg("g", {
      class: `graph-node role-${node.role} type-${token(node.type)}`,
      transform: `translate(${point.x.toFixed(1)} ${point.y.toFixed(1)})`,
      tabindex: 0,
      role: "link",
      "aria-label": `${node.id} (${node.type})`,
      dataset: { entity: node.id },
    },
    svg("title", {}, `${node.id} (${node.type}) · ${node.mentions ?? 0} memor${node.mentions === 1 ? "y" : "ies"}`),
    svg("circle", { r: radius }),
    svg("text", { class: "graph-node-label", x: radius + 4, y: 4 }, shortLabel(node.id)));
    group.addEventListener("click", () => onSelect(node.id));
    group.addEventListener("keydown", (event) => {
      if (event.key === "Enter") onSelect(node.id);
    });
    return group;
  });

  return svg("svg", {
    class: "graph-view",
    id: "graph-view",
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    // A group, not an image: an image's content is hidden from assistive technology, and
    // its nodes are links a keyboard reaches (Tab, then Enter).
    role: "group",
    "aria-label": description,
  },
  svg("defs", {},
    svg("marker", {
      id: "graph-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse",
    }, svg("path", { class: "graph-arrow-head", d: "M 0 0 L 10 5 L 0 10 z" }))),
  svg("rect", { class: "graph-background", x: 0, y: 0, width: WIDTH, height: HEIGHT }),
  linkElements, linkLabels, nodeElements);
}
