// Brain's own tools/call path (environments/mcp/wire.ts) reads results without the SDK's client:
// whatever it accepts, and what it takes from it, must be what the SDK's CallToolResultSchema would.
import { test } from "uvu";
import * as assert from "uvu/assert";
import fc from "fast-check";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { callLine, callResult } from "../src/environments/mcp/wire.ts";

/** What the SDK's client makes of a result, in Brain's terms; undefined when it refuses it. */
function bySdk(v: unknown) {
  const r = CallToolResultSchema.safeParse(v);
  if (!r.success) return undefined;
  return { content: r.data.content ?? [], structuredContent: r.data.structuredContent, isError: r.data.isError === true };
}

const cases: unknown[] = [
  { content: [{ type: "text", text: "hi" }] },
  { content: [{ type: "text", text: "hi" }], isError: true },
  { content: [], structuredContent: { a: 1, b: [1, 2] } },
  { content: [{ type: "text", text: "a" }, { type: "text", text: "b" }], structuredContent: {}, isError: false, extra: 1 },
  { content: [{ type: "text", text: "hi", annotations: { priority: 0.5 } }] },
  { content: [{ type: "text", text: "hi", annotations: { priority: 7 } }] },
  { content: [{ type: "text", text: "hi", unknown: true }] },
  { content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] },
  { content: [{ type: "resource_link", uri: "file:///x", name: "x" }] },
  { content: [{ type: "text" }] },
  { content: [{ type: "text", text: 1 }] },
  { content: [{ type: "nope", text: "x" }] },
  { content: [null] },
  { content: "not an array" },
  { content: [], structuredContent: [1] },
  { content: [], structuredContent: null },
  { content: [], structuredContent: "x" },
  { content: [], isError: "yes" },
  { content: [], _meta: { k: 1 } },
  { content: [], _meta: "x" },
  {},
  { structuredContent: { a: 1 } },
  [],
  null,
  "x",
  1,
  undefined,
];

test("callResult accepts and takes what the SDK's CallToolResultSchema does (listed shapes)", () => {
  for (const c of cases) assert.equal(callResult(c), bySdk(c), JSON.stringify(c));
});

test("callResult agrees with the SDK's CallToolResultSchema on generated results", () => {
  const block = fc.oneof(
    fc.record({ type: fc.constant("text"), text: fc.string() }),
    fc.record({ type: fc.constantFrom("text", "image", "other"), text: fc.oneof(fc.string(), fc.integer()) }, { requiredKeys: ["type"] }),
    fc.anything(),
  );
  const result = fc.record(
    {
      content: fc.oneof(fc.array(block, { maxLength: 4 }), fc.anything()),
      structuredContent: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.anything()),
      isError: fc.oneof(fc.boolean(), fc.anything()),
      _meta: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.anything()),
    },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(result, (r) => {
      const v = JSON.parse(JSON.stringify(r) ?? "null") as unknown; // as it arrives: JSON
      assert.equal(callResult(v), bySdk(v), JSON.stringify(v));
    }),
    { numRuns: 2000 },
  );
});

test("callLine is the line JSON.stringify makes of the tools/call message, on generated names and arguments", () => {
  fc.assert(
    fc.property(fc.nat(), fc.string({ unit: "binary" }), fc.dictionary(fc.string({ unit: "binary" }), fc.jsonValue()), (n, name, args) => {
      const id = `brain-${n}`;
      const message = { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, _meta: { progressToken: id } } };
      assert.is(callLine(id, name, args), `${JSON.stringify(message)}\n`);
    }),
    { numRuns: 2000 },
  );
});

test.run();
