// The worker thread that runs one component binding's invocations, one at a time.
//
// Plain JavaScript on purpose: Node 20 does not apply the tsx loader inside worker threads, and
// this file must load as-is from source and from a build.
//
// The guest calls host imports synchronously, but every commit happens asynchronously on the main
// thread. The bridge: the worker posts {type:"call"} and blocks in Atomics.wait on a
// SharedArrayBuffer until the main thread writes the JSON reply and notifies. Layout (shared
// with bridge.ts): Int32 [0] = state (0 pending, 1 reply ready), Int32 [1] = reply byte length,
// reply UTF-8 bytes from byte 8.
import { parentPort, workerData } from "node:worker_threads";
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { WASIShim } from "@bytecodealliance/preview2-shim/instantiation";
import { createFilesystem } from "@bytecodealliance/preview2-shim/filesystem";
import { HOST_IMPORT_KEY, hostImports } from "@aexhq/brain-protocol/host-imports";

const { dir, modules, preopen, sab } = workerData;
const header = new Int32Array(sab, 0, 2);
const replyBytes = new Uint8Array(sab, 8);
const decoder = new TextDecoder();

/**
 * The bridge the generated host imports call. `call` posts {type:"call"} and blocks until the main
 * thread writes the reply ({ok} or {err}) and notifies; `post` sends {type:"post"} without
 * waiting. Both go through one channel, so the main thread sees them in call order.
 */
const bridge = {
  call(op, args) {
    Atomics.store(header, 0, 0);
    parentPort.postMessage({ type: "call", op, args });
    Atomics.wait(header, 0, 0);
    const len = Atomics.load(header, 1);
    return JSON.parse(decoder.decode(replyBytes.slice(0, len)));
  },
  post(op, args) {
    parentPort.postMessage({ type: "post", op, args });
  },
};

// Generated from contract/tool.wit (codegen): names, argument shapes and result conversions.
const host = hostImports(bridge);

// --- WASI: an isolated filesystem holding only this binding's preopen -------------------------
const fs = createFilesystem({ preopens: preopen ? { "/workspace": preopen.hostPath } : {} });
const Descriptor = fs.types.Descriptor;

/** Paths are relative to a descriptor inside the preopen; refuse absolute ones and `..` escapes. */
function confined(path) {
  if (typeof path !== "string" || path.startsWith("/")) throw "not-permitted";
  let depth = 0;
  for (const seg of path.split("/")) {
    if (seg === "..") depth--;
    else if (seg !== "" && seg !== ".") depth++;
    if (depth < 0) throw "not-permitted";
  }
}
for (const name of ["statAt", "openAt", "readlinkAt", "setTimesAt", "linkAt", "createDirectoryAt", "removeDirectoryAt", "renameAt", "symlinkAt", "unlinkFileAt", "metadataHashAt"]) {
  const original = Descriptor.prototype[name];
  if (typeof original !== "function") continue;
  const pathIndex = name === "statAt" || name === "openAt" || name === "setTimesAt" || name === "linkAt" || name === "metadataHashAt" ? 1 : 0;
  Descriptor.prototype[name] = function (...args) {
    confined(args[pathIndex]);
    if (name === "linkAt" || name === "renameAt") confined(args[name === "linkAt" ? 3 : 2]);
    return original.apply(this, args);
  };
}

// A read grant: every mutating operation fails inside the guest with `read-only`. This worker
// serves one binding only, so patching the shim's class here affects no other binding.
if (preopen && preopen.mode === "read") {
  const deny = () => {
    throw "read-only";
  };
  for (const name of ["writeViaStream", "appendViaStream", "setSize", "setTimes", "write", "createDirectoryAt", "linkAt", "removeDirectoryAt", "renameAt", "symlinkAt", "unlinkFileAt", "setTimesAt"]) {
    if (typeof Descriptor.prototype[name] === "function") Descriptor.prototype[name] = deny;
  }
  const openAt = Descriptor.prototype.openAt;
  Descriptor.prototype.openAt = function (pathFlags, path, openFlags, descriptorFlags) {
    if (openFlags?.create || openFlags?.truncate || descriptorFlags?.write || descriptorFlags?.mutateDirectory) throw "read-only";
    return openAt.call(this, pathFlags, path, openFlags, descriptorFlags);
  };
  const getFlags = Descriptor.prototype.getFlags;
  Descriptor.prototype.getFlags = function () {
    return { ...getFlags.call(this), write: false, mutateDirectory: false };
  };
}

const wasi = new WASIShim({
  filesystem: fs,
  sandbox: { env: {}, args: ["brain-component"], enableNetwork: false },
});

const { instantiate } = await import(pathToFileURL(join(dir, "component.js")).href);
const getCoreModule = (name) => modules[name] ?? WebAssembly.compileStreaming?.(name);

parentPort.on("message", async (m) => {
  if (m.type !== "invoke") return;
  try {
    // A fresh instance per invocation: no guest state leaks from one call to the next.
    const instance = await instantiate(getCoreModule, { ...wasi.getImportObject(), [HOST_IMPORT_KEY]: host });
    const inv = m.invocation;
    instance.run({
      input: inv.input,
      options: inv.options,
      descriptor: inv.descriptor ?? undefined,
      deadlineAtMs: BigInt(inv.deadlineAtMs),
    });
    parentPort.postMessage({ type: "done" });
  } catch (e) {
    parentPort.postMessage({ type: "done", error: e instanceof Error ? e.message : String(e?.payload?.message ?? e) });
  }
});
parentPort.postMessage({ type: "ready" });
