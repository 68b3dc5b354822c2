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
 * `environments` (components get no Environment control).
 */
const HOST_ONLY = new Set(["throw", "slow_validation", "versioned", "environments"]);

export interface CatalogueTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  /** Whether a component subject implements it (placed with options `{ "tool": name }`). */
  component: boolean;
}

export interface CatalogueDocument {
  description: string;
  tools: CatalogueTool[];
  /** Per variant, per tool: the schemas that variant advertises instead. */
  variants: Record<string, Record<string, { inputSchema: Record<string, unknown>; outputSchema?: Record<string, unknown> }>>;
}

function entry(c: ToolContract): Omit<CatalogueTool, "component"> {
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
    tools: plain.map((c) => ({ ...entry(c), component: !HOST_ONLY.has(c.name) })),
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
