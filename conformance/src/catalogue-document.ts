// conformance/catalogue.json — the machine-readable catalogue: every tool's name, description and
// JSON Schemas as the Node SDK advertises them, whether a component subject implements it, and what
// each catalogue variant changes. Runners of component subjects (which advertise nothing) take
// their contracts from it. It is written from subjects/catalogue-tools.ts, and a test fails when
// the file and the Node catalogue drift:
//   node --conditions=brain-source --import tsx conformance/src/catalogue-document.ts --write
import { writeFileSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ToolContract } from "@aexhq/brain-protocol";
import { catalogueFor } from "../subjects/catalogue-tools.ts";
import { packageRoot } from "./subject.ts";

export const CATALOGUE_FILE = join(packageRoot, "catalogue.json");

/**
 * Tools a brain:tool@0.2.0 component cannot have: `throw` (a trap carries no message through the
 * WIT), `slow_validation` (a component's input is checked by the runtime against JSON Schema, with
 * no asynchronous check), `versioned` (only a restarted host can change what it advertises) and
 * `environments` (components get no Environment control) and `digest_edges` (a component advertises
 * nothing: the runner computes its digests).
 */
const HOST_ONLY = new Set(["throw", "slow_validation", "versioned", "environments", "digest_edges"]);

/**
 * Capabilities: the catalogue's tools grouped by what a binding must implement. `core` is required
 * of every host binding (a scenario needing a core tool it lacks fails, naming it); the others are
 * optional (a scenario needing one the subject lacks is n/a, with the reason). A component is a
 * tool, not a binding: for component subjects every capability is optional.
 */
export const CAPABILITIES: Record<string, { required: boolean; description: string; tools: readonly string[] }> = {
  core: {
    required: true,
    description: "results, errors and outcome envelopes, input and output validation, events, background work after returning, deadlines, cancellation, reattachment",
    tools: ["echo", "fail", "throw", "reserved_data", "other_status", "malformed", "not_json", "typed_output", "typed_error", "defaults", "strict", "strip", "emit_then_finish", "emit_after_finish", "multi_result", "with_content", "return_then_finish", "return_nothing", "forget", "sleep", "sleep_then_finish", "big_emit", "versioned", "digest_edges"],
  },
  model: { required: false, description: "ctx.model: a tool asks the session's model (model_request)", tools: ["ask_model"] },
  environments: { required: false, description: "ctx.environments: Environment control (environment_request)", tools: ["environments"] },
  async_validation: { required: false, description: "an asynchronous input check that runs under the call's deadline", tools: ["slow_validation"] },
};

/** The capability a catalogue tool belongs to. */
export function capabilityOf(tool: string): string {
  for (const [name, c] of Object.entries(CAPABILITIES)) if (c.tools.includes(tool)) return name;
  throw new Error(`catalogue tool ${tool} belongs to no capability (CAPABILITIES in catalogue-document.ts)`);
}

export interface CatalogueTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  /** Whether a component subject implements it (placed with options `{ "tool": name }`). */
  component: boolean;
  /** The capability it belongs to (`capabilities`). */
  capability: string;
}

export interface CatalogueDocument {
  description: string;
  /** Which capabilities a host binding must implement (`required`) and which are optional, with their tools. */
  capabilities: Record<string, { required: boolean; description: string; tools: string[] }>;
  tools: CatalogueTool[];
  /** Per variant, per tool: the schemas that variant advertises instead. */
  variants: Record<string, Record<string, { inputSchema: Record<string, unknown>; outputSchema?: Record<string, unknown> }>>;
}

function entry(c: ToolContract): Omit<CatalogueTool, "component" | "capability"> {
  return { name: c.name, description: c.description, inputSchema: c.inputSchema, ...(c.outputSchema ? { outputSchema: c.outputSchema } : {}) };
}

export async function buildCatalogueDocument(): Promise<CatalogueDocument> {
  const plain = await Promise.all(catalogueFor(undefined).map((f) => f().tool.contract()));
  const changed = await Promise.all(catalogueFor("changed-schema").map((f) => f().tool.contract()));
  const variant: CatalogueDocument["variants"][string] = {};
  for (const c of changed) {
    const before = plain.find((p) => p.name === c.name)!;
    if (before.digest !== c.digest) variant[c.name] = { inputSchema: c.inputSchema, ...(c.outputSchema ? { outputSchema: c.outputSchema } : {}) };
  }
  return {
    description: "The conformance tool catalogue (conformance/CATALOGUE.md) as data: JSON Schemas exactly as the Node SDK advertises them. Written by conformance/src/catalogue-document.ts; do not edit by hand.",
    capabilities: Object.fromEntries(Object.entries(CAPABILITIES).map(([name, c]) => [name, { ...c, tools: [...c.tools] }])),
    tools: plain.map((c) => ({ ...entry(c), component: !HOST_ONLY.has(c.name), capability: capabilityOf(c.name) })),
    variants: { "changed-schema": variant },
  };
}

export function readCatalogueDocument(): CatalogueDocument {
  return JSON.parse(readFileSync(CATALOGUE_FILE, "utf8")) as CatalogueDocument;
}

const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain && process.argv.includes("--write")) {
  writeFileSync(CATALOGUE_FILE, `${JSON.stringify(await buildCatalogueDocument(), null, 2)}\n`);
  console.log(`wrote ${CATALOGUE_FILE}`);
}
