import { mkdirSync, rmdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { dispatchHostImport } from "@aexhq/brain-protocol";
import type { ErrorInfo, HostImportHandler, PlacedTool } from "@aexhq/brain-protocol";
import type { CallHandle, CallInvocation, CallSink, Environment } from "../../dispatch/environment.ts";
import { BrainRuntimeError, toErrorInfo } from "../../errors.ts";
import { checkJsonTextDepth, tooDeepDetails } from "../../json-limits.ts";
import { sampleOf, validateSchema } from "../json-schema.ts";
import type { Logger } from "../../logger.ts";
import { logGuestOutput, withStderrTail } from "./guest-output.ts";
import type { GuestOutput } from "./guest-output.ts";
import { checkGuestOutcome } from "./outcome.ts";
import { WorkerPool } from "./pool.ts";
import type { Preopen, SlotListener, WarmUp, WorkerSlot } from "./pool.ts";
import { ComponentStore } from "./store.ts";
import type { UploadShelf } from "../../journal/shared-files.ts";

export interface ComponentEnvironmentOptions {
  /** Where bytes, admissions and transpilations live (the server's data dir + /components). */
  storeDir: string;
  /** Several nodes: where uploads are kept for every node (journal/shared-files.ts). */
  uploads?: UploadShelf;
  /** A folder of jco transpilations by digest, shared with other servers (BRAIN_COMPONENT_TRANSPILE_CACHE). */
  transpileCache?: string;
  /** BRAIN_WORKSPACE_ROOT: the allow-list for filesystem grants; absent = every grant is denied. */
  workspaceRoot?: string;
  /** JS heap limit of each component worker (resourceLimits.maxOldGenerationSizeMb). */
  memoryLimitMb?: number;
  /** Best-effort telemetry sink; never the journal. */
  onTelemetry?: (entry: TelemetryEntry) => void;
  /** Where each call's guest stdout/stderr is logged (the server's logger); absent = not logged. */
  logger?: Logger;
}

export interface TelemetryEntry {
  callId: string;
  level: string;
  message: string;
}

type ComponentPlacement = Extract<PlacedTool["placement"], { kind: "component" }>;

/** No prewarming at session creation while this many component workers are alive (see sessionCreated). */
export const MAX_PREWARM_WORKERS = 16;

interface CallMessage {
  type: "call" | "post" | "done";
  op?: string;
  args?: unknown;
  error?: string;
  /** With `done`: what the guest printed during the call (guest-output.mjs). */
  output?: GuestOutput;
}

/**
 * brain:tool@0.2.0 components run inside the runtime: admitted once per digest at upload,
 * transpiled by jco, each invocation run in a worker thread (memory limit, deadline enforced by
 * terminating the worker), host imports bridged synchronously to the dispatcher's CallSink.
 */
export class ComponentEnvironment implements Environment {
  readonly kind = "component" as const;
  readonly store: ComponentStore;
  private pool: WorkerPool;
  /** Recent telemetry, newest last (bounded); for diagnostics and tests. */
  readonly telemetry: TelemetryEntry[] = [];
  /**
   * The runtime is shutting down: the workers it kills end their calls' runs, but those calls stay
   * open in the journal (recovery ends them `unknown` on the next start), like host calls do.
   */
  private closing = false;

  constructor(private opts: ComponentEnvironmentOptions) {
    this.store = new ComponentStore(opts.storeDir, opts.transpileCache, opts.uploads === undefined ? undefined : { shelf: opts.uploads, kind: "component" });
    this.pool = new WorkerPool(opts.memoryLimitMb ?? 256);
  }

  /** Component workers started so far (each is a cold start: a reused warm worker does not count). */
  get workersStarted(): number {
    return this.pool.started;
  }

  /** Prewarmed workers whose warm-up run ended (see WorkerPool.prewarm). */
  get workersWarmedUp(): number {
    return this.pool.warmedUp;
  }

  /** Component workers alive now (idle, prewarmed or running a call). */
  get workersAlive(): number {
    return this.pool.size;
  }

  /** The session workspace a grant preopens: <workspaceRoot>/<sessionId>. */
  workspaceOf(sessionId: string): string | undefined {
    return this.opts.workspaceRoot === undefined ? undefined : join(resolve(this.opts.workspaceRoot), sessionId);
  }

  async admit(tool: PlacedTool, sessionId: string): Promise<ErrorInfo | undefined> {
    const p = tool.placement;
    if (p.kind !== "component") return { code: "invalid_request", message: "not a component placement" };
    // Several nodes: a component uploaded through another node is admitted here now.
    const a = await this.store.obtain(p.digest);
    if (a === undefined) {
      return { code: "not_found", message: `component ${p.digest} for tool ${tool.contract.name} was not uploaded: PUT /v1/components/${p.digest} first` };
    }
    if (a.status === "refused") return a.error;
    const grant = p.filesystem?.workspace;
    if (grant !== undefined) {
      const ws = this.workspaceOf(sessionId);
      if (ws === undefined) {
        return {
          code: "forbidden",
          message: `environment ${p.env} asks for filesystem.workspace "${grant}", but this server has no workspace allow-list (BRAIN_WORKSPACE_ROOT)`,
        };
      }
      mkdirSync(ws, { recursive: true });
    }
    return undefined;
  }

  /**
   * The session was created: each of its component bindings gets a worker with its instance ready
   * before the creation answers, so the first call does not pay the worker start (hundreds of ms
   * for a JS component). Bounded: no prewarming while MAX_PREWARM_WORKERS workers are alive (each
   * holds up to BRAIN_COMPONENT_MEMORY_MB); a binding that is not prewarmed starts its worker at its
   * first call, as before. A failure (a component that cannot instantiate) is the calls' to report.
   */
  async sessionCreated(sessionId: string, tools: PlacedTool[]): Promise<void> {
    const bindings = new Map<string, { dir: string; preopen: Preopen | undefined; warmup: WarmUp }>();
    for (const t of tools) {
      const p = t.placement;
      if (p.kind !== "component" || this.store.get(p.digest)?.status !== "admitted") continue;
      const { key, preopen } = this.bindingOf(sessionId, p);
      if (bindings.has(key)) continue;
      // The warm-up run (pool.ts): the smallest input the tool's schema accepts, with its options.
      const warmup = { input: JSON.stringify(sampleOf(t.contract.inputSchema) ?? {}), options: JSON.stringify(t.options ?? {}) };
      bindings.set(key, { dir: this.store.transpiledDir(p.digest), preopen, warmup });
    }
    await Promise.all([...bindings].map(async ([key, b]) => {
      if (this.pool.size >= MAX_PREWARM_WORKERS) return;
      await this.pool.prewarm(key, b.dir, b.preopen, b.warmup).catch(() => {
        // Reported by the binding's first call, which starts its worker again.
      });
    }));
  }

  /** The session was deleted (its calls ended): its bindings' workers, idle or prewarmed, end too. */
  async sessionDeleted(sessionId: string): Promise<void> {
    await this.pool.killWhere(`${sessionId}|`);
  }

  /** A binding's worker key and preopen: every tool of one binding shares its authority; different grants never share a worker. */
  private bindingOf(sessionId: string, p: ComponentPlacement): { key: string; preopen: Preopen | undefined } {
    const grant = p.filesystem?.workspace;
    const ws = this.workspaceOf(sessionId);
    const preopen: Preopen | undefined = grant !== undefined && ws !== undefined ? { hostPath: ws, mode: grant } : undefined;
    return { key: `${sessionId}|${p.env}|${p.digest}|${grant ?? "none"}`, preopen };
  }

  /** The session was not created: its workspace (new and still empty) goes again. */
  release(tool: PlacedTool, sessionId: string): void {
    const p = tool.placement;
    const ws = p.kind === "component" && p.filesystem?.workspace !== undefined ? this.workspaceOf(sessionId) : undefined;
    if (ws === undefined) return;
    try {
      rmdirSync(ws);
    } catch {
      // Not there (admit refused before making it) or not empty: nothing of ours to undo.
    }
  }

  async start(call: CallInvocation, sink: CallSink): Promise<CallHandle> {
    const p = call.tool.placement as ComponentPlacement;
    if (p.kind !== "component") throw new BrainRuntimeError("internal", "not a component placement");
    // A session taken over from another node may place a component this node has not seen yet.
    const admission = this.store.get(p.digest) ?? (await this.store.obtain(p.digest));
    if (admission?.status !== "admitted") throw new BrainRuntimeError("not_found", `component ${p.digest} is not admitted`);
    let stopped = false;
    const noop: CallHandle = { stop: () => {} };

    // Input is checked against the advertised schema before any guest code runs.
    const inputIssues = validateSchema(call.tool.contract.inputSchema, call.input);
    if (inputIssues.length > 0) {
      await sink.finish({ status: "error", error: { code: "invalid_input", message: "input does not match the tool's input schema", details: inputIssues } });
      return noop;
    }
    if (call.deadlineAt !== null && call.deadlineAt <= Date.now()) return noop; // the dispatcher's deadline ends it.

    const { key, preopen } = this.bindingOf(call.sessionId, p);
    const slot = await this.pool.acquire(key, this.store.transpiledDir(p.digest), preopen);
    // The runtime closed while the worker was being started: none was (see WorkerPool.closed); the
    // call stays open in the journal and recovery ends it `unknown`, as for a worker close() killed.
    if (slot === undefined) return noop;
    if (sink.finished) {
      this.pool.release(slot);
      return noop;
    }
    const running = this.run(slot, call, sink, () => stopped);
    return {
      stop: () => {
        // Once run has returned, the worker may already serve the binding's next call.
        if (stopped || !running()) return;
        stopped = true;
        void this.pool.kill(slot);
      },
    };
  }

  /** Runs one invocation on the slot's warm instance; returns whether the guest's run is still executing. */
  private run(slot: WorkerSlot, call: CallInvocation, sink: CallSink, isStopped: () => boolean): () => boolean {
    const { channel } = slot;
    const outputSchema = call.tool.contract.outputSchema;
    const p = call.tool.placement as ComponentPlacement;
    let ended = false;

    const reply = (body: { ok?: unknown; err?: ErrorInfo }) => {
      if (ended) return;
      if (!channel.send(body)) channel.send({ err: { code: "body_too_large", message: "reply too large for the component bridge" } });
    };
    const outcomeOf = (json: string | undefined) => (json === undefined ? undefined : checkGuestOutcome(json, outputSchema));
    // The brain:tool/host functions, typed by the code generated from tool.wit: a function added
    // to the WIT does not compile here until it is wired to the dispatcher's CallSink.
    const host: HostImportHandler = {
      emit: ({ kind, dataJson }) => {
        let data: unknown;
        const tooDeep = checkJsonTextDepth(dataJson, "emit data-json");
        if (tooDeep !== undefined) throw new BrainRuntimeError("invalid_request", tooDeep, tooDeepDetails());
        try {
          data = JSON.parse(dataJson);
        } catch (e) {
          throw new BrainRuntimeError("malformed_json", "emit data-json is not JSON", undefined, undefined, { cause: e });
        }
        return sink.emit(kind, data);
      },
      emitResult: ({ outcomeJson, content }) => sink.emitResult(outcomeOf(outcomeJson), content),
      finish: ({ outcomeJson, content }) => sink.finish(outcomeOf(outcomeJson), content),
      returned: async () => {
        await sink.returned();
      },
      model: async ({ requestJson }) => {
        let request: unknown;
        const tooDeep = checkJsonTextDepth(requestJson, "model request-json");
        if (tooDeep !== undefined) throw new BrainRuntimeError("invalid_request", tooDeep, tooDeepDetails());
        try {
          request = JSON.parse(requestJson);
        } catch (e) {
          throw new BrainRuntimeError("malformed_json", "model request-json is not JSON", undefined, undefined, { cause: e });
        }
        return JSON.stringify(await sink.model(request as never));
      },
      telemetry: ({ level, message }) => this.record({ callId: call.callId, level, message }),
    };
    const end = async (error: string | undefined) => {
      if (ended) return;
      ended = true;
      clearTimeout(overrun);
      // Telemetry does not wake the main thread; a worker that died or was stopped may have left
      // some in the ring. (After a clean `done` the ring is empty.)
      for (const m of channel.take() as CallMessage[]) {
        if (m.type === "post" && m.op === "telemetry") {
          dispatchHostImport(host, m.op, m.args).catch(() => {
            // Harmless: telemetry is best-effort (record never throws; a malformed line is dropped).
          });
        }
      }
      if (slot.current === listener) slot.current = undefined;
      if (!sink.finished && !isStopped() && !this.closing) {
        const message = error ?? "run returned without calling host.finish";
        await sink.finish({ status: "error", error: { code: "tool_error", message } }).catch(() => {
          // Handled: a refused finish is a call already finished (its first outcome stands), and a failed
          // commit is logged by the call itself (ToolCall.uncommitted).
        });
      }
    };
    const onRequest = (m: CallMessage) => {
      if (m.type === "call") {
        dispatchHostImport(host, m.op ?? "", m.args).then(
          (ok) => {
            reply({ ok });
            // The guest is about to return: the binding's next call can wait for this worker.
            if (sink.finished) this.pool.finishing(slot);
          },
          (e) => reply({ err: toGuestError(e) }),
        );
      } else if (m.type === "post") {
        dispatchHostImport(host, m.op ?? "", m.args).catch(() => {
          // Handled: no result in the WIT, so nobody to tell: a refused `returned` (already finished)
          // is moot, and a failed commit is logged by the call itself (ToolCall.uncommitted).
        });
      } else if (m.type === "done") {
        // A trapped instance is never run again: its worker is retired, not returned to the pool.
        const trapped = m.error !== undefined;
        logGuestOutput(this.opts.logger, m.output, { callId: call.callId, tool: call.tool.contract.name, env: p.env });
        for (const [stream, level] of [["stdout", "info"], ["stderr", "warn"]] as const) {
          const printed = m.output?.[stream];
          if (printed) this.remember({ callId: call.callId, level, message: printed.text });
        }
        // A trap's message carries the end of stderr: a panic message, a traceback.
        void end(trapped ? withStderrTail(m.error!, m.output) : undefined).then(() => (trapped ? this.pool.kill(slot) : this.pool.release(slot)));
      }
    };
    const pump = async () => {
      while (!ended) {
        const batch = await channel.next();
        if (batch === undefined) return; // the worker is gone; its exit event ends the call
        for (const m of batch) {
          if (ended) return;
          onRequest(m as CallMessage);
        }
      }
    };
    const onError = (e: Error) => {
      const oom = (e as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY";
      void end(oom ? "component worker exceeded its memory limit" : `component worker failed: ${e.message}`);
    };
    const listener: SlotListener = {
      error: onError,
      exit: () => void end("component worker exited"),
      // The worker captures the guest's stdout/stderr itself (guest-output.mjs) and sends it with
      // `done`; what still reaches the thread's streams (Node's own warnings) is kept in the ring.
      stdout: (d) => this.remember({ callId: call.callId, level: "info", message: d.toString("utf8") }),
      stderr: (d) => this.remember({ callId: call.callId, level: "warn", message: d.toString("utf8") }),
    };
    slot.current = listener;

    // A run still executing at the deadline is killed even when the call already finished (a
    // guest may go on after finish); the dispatcher's own timer ends an unfinished call.
    const overrun = call.deadlineAt === null ? undefined : setTimeout(() => {
      if (!ended && sink.finished) void this.pool.kill(slot);
    }, Math.max(0, call.deadlineAt - Date.now()) + 50);
    overrun?.unref();

    const opts = call.tool.options;
    const sent = channel.send({
      type: "invoke",
      invocation: {
        input: JSON.stringify(call.input),
        options: JSON.stringify(opts === undefined || opts === null ? {} : opts),
        descriptor: null,
        deadlineAtMs: call.deadlineAt ?? 0,
      },
    });
    if (!sent) {
      void end("the invocation is too large for the component bridge").then(() => this.pool.release(slot));
      return () => false;
    }
    void pump();
    return () => !ended;
  }

  /** Kept in the in-memory ring only (guest output, logged once per call by logGuestOutput). */
  private remember(entry: TelemetryEntry): void {
    this.telemetry.push(entry);
    if (this.telemetry.length > 200) this.telemetry.shift();
  }

  private record(entry: TelemetryEntry): void {
    this.remember(entry);
    try {
      this.opts.onTelemetry?.(entry);
    } catch {
      // Telemetry is best-effort: a failing sink never affects the call.
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.pool.close();
  }
}

function toGuestError(e: unknown): ErrorInfo {
  const info = toErrorInfo(e);
  return { code: info.code, message: info.message };
}
