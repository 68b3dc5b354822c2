import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { contractDigest } from "../src/digest.ts";
import { canonicalJson, contractDigestText } from "@aexhq/brain-protocol";
import { contractDigest as runtimeDigest } from "@aexhq/brain-runtime";

interface Vector { name: string; contract: string; canonical: string; digest: string }
const { vectors } = JSON.parse(readFileSync(new URL("../../contract/digest-vectors.json", import.meta.url), "utf8")) as { vectors: Vector[] };

test("there are digest vectors for numbers, key order and strings", () => {
  assert.ok(["numbers", "key-order", "strings"].every((n) => vectors.some((v) => v.name === n)));
});

for (const v of vectors) {
  test(`digest vector ${v.name}: the SDK's canonical form and digest (Web Crypto) match the contract`, async () => {
    const c = JSON.parse(v.contract);
    assert.is(contractDigestText(c), v.canonical);
    assert.is(await contractDigest(c), v.digest);
  });
  test(`digest vector ${v.name}: the runtime (node:crypto) computes the same digest as the SDK`, async () => {
    const c = JSON.parse(v.contract);
    assert.is(runtimeDigest(c), v.digest);
    assert.is(await contractDigest(c), runtimeDigest(c));
  });
}

test("canonical JSON refuses values that are not JSON", () => {
  assert.throws(() => canonicalJson({ a: Number.NaN }));
  assert.throws(() => canonicalJson({ a: Number.POSITIVE_INFINITY }));
});

test("the description does not change the digest; an absent schema counts as null", async () => {
  const base = { name: "t", inputSchema: { type: "object" } };
  assert.is(await contractDigest({ ...base, description: "one" } as never), await contractDigest({ ...base, description: "two" } as never));
  assert.is(await contractDigest(base), await contractDigest({ ...base, outputSchema: null, optionsSchema: null }));
});

test.run();
