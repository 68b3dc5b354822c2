import { existsSync, mkdirSync, rmSync, rmdirSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { delimiter, join, resolve } from "node:path";
import type { ErrorInfo, ManagedPlacement, PlacedTool } from "@aexhq/brain-protocol";
import { invokeFrame } from "../../dispatch/environment.ts";
import type { CallHandle, CallInvocation, CallSink, Environment } from "../../dispatch/environment.ts";
import { BrainRuntimeError } from "../../errors.ts";
import type { HostEnvironment } from "../host.ts";
import type { Principal } from "../../credentials/keys.ts";
import type { SessionManager } from "../../sessions/manager.ts";
import { ManagedBinding } from "./binding.ts";
import type { InstallSettings } from "./install.ts";
import { PackageStore } from "./package-store.ts";
import type { UploadShelf } from "../../journal/shared-files.ts";
import { MANAGED_RUNTIMES } from "./placement.ts";
import type { ManagedRuntime } from "./placement.ts";
import { MANAGED_HOST_PREFIX } from "../../hosts/registry.ts";

export interface ManagedEnvironmentOptions {
  /** <dataDir> (or a temp folder): packages/ and bindings/ live under it. */
  rootDir: string;
  workspaceRoot?: string;
  /** Several nodes: where uploads are kept for every node (journal/shared-files.ts). */
  uploads?: UploadShelf;
  hosts: HostEnvironment;
  sessions: SessionManager;
  /** The per-binding register tokens the host channel accepts (token → principal). */
  hostTokens: Map<string, Principal>;
  /** The binding each host process started here serves (host id → session and env), for the host channel. */
  hostBindings: Map<string, { sessionId: string; env: string }>;
  /** The runtime's own loopback URL, once it listens. */
  url: () => string;
  /** Runtime binaries (BRAIN_NODE / BRAIN_DENO, read by config.ts); a runtime whose binary does not exist is unsupported. */
  binaries: Record<ManagedRuntime, string>;
  /** The PATH binaries are looked up on, and setup commands and host processes get. */
  path: string;
  /** Where a host process's stderr goes (BRAIN_MANAGED_HOST_LOG); undefined: kept only for failure messages. */
  hostLog?: (env: string, text: string) => void;
  /** How a package uploaded with a lockfile and no node_modules is installed (install.ts). */
  install?: InstallSettings;
}

/** Whether a runtime binary exists: a path, or a name found on `path`. */
function installed(bin: string, path: string): boolean {
  if (bin.includes("/")) return existsSync(bin);
  return path.split(delimiter).some((dir) => dir !== "" && existsSync(join(dir, bin)));
}

function placementOf(tool: PlacedTool): ManagedPlacement {
  if (tool.placement.kind !== "managed") throw new BrainRuntimeError("internal", "not a managed placement");
  return tool.placement;
}

/**
 * Packaged `run` tools in host processes Brain starts and owns (kind "managed"): one process per
 * binding (session + env), its package unpacked into <root>/bindings/<session>/<env>, prepared
 * (setup) once, started with the runtime's own permission flags for the binding's grants, and
 * connected to the host channel as an ordinary host with a per-binding id, secret and token; all of
 * it when the session is created (sessionCreated), so calls find the host serving. Calls go over
 * that connection exactly as for any host: a lost connection ends its open calls `unknown`. Deleting
 * the session or closing the runtime stops the hosts, awaits them and forgets their registrations.
 */
export class ManagedEnvironment implements Environment {
  readonly kind = "managed" as const;
  readonly store: PackageStore;
  readonly bindings = new Map<string, ManagedBinding>();
  private binaries: Record<ManagedRuntime, string>;
  /** close() was called: a binding made from now on is closed at once (see binding()). */
  private closed = false;

  constructor(private opts: ManagedEnvironmentOptions) {
    this.store = new PackageStore(join(opts.rootDir, "packages"), opts.uploads === undefined ? undefined : { shelf: opts.uploads, kind: "package" });
    this.binaries = opts.binaries;
  }

  workspaceOf(sessionId: string): string | undefined {
    return this.opts.workspaceRoot === undefined ? undefined : join(resolve(this.opts.workspaceRoot), sessionId);
  }

  async admit(tool: PlacedTool, sessionId: string): Promise<ErrorInfo | undefined> {
    const p = placementOf(tool);
    const name = tool.contract.name;
    if (!(MANAGED_RUNTIMES as readonly string[]).includes(p.runtime)) {
      return { code: "unsupported", message: `tool ${name}: brainEnv ${p.env} asks for runtime "${p.runtime}", which this runtime cannot start (supported: ${MANAGED_RUNTIMES.join(", ")})`, details: { tool: name, env: p.env, runtime: p.runtime, supported: [...MANAGED_RUNTIMES] } };
    }
    const bin = this.binaries[p.runtime as ManagedRuntime];
    if (!installed(bin, this.opts.path)) {
      return { code: "unsupported", message: `tool ${name}: runtime "${p.runtime}" is not installed on this server (${bin})`, details: { tool: name, env: p.env, runtime: p.runtime } };
    }
    // Several nodes: a package uploaded through another node is admitted here now.
    const a = await this.store.obtain(p.digest);
    if (a === undefined) return { code: "not_found", message: `package ${p.digest} for tool ${name} was not uploaded: PUT /v1/packages/${p.digest} first` };
    if (a.status === "refused") return a.error;
    if (a.name !== p.executable.package) {
      return { code: "invalid_request", message: `tool ${name} comes from ${p.executable.package}, but package ${p.digest} is ${a.name}@${a.version}` };
    }
    const grant = p.filesystem?.workspace;
    if (grant !== undefined) {
      const ws = this.workspaceOf(sessionId);
      if (ws === undefined) {
        return { code: "forbidden", message: `environment ${p.env} asks for filesystem.workspace "${grant}", but this server has no workspace allow-list (BRAIN_WORKSPACE_ROOT)`, details: { tool: name, env: p.env, grant: "filesystem.workspace", mode: grant } };
      }
      mkdirSync(ws, { recursive: true });
    }
    return undefined;
  }

  release(tool: PlacedTool, sessionId: string): void {
    const ws = tool.placement.kind === "managed" && tool.placement.filesystem?.workspace !== undefined ? this.workspaceOf(sessionId) : undefined;
    if (ws === undefined) return;
    try {
      rmdirSync(ws);
    } catch {
      // Not made by admit, or not empty.
    }
  }

  /** The binding of a session's env, made once: its tools are every managed tool of the session placed in that env. */
  private binding(sessionId: string, env: string, tools: PlacedTool[], owner: string | undefined): ManagedBinding {
    const key = `${sessionId}|${env}`;
    let b = this.bindings.get(key);
    if (b !== undefined) return b;
    const mine = tools.filter((t) => t.placement.kind === "managed" && t.placement.env === env);
    const p = placementOf(mine[0]!);
    const token = randomBytes(24).toString("base64url");
    this.opts.hostTokens.set(token, owner === undefined ? { kind: "operator" } : { kind: "key", keyId: owner });
    const mode = p.filesystem?.workspace;
    const ws = mode !== undefined ? this.workspaceOf(sessionId) : undefined;
    const hostId = `${MANAGED_HOST_PREFIX}${randomBytes(8).toString("hex")}`;
    this.opts.hostBindings.set(hostId, { sessionId, env });
    b = new ManagedBinding({
      sessionId,
      env,
      runtime: p.runtime as ManagedRuntime,
      tarball: this.store.tarball(p.digest),
      dir: join(this.opts.rootDir, "bindings", sessionId, env),
      ...(ws !== undefined && mode !== undefined ? { workspace: { path: ws, mode } } : {}),
      tools: mine.map((t) => ({ executable: placementOf(t).executable, options: t.options })),
      url: this.opts.url(),
      hostId,
      secret: randomBytes(24).toString("hex"),
      token,
      binaries: this.binaries,
      path: this.opts.path,
      ...(this.opts.hostLog !== undefined ? { hostLog: this.opts.hostLog } : {}),
      install: this.opts.install ?? { npm: "npm", scripts: false },
      connected: (id) => this.opts.hosts.isConnected(id),
    });
    this.bindings.set(key, b);
    // Made after close() (a session whose creation was in flight as the runtime closed): close()
    // ended only the bindings it saw, so this one is closed now, before it spawns anything; else it
    // unpacked and spawned its host after close() had returned, and nothing killed or awaited it.
    if (this.closed) void b.close();
    return b;
  }

  /** The binding of a call; made here (not warm) when the session was not created by this process (a runtime restart). */
  private async bindingFor(call: CallInvocation): Promise<ManagedBinding> {
    const p = placementOf(call.tool);
    const key = `${call.sessionId}|${p.env}`;
    const known = this.bindings.get(key);
    if (known !== undefined) return known;
    const created = (await this.opts.sessions.state(call.sessionId)).created;
    // A session taken over from another node may place a package this node has not seen yet.
    await this.store.obtain(p.digest);
    // Another call of the binding made it while the session was read: one binding each.
    return this.bindings.get(key) ?? this.binding(call.sessionId, p.env, created.tools, created.owner);
  }

  /**
   * The session was created (session.created committed): each of its bindings is unpacked,
   * prepared and its host started now, and session creation answers once they are, so a call's
   * deadline covers only the call. Never refuses: a setup failure is kept for every call of the
   * binding, a host that did not start is told to the binding's next call.
   */
  async sessionCreated(sessionId: string, tools: PlacedTool[], owner?: string): Promise<void> {
    const envs = new Set(tools.map((t) => placementOf(t).env));
    await Promise.all([...envs].map((env) => this.binding(sessionId, env, tools, owner).warm()));
  }

  /**
   * The session was deleted: its hosts are stopped (awaited), their registrations forgotten and its
   * bindings' folders removed.
   */
  async sessionDeleted(sessionId: string): Promise<void> {
    const mine = [...this.bindings].filter(([, b]) => b.spec.sessionId === sessionId);
    await Promise.all(mine.map(([key, b]) => this.end(key, b)));
    rmSync(join(this.opts.rootDir, "bindings", sessionId), { recursive: true, force: true });
  }

  /**
   * Ends a binding for good (session deleted, runtime closing): its host id is never used again (a
   * binding made after a restart gets a new one), so once its process has exited its register token
   * is dropped and its registration forgotten, in the registry and the store; the id can no longer
   * register (registry.ts), with its old secret or any other.
   */
  private async end(key: string, b: ManagedBinding): Promise<void> {
    this.bindings.delete(key);
    await b.close();
    this.opts.hostTokens.delete(b.spec.token);
    this.opts.hostBindings.delete(b.spec.hostId);
    this.opts.hosts.forgetManaged(b.spec.hostId);
  }

  async start(call: CallInvocation, sink: CallSink): Promise<CallHandle> {
    const noop: CallHandle = { stop: () => {} };
    const binding = await this.bindingFor(call);
    const failure = await binding.prepare();
    if (failure !== undefined) throw BrainRuntimeError.of(failure);
    if (sink.finished) return noop;
    // The host started at session creation did not serve its tools: this call gets why (it is not
    // started again within this call's deadline); the next call starts it anew.
    const warmFailure = binding.takeWarmFailure();
    if (warmFailure !== undefined) throw new BrainRuntimeError("tool_error", warmFailure.message, undefined, undefined, { cause: warmFailure });
    try {
      await binding.ensureRunning();
    } catch (e) {
      // This call reports the failure (also one of a start warm() shared): the next call starts again.
      binding.takeWarmFailure();
      throw new BrainRuntimeError("tool_error", e instanceof Error ? e.message : String(e), undefined, undefined, { cause: e });
    }
    if (sink.finished) return noop;
    const conn = this.opts.hosts.connection(binding.spec.hostId);
    if (conn === undefined) throw new BrainRuntimeError("host_unavailable", `managed host ${binding.spec.env} is not connected; the call was not sent`);
    conn.invoke(invokeFrame(call), sink);
    return {
      stop: (status) => {
        conn.release(call.callId);
        if (status === "timeout" || status === "cancelled") conn.cancel(call.callId, status);
      },
    };
  }

  /** Stops every host and unpacking in progress and resolves once all of them have exited; their registrations are forgotten. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.bindings].map(([key, b]) => this.end(key, b)));
  }
}
