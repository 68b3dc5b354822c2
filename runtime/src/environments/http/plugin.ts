import { environmentPlugins } from "../plugins.ts";
import type { BrainInternals } from "../plugins.ts";
import { HttpToolEnvironment } from "./environment.ts";
import { httpCallbackRoute } from "./callback-route.ts";

/** Plugs the HTTP tool Environment and its callback route into startBrain. */
export function installHttpTools(internals: BrainInternals): HttpToolEnvironment {
  const env = new HttpToolEnvironment({ allowedOrigins: internals.httpToolOrigins.map((o) => new URL(o).origin), publicUrl: internals.publicUrl });
  internals.environments.set("http", env);
  internals.openRoutes.push(httpCallbackRoute(env));
  return env;
}

environmentPlugins.push((internals) => void installHttpTools(internals));
