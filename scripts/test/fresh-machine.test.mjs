// A machine without Debian's rustc (BRAIN_RUSTC=/nonexistent, the override every Rust build
// honours): the toolchain check gives a reason naming what to install, and a real suite of
// Rust-built tests skips them, prints the notice the root runner reads, and passes.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseSkipNotices, parseUvuSummary } from "../test-summary.mjs";

const home = join(dirname(fileURLToPath(import.meta.url)), "../..");
const hidden = { ...process.env, BRAIN_RUSTC: "/nonexistent/rustc" };

test("rustUnavailable() names the missing rustc and what installs it", () => {
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", "const m = await import('./scripts/rust-toolchain.mjs'); console.log(m.rustUnavailable() ?? 'available');"], { cwd: home, env: hidden, encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, "no rustc at /nonexistent/rustc");
  assert.match(r.stdout, "libstd-rust-dev-wasm32");
  assert.match(r.stdout, ".ci/run");
});

test("without rustc the conformance suite's Rust-built tests are skipped and explained; the suite passes", () => {
  const r = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", join(home, "node_modules/uvu/bin.js"), "test", "component-rust\\.test\\.ts$"], {
    cwd: join(home, "conformance"), env: hidden, encoding: "utf8", timeout: 120_000,
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.equal(parseUvuSummary(r.stdout), { passed: 0, failed: 0, skipped: 3 }, r.stdout);
  const notices = parseSkipNotices(r.stdout);
  assert.is(notices.length, 1, r.stdout);
  assert.is(notices[0].count, 3);
  assert.is(notices[0].where, "conformance/test/component-rust.test.ts");
  assert.match(notices[0].reason, "no rustc at /nonexistent/rustc");
});

test.run();
