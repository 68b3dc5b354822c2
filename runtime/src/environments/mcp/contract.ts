import type { ToolContract } from "@aexhq/brain-protocol";
import { contractDigest } from "../../hosts/digest.ts";
import type { WireTool } from "./wire-types.ts";

/** One tool of a server as Brain places it: its MCP name and its Brain contract. */
export interface McpToolContract {
  tool: string;
  contract: ToolContract;
}

const BRAIN_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
// The advertised schemas travel in every session and model request: a bound keeps one server from bloating them.
const MAX_SCHEMA_BYTES = 256 * 1024;

/**
 * The Brain name of an MCP tool: the MCP name when Brain allows it, else that name with every
 * other character made "_", a "t_" prefix when it does not start with a letter, cut to 64.
 */
export function brainName(mcpName: string): string {
  if (BRAIN_NAME.test(mcpName)) return mcpName;
  const cleaned = mcpName.replace(/[^a-zA-Z0-9_-]/g, "_");
  return (/^[a-zA-Z]/.test(cleaned) ? cleaned : `t_${cleaned}`).slice(0, 64);
}

/** Why Brain cannot represent this schema, or undefined: only local $refs (nothing is fetched), a JSON object, bounded size. */
function unrepresentable(schema: unknown, which: string, mustBeObjectType: boolean): string | undefined {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return `its ${which} is not a JSON Schema object`;
  if (mustBeObjectType && (schema as { type?: unknown }).type !== "object") return `its ${which} does not have type "object" (MCP requires it)`;
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch {
    return `its ${which} is not JSON`;
  }
  if (text.length > MAX_SCHEMA_BYTES) return `its ${which} is larger than ${MAX_SCHEMA_BYTES} bytes`;
  let problem: string | undefined;
  const walk = (v: unknown, depth: number): void => {
    if (problem !== undefined || v === null || typeof v !== "object") return;
    if (depth > 64) {
      problem = `its ${which} nests deeper than 64 levels`;
      return;
    }
    if (Array.isArray(v)) return v.forEach((x) => walk(x, depth + 1));
    for (const [k, x] of Object.entries(v)) {
      if ((k === "$ref" || k === "$dynamicRef") && (typeof x !== "string" || !x.startsWith("#"))) {
        problem = `its ${which} has ${k} ${JSON.stringify(x)}: only references inside the schema ("#…") can be checked, nothing is fetched`;
        return;
      }
      walk(x, depth + 1);
    }
  };
  walk(schema, 0);
  return problem;
}

/** The Brain contract of one listed tool, or why it cannot be placed. */
export function contractOf(t: WireTool, name: string = brainName(t.name)): ToolContract | { reason: string } {
  const problem = unrepresentable(t.inputSchema, "inputSchema", true) ?? (t.outputSchema === undefined ? undefined : unrepresentable(t.outputSchema, "outputSchema", false));
  if (problem !== undefined) return { reason: problem };
  const base = {
    name,
    // ToolContract requires a description; MCP does not (it is not part of the digest).
    description: t.description ?? "",
    inputSchema: t.inputSchema as Record<string, unknown>,
    ...(t.outputSchema === undefined ? {} : { outputSchema: t.outputSchema as Record<string, unknown> }),
  };
  return { ...base, digest: contractDigest(base) } as ToolContract;
}

/** Every listed tool as a contract, and those that cannot be placed with the reason (a name two tools would share, a schema Brain cannot check). */
export function listContracts(tools: readonly WireTool[]): { tools: McpToolContract[]; skipped: { tool: string; reason: string }[] } {
  const out: McpToolContract[] = [];
  const skipped: { tool: string; reason: string }[] = [];
  const taken = new Map<string, string>();
  for (const t of tools) {
    const c = contractOf(t);
    if ("reason" in c) {
      skipped.push({ tool: t.name, reason: c.reason });
      continue;
    }
    const other = taken.get(c.name);
    if (other !== undefined) {
      skipped.push({ tool: t.name, reason: `its Brain name ${c.name} is already the name of ${other}` });
      continue;
    }
    taken.set(c.name, t.name);
    out.push({ tool: t.name, contract: c });
  }
  return { tools: out, skipped };
}
