// An HTTP subject (`--subject http` or `http-command:<cmd>`): a process that serves the catalogue
// over brain.http/0.2 on a loopback port the runner picks. Like a component it registers nothing,
// so the contracts come from conformance/catalogue.json.
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { contractDigest } from "@aexhq/brain-runtime";
import type { ToolContract } from "@aexhq/brain-protocol";
import { readCatalogueDocument } from "./catalogue-document.ts";

/** A loopback port free right now (the subject binds it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something answers HTTP at `origin`. */
export async function waitListening(origin: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      await (await fetch(origin, { method: "GET" })).body?.cancel();
      return;
    } catch {
      if (Date.now() > until) throw new Error(`the HTTP subject did not listen on ${origin} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Contracts of the catalogue an HTTP subject serves, by name: every tool but `versioned` (variants need a host). */
export function httpContracts(): Map<string, ToolContract> {
  const out = new Map<string, ToolContract>();
  for (const t of readCatalogueDocument().tools.filter((t) => t.name !== "versioned")) {
    const schemas = { name: t.name, inputSchema: t.inputSchema, ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}) };
    out.set(t.name, { ...schemas, description: t.description, digest: contractDigest(schemas) });
  }
  return out;
}
