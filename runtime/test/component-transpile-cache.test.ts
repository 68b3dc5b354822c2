// A folder of component transpilations shared by servers (BRAIN_COMPONENT_TRANSPILE_CACHE): a
// second in-memory server admitting a digest the first transpiled takes the cached files instead
// of running jco again, and runs the component. Real servers, real uploads, one real call.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolContract } from "@aexhq/brain-protocol";
import { api, createSession, memoryBrain, ofType, records } from "./helpers/brain.ts";
import { components, placedComponent, upload } from "./component-helpers.mts";
import { contractDigest } from "../src/index.ts";
import type { ComponentEnvironment } from "../src/index.ts";

let cache: string;

test.before(() => {
  cache = mkdtempSync(join(tmpdir(), "brain-transpile-cache-"));
});

test.after(() => {
  rmSync(cache, { recursive: true, force: true });
});

const contract = (): ToolContract => {
  const c = { name: "probe", description: "A WASI probe.", inputSchema: { type: "object", properties: { op: { type: "string" } } } };
  return { ...c, digest: contractDigest(c) };
};

test("a second server admits a digest from the shared transpile cache (no jco run) and runs it; a refused digest is not cached", async () => {
  const built = await components();
  const first = await memoryBrain({ componentTranspileCache: cache });
  let digest: string;
  try {
    const u = await upload(first, built.fixtures.netprobe!);
    assert.is(u.status, 201, JSON.stringify(u.body));
    digest = u.digest;
    const refused = await upload(first, built.fixtures.foreign!);
    assert.is(refused.status, 400);
  } finally {
    await first.close();
  }
  const entries = readdirSync(cache);
  assert.is(entries.length, 1, entries.join(", "));
  assert.ok(entries[0]!.startsWith(`${digest}-jco-transpile-`), entries[0]);
  // A marker in the cached files: it can only reach the second server's store through the cache.
  writeFileSync(join(cache, entries[0]!, "files", "from-cache.txt"), "cached");

  const second = await memoryBrain({ componentTranspileCache: cache });
  try {
    const u = await upload(second, built.fixtures.netprobe!);
    assert.is(u.status, 201, JSON.stringify(u.body));
    const env = second.internals.environments.get("component") as unknown as ComponentEnvironment;
    assert.ok(existsSync(join(env.store.transpiledDir(digest), "from-cache.txt")), "the transpilation came from the cache");
    // The uploaded bytes are kept in the entry and linked into the store (a hit writes nothing).
    assert.ok(readFileSync(join(cache, entries[0]!, "component.wasm")).equals(readFileSync(built.fixtures.netprobe!)));
    assert.ok(readFileSync(join(env.store.dir, `${digest}.wasm`)).equals(readFileSync(built.fixtures.netprobe!)), "the store holds the uploaded bytes");
    const tool = placedComponent(contract(), digest, "net", {});
    const s = await createSession(second, [tool], [{ toolCalls: [{ name: "probe", input: { op: "none" } }] }, { text: "done" }]);
    const r = await api(second, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
    assert.is(r.status, 200);
    const outcome = ofType(await records(second, s.id), "tool.result")[0]!.data.outcome;
    assert.equal(outcome, { status: "ok", value: { op: "n", tag: 0, code: "00" } });
  } finally {
    await second.close();
  }
});

test.run();
