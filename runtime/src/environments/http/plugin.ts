import type { EnvironmentPlugin } from "../plugin.ts";
import { HttpToolEnvironment } from "./environment.ts";
import { PlainHttpEnvironment } from "./plain.ts";
import { httpCallbackRoute } from "./callback-route.ts";

/** The HTTP tool Environment and its callback route, and plain-JSON endpoints (the v1 http()/httpTool() placements). */
export const httpToolsPlugin: EnvironmentPlugin = {
  name: "http",
  install(ctx) {
    const allowedOrigins = ctx.settings.httpToolOrigins.map((o) => new URL(o).origin);
    const env = new HttpToolEnvironment({ allowedOrigins, publicUrl: () => ctx.publicUrl() });
    ctx.provide("http", env);
    ctx.openRoute(httpCallbackRoute(env));
    // The same operator allow-list.
    ctx.provide("http_plain", new PlainHttpEnvironment({ allowedOrigins }));
  },
};
