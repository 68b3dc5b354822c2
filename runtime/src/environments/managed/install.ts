import { existsSync, mkdirSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import type { ErrorInfo } from "@aexhq/brain-protocol";
import { runToEnd } from "./run-to-end.ts";

/** How packages uploaded with a lockfile and no node_modules are installed (the operator's settings). */
export interface InstallSettings {
  /** The npm CLI (BRAIN_NPM; default: the npm beside this node). */
  npm: string;
  /** The registry URL (BRAIN_MANAGED_REGISTRY); absent = npm's / Deno's default. */
  registry?: string;
  /** The download cache folder (BRAIN_MANAGED_CACHE); absent = one inside the binding's folder. */
  cache?: string;
  /** Run dependencies' lifecycle scripts (BRAIN_MANAGED_INSTALL_SCRIPTS); off by default. */
  scripts: boolean;
}

/** The lockfiles preparation installs from, in the order they are looked for. */
export const LOCKFILES = ["npm-shrinkwrap.json", "package-lock.json", "deno.lock"] as const;

const INSTALL_TIMEOUT_MS = 300_000;

export interface InstallTarget {
  env: string;
  /** The unpacked package (<binding>/package): node_modules is created here. */
  packageDir: string;
  /** The binding's folder: the install's HOME and, without an operator cache, its cache. */
  bindingDir: string;
  /** PATH of the processes the binding starts. */
  path: string;
  node: string;
  deno: string;
  signal: AbortSignal;
}

/**
 * Installs a package's dependencies from its lockfile into its own folder, in a child process (the
 * package manager, never Brain's own process): `npm ci --omit=dev` for package-lock.json /
 * npm-shrinkwrap.json, Deno's frozen install for deno.lock. Lifecycle scripts stay off unless the
 * operator allows them. The install sees none of Brain's environment: HOME is the binding's folder
 * (so no user .npmrc and its tokens apply), the registry and cache are the operator's.
 * Resolves undefined when installed, the failure (tool_error, naming the lockfile) otherwise, or
 * `unsupported` when the package has no lockfile to install from.
 */
export async function installFromLockfile(t: InstallTarget, settings: InstallSettings): Promise<ErrorInfo | undefined> {
  const lockfile = LOCKFILES.find((f) => existsSync(join(t.packageDir, f)));
  if (lockfile === undefined) {
    return {
      code: "unsupported",
      message: `managed host ${t.env}: the package has dependencies but the upload carries neither package/node_modules nor a lockfile (${LOCKFILES.join(", ")}) to install them from`,
    };
  }
  const home = join(t.bindingDir, ".home");
  mkdirSync(home, { recursive: true });
  const cache = settings.cache ?? join(t.bindingDir, ".cache");
  // The package manager's own node first, so npm's `#!/usr/bin/env node` runs the binding's node.
  const env: NodeJS.ProcessEnv = { PATH: [dirname(t.node), t.path].join(delimiter), HOME: home, NO_COLOR: "1" };
  let cmd: string;
  let args: string[];
  if (lockfile === "deno.lock") {
    cmd = t.deno;
    args = ["install", "--frozen", "--node-modules-dir=auto", ...(settings.scripts ? ["--allow-scripts"] : [])];
    env.DENO_DIR = cache;
    env.DENO_NO_UPDATE_CHECK = "1";
    if (settings.registry !== undefined) env.NPM_CONFIG_REGISTRY = settings.registry;
  } else {
    cmd = settings.npm;
    args = ["ci", "--omit=dev", ...(settings.scripts ? [] : ["--ignore-scripts"]), "--no-audit", "--no-fund", "--no-update-notifier", `--cache=${cache}`,
      ...(settings.registry !== undefined ? [`--registry=${settings.registry}`] : [])];
  }
  const r = await runToEnd(cmd, args, { cwd: t.packageDir, env, timeout: INSTALL_TIMEOUT_MS, signal: t.signal });
  if (r.code === 0) return undefined;
  const command = `${cmd === settings.npm ? "npm" : "deno"} ${args[0]}`;
  return {
    code: "tool_error",
    message: `managed host ${t.env}: installing the package's dependencies from its ${lockfile} failed (${command}, ${r.signal ? `signal ${r.signal}` : `exit code ${r.code}`}); it is not retried: ${r.out.trim().split("\n").slice(-6).join(" / ")}`,
    details: { lockfile, command, exitCode: r.code, signal: r.signal },
  };
}
