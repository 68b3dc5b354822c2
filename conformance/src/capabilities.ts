import { CAPABILITIES, capabilityOf } from "./catalogue-document.ts";
import { toolsOf, type Scenario, type SubjectKind } from "./scenario.ts";
import type { ScenarioResult } from "./run.ts";

/**
 * A scenario whose tools the subject does not all implement: n/a when every tool it lacks belongs
 * to an optional capability (or the subject is a component, for which every capability is
 * optional), else a failure naming the required tool. Undefined: the subject has every tool.
 */
export function lackingTools(s: Scenario, implemented: ReadonlySet<string>, kind: SubjectKind): ScenarioResult | undefined {
  const lacking = toolsOf(s).filter((t) => !implemented.has(t));
  if (lacking.length === 0) return undefined;
  const required = kind === "component" ? [] : lacking.filter((t) => CAPABILITIES[capabilityOf(t)]?.required);
  if (required.length > 0) {
    const t = required[0]!;
    return { name: s.name, pass: false, ms: 0, detail: `the subject does not implement tool ${t} of the required capability "${capabilityOf(t)}" (every host binding implements it: CATALOGUE.md, Capabilities)` };
  }
  const named = lacking.map((t) => `${t} (capability "${capabilityOf(t)}")`).join(", ");
  return { name: s.name, pass: true, na: true, ms: 0, detail: `n/a: needs ${named}, which the subject does not implement` };
}

/** `brain-conformance --list`: the capabilities (required or optional, with their tools), then each scenario with the tools and capabilities it needs. */
export function listing(scenarios: Scenario[]): string {
  const lines = ["capabilities (CATALOGUE.md):"];
  const width = Math.max(...Object.keys(CAPABILITIES).map((n) => n.length));
  for (const [name, c] of Object.entries(CAPABILITIES)) {
    lines.push(`  ${name.padEnd(width)}  ${c.required ? "required" : "optional"}  ${c.description}`, `  ${"".padEnd(width)}            tools: ${c.tools.join(", ")}`);
  }
  lines.push("", "scenarios:");
  const w = Math.max(...scenarios.map((s) => s.name.length));
  for (const s of scenarios) {
    const caps = [...new Set(toolsOf(s).map(capabilityOf))];
    lines.push(`  ${s.name.padEnd(w)}  ${caps.map((c) => `${c} (${CAPABILITIES[c]!.required ? "required" : "optional"})`).join(", ")}; tools ${toolsOf(s).join(", ")}; subjects ${s.subjectKinds?.join(", ") ?? "every kind"}`);
  }
  return lines.join("\n");
}
