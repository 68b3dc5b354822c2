import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { scenarioIssues } from "@aexhq/brain-protocol";
import type { Scenario, SubjectKind } from "@aexhq/brain-protocol";

// The format is contract/conformance-scenario.schema.json; codegen compiles it into the
// `Scenario` type and the `scenarioIssues` validator of @aexhq/brain-protocol.
export type { Scenario, ExpectedCall, ExpectedError, Action as ScenarioAction, Fault as ScenarioFault, RecordType, SubjectKind, CatalogueVariant } from "@aexhq/brain-protocol";

/** A scenario file the runner refuses: names the file and the JSON path of the first problem. */
export class ScenarioFileError extends Error {
  readonly code = "invalid_scenario";
  constructor(readonly file: string, readonly path: string, readonly problem: string) {
    super(`${file}: ${path || "/"}: ${problem}`);
  }
}

/**
 * Checks one parsed scenario file: the schema, then the rules a schema cannot say (the file name,
 * which actions need what). Returns the problems, empty = valid.
 */
export function scenarioProblems(file: string, value: unknown): { path: string; message: string }[] {
  const found = scenarioIssues(value);
  if (found.length) return found;
  const s = value as Scenario;
  if (`${s.name}.json` !== file) return [{ path: "/name", message: `must match the file name (${file})` }];
  const hostOnly = s.subjectKinds !== undefined && s.subjectKinds.every((k) => k === "host");
  const FAULT_ACTIONS = ["stall_connection", "hang_upgrade", "close_unauthorized", "replace_host"];
  if (s.faults !== undefined && !hostOnly) return [{ path: "/faults", message: 'faults need "subjectKinds": ["host"] (only a host subject talks to the runner\'s proxy)' }];
  for (const [i, name] of (s.approval ?? []).entries()) {
    if (!toolsOf(s).includes(name)) return [{ path: `/approval/${i}`, message: `the script never calls ${name}` }];
  }
  for (const [i, a] of (s.actions ?? []).entries()) {
    if (FAULT_ACTIONS.includes(a.do) && !hostOnly) return [{ path: `/actions/${i}/do`, message: `${a.do} needs "subjectKinds": ["host"]` }];
    if (a.variant !== undefined && a.do !== "restart_subject") return [{ path: `/actions/${i}/variant`, message: "only restart_subject takes a variant" }];
    if (a.reason !== undefined && a.do !== "approve_call" && a.do !== "deny_call") return [{ path: `/actions/${i}/reason`, message: "only approve_call and deny_call take a reason" }];
    if ((a.do === "approve_call" || a.do === "deny_call") && (a.when !== "tool.call_started" || (s.approval ?? []).length === 0)) {
      return [{ path: `/actions/${i}/when`, message: `${a.do} decides the call a tool.call_started of a tool in the scenario's "approval" starts: give "when": "tool.call_started" and list the tool in "approval"` }];
    }
    if (a.do === "restart_runtime" && s.runtime?.journal !== "sqlite") {
      return [{ path: `/actions/${i}/do`, message: 'restart_runtime needs "runtime": {"journal": "sqlite"} (an in-memory journal does not survive a restart)' }];
    }
  }
  return [];
}

/** Loads every scenario of `dir`, sorted by name; throws ScenarioFileError for the first bad file. */
export function loadScenarios(dir: string): Scenario[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => {
      let value: unknown;
      try {
        value = JSON.parse(readFileSync(join(dir, f), "utf8"));
      } catch (e) {
        throw new ScenarioFileError(join(dir, f), "", `not JSON: ${(e as Error).message}`);
      }
      const problem = scenarioProblems(f, value)[0];
      if (problem) throw new ScenarioFileError(join(dir, f), problem.path, problem.message);
      return value as Scenario;
    });
}

/** Tool names a scenario calls, in first-use order. */
export function toolsOf(s: Scenario): string[] {
  return [...new Set(s.script.flatMap((step) => (step.toolCalls ?? []).map((c) => c.name)))];
}

/** Whether a subject of this kind can take part in the scenario (else it is reported n/a). */
export function appliesTo(s: Scenario, kind: SubjectKind): boolean {
  return s.subjectKinds === undefined || s.subjectKinds.includes(kind);
}

/** The journal a scenario's runtime needs; scenarios with the same one share a runtime. */
export function journalOf(s: Scenario): "memory" | "sqlite" {
  return s.runtime?.journal ?? "memory";
}

/** `--only` matches a substring or a glob with `*`. */
export function matches(pattern: string | undefined, name: string): boolean {
  if (!pattern) return true;
  if (!pattern.includes("*")) return name.includes(pattern);
  return new RegExp(`^${pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`).test(name);
}
