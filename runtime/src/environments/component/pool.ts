import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { BrainRuntimeError } from "../../errors.ts";
import { CHANNEL, MainChannel, channelBuffer } from "./channel.ts";
import { MemoryCapError, capMemories } from "./memory-cap.ts";

export interface Preopen {
  hostPath: string;
  mode: "read" | "write";
}

/** The invocation a prewarmed worker's throwaway instance runs once (worker.mjs warmUp): JSON texts. */
export interface WarmUp {
  input: string;
  options: string;
}

/** What the call running on a worker hears of it (set by the Environment for the call's duration). */
export interface SlotListener {
  error(e: Error): void;
  exit(): void;
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
}

/** One worker thread serving one binding (component digest + grant + workspace). */
export interface WorkerSlot {
  worker: Worker;
  channel: MainChannel;
  key: string;
  /**
   * The running call's listener. The worker's events are subscribed once, when it starts, and
   * forwarded here: subscribing per call (four listeners, two of them on streams) was a
   * measurable share of a warm call's main-thread time. Output arriving between calls is dropped.
   */
  current?: SlotListener;
  idleTimer?: NodeJS.Timeout;
  /** Its call has finished and its run is returning: a call of the same binding may wait for it. */
  handoff?: Array<(slot: WorkerSlot | undefined) => void>;
  /** Started with a warm-up run: resolves true once it is done, false if the worker ended first. */
  warming?: Promise<boolean>;
  /** The pool ended it (kill): its exit was not the guest's doing. */
  ended?: boolean;
}

/** WebAssembly is a Node global, but this project's lib settings (no DOM) do not declare it. */
type CoreModule = object;
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<CoreModule> } }).WebAssembly;

const WORKER_URL = new URL("./worker.mjs", import.meta.url);
const IDLE_MS = 60_000;
/**
 * How long a call waits for a worker of its binding whose call just finished (its run is
 * returning) before starting another worker. Back-to-back calls would otherwise race the `done`
 * of the previous run and pay a cold worker start (hundreds of ms) for a few microseconds.
 */
const HANDOFF_MS = 100;
/**
 * How long a prewarm waits for its worker's warm-up run. One that takes longer (a guest looping
 * on the made-up input) costs its worker; that component's workers are started without a warm-up
 * from then on.
 */
const WARMUP_MS = 3000;

/**
 * Warm workers per binding. A worker runs one invocation at a time and keeps one warm component
 * instance; an idle worker is reused by the next call of the same binding. A worker whose call was
 * stopped (deadline, cancel) or trapped is terminated, never reused.
 */
export class WorkerPool {
  private idle = new Map<string, WorkerSlot[]>();
  private all = new Set<WorkerSlot>();
  private compiled = new Map<string, Promise<Record<string, CoreModule>>>();
  /** Transpiled dirs whose warm-up run did not end within WARMUP_MS: their workers start without one. */
  private noWarmUp = new Set<string>();
  /** Workers started so far (a cold start each); for diagnostics and tests. */
  started = 0;
  /** Prewarmed workers whose warm-up run ended (worker.mjs warmUp); for diagnostics and tests. */
  warmedUp = 0;
  /**
   * close() was called. acquire() awaits the modules' compile (and a handoff) before it starts a
   * worker, and close() kills only the workers that exist: without this check a call starting as
   * the runtime closed got a worker after close() had returned, nobody ever terminated it, and its
   * thread kept the process alive for good (a looping guest: the runtime suite hung after its
   * summary when the component shutdown test closed the runtime within that window).
   */
  private closed = false;

  constructor(private memoryLimitMb: number) {}

  /**
   * Core modules compiled once per transpiled dir, shared with every worker by structured clone.
   * Their linear memories are capped at memoryLimitMb here (not at admission), so changing
   * BRAIN_COMPONENT_MEMORY_MB applies to components admitted earlier too.
   */
  private modules(dir: string): Promise<Record<string, CoreModule>> {
    let p = this.compiled.get(dir);
    if (!p) {
      p = (async () => {
        const out: Record<string, CoreModule> = {};
        for (const f of readdirSync(dir).filter((n) => n.endsWith(".wasm"))) {
          let bytes: Uint8Array;
          try {
            bytes = capMemories(new Uint8Array(readFileSync(join(dir, f))), this.memoryLimitMb * 1024 * 1024);
          } catch (e) {
            if (e instanceof MemoryCapError) throw new BrainRuntimeError("tool_error", `component cannot run within its memory limit: ${e.message}`, undefined, undefined, { cause: e });
            throw e;
          }
          out[f] = await wasm.compile(bytes);
        }
        return out;
      })();
      p.catch(() => this.compiled.delete(dir));
      this.compiled.set(dir, p);
    }
    return p;
  }

