// @ts-check
// The page's frame: where views draw (main, the breadcrumbs), what the current view holds open, and
// in-page navigation (history.pushState, then the router app.js registered draws the new view).

export const main = /** @type {HTMLElement} */ (document.getElementById("main"));
export const crumbs = /** @type {HTMLElement} */ (document.getElementById("crumbs"));

/** What the current view holds open (EventSource, timers); closed when the route changes. */
let cleanups = /** @type {Array<() => void>} */ ([]);
/** @type {() => void} */
let router = () => undefined;

/** @param {() => void} fn the function that draws the view of `location` (app.js) */
export function setRouter(fn) {
  router = fn;
}

/** @param {() => void} fn closed when the view changes */
export function onLeave(fn) {
  cleanups.push(fn);
}

/** Closes what the view held open (before the next view is drawn). */
export function leave() {
  for (const c of cleanups) c();
  cleanups = [];
}

/** @param {string} href a page of /ui */
export function navigate(href) {
  history.pushState(null, "", href);
  router();
}

/** Draws the current view again (Refresh). */
export function redraw() {
  router();
}
