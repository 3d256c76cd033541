// The extension points of the browser: pages in the navigation, and actions
// offered on a memory's detail view. A new page is one module under pages/ and
// one registerPage() line in pages.js; nothing else needs to change.
//
// A page is {id, title, order, load, requiresPath?, hidden?}:
//   load()        → import("./pages/x.js"); the module exports render(root, context, argument)
//                   and may return a function that cleans up when the page is left;
//   requiresPath  → an API path ("/v1/explain") the page needs: the page is listed only
//                   when the server's OpenAPI spec has it, so a page can land before
//                   (or without) its endpoint;
//   hidden        → routable (#/id/argument) but not in the navigation (detail views).
//
// A memory action is {id, label, order, requiresPath?, write?, applies?, run(memory, context, output)}:
// a button on the memory's detail view ("why not?", "graph" ...); ``applies(memory)``
// says whether it is offered for that memory (default: always), and ``output`` is an
// element of the detail view where the action may show what it found.

const pages = [];
const memoryActions = [];

function byOrder(left, right) {
  return (left.order ?? 100) - (right.order ?? 100) || left.id.localeCompare(right.id);
}

/** Add a page (see above for its fields). */
export function registerPage(page) {
  if (pages.some((known) => known.id === page.id)) throw new Error(`page ${page.id} exists`);
  pages.push(page);
  pages.sort(byOrder);
}

/** Add an action to every memory's detail view. */
export function registerMemoryAction(action) {
  memoryActions.push(action);
  memoryActions.sort(byOrder);
}

function offered(entry, apiPaths) {
  return !entry.requiresPath || apiPaths.has(entry.requiresPath);
}

/** The pages to show, given the API paths the server has. */
export function listPages(apiPaths) {
  return pages.filter((page) => offered(page, apiPaths));
}

/** The page with ``id``, if the server supports it. */
export function findPage(id, apiPaths) {
  return pages.find((page) => page.id === id && offered(page, apiPaths));
}

/** The actions for ``memory``, given the API paths and whether the user may write. */
export function listMemoryActions(apiPaths, canWrite, memory) {
  return memoryActions.filter((action) => offered(action, apiPaths)
    && (!action.write || canWrite)
    && (!action.applies || action.applies(memory)));
}

/** Whether any registered page or action needs the API's path list. */
export function needsApiPaths() {
  return [...pages, ...memoryActions].some((entry) => entry.requiresPath);
}