  /**
   * A worker for the binding, or undefined once the pool is closed (the runtime is shutting down).
   * `warmup`: a new worker runs it after instantiating (its `warming` says when it is done).
   */
  async acquire(key: string, dir: string, preopen: Preopen | undefined, warmup?: WarmUp): Promise<WorkerSlot | undefined> {
    if (this.closed) return undefined;
    const list = this.idle.get(key);
    const warm = list?.pop();
    if (warm) {
      clearTimeout(warm.idleTimer);
      return warm;
    }
    const handed = await this.waitForHandoff(key);
    if (handed) return handed;
    const modules = await this.modules(dir);
    // Closed while this call waited (see `closed`): start no worker that close() would not end.
    if (this.closed) return undefined;
    const sab = channelBuffer();
    this.started++;
    const worker = new Worker(WORKER_URL, {
      workerData: { dir, modules, preopen, sab, channelSizes: CHANNEL, memoryCapBytes: this.memoryLimitMb * 1024 * 1024, warmup },
      // The JS heap of the guest's bindings and shims; linear memory is capped in modules().
      resourceLimits: { maxOldGenerationSizeMb: this.memoryLimitMb, maxYoungGenerationSizeMb: 32 },
      stdout: true,
      stderr: true,
      execArgv: [],
    });
    const slot: WorkerSlot = { worker, channel: new MainChannel(sab), key };
    this.all.add(slot);
    worker.on("error", (e) => slot.current?.error(e));
    worker.once("exit", () => {
      this.forget(slot);
      slot.current?.exit();
    });
    worker.stdout.on("data", (d: Buffer) => slot.current?.stdout(d));
    worker.stderr.on("data", (d: Buffer) => slot.current?.stderr(d));
    // Subscribed before "ready": a short warm-up's "warmed" can arrive in the same turn.
    if (warmup !== undefined) {
      slot.warming = new Promise((resolve) => {
        const onMessage = (m: { type: string }) => {
          if (m.type !== "warmed") return;
          worker.off("message", onMessage);
          resolve(true);
        };
        worker.on("message", onMessage);
        worker.once("exit", () => resolve(false));
      });
    }
    const ready = await new Promise<boolean>((resolve, reject) => {
      const onMessage = (m: { type: string; error?: string }) => {
        if (m.type !== "ready") return;
        settle();
        if (m.error === undefined) return resolve(true);
        void this.kill(slot);
        reject(new BrainRuntimeError("tool_error", `component could not be instantiated: ${m.error}`));
      };
      const onError = (e: Error) => {
        settle();
        this.forget(slot);
        reject(e);
      };
      // Terminated before it was ready (close() kills starting workers too): no slot to hand out.
      const onExit = () => {
        settle();
        if (this.closed) resolve(false);
        else reject(new BrainRuntimeError("tool_error", "component worker exited before it was ready"));
      };
      const settle = () => {
        worker.off("error", onError);
        worker.off("message", onMessage);
        worker.off("exit", onExit);
      };
      worker.on("message", onMessage);
      worker.once("error", onError);
      worker.once("exit", onExit);
    });
    return ready ? slot : undefined;
  }

  /** Workers alive now (idle or running a call). */
  get size(): number {
    return this.all.size;
  }

  /**
   * Starts a worker for the binding and leaves it idle, unless one of the binding's workers exists
   * (a session's first call then finds it warm). Resolves false when none was started.
   */
  async prewarm(key: string, dir: string, preopen: Preopen | undefined, warmup?: WarmUp): Promise<boolean> {
    for (const s of this.all) if (s.key === key) return false;
    let slot = await this.acquire(key, dir, preopen, this.noWarmUp.has(dir) ? undefined : warmup);
    if (slot?.warming !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), WARMUP_MS)));
      const warmed = await Promise.race([slot.warming, late]);
      clearTimeout(timer);
      if (warmed === true) this.warmedUp++;
      else if (warmed === "late") {
        this.noWarmUp.add(dir);
        await this.kill(slot);
        slot = await this.acquire(key, dir, preopen);
      } else if (!warmed) {
        // Its worker ended during the warm-up: a guest that exits is not warmed up again; one
        // ended by the pool (its session deleted meanwhile, the runtime closing) says nothing.
        if (!slot.ended) this.noWarmUp.add(dir);
        return false;
      }
    }
    if (slot === undefined) return false;
    this.release(slot);
    return true;
  }

  /** Ends every worker whose binding key starts with `prefix` (a deleted session's). */
  async killWhere(prefix: string): Promise<void> {
    await Promise.all([...this.all].filter((s) => s.key.startsWith(prefix)).map((s) => this.kill(s)));
  }

  /** The slot's call has finished; its run is about to return (see HANDOFF_MS). */
  finishing(slot: WorkerSlot): void {
    slot.handoff ??= [];
  }

  private waitForHandoff(key: string): Promise<WorkerSlot | undefined> {
    let busy: WorkerSlot | undefined;
    for (const s of this.all) if (s.key === key && s.handoff !== undefined) busy = s;
    if (busy === undefined) return Promise.resolve(undefined);
    const waiters = busy.handoff!;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const i = waiters.indexOf(take);
        if (i >= 0) waiters.splice(i, 1);
        resolve(undefined);
      }, HANDOFF_MS);
      const take = (slot: WorkerSlot | undefined) => {
        clearTimeout(timer);
        resolve(slot);
      };
      waiters.push(take);
    });
  }

  release(slot: WorkerSlot): void {
    if (!this.all.has(slot)) return;
    const waiters = slot.handoff;
    slot.handoff = undefined;
    const next = waiters?.shift();
    if (next) {
      // Straight to the waiting call; any other waiter starts its own worker.
      for (const w of waiters!) w(undefined);
      return next(slot);
    }
    const list = this.idle.get(slot.key) ?? [];
    this.idle.set(slot.key, list);
    list.push(slot);
    slot.idleTimer = setTimeout(() => void this.kill(slot), IDLE_MS);
    slot.idleTimer.unref();
  }

  async kill(slot: WorkerSlot): Promise<void> {
    slot.ended = true;
    this.forget(slot);
    await slot.worker.terminate();
  }

  private forget(slot: WorkerSlot): void {
    clearTimeout(slot.idleTimer);
    slot.channel.close();
    const waiters = slot.handoff;
    slot.handoff = undefined;
    for (const w of waiters ?? []) w(undefined);
    this.all.delete(slot);
    const list = this.idle.get(slot.key);
    if (list) {
      const i = list.indexOf(slot);
      if (i >= 0) list.splice(i, 1);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.all].map((s) => this.kill(s)));
  }
}
