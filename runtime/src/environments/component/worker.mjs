// The worker thread that runs one component binding's invocations, one at a time.
//
// Plain JavaScript on purpose: Node 20 does not apply the tsx loader inside worker threads, and
// this file must load as-is from source and from a build.
//
// The guest calls host imports synchronously, but every commit happens asynchronously on the main
// thread. The bridge is a SharedArrayBuffer channel (layout in channel.ts): a host call appends
// {type:"call"} to the request ring and blocks in Atomics.wait until the main thread writes the
// JSON reply into the command area; invocations arrive through the same command area. No
// postMessage on the call path.
import { parentPort, workerData } from "node:worker_threads";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { WASIShim } from "@bytecodealliance/preview2-shim/instantiation";
import { io } from "@bytecodealliance/preview2-shim";
import { HOST_IMPORT_KEY, hostImports } from "@aexhq/brain-protocol/host-imports";
import { workerChannel } from "./channel-worker.mjs";
import { workspaceFilesystem } from "./workspace-fs.mjs";
import { withDenials } from "./wasi-denied.mjs";
import { captureOutput } from "./guest-output.mjs";
import { wallClock } from "./wall-clock.mjs";

const { dir, modules, preopen, sab, channelSizes, memoryCapBytes, warmup } = workerData;
// jco's generated glue reads process.env.JCO_DEBUG on every host call (its _debugLog). On a worker
// thread process.env is Node's environment store, ~200-300 ns a read here: about a tenth of a warm
// componentize-js call's guest time. A plain copy (nothing in this thread writes it) reads in ~30 ns.
process.env = { ...process.env };
const channel = workerChannel(sab, channelSizes);
// The guest's stdout/stderr, per call, sent with the end of its run (guest-output.mjs).
const output = captureOutput();

/**
 * The bridge the generated host imports call. `call` appends {type:"call"} and blocks until the
 * main thread writes the reply ({ok} or {err}); `post` appends {type:"post"} without waiting. Both
 * go through one ring, so the main thread sees them in call order.
 */
const bridge = {
  call(op, args) {
    if (!channel.request({ type: "call", op, args })) return { err: { code: "body_too_large", message: `${op} arguments are too large for the component bridge` } };
    return channel.receive();
  },
  post(op, args) {
    // Telemetry does not wake the main thread (it is read with the next call, `done`, or when the
    // worker is stopped); `returned` does, since it ends the call's synchronous phase now.
    channel.request({ type: "post", op, args }, op !== "telemetry");
  },
};

// Generated from contract/tool.wit (codegen): names, argument shapes and result conversions.
const host = hostImports(bridge);

// --- WASI: a filesystem holding only this binding's preopen (workspace-fs.mjs): every path is
// confined to the preopen's real path, and a read grant refuses every mutation with `read-only`.
const wasiImports = (grant) => ({
  ...new WASIShim({
    filesystem: workspaceFilesystem(grant),
    sandbox: { env: {}, args: ["brain-component"], enableNetwork: false },
  }).getImportObject(),
  "wasi:clocks/wall-clock": wallClock,
});

// Components are transpiled with jco's "hybrid" bindings (store.ts): an import function carrying
// a Symbol.for("cabiLower") factory is linked as the raw core function it returns, skipping jco's
// per-call glue (a task object, a subtask, debug-log checks: several µs a call). The monotonic
// clock's are preview2-shim's (a componentize-js guest reads it ~8 times a run). Its wall clock's
// write the datetime at the wrong offsets (a trap or a corrupted guest), so the wall clock is ours
// (wall-clock.mjs); its poll ones are not used: nothing here tests them, and a guest that polls is
// not on a hot path. The host imports and the per-run filesystem calls carry their own.
const CABI_LOWER = Symbol.for("cabiLower");
for (const f of [io.poll.Pollable.prototype.ready, io.poll.Pollable.prototype.block, io.poll.poll]) delete f[CABI_LOWER];

const { instantiate } = await import(pathToFileURL(join(dir, "component.js")).href);
const getCoreModule = (name) => modules[name] ?? WebAssembly.compileStreaming?.(name);

// The linear memories of the guest's core instances, to tell a trap at the memory cap apart.
const memories = [];
const instantiateCore = async (module, imports) => {
  const instance = await WebAssembly.instantiate(module, imports);
  for (const v of Object.values(instance.exports)) if (v instanceof WebAssembly.Memory) memories.push(v);
  return instance;
};

