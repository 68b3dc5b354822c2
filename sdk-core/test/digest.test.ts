import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHash } from "node:crypto";
import { contractDigest } from "../src/digest.ts";
import { canonicalJson } from "../src/json.ts";
import { contractDigest as runtimeDigest } from "@aexhq/brain-runtime";

test("canonical JSON sorts keys recursively and has no whitespace", () => {
  assert.is(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}');
});

test("the digest is sha256 of the canonical JSON with absent schemas as null", async () => {
  const c = { name: "t", inputSchema: { type: "object", properties: { b: {}, a: {} } } };
  const expected = createHash("sha256").update('{"inputSchema":{"properties":{"a":{},"b":{}},"type":"object"},"name":"t","optionsSchema":null,"outputSchema":null}').digest("hex");
  assert.is(await contractDigest(c), expected);
});

test("the SDK and the runtime compute the same digest", async () => {
  const c = { name: "lookup", inputSchema: { type: "object" }, outputSchema: { anyOf: [{ type: "null" }] }, optionsSchema: { type: "object", required: ["prefix"] } };
  assert.is(await contractDigest(c), await runtimeDigest(c as never));
});

test.run();
