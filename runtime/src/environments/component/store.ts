import { copyFileSync, existsSync, linkSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ErrorInfo } from "@aexhq/brain-protocol";
import { parseWorld, worldProblems } from "./world.ts";
import { DigestStore } from "../digest-store.ts";
import type { DigestAdmission, SharedUploads } from "../digest-store.ts";

/** What admission concluded about one component: its world's imports, and how long it took. */
export type Admission = DigestAdmission<{ imports: string[]; admittedAt: number; admitMs: number }>;

/**
 * Component bytes, admission results and jco transpilations, by sha256 digest, on disk:
 *   <dir>/<digest>.wasm         the uploaded bytes (admitted ones; DigestStore.keptFile)
 *   <dir>/<digest>.json         the Admission
 *   <dir>/<digest>/component.js + core wasm files (jco transpile output, instantiation "async")
 * Admission runs once per digest (at upload); a restart reuses everything already on disk.
 */
export class ComponentStore extends DigestStore<{ imports: string[]; admittedAt: number; admitMs: number }> {
  /**
   * `transpileCache`: a folder shared with other servers, <cache>/<digest>-<recipe>/ (see cachedAdmit);
   * `shared`: several nodes keep uploads for each other (digest-store.ts).
   */
  constructor(dir: string, transpileCache?: string, shared?: SharedUploads) {
    super(dir, "wasm", async (digest, file) => {
      const t0 = performance.now();
      // Decoding and transpiling need the whole component: it is read once, here (the upload itself
      // was streamed to `file`, which is where the store keeps it).
      const bytes = readFileSync(file);
      const result = transpileCache === undefined ? await admitBytes(digest, bytes, join(dir, digest)) : await cachedAdmit(transpileCache, digest, bytes, join(dir, digest), file);
      if (!result.ok) return { status: "refused", digest, error: result.error };
      return { status: "admitted", digest, imports: result.imports, admittedAt: Date.now(), admitMs: Math.round(performance.now() - t0) };
    }, shared);
  }

  /** The folder holding component.js for an admitted digest. */
  transpiledDir(digest: string): string {
    return join(this.dir, digest);
  }
}

/**
 * What changes the transpilation of given bytes besides the bytes: jco-transpile's version and our
 * options (bump the last part when transpileBytes' options below change). A cache entry of another
 * recipe is never used.
 */
let recipe: string | undefined;
function transpileRecipe(): string {
  if (recipe === undefined) {
    let version = "unknown";
    try {
      const main = fileURLToPath(import.meta.resolve("@bytecodealliance/jco-transpile"));
      version = (JSON.parse(readFileSync(join(dirname(main), "..", "package.json"), "utf8")) as { version: string }).version;
    } catch {
      // Not found: entries are keyed "unknown"; only installs that cannot tell their version share them.
    }
    recipe = `jco-transpile-${version}-async-hybrid-2`;
  }
  return recipe;
}

/**
 * Admission through a folder of transpilations shared by servers: <cache>/<digest>-<recipe>/ holds
 * admission.json ({imports}), the transpiled files of bytes that hashed to the digest (the upload
 * route checked that) and those bytes (component.wasm). A hit links the files and the bytes into
 * place (no world decoding, no jco, nothing written: the 12 MB inspect-js component's bytes were
 * ~15-40 ms of an ~80 ms re-admission); a miss admits as usual and adds the entry (written to a
 * temporary folder, renamed into place: a concurrent writer's entry is as good). Only admitted bytes are cached; a refusal is recomputed.
 */
async function cachedAdmit(cache: string, digest: string, bytes: Uint8Array, outDir: string, bytesPath: string): Promise<AdmitResult> {
  const entry = join(cache, `${digest}-${transpileRecipe()}`);
  if (existsSync(join(entry, "admission.json"))) {
    try {
      const { imports } = JSON.parse(readFileSync(join(entry, "admission.json"), "utf8")) as { imports: string[] };
      rmSync(outDir, { recursive: true, force: true });
      linkTree(join(entry, "files"), outDir);
      // The uploaded bytes too (entries made before they were kept: written by the caller).
      const cached = join(entry, "component.wasm");
      const bytesPlaced = existsSync(cached) && statSync(cached).size === bytes.byteLength && linkOrCopy(cached, bytesPath);
      return { ok: true, imports, bytesPlaced };
    } catch {
      // A damaged entry: admit the bytes again and replace it.
    }
  }
  const result = await admitBytes(digest, bytes, outDir);
  if (!result.ok) return result;
  writeFileSync(bytesPath, bytes);
  const tmp = `${entry}.${process.pid}.${Date.now()}.tmp`;
  try {
    mkdirSync(cache, { recursive: true });
    linkTree(outDir, join(tmp, "files"));
    linkOrCopy(bytesPath, join(tmp, "component.wasm"));
    writeFileSync(join(tmp, "admission.json"), JSON.stringify({ imports: result.imports }));
    rmSync(entry, { recursive: true, force: true });
    renameSync(tmp, entry);
  } catch {
    // The cache is an optimisation: a folder we cannot write (or another server's entry renamed
    // into place first) leaves admission as it was.
    rmSync(tmp, { recursive: true, force: true });
  }
  return { ...result, bytesPlaced: true };
}

/**
 * The cached files at `to` as hard links: an entry is written once, in a temporary folder renamed
 * into place, and never changed after, so sharing its files is safe and costs no copy (the 12 MB
 * inspect-js transpilation: ~15 ms copied, ~0.5 ms linked). A copy where linking fails (the cache
 * on another filesystem).
 */
function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    const src = join(from, e.name);
    const dst = join(to, e.name);
    if (e.isDirectory()) linkTree(src, dst);
    else linkOrCopy(src, dst);
  }
}

/** `to` as a hard link to `from`, else a copy (another filesystem, or `to` exists). Returns true. */
function linkOrCopy(from: string, to: string): true {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
  return true;
}

/** `bytesPlaced`: the uploaded bytes are in the store already (written or linked from the cache). */
type AdmitResult = { ok: true; imports: string[]; bytesPlaced?: boolean } | { ok: false; error: ErrorInfo };

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
    // "hybrid": imports that carry a raw lowering skip jco's per-call glue (worker.mjs, the clocks).
    const r = await transpileBytes(bytes, { name: "component", instantiation: "async", importBindings: "hybrid", emitTypescriptDeclarations: false, wasiShim: false, minify: false, optimize: false });
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