const mib = (bytes) => (bytes / (1024 * 1024)).toFixed(0);
/** The end of a trapped run, in words; a guest that ran into the linear memory cap says so. */
function trapMessage(e) {
  const text = e instanceof Error ? e.message : String(e?.payload?.message ?? e);
  const used = Math.max(0, ...memories.map((m) => m.buffer.byteLength));
  // Allocators grow in steps, so "at the limit" means within one step (1 MiB or 1/16 of the cap).
  if (memoryCapBytes && used >= memoryCapBytes - Math.max(1 << 20, memoryCapBytes / 16)) {
    return `component trapped at its linear memory limit (${mib(used)} of ${mib(memoryCapBytes)} MiB, BRAIN_COMPONENT_MEMORY_MB): ${text}`;
  }
  return `component trapped: ${text}`;
}

// One warm instance per worker, created before the first invocation and reused by every later
// invocation of this binding while its runs end cleanly. A run that traps is the instance's last:
// the main thread retires the worker (see docs/decisions/components.md for the isolation argument).
let instance;
try {
  // WASI outside the grant (sockets, http, anything else) is linked to refusing implementations.
  instance = await instantiate(getCoreModule, withDenials({ ...wasiImports(preopen), [HOST_IMPORT_KEY]: host }), instantiateCore);
} catch (e) {
  parentPort.postMessage({ type: "ready", error: e instanceof Error ? e.message : String(e) });
  process.exit(1);
}
parentPort.postMessage({ type: "ready" });
if (warmup !== undefined) {
  await warmUp(warmup);
  parentPort.postMessage({ type: "warmed" });
}
// A pending Atomics.waitAsync does not keep a thread alive; a listening port does.
parentPort.on("message", () => {});

/**
 * A prewarmed worker's first run costs what V8 compiles lazily on first use: the guest's wasm
 * functions and the glue's JavaScript (a componentize-js guest: 0.1-0.6 s, a warm run ~1 ms). So
 * before a prewarmed worker serves calls, a throwaway instance of the same component runs once
 * with the invocation the main thread made up (the smallest input the tool's schema accepts, the
 * binding's options). It can touch nothing: its host answers every call without the journal
 * (`model` refused), its preopen (when the binding has one) is an empty temporary folder under a
 * read grant, the rest of WASI is this worker's (clocks, random; sockets and http refused), and
 * what it prints is dropped. Its linear memory is its own; the compiled code it leaves behind is
 * shared with the real instance, which has not run yet. A trap or an error ends it like a return.
 */
async function warmUp({ input, options }) {
  const scratch = preopen === undefined ? undefined : mkdtempSync(join(tmpdir(), "brain-component-warmup-"));
  const quiet = hostImports({
    call: (op) => (op === "model" ? { err: { code: "unsupported", message: "no model during a warm-up run" } } : { ok: 0 }),
    post() {},
  });
  try {
    const throwaway = await instantiate(getCoreModule, withDenials({ ...wasiImports(scratch === undefined ? undefined : { hostPath: scratch, mode: "read" }), [HOST_IMPORT_KEY]: quiet }));
    throwaway.run({ input, options, descriptor: undefined, deadlineAtMs: 0n });
  } catch {
    // A trap, or input the guest refused: it still compiled what it ran.
  } finally {
    output.take();
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * After a warm-up, how long the worker waits for its first invocation blocked in Atomics.wait
 * rather than on its event loop. Right after the warm-up that loop has the throwaway instance's
 * garbage to collect, and an invocation woken through it (Atomics.waitAsync) waited for that:
 * 79-132 ms between the main thread's notify and the worker seeing it, on a loaded machine. A
 * blocked thread is woken by the futex directly (inspect-js first call, pressure 74-96 %, four
 * pairs: 128-291 ms waking through the loop, 49-89 ms blocked). Later idle waits block 2 ms.
 */
const FIRST_CALL_BLOCK_MS = 1000;
let firstWait = warmup !== undefined;
for (;;) {
  const m = await channel.receiveAsync(firstWait ? FIRST_CALL_BLOCK_MS : undefined);
  firstWait = false;
  if (m.type !== "invoke") continue;
  let error;
  try {
    const inv = m.invocation;
    instance.run({
      input: inv.input,
      options: inv.options,
      descriptor: inv.descriptor ?? undefined,
      deadlineAtMs: BigInt(inv.deadlineAtMs),
    });
  } catch (e) {
    error = trapMessage(e);
  }
  const printed = output.take();
  channel.request({ type: "done", ...(error === undefined ? {} : { error }), ...(printed === undefined ? {} : { output: printed }) });
}
