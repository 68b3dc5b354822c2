// `npm run docs:api` builds the API reference (TypeDoc, typedoc.json) from the TSDoc of the four
// packages' public exports; this builds it into a temporary folder, so a reference that no longer
// builds (a broken {@link}, a source TypeDoc cannot compile) fails `npm test`, not the next reader.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { root } from "../api-surface.mjs";

test("the API reference builds without warnings, with one page per package naming its exports", () => {
  const out = mkdtempSync(join(tmpdir(), "brain-api-reference-"));
  try {
    const r = spawnSync(process.execPath, [join(root, "node_modules/typedoc/bin/typedoc"), "--out", out, "--treatWarningsAsErrors"], { cwd: root, encoding: "utf8", timeout: 240_000 });
    assert.is(r.status, 0, `typedoc failed:\n${r.stdout}\n${r.stderr}`);
    const pages = { "@aexhq/brain": "_aexhq_brain.html", "@aexhq/brain-core": "_aexhq_brain-core.html", "@aexhq/brain-runtime": "_aexhq_brain-runtime.html", "@aexhq/brain-conformance": "_aexhq_brain-conformance.html" };
    for (const [name, page] of Object.entries(pages)) {
      const path = join(out, "modules", page);
      assert.ok(existsSync(path), `no page for ${name}`);
      assert.match(readFileSync(path, "utf8"), name);
    }
    assert.match(readFileSync(join(out, "modules", pages["@aexhq/brain"]), "utf8"), /Brain/);
    assert.match(readFileSync(join(out, "modules", pages["@aexhq/brain-runtime"]), "utf8"), /startBrain/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test.run();
