// A component subject (`--subject component:<file.wasm>`): no process and no registration. The
// runner uploads the file, takes the contracts from conformance/catalogue.json, and places every
// catalogue tool the component implements on that one file, with options `{ "tool": <name> }`
// telling the component's single `run` which catalogue tool this call is.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { contractDigest } from "@aexhq/brain-runtime";
import type { ErrorBody, PlacedTool, ToolContract } from "@aexhq/brain-protocol";
import type { RuntimeApi } from "./http.ts";
import { readCatalogueDocument } from "./catalogue-document.ts";

/** The brainEnv binding name the runner places component tools in. */
export const COMPONENT_ENV = "conformance";

/** Uploads the component (PUT /v1/components/:digest); returns its digest once admitted. */
export async function uploadComponent(api: RuntimeApi, file: string): Promise<string> {
  const bytes = readFileSync(file);
  const digest = createHash("sha256").update(bytes).digest("hex");
  const res = await api.put<ErrorBody | { status: string }>(`/v1/components/${digest}`, bytes, "application/wasm");
  if (res.status >= 400) {
    const error = (res.body as ErrorBody | undefined)?.error;
    throw new Error(`PUT /v1/components/${digest} → ${res.status} ${error?.code ?? ""}: ${error?.message ?? JSON.stringify(res.body)}`);
  }
  return digest;
}

/** The options schema every component catalogue tool advertises: which catalogue tool to be. */
export function toolOptionsSchema(name: string): Record<string, unknown> {
  return { type: "object", properties: { tool: { const: name } }, required: ["tool"], additionalProperties: false };
}

/** Contracts of the catalogue tools a component implements, by name. */
export function componentContracts(): Map<string, ToolContract> {
  const out = new Map<string, ToolContract>();
  for (const t of readCatalogueDocument().tools.filter((t) => t.component)) {
    const schemas = { name: t.name, inputSchema: t.inputSchema, ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}), optionsSchema: toolOptionsSchema(t.name) };
    out.set(t.name, { ...schemas, description: t.description, digest: contractDigest(schemas) });
  }
  return out;
}

export function componentPlacement(contract: ToolContract, digest: string): PlacedTool {
  return { contract, options: { tool: contract.name }, placement: { kind: "component", env: COMPONENT_ENV, digest } };
}
