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
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { WASIShim } from "@bytecodealliance/preview2-shim/instantiation";
import { HOST_IMPORT_KEY, hostImports } from "@aexhq/brain-protocol/host-imports";
import { workerChannel } from "./channel-worker.mjs";
import { workspaceFilesystem } from "./workspace-fs.mjs";
import { withDenials } from "./wasi-denied.mjs";
import { captureOutput } from "./guest-output.mjs";

const { dir, modules, preopen, sab, channelSizes, memoryCapBytes } = workerData;
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
const wasi = new WASIShim({
  filesystem: workspaceFilesystem(preopen),
  sandbox: { env: {}, args: ["brain-component"], enableNetwork: false },
});

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
  instance = await instantiate(getCoreModule, withDenials({ ...wasi.getImportObject(), [HOST_IMPORT_KEY]: host }), instantiateCore);
} catch (e) {
  parentPort.postMessage({ type: "ready", error: e instanceof Error ? e.message : String(e) });
  process.exit(1);
}
parentPort.postMessage({ type: "ready" });
// A pending Atomics.waitAsync does not keep a thread alive; a listening port does.
parentPort.on("message", () => {});

for (;;) {
  const m = await channel.receiveAsync();
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
