import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EnvironmentPlugin } from "../plugin.ts";
import { ManagedEnvironment } from "./environment.ts";
import { digestUploadRoute } from "../digest-upload-route.ts";

/** Largest package upload: a package with its dependencies may be larger than a component. */
export const MAX_PACKAGE_BYTES = 128 * 1024 * 1024;

/**
 * Brain-managed JS hosts (placement kind "managed") and their package upload route. Packages and
 * binding folders live under <dataDir>; with an in-memory journal under a temp folder removed on close.
 */
export const managedHostsPlugin: EnvironmentPlugin = {
  name: "managed",
  install(ctx) {
    const { settings } = ctx;
    const temp = settings.dataDir === undefined ? mkdtempSync(join(tmpdir(), "brain-managed-")) : undefined;
    // No binding runs before this: a managed host registration in the store is one a run that ended
    // without closing (a crash) left behind, and its id is never used again. Only on a store of one
    // runtime: on PostgreSQL the other nodes' managed hosts are registered there too.
    if (ctx.storeKind !== "postgres") ctx.hosts.forgetAllManaged();
    const env = new ManagedEnvironment({
      rootDir: temp ?? settings.dataDir!,
      uploads: ctx.uploads,
      workspaceRoot: settings.workspaceRoot,
      hosts: ctx.hosts,
      sessions: ctx.sessions,
      hostTokens: ctx.hostTokens,
      hostBindings: ctx.hostBindings,
      url: () => ctx.localUrl(),
      binaries: { node: settings.managedHosts.node, deno: settings.managedHosts.deno },
      path: settings.managedHosts.path,
      install: {
        npm: settings.managedHosts.npm,
        scripts: settings.managedHosts.installScripts,
        ...(settings.managedHosts.registry !== undefined ? { registry: settings.managedHosts.registry } : {}),
        ...(settings.managedHosts.cache !== undefined ? { cache: settings.managedHosts.cache } : {}),
      },
      hostLog: settings.managedHosts.log ? (env, text) => ctx.logger.info(`managed host ${env}: ${text.trimEnd()}`) : undefined,
    });
    ctx.provide("managed", env);
    // After the runtime closed its Environments (this one's host processes stopped): the temp folder goes.
    if (temp) ctx.onClose(() => rmSync(temp, { recursive: true, force: true }));
    // PUT /v1/packages/:digest: the package tarball (npm pack layout, dependencies may ride under
    // package/node_modules/); 201 {digest, status, name, version}, 200 when already admitted.
    ctx.route(digestUploadRoute({ collection: "packages", noun: "package", of: "the tarball", maxBytes: MAX_PACKAGE_BYTES, store: env.store, answer: (a) => ({ name: a.name, version: a.version }) }));
  },
};
