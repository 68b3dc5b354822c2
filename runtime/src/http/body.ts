import type { IncomingMessage } from "node:http";
import { LIMITS, issues, validate } from "@aexhq/brain-protocol";
import type { DefName } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import { checkJsonTextDepth, tooDeepDetails } from "../json-limits.ts";

/** Reads at most LIMITS.maxBodyBytes; a larger body is drained (so the client reads the 413) then refused. */
export function readBody(req: IncomingMessage, limit: number = LIMITS.maxBodyBytes): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
        // Stop draining an unbounded body eventually.
        if (size > limit * 4) req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (tooLarge) reject(new BrainRuntimeError("body_too_large", `request body exceeds ${limit} bytes`));
      else resolve(Buffer.concat(chunks).toString("utf8"));
    });
    req.on("error", reject);
    req.on("close", () => {
      if (tooLarge) reject(new BrainRuntimeError("body_too_large", `request body exceeds ${limit} bytes`));
    });
  });
}

/**
 * Parses and validates a body against its contract def. An empty body counts as `{}`. `explain`
 * may turn a contract failure into a more precise error (e.g. `unsupported`).
 */
export async function readValid<T>(req: IncomingMessage, def: DefName, explain?: (value: unknown) => BrainRuntimeError | undefined): Promise<T> {
  const text = await readBody(req);
  let value: unknown = {};
  if (text.trim() !== "") {
    // Before the parser and the validators: nothing recursive sees a body nested beyond the limit.
    const tooDeep = checkJsonTextDepth(text, "request body");
    if (tooDeep !== undefined) throw new BrainRuntimeError("invalid_request", tooDeep, tooDeepDetails());
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new BrainRuntimeError("malformed_json", `request body is not JSON: ${(e as Error).message}`, undefined, undefined, { cause: e });
    }
  }
  if (!validate[def].Check(value)) throw explain?.(value) ?? new BrainRuntimeError("invalid_request", `request body is not a valid ${def}`, issues(def, value));
  return value as T;
}
