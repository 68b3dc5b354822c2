// CPU profiles of warm calls of an inspect component (C=rust, the default, or C=js), one at a time
// for MS ms (default 3000) after a warm-up, timed like bench section 5 (the JS one with its read
// grant on an empty workspace, as there). Two profiles: the main thread (<out>) and the binding's
// worker thread (<out minus .cpuprofile>.worker.cpuprofile), the worker's taken through the main
// thread's inspector (NodeWorker domain), so nothing in the runtime changes for it. In each, time
// spent waiting for the other thread shows as (idle) or in the channel's wait.
//   node --conditions=brain-source --import tsx bench/tools/profile-component.mts [out.cpuprofile]
import { Session } from "node:inspector/promises";
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PlacedTool } from "@aexhq/brain-protocol";
import { startBrain } from "@aexhq/brain-runtime";
// @ts-ignore: a plain .mjs build script without declarations.
import { buildJs, buildRust } from "../../scripts/build-components.mjs";
import { createSession } from "../src/fixture.ts";
import { callOnce, inspectContract } from "../src/components.ts";

const ms = Number(process.env.MS ?? 3000);
const which = process.env.C === "js" ? "js" : "rust";
const out = process.argv[2] ?? `/tmp/component-${which}.cpuprofile`;
const workerOut = out.replace(/\.cpuprofile$/, "") + ".worker.cpuprofile";
const root = mkdtempSync(join(tmpdir(), "brain-prof-ws-"));
const brain = await startBrain({ dataDir: ":memory:", port: 0, workspaceRoot: root, maxEmittedBytes: 2 ** 40 });
const bytes = readFileSync((which === "js" ? await buildJs() : await buildRust()).path);
const digest = createHash("sha256").update(bytes).digest("hex");
await fetch(`${brain.url}/v1/components/${digest}`, { method: "PUT", headers: { authorization: `Bearer ${brain.token}` }, body: bytes });
const placement: PlacedTool["placement"] = { kind: "component", env: "prof", digest };
if (which === "js") placement.filesystem = { workspace: "read" };
const id = await createSession(brain.url, brain.token, [{ contract: inspectContract, options: { depth: 1 }, placement }]);
const s = await brain.internals.sessions.state(id);
const loop = async (window: number) => {
  let n = 0;
  const end = Date.now() + window;
  while (Date.now() < end) (await callOnce(brain.internals, s, { path: "/workspace" }), n++);
  return n;
};
await loop(500);
if (process.env.PROFILE === "0") {
  const n = await loop(ms);
  console.log(`${which} inspect: ${n} warm calls in ${ms} ms = ${Math.round((ms * 1000) / n)} µs mean (no profile)`);
  await brain.close();
  rmSync(root, { recursive: true, force: true });
  process.exit(0);
}

const session = new Session();
session.connect();
// The binding's worker (started at session creation) through the NodeWorker domain.
let worker: { sessionId: string } | undefined;
const seen: string[] = [];
const pending = new Map<number, (r: unknown) => void>();
let nextId = 1;
session.on("NodeWorker.attachedToWorker", (m) => {
  const p = m.params as { sessionId: string; workerInfo: { url: string } };
  seen.push(p.workerInfo.url);
  // The component worker itself, not preview2-shim's I/O worker it may have started.
  if (p.workerInfo.url.endsWith("/worker.mjs")) worker ??= { sessionId: p.sessionId };
});
session.on("NodeWorker.receivedMessageFromWorker", (m) => {
  const msg = JSON.parse((m.params as { message: string }).message) as { id?: number; result?: unknown };
  if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
});
const toWorker = (method: string, params: object = {}): Promise<unknown> => {
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    void session.post("NodeWorker.sendMessageToWorker", { sessionId: worker!.sessionId, message: JSON.stringify({ id, method, params }) });
  });
};
await session.post("NodeWorker.enable", { waitForDebuggerOnStart: false });
for (let i = 0; i < 100 && worker === undefined; i++) await new Promise((r) => setTimeout(r, 10));
if (worker === undefined) throw new Error(`no component worker to attach to (workers: ${seen.join(", ")})`);
await toWorker("Profiler.enable");
await toWorker("Profiler.setSamplingInterval", { interval: 100 });
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 100 });
await toWorker("Profiler.start");
await session.post("Profiler.start");
const n = await loop(ms);
const { profile } = await session.post("Profiler.stop");
const w = (await toWorker("Profiler.stop")) as { profile: object };
writeFileSync(out, JSON.stringify(profile));
writeFileSync(workerOut, JSON.stringify(w.profile));
session.disconnect();
console.log(`${which} inspect: ${n} warm calls in ${ms} ms = ${Math.round((ms * 1000) / n)} µs mean; profiles: ${out} (main), ${workerOut} (worker)`);
await brain.close();
rmSync(root, { recursive: true, force: true });
