import type { PlacedTool, ToolContract } from "@aexhq/brain-protocol";
import { contractDigest } from "../../src/index.ts";

export function contract(name: string, inputSchema: Record<string, unknown> = { type: "object" }): ToolContract {
  const c = { name, description: `the ${name} tool`, inputSchema };
  return { ...c, digest: contractDigest(c) };
}

export function placed(c: ToolContract, hostId: string): PlacedTool {
  return { contract: c, options: {}, placement: { kind: "host", hostId } };
}
