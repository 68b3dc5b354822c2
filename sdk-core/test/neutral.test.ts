// sdk-core must run unchanged on Node and Deno: Web APIs only.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const src = fileURLToPath(new URL("../src", import.meta.url));
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : n.endsWith(".ts") ? [join(dir, n)] : []));
}
// Comments may mention these names; code may not.
const stripComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");

test("no file under sdk-core/src imports node:* or uses process., Deno., Buffer", () => {
  const all = files(src);
  assert.ok(all.length > 5, "found the sources");
  const offences: string[] = [];
  for (const f of all) {
    const code = stripComments(readFileSync(f, "utf8"));
    if (/from\s+["']node:|import\(\s*["']node:|require\(/.test(code)) offences.push(`${f}: imports node`);
    if (/\bprocess\./.test(code)) offences.push(`${f}: uses process.`);
    if (/\bDeno\./.test(code)) offences.push(`${f}: uses Deno.`);
    if (/\bBuffer\b/.test(code)) offences.push(`${f}: uses Buffer`);
    for (const m of code.matchAll(/from\s+["']([^"'.][^"']*)["']/g)) {
      if (!["zod", "@aexhq/brain-protocol"].includes(m[1]!)) offences.push(`${f}: imports ${m[1]}`);
    }
  }
  assert.equal(offences, []);
});

test.run();
