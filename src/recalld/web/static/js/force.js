// A small force-directed layout (Fruchterman and Reingold's spring embedder), written
// out in full because a neighbourhood is a few dozen nodes: every pair repels, every
// link pulls, a weak gravity keeps unlinked nodes in view, and the moves shrink as the
// layout cools. Deterministic (no randomness): the same graph is drawn the same way.
// No DOM here; network.js draws the result.

const GOLDEN_ANGLE = Math.PI * (3 - Math.sqrt(5));

/**
 * Positions ({x, y} by node id) for ``nodes`` ([{id}]) joined by ``links``
 * ([{source, target, weight?}], ids), inside ``width`` × ``height`` less ``margin``.
 * The node ``pinned`` (an id) stays at the centre.
 */
export function forceLayout(nodes, links, {
  width = 640, height = 420, margin = 24, iterations = 300, pinned = null, gravity = 0.04,
} = {}) {
  const count = nodes.length;
  const centreX = width / 2;
  const centreY = height / 2;
  const ideal = Math.sqrt(((width - 2 * margin) * (height - 2 * margin)) / Math.max(count, 1)) * 0.8;
  const indexOf = new Map(nodes.map((node, index) => [node.id, index]));
  // Start on a sunflower spiral around the centre: spread out, and the same every time.
  const points = nodes.map((node, index) => {
    if (node.id === pinned) return { x: centreX, y: centreY };
    const radius = ideal * 0.6 * Math.sqrt(index + 1);
    return {
      x: centreX + radius * Math.cos(index * GOLDEN_ANGLE),
      y: centreY + radius * Math.sin(index * GOLDEN_ANGLE),
    };
  });
  const edges = [];
  for (const link of links) {
    const from = indexOf.get(link.source);
    const to = indexOf.get(link.target);
    if (from !== undefined && to !== undefined && from !== to) edges.push([from, to, link.weight ?? 1]);
  }
  let temperature = Math.min(width, height) / 8;
  const cooling = temperature / (iterations + 1);

  for (let step = 0; step < iterations; step += 1) {
    const moves = points.map(() => ({ x: 0, y: 0 }));
    for (let first = 0; first < count; first += 1) {
      for (let second = first + 1; second < count; second += 1) {
        let dx = points[first].x - points[second].x;
        let dy = points[first].y - points[second].y;
        let distance = Math.hypot(dx, dy);
        if (distance < 0.01) {
          // Two nodes on the same spot: push them apart along a fixed direction.
          dx = 0.01 * (second - first);
          dy = 0.01;
          distance = Math.hypot(dx, dy);
        }
        const push = (ideal * ideal) / distance;
        moves[first].x += (dx / distance) * push;
        moves[first].y += (dy / distance) * push;
        moves[second].x -= (dx / distance) * push;
        moves[second].y -= (dy / distance) * push;
      }
    }
    for (const [from, to, weight] of edges) {
      const dx = points[from].x - points[to].x;
      const dy = points[from].y - points[to].y;
      const distance = Math.max(Math.hypot(dx, dy), 0.01);
      const pull = ((distance * distance) / ideal) * Math.min(weight, 3);
      moves[from].x -= (dx / distance) * pull;
      moves[from].y -= (dy / distance) * pull;
      moves[to].x += (dx / distance) * pull;
      moves[to].y += (dy / distance) * pull;
    }
    points.forEach((point, index) => {
      if (nodes[index].id === pinned) return;
      const move = moves[index];
      // Weaker sideways, so a wide drawing is used across its width.
      move.x += (centreX - point.x) * gravity * ideal * 0.1 * (height / width);
      move.y += (centreY - point.y) * gravity * ideal * 0.1;
      const length = Math.hypot(move.x, move.y);
      if (length > 0) {
        const limited = Math.min(length, temperature);
        point.x += (move.x / length) * limited;
        point.y += (move.y / length) * limited;
      }
      point.x = Math.min(width - margin, Math.max(margin, point.x));
      point.y = Math.min(height - margin, Math.max(margin, point.y));
    });
    temperature = Math.max(temperature - cooling, 0.5);
  }
  return new Map(nodes.map((node, index) => [node.id, points[index]]));
}
