import type { z } from "zod";
import { tool } from "../tool.ts";
import type { PlacedToolSpec } from "../tool.ts";
import { http } from "../env.ts";
import type { PlainHttpEnvironment } from "../env.ts";

/** What `httpTool` takes: a tool's contract and the plain-JSON endpoint that serves it. */
export interface HttpToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType | undefined = z.ZodType | undefined> {
  name: string;
  description: string;
  input: I;
  output?: O;
  /** The endpoint Brain POSTs each call's input to; its 2xx JSON answer is the tool's value. */
  url: string;
}

const KEYS = ["name", "description", "input", "output", "url"];

/**
 * Declares a tool served by a plain-JSON endpoint and places it there (the v1 `httpTool()`
 * placement): the result goes straight into `sessions.create({ tools })`. The same as
 * `tool({ name, description, input, output })({ env: http({ url }) })`. Wrong arguments are a
 * TypeError here.
 */
export function httpTool<I extends z.ZodType, O extends z.ZodType | undefined = undefined>(def: HttpToolDefinition<I, O>): PlacedToolSpec {
  if (typeof def !== "object" || def === null) throw new TypeError("httpTool() takes { name, description, input, output?, url }");
  const extra = Object.keys(def).find((k) => !KEYS.includes(k));
  if (extra !== undefined) {
    throw new TypeError(`httpTool ${String(def.name)}: unknown key ${JSON.stringify(extra)}; httpTool takes name, description, input, output and url (the endpoint runs the tool: no run, implementation or options)`);
  }
  const { url, ...contract } = def;
  const declared = tool(contract as { name: string; description: string; input: I; output?: O });
  let env: PlainHttpEnvironment;
  try {
    env = http({ url });
  } catch (e) {
    throw new TypeError(`httpTool ${def.name}: ${(e as Error).message}`);
  }
  return declared({ env } as never);
}
