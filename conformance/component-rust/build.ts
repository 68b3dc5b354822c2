// Builds conformance/component-rust/src/lib.rs into a brain:tool@0.2.0 component, the way
// scripts/build-components.mjs builds examples/inspect-rust (Debian's /usr/bin/rustc for
// wasm32-unknown-unknown, then jco componentEmbed + componentNew from bytes), cached in
// node_modules/.cache/brain-components under a hash of its sources (≈ 1 s the first time).
//
//   node --conditions=brain-source --import tsx conformance/component-rust/build.ts   # prints the path
//   import { buildRustCatalogueComponent } from "../component-rust/build.ts"
//
// (build-components.mjs exports only its fixed builds, so the few lines are repeated here.)
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..", "..");
const CACHE = process.env.BRAIN_COMPONENT_CACHE ?? join(ROOT, "node_modules", ".cache", "brain-components");
const RUSTC = process.env.BRAIN_RUSTC ?? "/usr/bin/rustc";
const SOURCE = join(HERE, "src", "lib.rs");
const WORLD = join(HERE, "wit", "world.wit");
const CLOCKS = join(HERE, "wit", "clocks.wit");
const TOOL_WIT = join(ROOT, "contract", "tool.wit");
// Bumped when the build steps themselves change, so old cache entries are not reused.
const RECIPE = "1";

/**
 * One WIT source for jco's embed, which reads a single string (a WIT folder path fails inside
 * its sandbox): our world, then contract/tool.wit and the clocks subset as nested packages.
 */
function witSource(): string {
  const tool = readFileSync(TOOL_WIT, "utf8");
  const header = /^package brain:tool@0\.2\.0;$/m;
  if (!header.test(tool)) throw new Error(`${TOOL_WIT} no longer starts its package with "package brain:tool@0.2.0;"`);
  return [readFileSync(WORLD, "utf8"), `${tool.replace(header, "package brain:tool@0.2.0 {")}\n}`, readFileSync(CLOCKS, "utf8")].join("\n");
}

/** Builds (or finds in the cache) the Rust catalogue component; returns its path. */
export async function buildRustCatalogueComponent(): Promise<{ path: string; cached: boolean; ms: number }> {
  const t0 = Date.now();
  const h = createHash("sha256").update(RECIPE);
  for (const p of [SOURCE, WORLD, CLOCKS, TOOL_WIT]) h.update(readFileSync(p)).update("\0");
  const out = join(CACHE, `conformance-catalogue-rust-${h.digest("hex").slice(0, 16)}.wasm`);
  if (existsSync(out)) return { path: out, cached: true, ms: Date.now() - t0 };
  if (!existsSync(RUSTC)) throw new Error(`${RUSTC} not found: install Debian's rustc and libstd-rust-dev-wasm32 (see .ci/run)`);
  const dir = mkdtempSync(join(tmpdir(), "brain-conformance-rust-"));
  try {
    const core = join(dir, "catalogue.core.wasm");
    const r = spawnSync(RUSTC, ["--edition", "2021", "--target", "wasm32-unknown-unknown", "--crate-type", "cdylib", "-O",
      "-C", "panic=abort", "-C", "strip=symbols", "-C", "debuginfo=0", "-o", core, SOURCE], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`rustc failed:\n${r.stderr}`);
    const { componentEmbed, componentNew } = await import("@bytecodealliance/jco-transpile/wasm-tools");
    const embedded = await componentEmbed({ binary: readFileSync(core), witSource: witSource(), world: "catalogue" });
    const component = await componentNew(embedded);
    mkdirSync(CACHE, { recursive: true });
    const tmp = `${out}.${process.pid}.tmp`;
    writeFileSync(tmp, component);
    renameSync(tmp, out);
    return { path: out, cached: false, ms: Date.now() - t0 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildRustCatalogueComponent().then(
    (r) => console.log(`${r.path}${r.cached ? " (cached)" : ` (built in ${r.ms} ms)`}`),
    (e: Error) => {
      console.error(e?.stack ?? e);
      process.exit(1);
    },
  );
}
