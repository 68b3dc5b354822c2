/** Sizes of one run; `--quick` keeps the whole run under a minute on 2 cores. */
export interface BenchConfig {
  mode: "quick" | "full" | "smoke";
  latencyIterations: number;
  throughputMs: number;
  concurrencies: number[];
  turnIterations: number;
  emitsPerTool: number;
  mcpIterations: number;
  memorySessions: number;
  /** Warm invocations per component (section 5). */
  componentIterations: number;
  memoryHosts: number;
  /** Section 7: the late turn compared with turn 10 (the session runs a few more). */
  growthTurns: number;
  /** Section 8: records in the history fixture (sessions of a real session's ~100 records). */
  historyRecords: number;
  /** Section 13: sessions in the large listing journal (the baseline holds 1,000). */
  listingSessions: number;
  /** Section 14: resident sessions, and turns each (5 journal records a turn), per node measured. */
  recordMemorySessions: number;
  recordMemoryTurns: number;
}

export const CONFIGS: Record<BenchConfig["mode"], BenchConfig> = {
  full: { mode: "full", latencyIterations: 5000, throughputMs: 3000, concurrencies: [1, 16, 64], turnIterations: 300, emitsPerTool: 2000, mcpIterations: 2000, memorySessions: 1000, memoryHosts: 200, componentIterations: 2000, growthTurns: 200, historyRecords: 1_000_000, listingSessions: 1_000_000, recordMemorySessions: 24, recordMemoryTurns: 400 },
  quick: { mode: "quick", latencyIterations: 1500, throughputMs: 700, concurrencies: [1, 16, 64], turnIterations: 60, emitsPerTool: 500, mcpIterations: 400, memorySessions: 1000, memoryHosts: 50, componentIterations: 200, growthTurns: 200, historyRecords: 100_000, listingSessions: 100_000, recordMemorySessions: 24, recordMemoryTurns: 80 },
  smoke: { mode: "smoke", latencyIterations: 30, throughputMs: 100, concurrencies: [1, 16, 64], turnIterations: 3, emitsPerTool: 10, mcpIterations: 10, memorySessions: 20, memoryHosts: 3, componentIterations: 5, growthTurns: 15, historyRecords: 2_000, listingSessions: 2_000, recordMemorySessions: 4, recordMemoryTurns: 10 },
};

/** Section 9 (`npm run bench -- --soak`, its own mode): sessions doing turns for `seconds`. */
export interface SoakConfig {
  sessions: number;
  seconds: number;
  /** Script steps are sized for this many turns per second per session; a session whose script runs out stops (and the report says so). */
  turnsPerSessionPerS: number;
}

export function soakConfig(env: NodeJS.ProcessEnv = process.env, smoke = false): SoakConfig {
  const seconds = env.BENCH_SOAK_SECONDS !== undefined && env.BENCH_SOAK_SECONDS !== "" ? Number(env.BENCH_SOAK_SECONDS) : smoke ? 3 : 300;
  if (!(seconds > 0)) throw new Error(`BENCH_SOAK_SECONDS must be a positive number, got ${env.BENCH_SOAK_SECONDS}`);
  return { sessions: smoke ? 4 : 64, seconds, turnsPerSessionPerS: Number(env.BENCH_SOAK_TURNS_PER_SESSION_S ?? 25) };
}

/** `npm run bench -- --nodes` (its own mode): several runtime nodes on one PostgreSQL (issues 20, 28). */
export interface NodesConfig {
  mode: "full" | "quick" | "smoke";
  /** Sessions of every load (configuration × drive), spread evenly over its nodes; each keeps one call in flight. */
  sessions: number;
  /** Each load first runs this long, unmeasured (a fresh node warms up). */
  warmupRoundMs: number;
  /** Each load is measured in this many blocks, the loads taking turns. */
  blocks: number;
  /** A block: this long for the resumed load to reach its steady state, then `blockMs` measured. */
  warmupMs: number;
  blockMs: number;
  /** BRAIN_LEASE_MS of every PostgreSQL node (the failover waits for it). */
  leaseMs: number;
  /** PostgreSQL configurations (node counts), besides the SQLite node. */
  nodeCounts: number[];
  /** PostgreSQL with its default durability (fsync on); off only at smoke size, which checks the report's shape. */
  durable: boolean;
  /**
   * Also one PostgreSQL node on a second server run with fsync off (the figure earlier runs gave,
   * labelled): what durability costs. Every other PostgreSQL configuration runs with the defaults.
   */
  fsyncOff: boolean;
  drives: Array<"calls" | "turns">;
  /** Turns mode: tool-call steps in each session's script (enough for every block and the failover). */
  turnSteps: number;
  /** The 2-node turns run alone this long before the SIGKILL. */
  failoverAfterMs: number;
  /** PostgreSQL stopped (`pg_ctl -m immediate`) this long under load, then started again; 0: not measured. */
  outageDownMs: number;
}

export const NODES_CONFIGS: Record<NodesConfig["mode"], NodesConfig> = {
  full: { mode: "full", sessions: 64, warmupRoundMs: 1000, blocks: 8, warmupMs: 300, blockMs: 1000, leaseMs: 2000, nodeCounts: [1, 2, 3], durable: true, fsyncOff: true, drives: ["calls", "turns"], turnSteps: 2500, failoverAfterMs: 1000, outageDownMs: 5000 },
  // `--nodes --quick`: the SQLite node and one durable PostgreSQL node, both drives, no failures (A/B of a runtime change).
  quick: { mode: "quick", sessions: 64, warmupRoundMs: 1000, blocks: 6, warmupMs: 300, blockMs: 1000, leaseMs: 2000, nodeCounts: [1], durable: true, fsyncOff: false, drives: ["calls", "turns"], turnSteps: 2500, failoverAfterMs: 0, outageDownMs: 0 },
  smoke: { mode: "smoke", sessions: 6, warmupRoundMs: 100, blocks: 1, warmupMs: 100, blockMs: 200, leaseMs: 500, nodeCounts: [1, 2], durable: false, fsyncOff: false, drives: ["calls", "turns"], turnSteps: 300, failoverAfterMs: 300, outageDownMs: 1000 },
};

/**
 * The `--nodes` configuration of a mode; BENCH_NODES_DRIVES=calls (or turns) runs one drive only,
 * for quicker A/B runs of a runtime change (section 10 alone takes under a minute).
 */
export function nodesConfig(mode: NodesConfig["mode"], env: NodeJS.ProcessEnv = process.env): NodesConfig {
  const cfg = NODES_CONFIGS[mode];
  const only = env.BENCH_NODES_DRIVES;
  if (only === undefined || only === "") return cfg;
  if (only !== "calls" && only !== "turns") throw new Error(`BENCH_NODES_DRIVES must be calls or turns, got ${only}`);
  return { ...cfg, drives: [only] };
}
