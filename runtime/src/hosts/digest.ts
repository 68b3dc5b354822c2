import { createHash } from "node:crypto";
import type { ToolContract } from "@aexhq/brain-protocol";

/** Canonical JSON: recursively sorted object keys, no whitespace. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
}

/** The contract digest: sha256 hex of the canonical {name, inputSchema, outputSchema, optionsSchema}, absent schemas as null. */
export function contractDigest(contract: Omit<ToolContract, "digest" | "description"> & { description?: string }): string {
  const body = {
    name: contract.name,
    inputSchema: contract.inputSchema ?? null,
    outputSchema: contract.outputSchema ?? null,
    optionsSchema: contract.optionsSchema ?? null,
  };
  return createHash("sha256").update(canonicalJson(body)).digest("hex");
}
