import { environmentPlugins } from "../plugins.ts";
import type { BrainInternals } from "../plugins.ts";
import { HttpToolEnvironment } from "./environment.ts";
import { PlainHttpEnvironment } from "./plain.ts";
import { httpCallbackRoute } from "./callback-route.ts";

/** Plugs the HTTP tool Environment and its callback route into startBrain. */
export function installHttpTools(internals: BrainInternals): HttpToolEnvironment {
  const allowedOrigins = internals.httpToolOrigins.map((o) => new URL(o).origin);
  const env = new HttpToolEnvironment({ allowedOrigins, publicUrl: internals.publicUrl });
  internals.environments.set("http", env);
  internals.openRoutes.push(httpCallbackRoute(env));
  // Plain-JSON endpoints (the v1 http()/httpTool() placements): the same operator allow-list.
  internals.environments.set("http_plain", new PlainHttpEnvironment({ allowedOrigins }));
  return env;
}

environmentPlugins.push((internals) => void installHttpTools(internals));
