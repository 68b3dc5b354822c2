import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { environmentPlugins } from "../plugins.ts";
import type { BrainInternals } from "../plugins.ts";
import { ComponentEnvironment } from "./environment.ts";
import { componentMemoryMb } from "./memory-setting.ts";
import type { IncomingMessage, ServerResponse } from "node:http";
import { digestUploadRoute } from "../digest-upload-route.ts";
import { BrainRuntimeError } from "../../errors.ts";
import { sendError } from "../../http/respond.ts";

/** Largest component upload (PUT /v1/components/:digest). */
export const MAX_COMPONENT_BYTES = 64 * 1024 * 1024;

/**
 * Plugs the component Environment and its upload route into startBrain. Components live under
 * <dataDir>/components; with an in-memory journal they go to a temp folder removed on close.
 */
export function installComponents(internals: BrainInternals): ComponentEnvironment {
  const temp = internals.dataDir === undefined ? mkdtempSync(join(tmpdir(), "brain-components-")) : undefined;
  const env = new ComponentEnvironment({
    storeDir: temp ?? join(internals.dataDir!, "components"),
    workspaceRoot: internals.workspaceRoot ?? process.env.BRAIN_WORKSPACE_ROOT,
    memoryLimitMb: componentMemoryMb(process.env),
    onTelemetry: process.env.BRAIN_COMPONENT_TELEMETRY ? (t) => console.error(`[component ${t.callId}] ${t.level}: ${t.message}`) : undefined,
  });
  const close = env.close.bind(env);
  env.close = async () => {
    await close();
    if (temp) rmSync(temp, { recursive: true, force: true });
  };
  internals.environments.set("component", env);
  // Components are larger than ordinary bodies (a componentize-js guest is ~12 MB).
  internals.routes.push(digestUploadRoute({ collection: "components", noun: "component", of: "the bytes", maxBytes: MAX_COMPONENT_BYTES, store: env.store, answer: (a) => ({ admitMs: a.admitMs }) }));
  return env;
}

environmentPlugins.push((internals) => {
  if (internals.components) installComponents(internals);
  else internals.routes.push(componentsDisabledRoute);
});

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
