import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ScriptStep, ErrorInfo } from "@aexhq/brain-protocol";

/** What one call of a scenario must look like in the journal. Absent fields are not checked. */
export interface ExpectedCall {
  tool: string;
  /** Record types of this call, in journal order, from tool.call_started to tool.finished. */
  trace?: string[];
  /** The status of the call's tool.finished record. */
  status: "ok" | "error" | "timeout" | "cancelled" | "unknown";
  /** For status error: the fields that must match (a subset of ErrorInfo). */
  error?: Partial<ErrorInfo>;
  /** The outcomes of the call's tool.result records, in order (deep-equal). */
  results?: unknown[];
  /** content of the last tool.result. */
  content?: string;
  /** The final ok value holds, under this key, the sequences returned by `await emit`; they must be the call's tool.event sequences, all before the result. */
  emitSequencesInResult?: string;
  /** Wait this long after the call finished before reading the journal (to catch late records). */
  settleMs?: number;
}

export interface ScenarioAction {
  /** Run when the first record of this type appears. */
  when: string;
  do: "cancel_call" | "drop_connection" | "restart_subject";
  delayMs?: number;
}

export interface Scenario {
  name: string;
  description: string;
  script: ScriptStep[];
  deadlineMs?: number;
  actions?: ScenarioAction[];
  /** Send a second user message once the first turn ended and every action ran (the script continues). */
  secondMessage?: boolean;
  expect: {
    turn: "completed" | "failed";
    /** The scenario continues after the turn until a wake turn completes. */
    waitForWake?: boolean;
    calls: ExpectedCall[];
  };
}

export function loadScenarios(dir: string): Scenario[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => {
      const s = JSON.parse(readFileSync(join(dir, f), "utf8")) as Scenario;
      if (`${s.name}.json` !== f) throw new Error(`${f}: scenario name must match its file name`);
      if (!Array.isArray(s.script) || !s.expect || !Array.isArray(s.expect.calls)) throw new Error(`${f}: needs script and expect.calls`);
      return s;
    });
}

/** Tool names a scenario calls, in first-use order. */
export function toolsOf(s: Scenario): string[] {
  return [...new Set(s.script.flatMap((step) => (step.toolCalls ?? []).map((c) => c.name)))];
}

/** `--only` matches a substring or a glob with `*`. */
export function matches(pattern: string | undefined, name: string): boolean {
  if (!pattern) return true;
  if (!pattern.includes("*")) return name.includes(pattern);
  return new RegExp(`^${pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`).test(name);
}
