// Brain-managed hosts whose package is uploaded with a lockfile and no node_modules: the runtime
// installs the dependencies in the binding's folder from a real local registry (verdaccio, started
// here, with the SDK's npm-packed tarballs and the third-party packages published to it), with
// runtime "node" (package-lock.json, npm ci) and "deno" (deno.lock, deno install --frozen).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JournalRecord, PlacedTool, ToolContract } from "@aexhq/brain-protocol";
import { api, assertJournal, createSession, memoryBrain, ofType, records } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { packFolder, packWorkspaces, repoRoot, thirdParty } from "./helpers/managed-package.ts";
import { startLocalRegistry } from "./helpers/local-registry.ts";
import type { LocalRegistry } from "./helpers/local-registry.ts";

const DENO = join(repoRoot, "node_modules/.bin/deno");
const PROBE = "@aexhq/managed-probe-tools";
const fixture = fileURLToPath(new URL("../test-fixtures/managed-probe-tools/", import.meta.url));

interface Upload {
  digest: string;
  bytes: Uint8Array;
}

let dir: string;
let registry: LocalRegistry;
let brain: Brain;
let contract: ToolContract;
const uploads: Record<string, Upload> = {};

function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): void {
  try {
    execFileSync(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], timeout: 300_000 });
  } catch (e) {
    const x = e as { message: string; stdout?: Buffer; stderr?: Buffer };
    throw new Error(`${x.message}\n${x.stdout ?? ""}\n${x.stderr ?? ""}`);
  }
}

/** Tars `stage/package` (npm pack layout) and returns the upload. */
function tarUpload(stage: string, name: string): Upload {
  assert.not.ok(existsSync(join(stage, "package", "node_modules")), "the upload carries no node_modules");
  const file = join(dir, "uploads", `${name}.tgz`);
  mkdirSync(join(dir, "uploads"), { recursive: true });
  sh("tar", ["-czf", file, "-C", stage, "package"], stage);
  const bytes = new Uint8Array(readFileSync(file));
  return { bytes, digest: createHash("sha256").update(bytes).digest("hex") };
}

