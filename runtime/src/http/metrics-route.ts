import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { BrainRuntimeError } from "../errors.ts";
import type { Route } from "./routes.ts";
import { sendError } from "./respond.ts";
import type { Metrics } from "../telemetry/metrics.ts";

/**
 * `GET /metrics` on the API port: the Prometheus text exposition, for the operator token only (an
 * API key is refused `forbidden`: the counts cover every tenant's sessions).
 */
export function metricsRoute(metrics: Metrics): Route {
  return async (req, res, url, principal) => {
    if (url.pathname !== "/metrics") return false;
    if (req.method !== "GET") throw new BrainRuntimeError("not_found", `no route ${req.method ?? "?"} /metrics`);
    if (principal?.kind !== "operator") throw new BrainRuntimeError("forbidden", "GET /metrics takes the operator token (or scrape BRAIN_METRICS_LISTEN)");
    await answer(metrics, res);
    return true;
  };
}

/**
 * A second listener (BRAIN_METRICS_LISTEN) that serves only `GET /metrics`, without a token, for a
 * scraper on a private network; anything else there is 404.
 */
export async function listenForMetrics(metrics: Metrics, host: string, port: number): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics" || req.method !== "GET") return sendError(res, new BrainRuntimeError("not_found", "this listener serves GET /metrics only"));
    answer(metrics, res).catch((e: unknown) => sendError(res, e));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === "object" && address !== null ? address.port : port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(metrics: Metrics, res: ServerResponse): Promise<void> {
  const text = await metrics.text();
  res.writeHead(200, { "content-type": metrics.contentType, "content-length": Buffer.byteLength(text) });
  res.end(text);
}
