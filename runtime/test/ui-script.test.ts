// The /ui page's modules are type-checked as the browser runs them: `// @ts-check` at the top of
// each (src/ui/assets/*.js and the journal's rules it shares with the runtime), DOM typings, no
// emit (tsconfig.ui.json). A wrong DOM call, a misspelt property of a typed value, a missing import
// or a call with the wrong arguments fails here, before a browser test.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { UI_ASSETS } from "../src/ui/routes.ts";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const scripts = UI_ASSETS.filter((name) => name.endsWith(".js"));

test("every script /ui serves asks to be checked (// @ts-check) and is preloaded by the page, and every module in assets/ is served", () => {
  for (const name of scripts) {
    const file = name === "journal-rules.js" ? "../src/journal/journal-rules.js" : `../src/ui/assets/${name}`;
    assert.ok(readFileSync(here(file), "utf8").startsWith("// @ts-check"), name);
  }
  const modules = readdirSync(here("../src/ui/assets")).filter((n) => n.endsWith(".js"));
  assert.equal(modules.filter((n) => !scripts.includes(n)), [], "a module in assets/ that /ui does not serve");
  // The page asks for every module at once (modulepreload), not one import level after another.
  const html = readFileSync(here("../src/ui/assets/app.html"), "utf8");
  for (const name of scripts.filter((n) => n !== "app.js")) assert.ok(html.includes(`<link rel="modulepreload" href="/ui/assets/${name}">`), `app.html preloads ${name}`);
});

test("the page's modules type-check (tsc -p tsconfig.ui.json), the shared journal rules with them", () => {
  const r = spawnSync(process.execPath, [here("../../node_modules/typescript/bin/tsc"), "-p", here("../tsconfig.ui.json"), "--listFilesOnly"], { encoding: "utf8" });
  for (const name of scripts) assert.ok(r.stdout.includes(name === "journal-rules.js" ? "src/journal/journal-rules.js" : `src/ui/assets/${name}`), `tsconfig.ui.json checks ${name}`);
  const check = spawnSync(process.execPath, [here("../../node_modules/typescript/bin/tsc"), "-p", here("../tsconfig.ui.json")], { encoding: "utf8" });
  assert.is(check.stdout + check.stderr, "", "tsc reports nothing");
  assert.is(check.status, 0);
});

test.run();
