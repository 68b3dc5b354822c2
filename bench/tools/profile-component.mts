// CPU profile (main thread) of warm calls of the Rust inspect component, one at a time for MS ms
// (default 3000) after a warm-up, timed like bench section 5. The worker thread is not in this
// profile: time spent waiting for it shows as (idle).
//   node --conditions=brain-source --import tsx bench/tools/profile-component.mts [out.cpuprofile]
import { Session } from "node:inspector/promises";
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBrain } from "@aexhq/brain-runtime";
// @ts-ignore: a plain .mjs build script without declarations.
import { buildRust } from "../../scripts/build-components.mjs";
import { createSession } from "../src/fixture.ts";
import { callOnce, inspectContract } from "../src/components.ts";

const ms = Number(process.env.MS ?? 3000);
const out = process.argv[2] ?? "/tmp/component-rust.cpuprofile";
const root = mkdtempSync(join(tmpdir(), "brain-prof-ws-"));
const brain = await startBrain({ dataDir: ":memory:", port: 0, workspaceRoot: root, maxEmittedBytes: 2 ** 40 });
const bytes = readFileSync((await buildRust()).path);
const digest = createHash("sha256").update(bytes).digest("hex");
await fetch(`${brain.url}/v1/components/${digest}`, { method: "PUT", headers: { authorization: `Bearer ${brain.token}` }, body: bytes });
const id = await createSession(brain.url, brain.token, [{ contract: inspectContract, options: { depth: 1 }, placement: { kind: "component", env: "prof", digest } }]);
const s = brain.internals.sessions.state(id);
const loop = async (window: number) => {
  let n = 0;
  const end = Date.now() + window;
  while (Date.now() < end) (await callOnce(brain.internals, s, { path: "/workspace" }), n++);
  return n;
};
await loop(500);
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.start");
const n = await loop(ms);
const { profile } = await session.post("Profiler.stop");
writeFileSync(out, JSON.stringify(profile));
session.disconnect();
console.log(`rust inspect: ${n} warm calls in ${ms} ms = ${Math.round((ms * 1000) / n)} µs mean; profile: ${out}`);
await brain.close();
rmSync(root, { recursive: true, force: true });
