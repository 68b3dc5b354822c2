// The /ui page's script is type-checked as the browser runs it: `// @ts-check` in
// src/ui/assets/app.js, DOM typings, no emit (tsconfig.ui.json). A wrong DOM call, a misspelt
// property of a typed value or a call with the wrong arguments fails here, before a browser test.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

test("the page's script type-checks (tsc -p tsconfig.ui.json) and asks to be checked (// @ts-check)", () => {
  assert.ok(readFileSync(here("../src/ui/assets/app.js"), "utf8").startsWith("// @ts-check"));
  const r = spawnSync(process.execPath, [here("../../node_modules/typescript/bin/tsc"), "-p", here("../tsconfig.ui.json")], { encoding: "utf8" });
  assert.is(r.stdout + r.stderr, "", "tsc reports nothing");
  assert.is(r.status, 0);
});

test.run();
