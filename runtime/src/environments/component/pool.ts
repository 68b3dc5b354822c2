import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";

/** Byte size of the reply area of the bridge's SharedArrayBuffer (after the 8-byte header). */
export const BRIDGE_REPLY_BYTES = 4 * 1024 * 1024;

export interface Preopen {
  hostPath: string;
  mode: "read" | "write";
}

/** One worker thread serving one binding (component digest + grant + workspace). */
export interface WorkerSlot {
  worker: Worker;
  sab: SharedArrayBuffer;
  key: string;
  idleTimer?: NodeJS.Timeout;
}

/** WebAssembly is a Node global, but this project's lib settings (no DOM) do not declare it. */
type CoreModule = object;
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<CoreModule> } }).WebAssembly;

const WORKER_URL = new URL("./worker.mjs", import.meta.url);
const IDLE_MS = 60_000;

/**
 * Warm workers per binding. A worker runs one invocation at a time; an idle one is reused (its
 * compiled core modules and loaded shims stay warm, but each call gets a fresh instance). A
 * worker whose call was stopped (deadline, cancel) is terminated, never reused.
 */
export class WorkerPool {
  private idle = new Map<string, WorkerSlot[]>();
  private all = new Set<WorkerSlot>();
  private compiled = new Map<string, Promise<Record<string, CoreModule>>>();

  constructor(private memoryLimitMb: number) {}

  /** Core modules compiled once per transpiled dir, shared with every worker by structured clone. */
  private modules(dir: string): Promise<Record<string, CoreModule>> {
    let p = this.compiled.get(dir);
    if (!p) {
      p = (async () => {
        const out: Record<string, CoreModule> = {};
        for (const f of readdirSync(dir).filter((n) => n.endsWith(".wasm"))) out[f] = await wasm.compile(readFileSync(join(dir, f)));
        return out;
      })();
      p.catch(() => this.compiled.delete(dir));
      this.compiled.set(dir, p);
    }
    return p;
  }

  async acquire(key: string, dir: string, preopen: Preopen | undefined): Promise<WorkerSlot> {
    const list = this.idle.get(key);
    const warm = list?.pop();
    if (warm) {
      clearTimeout(warm.idleTimer);
      return warm;
    }
    const modules = await this.modules(dir);
    const sab = new SharedArrayBuffer(8 + BRIDGE_REPLY_BYTES);
    const worker = new Worker(WORKER_URL, {
      workerData: { dir, modules, preopen, sab },
      // The JS heap of the guest's bindings and shims; linear memory is bounded by wasm32 itself.
      resourceLimits: { maxOldGenerationSizeMb: this.memoryLimitMb, maxYoungGenerationSizeMb: 32 },
      stdout: true,
      stderr: true,
      execArgv: [],
    });
    const slot: WorkerSlot = { worker, sab, key };
    this.all.add(slot);
    worker.once("exit", () => this.forget(slot));
    await new Promise<void>((resolve, reject) => {
      const onMessage = (m: { type: string }) => {
        if (m.type === "ready") {
          worker.off("error", onError);
          worker.off("message", onMessage);
          resolve();
        }
      };
      const onError = (e: Error) => reject(e);
      worker.on("message", onMessage);
      worker.once("error", onError);
    });
    return slot;
  }

  release(slot: WorkerSlot): void {
    if (!this.all.has(slot)) return;
    const list = this.idle.get(slot.key) ?? [];
    this.idle.set(slot.key, list);
    list.push(slot);
    slot.idleTimer = setTimeout(() => void this.kill(slot), IDLE_MS);
    slot.idleTimer.unref();
  }

  async kill(slot: WorkerSlot): Promise<void> {
    this.forget(slot);
    await slot.worker.terminate();
  }

  private forget(slot: WorkerSlot): void {
    clearTimeout(slot.idleTimer);
    this.all.delete(slot);
    const list = this.idle.get(slot.key);
    if (list) {
      const i = list.indexOf(slot);
      if (i >= 0) list.splice(i, 1);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.all].map((s) => this.kill(s)));
  }
}
