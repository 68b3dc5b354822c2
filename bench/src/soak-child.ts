// Entry of the child process bench section 9 runs in (soak.ts): the runtime (SQLite journal in a
// temp dir) and a Node SDK host in this process; prints one JSON line per event (SoakLine).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getHeapSpaceStatistics } from "node:v8";
import { Brain } from "@aexhq/brain";
import { startBrain } from "@aexhq/brain-runtime";
import type { SoakConfig } from "./config.ts";
import { sdkEcho } from "./fixture.ts";
import type { SoakLine } from "./soak.ts";
import { gc } from "./force-gc.ts";

const cfg = JSON.parse(process.argv[process.argv.length - 1]!) as SoakConfig & { windowS: number };
const emit = (l: SoakLine) => process.stdout.write(JSON.stringify(l) + "\n");

async function settle(): Promise<{ rss: number; heap: number; spaces: Record<string, number> }> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
  }
  const m = process.memoryUsage();
  const spaces: Record<string, number> = { external: m.external };
  for (const sp of getHeapSpaceStatistics()) spaces[sp.space_name] = sp.space_used_size;
  return { rss: m.rss, heap: m.heapUsed + m.external, spaces };
}

const dir = mkdtempSync(join(tmpdir(), "brain-bench-soak-"));
const brain = await startBrain({ dataDir: dir, port: 0 });
const client = new Brain({ url: brain.url, token: brain.token });
try {
  const scriptTurns = Math.ceil(cfg.seconds * cfg.turnsPerSessionPerS) + 10;
  const script = Array.from({ length: scriptTurns }, () => [{ toolCalls: [{ name: "echo", input: { x: 1 } }] }, { text: "done" }]).flat();
  const model = { provider: "scripted" as const, script };
  const echo = sdkEcho();
  // Warm up (the routes, the session and turn code, fetch) so one-time loading is not counted in the heap delta.
  for (let i = 0; i < 3; i++) {
    const w = await client.sessions.create({ model: { provider: "scripted", script: script.slice(0, 10) }, tools: [echo] });
    for (let k = 0; k < 5; k++) await w.send("warm up");
    await w.delete();
  }
  const before = await settle();
  emit({ kind: "start", heapBefore: before.heap, rssBefore: before.rss, spacesBefore: before.spaces, windowS: cfg.windowS, scriptTurns, scriptBytes: Buffer.byteLength(JSON.stringify(model)) * cfg.sessions });
  const sessions = [];
  for (let i = 0; i < cfg.sessions; i++) sessions.push(await client.sessions.create({ model, tools: [echo] }));
  const nWindows = Math.max(1, Math.round(cfg.seconds / cfg.windowS));
  const counts = new Array<number>(nWindows).fill(0);
  const t0 = performance.now();
  const endAt = t0 + nWindows * cfg.windowS * 1000;
  let failures = 0;
  let exhausted = 0;
  let firstError: string | undefined;
  // RSS at each window's end, sampled by a timer (no forced GC).
  let reported = 0;
  const tick = setInterval(() => {
    const w = Math.floor((performance.now() - t0) / (cfg.windowS * 1000));
    while (reported < Math.min(w, nWindows)) {
      const m = process.memoryUsage();
      emit({ kind: "window", index: reported, turns: counts[reported]!, seconds: cfg.windowS, rss: m.rss, heap: m.heapUsed + m.external });
      reported++;
    }
  }, 50);
  await Promise.all(
    sessions.map(async (session, i) => {
      for (let turn = 0; turn < scriptTurns && performance.now() < endAt; turn++) {
        try {
          await session.send(`turn ${turn} of session ${i}`);
        } catch (e) {
          failures++;
          const msg = e instanceof Error ? e.message : String(e);
          firstError ??= msg;
          if (msg.includes("script")) exhausted++;
          return;
        }
        const w = Math.floor((performance.now() - t0) / (cfg.windowS * 1000));
        if (w < nWindows) counts[w]!++;
      }
      if (performance.now() < endAt) exhausted++;
    }),
  );
  // The last window's report: wait for the timer to pass its end (the sends above stop at endAt).
  while (reported < nWindows) await new Promise((r) => setTimeout(r, 20));
  clearInterval(tick);
  const m = process.memoryUsage();
  const endHeap = await settle();
  for (const session of sessions) await session.delete();
  sessions.length = 0;
  const after = await settle();
  // What the runtime says it still holds (its counters' names change with the runtime: printed as they come).
  const held = brain.internals.sessions.held as unknown as Record<string, number>;
  emit({ kind: "end", heapEnd: endHeap.heap, rssEnd: m.rss, heapAfterDelete: after.heap, rssAfterDelete: after.rss, spacesAfterDelete: after.spaces, turns: counts.reduce((a, b) => a + b, 0), failures, exhausted, ...(firstError ? { firstError } : {}), heldAfterDelete: held });
} finally {
  await client.close();
  await brain.close();
  rmSync(dir, { recursive: true, force: true });
}
