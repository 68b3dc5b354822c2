// The packaged subjects (the catalogue as a package served by a Brain-managed Node / Deno host)
// on a few scenarios: every scenario starts a new session, so a new binding (unpacked, host started
// at session creation), about 2.5 s each; the full runs (~100 s each) are `npm run conformance -- --subject packaged-node`
// and `packaged-deno` (all pass; the connection, restart-of-a-host and granted Environment control scenarios are n/a).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runConformance, formatTable } from "../src/cli.ts";
import { packageRoot } from "../src/subject.ts";

const quiet = () => undefined;
const picked = ["outcome-ok", "emit-sequences-before-result", "model-call-from-tool", "connection-loss-unknown", "environments-within-authority", "environments-forbidden-by-default", "forget-stays-open-until-deadline", "runtime-restart-open-call"];
const scenariosDir = mkdtempSync(join(tmpdir(), "brain-packaged-scenarios-"));
for (const name of picked) copyFileSync(join(packageRoot, "scenarios", `${name}.json`), join(scenariosDir, `${name}.json`));
test.after(() => rmSync(scenariosDir, { recursive: true, force: true }));

for (const subject of ["packaged-node", "packaged-deno"]) {
  test(`${subject}: answers, emits, calls the model, a forgotten call stays open until its deadline, a runtime restart ends the open call unknown and the next call works, Environment control is refused by default; the connection and granted-authority scenarios are n/a`, async () => {
    const report = await runConformance({ subject, scenariosDir, log: quiet });
    assert.ok(report.ok, formatTable(report));
    assert.equal(report.results.map((r) => [r.name, r.na ? "n/a" : r.pass ? "pass" : "FAIL"]).sort(), [
      ["connection-loss-unknown", "n/a"],
      ["emit-sequences-before-result", "pass"],
      ["environments-forbidden-by-default", "pass"],
      ["environments-within-authority", "n/a"],
      ["forget-stays-open-until-deadline", "pass"],
      ["model-call-from-tool", "pass"],
      ["outcome-ok", "pass"],
      ["runtime-restart-open-call", "pass"],
    ]);
  });
}

test.run();
