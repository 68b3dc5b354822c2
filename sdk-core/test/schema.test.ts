// Schema shapes users write, exported with the right io (input: before parsing; output: parsed).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool } from "../src/index.ts";

const run = async () => null;
/** The primitive types a schema admits, whichever form zod's version chose (type array or anyOf). */
function types(s: any): string[] {
  if (Array.isArray(s.type)) return [...s.type].sort();
  if (s.anyOf) return s.anyOf.flatMap(types).sort();
  return [s.type];
}
function schemas(input: z.ZodType, output?: z.ZodType) {
  const t = tool({ name: "shape", description: "shape test", input, ...(output ? { output } : {}), run }).tool;
  return { input: t.inputSchema as any, output: t.outputSchema as any };
}

test("union", () => {
  const { input } = schemas(z.union([z.string(), z.number()]));
  assert.equal(types(input), ["number", "string"]);
});

test("discriminated union", () => {
  const { input } = schemas(z.discriminatedUnion("kind", [z.object({ kind: z.literal("a"), a: z.string() }), z.object({ kind: z.literal("b"), b: z.number() })]));
  const branches = input.oneOf ?? input.anyOf;
  assert.is(branches.length, 2);
  assert.equal(branches[0].properties.kind, { type: "string", const: "a" });
  assert.equal(branches[1].required.sort(), ["b", "kind"]);
});

test("record", () => {
  const { input } = schemas(z.record(z.string(), z.number()));
  assert.is(input.type, "object");
  assert.equal(input.additionalProperties, { type: "number" });
});

test("tuple", () => {
  const { input } = schemas(z.tuple([z.string(), z.number()]));
  assert.is(input.type, "array");
  assert.equal(input.prefixItems, [{ type: "string" }, { type: "number" }]);
});

test("optional and nullable", () => {
  const { input } = schemas(z.object({ a: z.string().optional(), b: z.string().nullable() }));
  assert.equal(input.required, ["b"]);
  assert.equal(types(input.properties.b), ["null", "string"]);
});

test("defaults: optional in the input schema, required in the output schema", () => {
  const shape = z.object({ n: z.number().default(5) });
  const { input, output } = schemas(shape, shape);
  assert.is(input.required, undefined);
  assert.is(input.properties.n.default, 5);
  assert.equal(output.required, ["n"]);
});

test("input transforms: the input schema describes what is accepted before parsing", () => {
  const { input } = schemas(z.object({ when: z.string().transform((s) => s.length) }));
  assert.equal(input.properties.when, { type: "string" });
});

test("output pipes describe the parsed side", () => {
  const { output } = schemas(z.object({}), z.string().transform((s) => s.length).pipe(z.number()));
  assert.equal(output.type, "number");
});

test("recursive types", () => {
  const Node: z.ZodType<{ name: string; children: unknown[] }> = z.object({ name: z.string(), get children() { return z.array(Node); } });
  const { input } = schemas(Node);
  const text = JSON.stringify(input);
  assert.ok(text.includes('"$ref"'), text);
});

test("descriptions are kept", () => {
  const { input } = schemas(z.object({ id: z.string().describe("the record id") }).describe("a lookup"));
  assert.is(input.description, "a lookup");
  assert.is(input.properties.id.description, "the record id");
});

test("ordinary objects allow extras; strict objects forbid them", () => {
  assert.is(schemas(z.object({ a: z.string() })).input.additionalProperties, undefined);
  assert.is(schemas(z.strictObject({ a: z.string() })).input.additionalProperties, false);
});

test("unrepresentable schemas throw a TypeError at declaration", () => {
  for (const bad of [z.object({ d: z.date() }), z.bigint(), z.object({ f: z.custom<string>(() => true) }), z.symbol()]) {
    assert.throws(() => schemas(bad), (e: unknown) => e instanceof TypeError && /cannot be represented as JSON Schema/.test((e as Error).message));
  }
  // an output transform without a parsed-side schema has no JSON Schema either
  assert.throws(() => schemas(z.object({}), z.string().transform((s) => s.length)), TypeError);
});

test.run();
