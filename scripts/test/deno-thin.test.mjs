// sdk-deno must stay thin wiring over sdk-core (hono-style adapters): only its platform module and
// mod.ts, and no line of core code copied into it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(fileURLToPath(new URL(".", import.meta.url)), "../..");
const tsFiles = (dir) => readdirSync(dir, { recursive: true }).filter((f) => f.endsWith(".ts")).map((f) => join(dir, f));

/** Lines that carry logic: not blank, comments, imports, exports of names, or lone punctuation. */
export function logicLines(text) {
  return text.split("\n").map((l) => l.trim()).filter((l) => l.length > 25 && !/^(\/\/|\*|\/\*|import |export \{|export type \{|[})\];,]+$)/.test(l));
}

export function copiedLines(adapterText, coreTexts) {
  const core = new Set(coreTexts.flatMap(logicLines));
  return logicLines(adapterText).filter((l) => core.has(l));
}

test("sdk-deno holds only mod.ts and platform.ts (besides its tests under test/)", () => {
  const files = tsFiles(join(root, "sdk-deno")).map((f) => f.slice(join(root, "sdk-deno").length + 1)).filter((f) => !f.startsWith("test/")).sort();
  assert.equal(files, ["mod.ts", "platform.ts"]);
});

test("no line of sdk-core code is copied into sdk-deno", () => {
  const core = tsFiles(join(root, "sdk-core/src")).map((f) => readFileSync(f, "utf8"));
  for (const file of tsFiles(join(root, "sdk-deno"))) {
    assert.equal(copiedLines(readFileSync(file, "utf8"), core), [], file);
  }
});

test("the copy check catches a copied core function", () => {
  const core = readFileSync(join(root, "sdk-core/src/json.ts"), "utf8");
  const copied = `import x from "y";\n${core.split("\n").slice(0, 40).join("\n")}`;
  assert.ok(copiedLines(copied, [core]).length > 5);
});

test.run();
