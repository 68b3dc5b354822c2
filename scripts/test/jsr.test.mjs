// The SDK is publishable to JSR (issue 17): @aexhq/brain-protocol, @aexhq/brain-core and @aexhq/brain,
// assembled as a Deno workspace from the sources, pass `deno publish --dry-run` — which fails on
// slow types (exported constants without explicit types), missing licenses and unresolvable imports.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { assembleJsrWorkspace } from "../jsr-workspace.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

test("deno publish --dry-run of the SDK's three JSR packages succeeds, with no slow types", () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-jsr-"));
  try {
    assembleJsrWorkspace(dir);
    assert.is(JSON.parse(readFileSync(join(dir, "brain/deno.json"), "utf8")).name, "@aexhq/brain");
    const r = spawnSync(join(root, "node_modules/.bin/deno"), ["publish", "--dry-run", "--allow-dirty"], { cwd: dir, encoding: "utf8", env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" }, timeout: 240_000 });
    const out = `${r.stdout}\n${r.stderr}`;
    // deno reports each slow type, missing license or bad import as an `error[...]` and fails.
    assert.not.match(out, /error\[/, out);
    assert.is(r.status, 0, out);
    assert.match(out, /Dry run complete/);
    for (const name of ["@aexhq/brain-protocol", "@aexhq/brain-core", "@aexhq/brain"]) assert.match(out, new RegExp(`${name}@0\\.2\\.0`), `${name} is in the workspace`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** `brain serve` from the sources (memory journal, any port); resolves with its URL once it listens. */
async function serve(token) {
  const child = spawn(process.execPath, ["--conditions=brain-source", "--import", "tsx", "src/cli.ts", "serve"], {
    cwd: join(root, "runtime"),
    env: { ...process.env, BRAIN_JOURNAL: "memory", BRAIN_PORT: "0", BRAIN_TOKEN: token },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /brain listening on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on("exit", (code) => reject(new Error(`brain serve exited ${code}: ${out}`)));
  });
  return { url, stop: () => new Promise((r) => (child.once("exit", r), child.kill("SIGINT"))) };
}

test("a Deno project with the SDK as a workspace member runs the lookup example (imports by package name)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-jsr-app-"));
  const token = "token-of-the-jsr-workspace-test";
  const brain = await serve(token);
  try {
    assembleJsrWorkspace(dir);
    // The application is one more member of the workspace: `@aexhq/brain` resolves to the member.
    const workspace = JSON.parse(readFileSync(join(dir, "deno.json"), "utf8"));
    writeFileSync(join(dir, "deno.json"), JSON.stringify({ workspace: [...workspace.workspace, "./app"] }, null, 2));
    mkdirSync(join(dir, "app"));
    writeFileSync(join(dir, "app/deno.json"), JSON.stringify({ imports: { zod: "npm:zod@^4.0.0" } }, null, 2));
    for (const f of ["main_deno.ts", "lookup.ts", "database.ts"]) cpSync(join(root, "examples/lookup", f), join(dir, "app", f));
    const host = new URL(brain.url).host;
    const r = spawnSync(join(root, "node_modules/.bin/deno"), ["run", "--quiet", `--allow-net=${host}`, "--allow-env=BRAIN_URL,BRAIN_TOKEN,BRAIN_HOST_ID,BRAIN_HOST_SECRET", "app/main_deno.ts"], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, BRAIN_URL: brain.url, BRAIN_TOKEN: token, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      timeout: 240_000,
    });
    assert.is(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /Record 42 belongs to Ada Lovelace\./);
  } finally {
    await brain.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
