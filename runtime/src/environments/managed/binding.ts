import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ErrorInfo, ExecutableReference } from "@aexhq/brain-protocol";
import type { ManagedRuntime } from "./placement.ts";
import { runToEnd } from "./run-to-end.ts";
import { installFromLockfile } from "./install.ts";
import type { InstallSettings } from "./install.ts";

const HOST_ENTRY = fileURLToPath(new URL("./host-entry.mjs", import.meta.url));
/** How long a managed host may take from spawn to its tools registered. */
const START_TIMEOUT_MS = 60_000;
/** How long the setup script may run. */
const SETUP_TIMEOUT_MS = 300_000;

export interface BindingSpec {
  sessionId: string;
  env: string;
  runtime: ManagedRuntime;
  tarball: string;
  /** <root>/bindings/<sessionId>/<env>: the package is unpacked into ./package. */
  dir: string;
  workspace?: { path: string; mode: "read" | "write" };
  /** The tools of the binding: each imported by its reference and given its placed options. */
  tools: Array<{ executable: ExecutableReference; options: unknown }>;
  /** Where the host connects (the runtime's loopback URL) and with what. */
  url: string;
  hostId: string;
  secret: string;
  token: string;
  /** The runtime binaries (BRAIN_NODE / BRAIN_DENO). */
  binaries: Record<ManagedRuntime, string>;
  /** The PATH setup commands and the host process get (Brain's own environment never reaches them). */
  path: string;
  /** How dependencies are installed from a lockfile when the upload has no node_modules. */
  install: InstallSettings;
  /** Where the host process's stderr goes besides failure messages (BRAIN_MANAGED_HOST_LOG). */
  hostLog?: (env: string, text: string) => void;
  /** Resolves once a connection for hostId is attached and serves every tool (or the process ended). */
  connected(hostId: string): boolean;
}

/**
 * One binding's host process: unpacked and prepared once (setup runs at most once, and a failure is
 * kept: every call of the binding gets it, nothing is retried), then started. `warm()` does both
 * when the session is created, so a call's deadline covers only the call; a call that comes to a
 * binding that is not warm (after a runtime restart) prepares and starts it first. A process that
 * dies ends its open calls through its lost connection (`unknown`); the next call starts a new one,
 * from the same prepared folder. `close()` ends everything the binding started and awaits it.
 */
export class ManagedBinding {
  private prepared: Promise<ErrorInfo | undefined> | undefined;
  private child: ChildProcess | undefined;
  /** Settles once the current host process has exited (or could not be spawned). */
  private exited: Promise<void> = Promise.resolve();
  private starting: Promise<void> | undefined;
  /** Why the host started by warm() did not serve its tools: told to the binding's next call. */
  private warmFailure: Error | undefined;
  private warming: Promise<void> | undefined;
  /** Processes started (a restart counts); for tests and diagnostics. */
  starts = 0;
  private closed = false;
  /** Aborts unpacking and setup in progress when the binding closes. */
  private abort = new AbortController();

  constructor(readonly spec: BindingSpec) {}

