// The navigation registry: one line per page, in menu order. Pages load lazily.
//
// A page that needs an endpoint is gated on it (requiresPath), and actions on a
// memory register with registerMemoryAction (see registry.js).

import { registerMemoryAction, registerPage } from "./registry.js";

registerPage({ id: "search", title: "Search", order: 10, load: () => import("./pages/search.js") });
registerPage({
  id: "explain", title: "Why not?", order: 15, requiresPath: "/v1/explain",
  load: () => import("./pages/explain.js"),
});
registerPage({ id: "browse", title: "Browse", order: 20, load: () => import("./pages/browse.js") });
registerPage({
  id: "memory", title: "Memory", order: 21, hidden: true, load: () => import("./pages/memory.js"),
});
registerPage({ id: "core", title: "Core memory", order: 30, load: () => import("./pages/core.js") });
registerPage({
  id: "graph", title: "Graph", order: 35, requiresPath: "/v1/graph/entities",
  load: () => import("./pages/graph.js"),
});
registerPage({
  id: "recollections", title: "Recollections", order: 40,
  load: () => import("./pages/recollections.js"),
});
registerPage({
  id: "intentions", title: "Intentions", order: 45, requiresPath: "/v1/intentions",
  load: () => import("./pages/intentions.js"),
});
registerPage({ id: "status", title: "Status", order: 50, load: () => import("./pages/status.js") });
registerPage({
  id: "transfer", title: "Import/export", order: 60, load: () => import("./pages/transfer.js"),
});

registerMemoryAction({
  id: "explain", label: "Why not?", order: 20, requiresPath: "/v1/explain",
  run: (memory, { navigate }) => navigate("explain", memory.id),
});
registerMemoryAction({
  id: "entities", label: "Entities", order: 30, requiresPath: "/v1/graph/mentions",
  run: async (memory, context, output) => (await import("./memory-actions.js")).showEntities(memory, context, output),
});
registerMemoryAction({
  id: "triggers", label: "Triggers", order: 40, requiresPath: "/v1/intentions/{intention_id}",
  applies: (memory) => memory.kind === "intention",
  run: async (memory, context, output) => (await import("./memory-actions.js")).showIntention(memory, context, output),
});
