import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ErrorInfo } from "@aexhq/brain-protocol";
import { parseWorld, worldProblems } from "./world.ts";

/** What admission concluded about one digest; persisted beside the bytes. */
export type Admission =
  | { status: "admitted"; digest: string; imports: string[]; admittedAt: number; admitMs: number }
  | { status: "refused"; digest: string; error: ErrorInfo };

/**
 * Component bytes, admission results and jco transpilations, by sha256 digest, on disk:
 *   <dir>/<digest>.wasm         the uploaded bytes
 *   <dir>/<digest>.json         the Admission
 *   <dir>/<digest>/component.js + core wasm files (jco transpile output, instantiation "async")
 * Admission runs once per digest (at upload); a restart reuses everything already on disk.
 */
export class ComponentStore {
  private admissions = new Map<string, Admission>();
  private pending = new Map<string, Promise<Admission>>();

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  has(digest: string): boolean {
    return this.get(digest) !== undefined;
  }

  get(digest: string): Admission | undefined {
    let a = this.admissions.get(digest);
    if (a === undefined && /^[0-9a-f]{64}$/.test(digest) && existsSync(join(this.dir, `${digest}.json`))) {
      a = JSON.parse(readFileSync(join(this.dir, `${digest}.json`), "utf8")) as Admission;
      this.admissions.set(digest, a);
    }
    return a;
  }

  /** The folder holding component.js for an admitted digest. */
  transpiledDir(digest: string): string {
    return join(this.dir, digest);
  }

  /** Stores and admits bytes whose sha256 must equal `digest`. Idempotent per digest. */
  put(digest: string, bytes: Uint8Array): Promise<Admission> {
    const known = this.get(digest);
    if (known) return Promise.resolve(known);
    const inflight = this.pending.get(digest);
    if (inflight) return inflight;
    const p = this.admit(digest, bytes).finally(() => this.pending.delete(digest));
    this.pending.set(digest, p);
    return p;
  }

  private async admit(digest: string, bytes: Uint8Array): Promise<Admission> {
    const t0 = performance.now();
    const result = await admitBytes(digest, bytes, this.transpiledDir(digest));
    const a: Admission = result.ok
      ? { status: "admitted", digest, imports: result.imports, admittedAt: Date.now(), admitMs: Math.round(performance.now() - t0) }
      : { status: "refused", digest, error: result.error };
    if (a.status === "admitted") writeFileSync(join(this.dir, `${digest}.wasm`), bytes);
    const tmp = join(this.dir, `${digest}.json.tmp`);
    writeFileSync(tmp, JSON.stringify(a));
    renameSync(tmp, join(this.dir, `${digest}.json`));
    this.admissions.set(digest, a);
    return a;
  }
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
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
