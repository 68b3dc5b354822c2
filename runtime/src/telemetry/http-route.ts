/**
 * The route template of a request path, for metric labels and span names: static segments stay,
 * every other segment (a session id, a key id, a digest, a host id) becomes `{id}`, so a label's
 * values stay few however many sessions there are. A path outside the API is `other`, so a
 * scanner probing random paths cannot grow the label set either.
 */
const STATIC = new Set(["v1", "sessions", "messages", "cancel", "events", "keys", "hosts", "connect", "calls", "http", "components", "packages", "environments", "cluster", "link", "ui", "assets", "login", "logout", "healthz", "metrics", "mcp"]);

const ROOTS = new Set(["v1", "ui", "healthz", "metrics"]);

export function routeOf(pathname: string): string {
  const segments = pathname.split("/").filter((s) => s !== "");
  if (segments.length === 0) return "/";
  if (!ROOTS.has(segments[0]!) || segments.length > 6) return "other";
  // The viewer's static files are few and named: they keep their names.
  if (segments[0] === "ui" && segments[1] === "assets") return segments.length === 3 && /^[a-z]+\.(css|js|svg)$/.test(segments[2]!) ? `/ui/assets/${segments[2]}` : "other";
  return `/${segments.map((s) => (STATIC.has(s) ? s : "{id}")).join("/")}`;
}
