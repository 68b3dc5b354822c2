import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EnvironmentPlugin, PluginContext } from "../plugin.ts";
import { ComponentEnvironment } from "./environment.ts";
import type { IncomingMessage, ServerResponse } from "node:http";
import { digestUploadRoute } from "../digest-upload-route.ts";
import { BrainRuntimeError } from "../../errors.ts";
import { sendError } from "../../http/respond.ts";
import { LOG_LEVELS } from "../../logger.ts";
import type { LogLevel } from "../../logger.ts";

/** Largest component upload (PUT /v1/components/:digest). */
export const MAX_COMPONENT_BYTES = 64 * 1024 * 1024;

/**
 * The component Environment and its upload route. Components live under <dataDir>/components;
 * with an in-memory journal they go to a temp folder removed on close. Without it
 * (`startBrain({ components: false })`) the upload route is there and says why it cannot be used.
 */
export const componentsPlugin: EnvironmentPlugin = {
  name: "component",
  install(ctx) {
    if (ctx.settings.components) installComponents(ctx);
    else ctx.route(componentsDisabledRoute);
  },
};

function installComponents(ctx: PluginContext): ComponentEnvironment {
  const { settings, logger } = ctx;
  const temp = settings.dataDir === undefined ? mkdtempSync(join(tmpdir(), "brain-components-")) : undefined;
  const env = new ComponentEnvironment({
    storeDir: temp ?? join(settings.dataDir!, "components"),
    uploads: ctx.uploads,
    ...(settings.componentTranspileCache !== undefined ? { transpileCache: settings.componentTranspileCache } : {}),
    workspaceRoot: settings.workspaceRoot,
    memoryLimitMb: settings.componentMemoryMb,
    // Telemetry goes to the log at the guest's level (BRAIN_COMPONENT_TELEMETRY: every line at info).
    onTelemetry: (t) => logger[settings.componentTelemetry ? "info" : logLevelOf(t.level)](`component telemetry: ${t.message}`, { callId: t.callId, level: t.level }),
    logger,
  });
  ctx.provide("component", env);
  // After the runtime closed its Environments (this one's workers or hosts stopped): the temp folder goes.
  if (temp) ctx.onClose(() => rmSync(temp, { recursive: true, force: true }));
  // Components are larger than ordinary bodies (a componentize-js guest is ~12 MB).
  ctx.route(digestUploadRoute({ collection: "components", noun: "component", of: "the bytes", maxBytes: MAX_COMPONENT_BYTES, store: env.store, answer: (a) => ({ admitMs: a.admitMs }) }));
  return env;
}

/** brain:tool's telemetry levels are the logger's; anything else (never sent by the WIT's enum) is info. */
function logLevelOf(level: string): LogLevel {
  return (LOG_LEVELS as string[]).includes(level) ? (level as LogLevel) : "info";
}

/** Without the component environment, its upload route exists and says why it cannot be used. */
async function componentsDisabledRoute(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  if (!/^\/v1\/components(\/|$)/.test(url.pathname)) return false;
  const error = new BrainRuntimeError("unsupported", "this runtime runs without the component environment (startBrain({ components: false })): components cannot be uploaded or placed");
  // The body (component bytes) is drained unread: the answer does not depend on it.
  req.resume();
  if (req.method === "HEAD") {
    res.writeHead(error.status, { "content-length": 0, connection: "close" });
    res.end();
  } else sendError(res, error);
  return true;
}
