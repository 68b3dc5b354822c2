import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ErrorInfo } from "@aexhq/brain-protocol";
import { parseWorld, worldProblems } from "./world.ts";
import { DigestStore } from "../digest-store.ts";
import type { DigestAdmission, SharedUploads } from "../digest-store.ts";

/** What admission concluded about one component: its world's imports, and how long it took. */
export type Admission = DigestAdmission<{ imports: string[]; admittedAt: number; admitMs: number }>;

/**
 * Component bytes, admission results and jco transpilations, by sha256 digest, on disk:
 *   <dir>/<digest>.wasm         the uploaded bytes (admitted ones)
 *   <dir>/<digest>.json         the Admission
 *   <dir>/<digest>/component.js + core wasm files (jco transpile output, instantiation "async")
 * Admission runs once per digest (at upload); a restart reuses everything already on disk.
 */
export class ComponentStore extends DigestStore<{ imports: string[]; admittedAt: number; admitMs: number }> {
  constructor(dir: string, shared?: SharedUploads) {
    super(dir, async (digest, bytes) => {
      const t0 = performance.now();
      const result = await admitBytes(digest, bytes, join(dir, digest));
      if (!result.ok) return { status: "refused", digest, error: result.error };
      writeFileSync(join(dir, `${digest}.wasm`), bytes);
      return { status: "admitted", digest, imports: result.imports, admittedAt: Date.now(), admitMs: Math.round(performance.now() - t0) };
    }, shared);
  }

  /** The folder holding component.js for an admitted digest. */
  transpiledDir(digest: string): string {
    return join(this.dir, digest);
  }
}

type AdmitResult = { ok: true; imports: string[] } | { ok: false; error: ErrorInfo };

/** Decode the component's world, check it against brain:tool@0.2.0, then transpile it with jco. */
async function admitBytes(digest: string, bytes: Uint8Array, outDir: string): Promise<AdmitResult> {
  const { componentWit } = await import("@bytecodealliance/jco-transpile/wasm-tools");
  const { transpileBytes } = await import("@bytecodealliance/jco-transpile");
  let wit: string;
  try {
    wit = await componentWit(bytes);
  } catch (e) {
    return { ok: false, error: { code: "invalid_request", message: `component ${digest} is not a WebAssembly component: ${firstLine(e)}` } };
  }
  const world = parseWorld(wit);
  const problems = worldProblems(world);
  if (problems) {
    const parts = [
      problems.missing.length ? `missing ${problems.missing.join(", ")}` : "",
      problems.extra.length ? `extra ${problems.extra.join(", ")}` : "",
    ].filter(Boolean);
    return {
      ok: false,
      error: { code: "invalid_request", message: `component ${digest} does not implement brain:tool@0.2.0 world tool: ${parts.join("; ")}`, details: problems },
    };
  }
  try {
    const r = await transpileBytes(bytes, { name: "component", instantiation: "async", emitTypescriptDeclarations: false, wasiShim: false, minify: false, optimize: false });
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
    for (const [name, data] of Object.entries(r.files)) writeFileSync(join(outDir, name), data);
  } catch (e) {
    return { ok: false, error: { code: "invalid_request", message: `component ${digest} could not be transpiled: ${firstLine(e)}` } };
  }
  return { ok: true, imports: world.imports };
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split("\n").filter((l) => l.trim()).slice(0, 3).join(" / ");
}
