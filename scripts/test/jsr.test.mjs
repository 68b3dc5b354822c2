// The SDK is publishable to JSR (issue 17): @aexhq/brain-protocol, @aexhq/brain-core and @aexhq/brain,
// assembled as a Deno workspace from the sources, pass `deno publish --dry-run` — which fails on
// slow types (exported constants without explicit types), missing licenses and unresolvable imports.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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

test.run();