  get packageDir(): string {
    return join(this.spec.dir, "package");
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Whether a host process of the binding is running now. */
  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Unpacks and runs setup, once; resolves with the failure that every call will get, if any. */
  prepare(): Promise<ErrorInfo | undefined> {
    this.prepared ??= this.doPrepare().catch((e) => ({ code: "tool_error", message: `managed host ${this.spec.env}: could not prepare the package: ${String(e instanceof Error ? e.message : e)}` }));
    return this.prepared;
  }

  /**
   * Prepares the binding and starts its host (at session creation). Never rejects: a setup failure
   * is kept for every call (prepare()), a host that did not start is told to the next call
   * (takeWarmFailure()); the call after that starts it again.
   */
  warm(): Promise<void> {
    this.warming ??= (async () => {
      if ((await this.prepare()) !== undefined || this.closed) return;
      try {
        await this.ensureRunning();
      } catch (e) {
        if (!this.closed) this.warmFailure = e instanceof Error ? e : new Error(String(e));
      }
    })();
    return this.warming;
  }

  /** The failure of the host warm() started, once: the next call reports it instead of starting another. */
  takeWarmFailure(): Error | undefined {
    const f = this.warmFailure;
    this.warmFailure = undefined;
    return f;
  }

  private async doPrepare(): Promise<ErrorInfo | undefined> {
    const { dir, env } = this.spec;
    const signal = this.abort.signal;
    if (this.closed) return { code: "tool_error", message: `managed host ${env}: the binding was closed before it was prepared` };
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const untar = await runToEnd("tar", ["-xzf", this.spec.tarball, "-C", dir, "--no-same-owner", "--no-same-permissions"], { env: this.childEnv(), signal });
    if (this.closed) return { code: "tool_error", message: `managed host ${env}: the binding was closed while it was prepared` };
    if (untar.code !== 0) throw new Error(`tar exited ${untar.signal ?? untar.code}: ${untar.out.trim().split("\n").slice(-3).join(" / ")}`);
    copyFileSync(HOST_ENTRY, join(this.packageDir, ".brain-host.mjs"));
    const pkg = JSON.parse(readFileSync(join(this.packageDir, "package.json"), "utf8")) as { dependencies?: Record<string, string>; brain?: { setup?: unknown } };
    // Dependencies not in the upload are installed from the package's lockfile, here, before setup
    // and before the entrypoint is imported (install.ts); a failure is kept like setup's.
    if (Object.keys(pkg.dependencies ?? {}).length > 0 && !existsSync(join(this.packageDir, "node_modules"))) {
      const failed = await installFromLockfile(
        { env, packageDir: this.packageDir, bindingDir: dir, path: this.spec.path, node: this.spec.binaries.node, deno: this.spec.binaries.deno, signal },
        this.spec.install,
      );
      if (this.closed) return { code: "tool_error", message: `managed host ${env}: the binding was closed while its dependencies were installed` };
      if (failed !== undefined) return failed;
    }
    const setup = pkg.brain?.setup;
    if (setup === undefined) return undefined;
    if (typeof setup !== "string" || setup.startsWith("/") || setup.split("/").includes("..")) {
      return { code: "tool_error", message: `managed host ${env}: package.json brain.setup must be a relative module path inside the package, not ${JSON.stringify(setup)}` };
    }
    // The setup script runs with the binding's authority plus writing its own package folder.
    const args = this.commandLine(setup, true);
    const r = await runToEnd(args[0]!, args.slice(1), { cwd: this.packageDir, env: this.childEnv(), timeout: SETUP_TIMEOUT_MS, signal });
    if (this.closed) return { code: "tool_error", message: `managed host ${env}: the binding was closed while its setup ran` };
    if (r.code === 0) return undefined;
    return {
      code: "tool_error",
      message: `managed host ${env}: setup ${setup} failed (${r.signal ? `signal ${r.signal}` : `exit code ${r.code}`}); it is not retried: ${r.out.trim().split("\n").slice(-5).join(" / ")}`,
      details: { setup, exitCode: r.code, signal: r.signal },
    };
  }

  private childEnv(): NodeJS.ProcessEnv {
    // Brain's own environment (its token, its keys) never reaches the package.
    const env: NodeJS.ProcessEnv = { PATH: this.spec.path, NO_COLOR: "1" };
    if (this.spec.workspace) env.BRAIN_WORKSPACE = this.spec.workspace.path;
    if (this.spec.runtime === "deno") {
      env.DENO_DIR = join(this.spec.dir, ".deno");
      env.DENO_NO_UPDATE_CHECK = "1";
    }
    return env;
  }

  /** The runtime's command line for a module of the package, under the binding's permissions. */
  private commandLine(module: string, setup: boolean): string[] {
    const { runtime, dir, workspace, binaries } = this.spec;
    const read = [dir, ...(workspace ? [workspace.path] : [])];
    const write = [...(workspace?.mode === "write" ? [workspace.path] : []), ...(setup ? [dir] : [])];
    const origin = new URL(this.spec.url).host;
    if (runtime === "node") {
      return [
        binaries.node, "--experimental-permission", "--disable-warning=ExperimentalWarning",
        ...read.map((p) => `--allow-fs-read=${p}`), ...write.map((p) => `--allow-fs-write=${p}`),
        module,
      ];
    }
    return [
      binaries.deno, "run", "--no-prompt", "--no-config", "--node-modules-dir=manual",
      `--allow-read=${read.join(",")}`, ...(write.length ? [`--allow-write=${write.join(",")}`] : []),
      `--allow-net=${origin}`, "--allow-env",
      module,
    ];
  }

  /** Starts the host process unless one is running; resolves once it serves the binding's tools. */
  ensureRunning(): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`managed host ${this.spec.env}: the binding is closed (session deleted or runtime shutting down)`));
    if (this.running && this.starting === undefined && this.spec.connected(this.spec.hostId)) return Promise.resolve();
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private start(): Promise<void> {
    const args = this.commandLine("./.brain-host.mjs", false);
    const child = spawn(args[0]!, args.slice(1), { cwd: this.packageDir, env: this.childEnv(), stdio: ["pipe", "pipe", "pipe"] });
    this.child = child;
    this.starts += 1;
    this.exited = new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.once("error", () => {
        if (child.pid === undefined) resolve();
      });
    });
    let out = "";
    const keep = (b: Buffer) => (out = (out + b.toString()).slice(-4000));
    child.stderr!.on("data", keep);
    // Diagnostics only (never journaled): BRAIN_MANAGED_HOST_LOG=1 logs the host's stderr.
    const log = this.spec.hostLog;
    if (log !== undefined) child.stderr!.on("data", (b: Buffer) => log(this.spec.env, b.toString()));
    child.stdin!.on("error", () => {
      // Handled: a host that exits before reading its start line (EPIPE) is reported by its exit, below.
    });
    child.stdin!.end(JSON.stringify({ url: this.spec.url, token: this.spec.token, hostId: this.spec.hostId, secret: this.spec.secret, tools: this.spec.tools }));
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => fail(`did not serve its tools within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
      const fail = (why: string) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        child.kill("SIGKILL");
        reject(new Error(`managed host ${this.spec.env} (${this.spec.runtime}) ${why}: ${out.trim().split("\n").slice(-6).join(" / ")}`));
      };
      child.stdout!.on("data", (b: Buffer) => {
        out = (out + b.toString()).slice(-4000);
        if (!settled && out.includes("brain-managed-host: ready")) {
          clearTimeout(timer);
          if (this.closed) return fail("was stopped: the binding closed while it started");
          if (!this.spec.connected(this.spec.hostId)) return fail("said it was ready but is not connected");
          settled = true;
          resolve();
        }
      });
      child.on("error", (e) => fail(`could not be started (${e.message})`));
      child.on("exit", (code, signal) => fail(`exited (${signal ? `signal ${signal}` : `code ${code}`}) before serving its tools`));
    });
  }

  /**
   * Ends the binding (session deleted, runtime shutting down): aborts unpacking and setup in
   * progress, kills the host process, and resolves once every process it started has exited, so
   * nothing writes into the binding's folder afterwards.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    this.child?.kill("SIGKILL");
    await Promise.allSettled([this.prepared, this.warming, this.starting]);
    // A host spawned while the above settled was killed by start() seeing `closed`; await it too.
    this.child?.kill("SIGKILL");
    await this.exited;
  }
}
