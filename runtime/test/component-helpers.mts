// Shared setup for the component tests (a .mts so uvu does not run it as a suite).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { PlacedTool, ToolContract } from "@aexhq/brain-protocol";
import { contractDigest } from "../src/index.ts";
// @ts-ignore: a plain .mjs build script without declarations.
import { buildComponents } from "../../scripts/build-components.mjs";
// @ts-ignore: a plain .mjs script without declarations.
import { rustUnavailable, skipNotice } from "../../scripts/rust-toolchain.mjs";

/** Why the Rust example cannot be built on this machine, or undefined (see scripts/rust-toolchain.mjs). */
export const rustMissing: string | undefined = rustUnavailable();
export { skipNotice };

export interface Built {
  /** Absent when rustMissing. */
  rust: string;
  js: string;
  fixtures: Record<string, string>;
}

let built: Promise<Built> | undefined;
/** Builds (or reuses from the cache) the example components and fixtures once per process. */
export function components(): Promise<Built> {
  return (built ??= buildComponents({ rust: rustMissing === undefined }));
}

export function digestOf(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** PUT the bytes of `path`; returns status and body. */
export async function upload(brain: { url: string; token: string }, path: string): Promise<{ status: number; body: any; digest: string }> {
  const bytes = readFileSync(path);
  const digest = digestOf(path);
  const res = await fetch(`${brain.url}/v1/components/${digest}`, { method: "PUT", headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/wasm" }, body: bytes });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, digest };
}

export function inspectContract(outputSchema?: Record<string, unknown>, name = "inspect"): ToolContract {
  const c: Omit<ToolContract, "digest"> = {
    name,
    description: "Inspect one path.",
    inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false },
    optionsSchema: { type: "object", properties: { depth: { type: "integer", exclusiveMinimum: 0 } }, required: ["depth"], additionalProperties: false },
  };
  if (outputSchema) c.outputSchema = outputSchema;
  return { ...c, digest: contractDigest(c) };
}

export function placedComponent(contract: ToolContract, digest: string, env: string, options: unknown, workspace?: "read" | "write"): PlacedTool {
  const placement: PlacedTool["placement"] = { kind: "component", env, digest };
  if (workspace) placement.filesystem = { workspace };
  return { contract, options: options as PlacedTool["options"], placement };
}
