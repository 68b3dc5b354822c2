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
}

export const CONFIGS: Record<BenchConfig["mode"], BenchConfig> = {
  full: { mode: "full", latencyIterations: 5000, throughputMs: 3000, concurrencies: [1, 16, 64], turnIterations: 300, emitsPerTool: 2000, mcpIterations: 2000, memorySessions: 1000, memoryHosts: 200, componentIterations: 2000 },
  quick: { mode: "quick", latencyIterations: 1500, throughputMs: 700, concurrencies: [1, 16, 64], turnIterations: 60, emitsPerTool: 500, mcpIterations: 400, memorySessions: 1000, memoryHosts: 50, componentIterations: 200 },
  smoke: { mode: "smoke", latencyIterations: 30, throughputMs: 100, concurrencies: [1, 16, 64], turnIterations: 3, emitsPerTool: 10, mcpIterations: 10, memorySessions: 20, memoryHosts: 3, componentIterations: 5 },
};