test.before(async () => {
  try {
    dir = mkdtempSync(join(realpathSync(tmpdir()), "brain-lockfile-test-"));
    registry = await startLocalRegistry(join(dir, "registry"));
    // What the probe package depends on, published to the local registry: the SDK's own tarballs
    // (npm pack of the workspaces) and the third-party packages as this checkout installed them.
    const packs = packWorkspaces(["generated", "sdk-core", "sdk-node"], join(dir, "packs"));
    for (const name of ["@aexhq/brain-protocol", "@aexhq/brain-core", "@aexhq/brain"]) registry.publish(packs[name]!);
    for (const installed of thirdParty(["zod"])) registry.publish(packFolder(installed, join(dir, "packs")));

    const probeTgz = packFolder(fixture, join(dir, "packs"));
    const npmEnv = { ...process.env, npm_config_cache: join(dir, "npm-cache"), npm_config_userconfig: registry.npmrc };
    // Node: package-lock.json written by npm against the local registry.
    const nodeStage = join(dir, "stage-node");
    mkdirSync(nodeStage, { recursive: true });
    sh("tar", ["-xzf", probeTgz, "-C", nodeStage], nodeStage);
    sh("npm", ["install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund", `--registry=${registry.url}/`], join(nodeStage, "package"), npmEnv);
    uploads.node = tarUpload(nodeStage, "node");
    // The same package with a lockfile whose integrity for zod is wrong.
    const brokenStage = join(dir, "stage-broken");
    cpSync(nodeStage, brokenStage, { recursive: true });
    const lockPath = join(brokenStage, "package", "package-lock.json");
    const lock = JSON.parse(readFileSync(lockPath, "utf8")) as { packages: Record<string, { integrity?: string }> };
    lock.packages["node_modules/zod"]!.integrity = `sha512-${Buffer.alloc(64, 7).toString("base64")}`;
    writeFileSync(lockPath, JSON.stringify(lock, null, 2));
    uploads.broken = tarUpload(brokenStage, "broken");
    // Deno: deno.lock written by `deno install` against the local registry, node_modules removed.
    const denoStage = join(dir, "stage-deno");
    mkdirSync(denoStage, { recursive: true });
    sh("tar", ["-xzf", probeTgz, "-C", denoStage], denoStage);
    sh(DENO, ["install", "--node-modules-dir=auto", "--minimum-dependency-age=0"], join(denoStage, "package"), { PATH: process.env.PATH, HOME: dir, DENO_DIR: join(dir, "deno-dir"), NPM_CONFIG_REGISTRY: `${registry.url}/`, DENO_NO_UPDATE_CHECK: "1" });
    assert.ok(existsSync(join(denoStage, "package", "deno.lock")), "deno install wrote deno.lock");
    rmSync(join(denoStage, "package", "node_modules"), { recursive: true, force: true });
    uploads.deno = tarUpload(denoStage, "deno");

    const mod = (await import(new URL("index.js", `file://${fixture}`).href)) as Record<string, { tool: { contract(): Promise<ToolContract> } }>;
    contract = await mod.probeOrder!.tool.contract();
    brain = await memoryBrain({ managedHosts: { deno: DENO, registry: `${registry.url}/` } });
    for (const u of Object.values(uploads)) {
      const res = await fetch(`${brain.url}/v1/packages/${u.digest}`, { method: "PUT", headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/gzip" }, body: u.bytes });
      assert.is(res.status, 201, await res.text());
    }
  } catch (e) {
    console.error(e);
    throw e;
  }
});

test.after(async () => {
  await brain?.close();
  await registry?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function placed(upload: Upload, env: string, runtime: string): PlacedTool {
  return {
    contract,
    options: {},
    placement: { kind: "managed", env, runtime, digest: upload.digest, executable: { package: PROBE, version: "0.1.0", module: ".", export: "probeOrder" } },
  } as PlacedTool;
}

async function callOnce(tool: PlacedTool): Promise<{ outcome: any; all: JournalRecord[] }> {
  const s = await createSession(brain, [tool], [{ toolCalls: [{ name: "probe_order", input: {} }] }, { text: "done" }]);
  const r = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const all = await records(brain, s.id);
  assertJournal(all);
  const result = ofType(all, "tool.result")[0];
  const finished = ofType(all, "tool.finished")[0];
  return { outcome: result?.data.outcome ?? { status: finished?.data.status, error: finished?.data.error }, all };
}

test("node: a package with package-lock.json and no node_modules is installed from the registry (npm ci) before setup and import, and answers", async () => {
  const { outcome } = await callOnce(placed(uploads.node!, "locked-node", "node"));
  assert.is(outcome.status, "ok", JSON.stringify(outcome));
  assert.is(outcome.value.runtime, "node");
  // Setup ran after the install and before the module was imported.
  assert.ok(outcome.value.setup !== null && outcome.value.setup.setupAt <= outcome.value.importedAt, JSON.stringify(outcome.value));
});

test("deno: a package with deno.lock and no node_modules is installed (deno install --frozen), and answers", async () => {
  const { outcome } = await callOnce(placed(uploads.deno!, "locked-deno", "deno"));
  assert.is(outcome.status, "ok", JSON.stringify(outcome));
  assert.is(outcome.value.runtime, "deno");
});

test("deno host, npm lockfile: installed by npm ci, served by deno", async () => {
  const { outcome } = await callOnce(placed(uploads.node!, "locked-node-on-deno", "deno"));
  assert.is(outcome.status, "ok", JSON.stringify(outcome));
  assert.is(outcome.value.runtime, "deno");
});

test("a broken lockfile: the call ends tool_error naming the lockfile and the install, not retried", async () => {
  const { outcome } = await callOnce(placed(uploads.broken!, "broken", "node"));
  assert.is(outcome.status, "error", JSON.stringify(outcome));
  assert.is(outcome.error.code, "tool_error");
  assert.match(outcome.error.message, "installing the package's dependencies from its package-lock.json failed (npm ci");
  assert.match(outcome.error.message, "not retried");
  assert.match(outcome.error.message, /integrity|EINTEGRITY/i);
});

test.run();
