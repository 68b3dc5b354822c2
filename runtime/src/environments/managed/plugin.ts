import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { environmentPlugins } from "../plugins.ts";
import type { BrainInternals } from "../plugins.ts";
import { ManagedEnvironment } from "./environment.ts";
import { digestUploadRoute } from "../digest-upload-route.ts";

/** Largest package upload: a package with its dependencies may be larger than a component. */
export const MAX_PACKAGE_BYTES = 128 * 1024 * 1024;

/**
 * Plugs Brain-managed JS hosts (placement kind "managed") and their package upload route into
 * startBrain. Packages and binding folders live under <dataDir>; with an in-memory journal under a
 * temp folder removed on close.
 */
export function installManagedHosts(internals: BrainInternals): ManagedEnvironment {
  const temp = internals.dataDir === undefined ? mkdtempSync(join(tmpdir(), "brain-managed-")) : undefined;
  // No binding runs before this: a managed host registration in the store is one a run that ended
  // without closing (a crash) left behind, and its id is never used again. Only on a store of one
  // runtime: on PostgreSQL the other nodes' managed hosts are registered there too.
  if (internals.store.kind !== "postgres") internals.hosts.forgetAllManaged();
  const env = new ManagedEnvironment({
    rootDir: temp ?? internals.dataDir!,
    workspaceRoot: internals.workspaceRoot ?? process.env.BRAIN_WORKSPACE_ROOT,
    hosts: internals.hosts,
    sessions: () => internals.sessions,
    hostTokens: internals.hostTokens,
    hostBindings: internals.hostBindings,
    url: () => internals.localUrl(),
  });
  const close = env.close.bind(env);
  env.close = async () => {
    await close();
    if (temp) rmSync(temp, { recursive: true, force: true });
  };
  internals.environments.set("managed", env);
  // PUT /v1/packages/:digest: the package tarball (npm pack layout, dependencies may ride under
  // package/node_modules/); 201 {digest, status, name, version}, 200 when already admitted.
  internals.routes.push(digestUploadRoute({ collection: "packages", noun: "package", of: "the tarball", maxBytes: MAX_PACKAGE_BYTES, store: env.store, answer: (a) => ({ name: a.name, version: a.version }) }));
  return env;
}

environmentPlugins.push((internals) => {
  installManagedHosts(internals);
});
