import { canonicalJson } from "./json.ts";

export async function sha256Hex(bytes: Uint8Array | string): Promise<string> {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  const hash = await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(hash)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The contract digest (see contract/protocol.schema.json ToolContract): schemas only, absent ones as null. */
export function contractDigest(c: { name: string; inputSchema: object; outputSchema?: object; optionsSchema?: object }): Promise<string> {
  return sha256Hex(canonicalJson({ name: c.name, inputSchema: c.inputSchema, outputSchema: c.outputSchema ?? null, optionsSchema: c.optionsSchema ?? null }));
}
