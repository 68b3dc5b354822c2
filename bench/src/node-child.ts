// One runtime node of `npm run bench -- --nodes` (nodes.ts), as a process of its own: exactly what
// `brain serve` does (cli.ts: configFromEnv(process.env), then startBrain from the runtime's index:
// the built dist/ of BENCH_RUNTIME_DIR, or its sources), the same "brain listening on" line, plus an
// IPC channel the bench uses to read the journal store's counters and, for the calls-only figures, to
// drive tool calls the way section 2 does: Dispatcher.start at activation 0 (no model turn), the next
// call on a session as soon as the previous one's tool.finished is committed. The host answering
// them is in the bench process, on a WebSocket like any host's.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { BrainInternals } from "@aexhq/brain-runtime";

type Runtime = typeof import("@aexhq/brain-runtime");
type Config = { configFromEnv(env: NodeJS.ProcessEnv): Parameters<Runtime["startBrain"]>[0] };
type SessionState = Awaited<ReturnType<BrainInternals["sessions"]["state"]>>;

/** Bench → node. */
export type NodeRequest = { type: "drive"; sessions: string[] } | { type: "stop-driving" } | { type: "stats" };
/** Node → bench. */
export type NodeReply =
  | { type: "driving"; sessions: number }
  | { type: "stats"; calls: number; transactions: number; records: number; failed: number; firstError?: string }
  | { type: "error"; message: string };

const runtimeDir = process.env.BENCH_RUNTIME_DIR!;
// BENCH_RUNTIME_FROM=source (the bench itself runs on the sources: npm test): src/*.ts through tsx.
const file = (name: string) => pathToFileURL(join(runtimeDir, process.env.BENCH_RUNTIME_FROM === "source" ? `src/${name}.ts` : `dist/${name}.js`)).href;
const { startBrain } = (await import(file("index"))) as Runtime;
const { configFromEnv } = (await import(file("config"))) as Config;
const brain = await startBrain(configFromEnv(process.env));
console.log(`brain listening on ${brain.url}`);
// BENCH_NODE_TRACE (nodes.ts keeps this process's stdout): a line a second, "@@ <ms since start> <calls driven>", to cut a V8 trace by time.
if (process.env.BENCH_NODE_TRACE) setInterval(() => console.log(`@@ ${Math.round(performance.now())} ${calls}`), 1000).unref();

// BENCH_NODE_PROFILE=dir: a CPU profile of this node from its start until the bench stops driving
// (the end of the measured blocks), written to dir/node-<journal>-<pid>.cpuprofile (bench/tools/profile-top.mjs reads it).
const profileDir = process.env.BENCH_NODE_PROFILE;
const profiler = profileDir ? new (await import("node:inspector/promises")).Session() : undefined;
if (profiler) {
  profiler.connect();
  await profiler.post("Profiler.enable");
  await profiler.post("Profiler.start");
}
async function writeProfile(): Promise<void> {
  if (!profiler) return;
  const { profile } = await profiler.post("Profiler.stop");
  const { writeFileSync } = await import("node:fs");
  writeFileSync(join(profileDir!, `node-${process.env.BRAIN_JOURNAL === "sqlite" ? "sqlite" : "postgres"}-${process.pid}.cpuprofile`), JSON.stringify(profile));
}

const { internals } = brain;
let calls = 0;
let failed = 0;
let firstError: string | undefined;
let driving = false;
const watched = new Set<string>();
const waiters = new Map<string, () => void>();

function send(reply: NodeReply): void {
  process.send?.(reply);
}

/** Keeps one call in flight on `s` while driving (section 2's technique, fixture.ts `call`). */
async function drive(s: SessionState): Promise<void> {
  if (!watched.has(s.id)) {
    watched.add(s.id);
    s.onCommit((r) => {
      if (r.type !== "tool.finished") return;
      const w = waiters.get(r.data.callId);
      if (w) waiters.delete(r.data.callId), w();
    });
  }
  const tool = s.created.tools[0]!;
  while (driving) {
    try {
      await new Promise<void>((resolve) => {
        const [c] = internals.dispatcher.start(s, 0, [{ modelCallId: "bench", tool, input: { x: 1 }, deadlineAt: null }], internals.sessions.loopOf(s.id)!);
        waiters.set(c!.callId, resolve);
      });
      calls++;
    } catch (e) {
      failed++;
      firstError ??= e instanceof Error ? e.message : String(e);
      return;
    }
  }
}

process.on("message", async (m: NodeRequest) => {
  try {
    if (m.type === "drive") {
      driving = true;
      const states = await Promise.all(m.sessions.map((id) => internals.sessions.state(id)));
      for (const s of states) void drive(s);
      send({ type: "driving", sessions: states.length });
    } else if (m.type === "stop-driving") {
      driving = false;
      await writeProfile();
      send({ type: "driving", sessions: 0 });
    } else if (m.type === "stats") {
      const st = internals.store.stats;
      send({ type: "stats", calls, transactions: st.transactions, records: st.records, failed, ...(firstError ? { firstError } : {}) });
    }
  } catch (e) {
    send({ type: "error", message: e instanceof Error ? e.message : String(e) });
  }
});
// The bench going away (its IPC channel closes) ends this node too.
process.on("disconnect", () => process.exit(0));
