// Two builds of the runtime in one process, A/B on section 17's stdio figure at 64 in flight: each
// build is a Brain (memory journal, 64 sessions placing the echo tool of its own stdio echo server,
// calls started by the dispatcher as bench/src/mcp-environment.ts starts them), and the two are
// measured in adjacent rounds (A, B, B, A, …), so a machine whose load moves by the second moves
// both alike. Prints per round calls/s and this process's CPU per call; at the end the medians and
// the median of the pairs' B ÷ A ratios.
//   node --import tsx bench/tools/ab-mcp.mts <dirA> <dirB>     (each a copy of runtime/'s dist/ and
//   package.json, e.g. runtime/.ab/main/, git-ignored: inside the repository so its imports resolve)
//   PAIRS=12 MS=500 N=64 WARM=2000 (unmeasured first, each)
import { resolve } from "node:path";
import type { startBrain as StartBrain } from "@aexhq/brain-runtime";
import { brainPeer, mcpStdioServer } from "../src/mcp-environment.ts";
import type { BrainMcpPeer } from "../src/mcp-environment.ts";

const [dirA, dirB] = process.argv.slice(2);
if (dirA === undefined || dirB === undefined) throw new Error("usage: ab-mcp.mts <runtime copy A> <runtime copy B>");
const pairs = Number(process.env.PAIRS ?? 12);
const ms = Number(process.env.MS ?? 500);
const n = Number(process.env.N ?? 64);

/** One build's Brain: its startBrain from the copy's dist/, the same peer §17 measures. */
async function peer(dir: string): Promise<BrainMcpPeer> {
  const { startBrain } = (await import(resolve(dir, "dist/index.js"))) as { startBrain: typeof StartBrain };
  return brainPeer(mcpStdioServer(), { start: startBrain, sessions: n });
}

interface Round {
  rate: number;
  cpu: number;
  /** Records per group commit. */
  batch: number;
}

async function round(p: BrainMcpPeer, window: number): Promise<Round> {
  let done = 0;
  const c0 = p.commits();
  const cpu0 = process.cpuUsage();
  const t = performance.now();
  const end = t + window;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (performance.now() < end) {
        await p.call();
        done++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  const c1 = p.commits();
  return { rate: done / ((performance.now() - t) / 1000), cpu: (cpu.user + cpu.system) / done, batch: (c1.records - c0.records) / Math.max(1, c1.transactions - c0.transactions) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const a = await peer(dirA);
const b = await peer(dirB);
try {
  const warm = Number(process.env.WARM ?? 2000);
  await round(a, warm);
  await round(b, warm);
  const ra: Round[] = [];
  const rb: Round[] = [];
  for (let i = 0; i < pairs; i++) {
    // Alternating which goes first, as the bench's pairedRatio does.
    if (i % 2 === 0) {
      ra.push(await round(a, ms));
      rb.push(await round(b, ms));
    } else {
      rb.push(await round(b, ms));
      ra.push(await round(a, ms));
    }
    const line = (r: Round) => `${Math.round(r.rate)} calls/s ${r.cpu.toFixed(1)} µs/call ${r.batch.toFixed(1)} records/commit`;
    console.log(`pair ${i + 1}: A ${line(ra[i]!)}, B ${line(rb[i]!)}`);
  }
  const ratio = median(ra.map((r, i) => rb[i]!.rate / r.rate));
  const cpuRatio = median(ra.map((r, i) => rb[i]!.cpu / r.cpu));
  const summary = (rs: Round[]) => `median ${Math.round(median(rs.map((r) => r.rate)))} calls/s, ${median(rs.map((r) => r.cpu)).toFixed(1)} µs CPU/call, ${median(rs.map((r) => r.batch)).toFixed(1)} records/commit`;
  console.log(`A ${resolve(dirA)}: ${summary(ra)}`);
  console.log(`B ${resolve(dirB)}: ${summary(rb)}`);
  console.log(`B ÷ A, median of pairs: calls/s ${ratio.toFixed(3)}, CPU per call ${cpuRatio.toFixed(3)}`);
} finally {
  await a.close();
  await b.close();
}
