// Keeps the top-level docs true to the tree: every folder is explained, every decisions file indexed.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const read = (rel) => readFileSync(join(root, rel), "utf8");

test("README's folder table names every top-level folder", () => {
  const readme = read("README.md");
  // Tracked folders only: local scratch (tmp/, .brain/) needs no README entry.
  const tracked = spawnSync("git", ["ls-files"], { cwd: root, encoding: "utf8" });
  const folders = tracked.status === 0
    ? [...new Set(tracked.stdout.split("\n").filter((p) => p.includes("/")).map((p) => p.split("/")[0]))].filter((name) => !name.startsWith("."))
    : readdirSync(root).filter((name) => !name.startsWith(".") && name !== "node_modules" && statSync(join(root, name)).isDirectory());
  assert.ok(folders.includes("contract"), `folder discovery failed: ${folders}`);
  const missing = folders.filter((name) => !readme.includes(`| [\`${name}/\`]`));
  assert.equal(missing, [], `README.md does not explain: ${missing.join(", ")}`);
});

test("README gives the two set-up commands", () => {
  const readme = read("README.md");
  assert.ok(readme.includes("npm ci && npm start"));
  assert.ok(readme.includes("npm ci && npm test"));
});

test("docs/decisions.md links every docs/decisions/*.md", () => {
  const index = read("docs/decisions.md");
  const dir = join(root, "docs/decisions");
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".md")) : [];
  const missing = files.filter((f) => !index.includes(`(decisions/${f})`));
  assert.equal(missing, [], `docs/decisions.md does not link: ${missing.join(", ")}`);
});

test(".ci/run runs the README's commands under set -euo pipefail", () => {
  const ci = read(".ci/run");
  assert.ok(ci.includes("set -euo pipefail"));
  assert.ok(/^npm ci\b/m.test(ci) && /^npm test$/m.test(ci), ".ci/run must run `npm ci` then `npm test`");
  assert.ok(statSync(join(root, ".ci/run")).mode & 0o100, ".ci/run is not executable");
});

test("CHANGELOG.md states the versioning policy, has an Unreleased section, and its newest release is every published package's version", () => {
  const changelog = read("CHANGELOG.md");
  assert.match(changelog, /^## Versioning policy$/m);
  assert.match(changelog, /^## Unreleased$/m);
  const released = /^## (\d+\.\d+\.\d+)\b/m.exec(changelog)?.[1];
  assert.ok(released, "no released version heading (## x.y.z)");
  for (const folder of ["generated", "sdk-core", "sdk-node", "runtime", "conformance"]) {
    const pkg = JSON.parse(read(`${folder}/package.json`));
    assert.is(pkg.version, released, `${pkg.name} is ${pkg.version}; CHANGELOG.md's newest release is ${released}`);
  }
});

test("README links the API reference script, the API surface reports and the CHANGELOG", () => {
  const readme = read("README.md");
  for (const text of ["npm run docs:api", "(api/)", "(CHANGELOG.md)"]) assert.ok(readme.includes(text), `README.md does not mention ${text}`);
});

test.run();
