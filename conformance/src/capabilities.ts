import { CAPABILITIES, capabilityOf } from "./catalogue-document.ts";
import { toolsOf, type Scenario, type SubjectKind } from "./scenario.ts";
import type { ScenarioResult } from "./run.ts";

/**
 * A scenario whose tools the subject does not all implement: n/a when every tool it lacks belongs
 * to an optional capability (or the subject is a component or an MCP server, for which every capability is
 * optional), else a failure naming the required tool. Undefined: the subject has every tool.
 */
export function lackingTools(s: Scenario, implemented: ReadonlySet<string>, kind: SubjectKind): ScenarioResult | undefined {
  const lacking = toolsOf(s).filter((t) => !implemented.has(t));
  if (lacking.length === 0) return undefined;
  // A component or an MCP server is a set of tools, not a binding: every capability is optional for it.
  const required = kind === "component" || kind === "mcp" ? [] : lacking.filter((t) => CAPABILITIES[capabilityOf(t)]?.required);
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

/**
 * Why a scenario cannot apply to an MCP server (its `subjectKinds` leaves out `mcp`), one line each;
 * conformance/README.md has the same table. A test checks that it and the scenario files agree.
 */
export const NOT_FOR_MCP: Readonly<Record<string, string>> = {
  "content-never-changes-status": "an MCP error result has no error code: `isError: true` is always `tool_error`",
  "digest-edge-cases": "the runtime digests the schemas the server lists: there is no registration to get wrong",
  "emit-result-several-times": "a `tools/call` has exactly one result",
  "emit-sequences-before-result": "a progress notification is not acknowledged, so a tool cannot learn its events' sequences (progress-events-before-result checks the order)",
  "environments-forbidden-by-default": "an MCP tool has no Environment control to be refused",
  "environments-within-authority": "an MCP tool has no Environment control",
  "fault-close-4401-stops": "a rule of the host protocol, which an MCP server does not speak",
  "fault-close-4409-stops": "a rule of the host protocol, which an MCP server does not speak",
  "fault-final-conflict-ends-call": "a rule of the host protocol, which an MCP server does not speak",
  "fault-silent-runtime": "a rule of the host protocol, which an MCP server does not speak",
  "fault-unavailable-resend": "a rule of the host protocol, which an MCP server does not speak",
  "fault-unavailable-resend-finish": "a rule of the host protocol, which an MCP server does not speak",
  "fault-upgrade-hangs": "a rule of the host protocol, which an MCP server does not speak",
  "forget-stays-open-until-deadline": "a `tools/call` has no returned phase: its one result ends it",
  "model-call-from-tool": "the runtime's MCP client offers no sampling, so a tool cannot reach the session's model",
  "non-success-skips-output-validation": "an MCP error result has no error code: `isError: true` is always `tool_error` (its missing structuredContent is not checked)",
  "not-json-bigint": "JSON-RPC carries JSON only: the server's own encoder decides what a value becomes before the runtime sees it",
  "not-json-class": "JSON-RPC carries JSON only: the server's own encoder decides what a value becomes before the runtime sees it",
  "not-json-date": "JSON-RPC carries JSON only: the server's own encoder decides what a value becomes before the runtime sees it",
  "not-json-infinity": "JSON-RPC carries JSON only: the server's own encoder decides what a value becomes before the runtime sees it",
  "not-json-map": "JSON-RPC carries JSON only: the server's own encoder decides what a value becomes before the runtime sees it",
  "not-json-nan": "JSON-RPC carries JSON only: the server's own encoder decides what a value becomes before the runtime sees it",
  "not-json-undefined": "JSON-RPC carries JSON only: the server's own encoder decides what a value becomes before the runtime sees it",
  "outcome-error-keeps-fields": "an MCP error result has no code, retryable or details: `isError: true` is always `tool_error` with its text",
  "reattach-refused-on-schema-mismatch": "a server that changed a tool's schemas ends later calls `digest_mismatch` (docs/mcp.md), not `reattach_mismatch`",
  "return-nothing-publishes-no-result": "a `tools/call` has no returned phase and no background finish",
  "return-then-background-finish-wakes-loop": "a `tools/call` has no returned phase and no background finish",
  "runtime-restart-between-frames": "a `tools/call` has no returned phase and no background finish",
};

/** The detail of a scenario reported n/a for this kind of subject (with the reason, for MCP). */
export function notApplicable(name: string, kind: SubjectKind): string {
  const why = kind === "mcp" ? NOT_FOR_MCP[name] : undefined;
  return why ? `n/a for mcp subjects: ${why}` : `n/a for ${kind} subjects`;
}
