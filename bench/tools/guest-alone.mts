// The inspect component's guest alone on this thread: no worker, no channel, no journal. The
// transpiled component (as the runtime transpiles it) is instantiated with the component worker's
// own WASI (workspace-fs.mjs, under a read grant on an empty workspace, as bench section 5 runs it)
// and host import object, whose bridge answers at once. Times N warm runs after W unmeasured ones
// and prints p10/p50 of a run and, for the JS guest, where in the run each host call came (p50 of
// the time from `run` entered). What a warm call costs besides this is the call path (crossings,
// commits), which bench section 5 and profile-component.mts measure.
//   node --conditions=brain-source --import tsx bench/tools/guest-alone.mts        (C=rust|js, N, W)
// With `--cpu-prof` it profiles only the guest (bench/tools/profile-top.mjs summarizes it).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { transpileBytes } from "@bytecodealliance/jco-transpile";
import { WASIShim } from "@bytecodealliance/preview2-shim/instantiation";
import { HOST_IMPORT_KEY, hostImports } from "@aexhq/brain-protocol/host-imports";
// @ts-ignore: plain .mjs without declarations (it runs inside worker threads).
import { workspaceFilesystem } from "../../runtime/src/environments/component/workspace-fs.mjs";
// @ts-ignore: plain .mjs without declarations.
import { wallClock } from "../../runtime/src/environments/component/wall-clock.mjs";
// @ts-ignore: plain .mjs without declarations.
import { withDenials } from "../../runtime/src/environments/component/wasi-denied.mjs";
// @ts-ignore: a plain .mjs build script without declarations.
import { buildJs, buildRust } from "../../scripts/build-components.mjs";

/** WebAssembly is a Node global, but this project's lib settings (no DOM) do not declare it. */
const wasm = (globalThis as unknown as { WebAssembly: { compile(b: Uint8Array): Promise<unknown> } }).WebAssembly;
const which = process.env.C === "rust" ? "rust" : "js";
const n = Number(process.env.N ?? 3000);
const warm = Number(process.env.W ?? 1500);
// As the component worker does: jco's glue reads process.env.JCO_DEBUG on every call.
process.env = { ...process.env };

const dir = mkdtempSync(join(tmpdir(), "brain-guest-alone-"));
const workspace = mkdtempSync(join(tmpdir(), "brain-guest-alone-ws-"));
try {
  const bytes = readFileSync((which === "js" ? await buildJs() : await buildRust()).path);
  // The runtime's transpile options (runtime/src/environments/component/store.ts).
  const t = await transpileBytes(bytes, { name: "component", instantiation: "async", importBindings: "hybrid", emitTypescriptDeclarations: false, wasiShim: false, minify: false, optimize: false });
  const modules: Record<string, unknown> = {};
  for (const [name, data] of Object.entries(t.files)) {
    writeFileSync(join(dir, name), data);
    if (name.endsWith(".wasm")) modules[name] = await wasm.compile(data);
  }
  let start = 0;
  const marks = new Map<string, number[]>();
  const mark = (op: string) => {
    if (start === 0) return;
    if (!marks.has(op)) marks.set(op, []);
    marks.get(op)!.push(performance.now() - start);
  };
  const host = hostImports({ call: (op) => (mark(op), { ok: 1 }) as never, post: (op) => mark(op) });
  // As worker.mjs builds them (its wall clock too: preview2-shim's corrupts the guest's memory).
  const wasi = {
    ...new WASIShim({ filesystem: workspaceFilesystem({ hostPath: workspace, mode: "read" }), sandbox: { env: {}, args: ["brain-component"], enableNetwork: false } }).getImportObject(),
    "wasi:clocks/wall-clock": wallClock,
  };
  const { instantiate } = await import(pathToFileURL(join(dir, "component.js")).href);
  const instance = await instantiate((name: string) => modules[name], withDenials({ ...wasi, [HOST_IMPORT_KEY]: host }));
  const invocation = { input: JSON.stringify({ path: "/workspace" }), options: JSON.stringify({ depth: 1 }), descriptor: undefined, deadlineAtMs: 0n };
  const runs: number[] = [];
  for (let i = 0; i < warm + n; i++) {
    if (i === warm) marks.clear();
    start = i >= warm ? performance.now() : 0;
    instance.run(invocation);
    if (start !== 0) (mark("return"), runs.push(performance.now() - start));
    // The worker's event loop turns between calls: jco's glue leaves microtasks behind each run.
    await new Promise(setImmediate);
  }
  const p = (xs: number[], q: number) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)]! * 1000);
  console.log(`${which} guest alone: ${n} warm runs after ${warm}: p10 ${p(runs, 0.1)} µs, p50 ${p(runs, 0.5)} µs`);
  console.log("p50 from run entered: " + [...marks].map(([op, xs]) => [op, p(xs, 0.5)] as const).sort((a, b) => a[1] - b[1]).map(([op, us]) => `${op} ${us} µs`).join(", "));
} finally {
  rmSync(dir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
}
