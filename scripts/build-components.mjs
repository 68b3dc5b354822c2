#!/usr/bin/env node
// Builds the brain:tool@0.2.0 example components (examples/inspect-rust, examples/inspect-js) and
// the runtime's WAT test fixtures into a cache directory keyed by a hash of their sources, so a
// second run (or a second test file) costs nothing. Built artifacts are never committed.
//
//   node scripts/build-components.mjs            # build all, print the paths as JSON
//   node scripts/build-components.mjs inspect-js # one example only (also inspect-rust)
//   BRAIN_COMPONENT_CACHE=/some/dir ...          # where the .wasm files go (default node_modules/.cache/brain-components)
//   import { buildComponents } from "../../scripts/build-components.mjs"
//
// Rust: Debian's /usr/bin/rustc with libstd-rust-dev-wasm32 (the rustup rustc on PATH usually has
// no wasm32 target), then jco's componentEmbed + componentNew (programmatic API with bytes: the
// path-reading jco CLI commands fail with "os error 44").
// JS: componentize-js 0.23 against examples/inspect-js/wit (which includes contract/tool.wit).
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const CACHE = process.env.BRAIN_COMPONENT_CACHE ?? join(ROOT, "node_modules", ".cache", "brain-components");
const TOOL_WIT = join(ROOT, "contract", "tool.wit");
import { RUSTC, rustUnavailable } from "./rust-toolchain.mjs";
export { rustUnavailable };
// Bumped when the build steps themselves change, so old cache entries are not reused.
const RECIPE = "2";

function files(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name))
    .sort();
}

function hashOf(paths, extra = "") {
  const h = createHash("sha256").update(RECIPE).update(extra);
  for (const p of paths) h.update(relative(ROOT, p)).update("\0").update(readFileSync(p)).update("\0");
  return h.digest("hex").slice(0, 16);
}

