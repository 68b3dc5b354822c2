// Builds conformance/component/catalogue.js into a brain:tool@0.2.0 component with componentize-js
// (the approach of scripts/build-components.mjs), cached in node_modules/.cache/brain-components
// under a hash of its inputs, so only the first build costs its ~20 s.
//
//   npm run build:component -w conformance         # prints the .wasm path
//   import { buildCatalogueComponent } from "../src/component-build.ts"
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = join(dirname(fileURLToPath(import.meta.url)), "..", "component");
const ROOT = join(HERE, "..", "..");
const CACHE = process.env.BRAIN_COMPONENT_CACHE ?? join(ROOT, "node_modules", ".cache", "brain-components");
const SOURCE = join(HERE, "catalogue.js");
const WORLD = join(HERE, "wit", "world.wit");
const TOOL_WIT = join(ROOT, "contract", "tool.wit");
const RECIPE = "1";

/** Builds (or finds in the cache) the catalogue component; returns its path. */
export async function buildCatalogueComponent(): Promise<{ path: string; cached: boolean }> {
  const componentize = join(ROOT, "node_modules", "@bytecodealliance", "componentize-js", "package.json");
  const version = JSON.parse(readFileSync(componentize, "utf8")).version;
  const h = createHash("sha256").update(RECIPE).update(version);
  for (const p of [SOURCE, WORLD, TOOL_WIT]) h.update(readFileSync(p)).update("\0");
  const out = join(CACHE, `conformance-catalogue-js-${h.digest("hex").slice(0, 16)}.wasm`);
  if (existsSync(out)) return { path: out, cached: true };
  const { componentize: build } = await import("@bytecodealliance/componentize-js");
  const dir = mkdtempSync(join(tmpdir(), "brain-conformance-js-"));
  try {
    writeFileSync(join(dir, "world.wit"), readFileSync(WORLD));
    mkdirSync(join(dir, "deps", "brain-tool"), { recursive: true });
    writeFileSync(join(dir, "deps", "brain-tool", "tool.wit"), readFileSync(TOOL_WIT));
    const { component } = await build({
      sourcePath: SOURCE,
      witPath: dir,
      worldName: "catalogue",
      // No fetch/HTTP: the binding does not allow wasi:http.
      disableFeatures: ["http", "fetch-event"],
    });
    mkdirSync(CACHE, { recursive: true });
    const tmp = `${out}.${process.pid}.tmp`;
    writeFileSync(tmp, component);
    renameSync(tmp, out);
    return { path: out, cached: false };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t0 = Date.now();
  buildCatalogueComponent().then(
    (r) => console.log(`${r.path}${r.cached ? " (cached)" : ` (built in ${Date.now() - t0} ms)`}`),
    (e: Error) => {
      console.error(e?.stack ?? e);
      process.exit(1);
    },
  );
}