/** Runs `make(tmpFile)` unless the cache already holds `name-hash.wasm`; the write is atomic. With `cachedOnly`, returns undefined instead of building. */
async function cached(name, hash, make, cachedOnly = false) {
  mkdirSync(CACHE, { recursive: true });
  const out = join(CACHE, `${name}-${hash}.wasm`);
  if (existsSync(out)) return { path: out, cached: true };
  if (cachedOnly) return undefined;
  const bytes = await make();
  const tmp = `${out}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, out);
  return { path: out, cached: false };
}

/** `extraWit` is appended to contract/tool.wit (a world including `tool`, packages nested in the same text). */
async function embedAndNew(core, { world = "tool", extraWit = "" } = {}) {
  const { componentEmbed, componentNew } = await import("@bytecodealliance/jco-transpile/wasm-tools");
  const embedded = await componentEmbed({ binary: core, witSource: `${readFileSync(TOOL_WIT, "utf8")}\n${extraWit}`, world });
  return componentNew(embedded);
}

export async function buildRust() {
  const src = join(ROOT, "examples", "inspect-rust", "src", "lib.rs");
  return cached("inspect-rust", hashOf([src, TOOL_WIT]), async () => {
    const missing = rustUnavailable();
    if (missing) throw new Error(missing);
    const dir = mkdtempSync(join(tmpdir(), "brain-rust-"));
    try {
      const core = join(dir, "inspect.core.wasm");
      const r = spawnSync(RUSTC, ["--edition", "2021", "--target", "wasm32-unknown-unknown", "--crate-type", "cdylib", "-O",
        "-C", "panic=abort", "-C", "strip=symbols", "-C", "debuginfo=0", "-o", core, src], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`rustc failed:\n${r.stderr}`);
      return embedAndNew(readFileSync(core));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/**
 * componentize-js one JS source against a WIT folder (a world plus deps; contract/tool.wit is
 * added as deps/brain-tool), cached by a hash of `inputs` and the componentize-js version.
 */
async function componentizeJs(name, { source, witDir, worldName, inputs }, cachedOnly = false) {
  const version = JSON.parse(readFileSync(join(ROOT, "node_modules", "@bytecodealliance", "componentize-js", "package.json"), "utf8")).version;
  return cached(name, hashOf(inputs, version), async () => {
    const { componentize } = await import("@bytecodealliance/componentize-js");
    // componentize-js reads a WIT folder: the world and its deps, plus contract/tool.wit.
    const dir = mkdtempSync(join(tmpdir(), "brain-js-"));
    try {
      for (const f of files(witDir)) {
        const to = join(dir, relative(witDir, f));
        mkdirSync(dirname(to), { recursive: true });
        writeFileSync(to, readFileSync(f));
      }
      mkdirSync(join(dir, "deps", "brain-tool"), { recursive: true });
      writeFileSync(join(dir, "deps", "brain-tool", "tool.wit"), readFileSync(TOOL_WIT));
      // Copied to a .js name: test fixtures are stored under another extension so that uvu's
      // default pattern (any .js under test/) does not load them as suites.
      const sourcePath = join(dir, "guest.js");
      writeFileSync(sourcePath, readFileSync(source));
      const { component } = await componentize({
        sourcePath,
        witPath: dir,
        worldName,
        // No fetch/HTTP: the binding does not allow wasi:http.
        disableFeatures: ["http", "fetch-event"],
      });
      return component;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, cachedOnly);
}

/** `{ cachedOnly: true }`: only the cached build, or undefined (the cold build takes ~20 s; the bench's --quick skips it). */
export async function buildJs({ cachedOnly = false } = {}) {
  const base = join(ROOT, "examples", "inspect-js");
  const inputs = [...files(join(base, "src")), ...files(join(base, "wit")), TOOL_WIT];
  return componentizeJs("inspect-js", { source: join(base, "src", "inspect.js"), witDir: join(base, "wit"), worldName: "inspect", inputs }, cachedOnly);
}

/** The WAT fixtures of runtime/test/component-fixtures, each embedded into the tool world. */
/** `{ js: false }` skips the componentize-js fixture (a cold build takes ~20 s). */
export async function buildFixtures({ js = true } = {}) {
  const dir = join(ROOT, "runtime", "test", "component-fixtures");
  const { parse } = await import("@bytecodealliance/jco-transpile/wasm-tools");
  const out = {};
  for (const f of readdirSync(dir).filter((n) => n.endsWith(".wat")).sort()) {
    const p = join(dir, f);
    const name = f.replace(/\.wat$/, "");
    out[name] = (await cached(`fixture-${name}`, hashOf([p, TOOL_WIT]), async () => embedAndNew(await parse(readFileSync(p, "utf8"))))).path;
  }
  // Folders holding module.wat + world.wit: a core module whose world imports more than the tool
  // world (WASI outside the grant, stderr); world.wit names its world after the folder.
  for (const name of readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory() && existsSync(join(dir, e.name, "module.wat"))).map((e) => e.name).sort()) {
    const wat = join(dir, name, "module.wat");
    const wit = join(dir, name, "world.wit");
    const extraWit = readFileSync(wit, "utf8");
    const world = /^world\s+([\w-]+)/m.exec(extraWit)[1];
    out[name] = (await cached(`fixture-${name}`, hashOf([wat, wit, TOOL_WIT]), async () => embedAndNew(await parse(readFileSync(wat, "utf8")), { world, extraWit }))).path;
  }
  // A real component the project did not build for this world: jco's own js-component-bindgen
  // core module from node_modules, adapted to WASI 0.2 with jco's preview1 reactor adapter.
  const jco = join(ROOT, "node_modules", "@bytecodealliance", "jco");
  const core = join(jco, "obj", "js-component-bindgen-component.core.wasm");
  const adapter = join(jco, "lib", "wasi_snapshot_preview1.reactor.wasm");
  const { componentNew } = await import("@bytecodealliance/jco-transpile/wasm-tools");
  // A JS guest that performs one raw WASI filesystem operation per call (grant and symlink tests).
  const probe = join(dir, "fsprobe");
  if (js) out.fsprobe = (await componentizeJs("fixture-fsprobe", { source: join(probe, "probe.guest-js"), witDir: join(probe, "wit"), worldName: "fsprobe", inputs: [...files(probe), TOOL_WIT] })).path;
  out.foreign = (await cached("fixture-foreign", hashOf([core, adapter]), async () =>
    componentNew(readFileSync(core), [["wasi_snapshot_preview1", readFileSync(adapter)]]))).path;
  return out;
}

/** `{ rust: false }` skips the Rust example (a machine without rustc: see rust-toolchain.mjs). */
export async function buildComponents({ js = true, rust: withRust = true } = {}) {
  const t0 = Date.now();
  const rust = withRust ? await buildRust() : undefined;
  const t1 = Date.now();
  const jsBuilt = js ? await buildJs() : undefined;
  const t2 = Date.now();
  const fixtures = await buildFixtures({ js });
  return {
    rust: rust?.path,
    js: jsBuilt?.path,
    fixtures,
    timings: { rustMs: t1 - t0, jsMs: t2 - t1, rustCached: rust?.cached, jsCached: jsBuilt?.cached },
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // `inspect-js` / `inspect-rust`: build only that example (npm run build:inspect-js -w @aexhq/brain-examples).
  const only = process.argv[2];
  const builds = { "inspect-js": () => buildJs(), "inspect-rust": () => buildRust() };
  if (only !== undefined && !(only in builds)) {
    console.error(`unknown component ${JSON.stringify(only)}; one of: ${Object.keys(builds).join(", ")}`);
    process.exit(2);
  }
  (only === undefined ? buildComponents() : builds[only]()).then(
    (r) => console.log(JSON.stringify(r, null, 2)),
    (e) => {
      console.error(e?.stack ?? e);
      process.exit(1);
    },
  );
}
