import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { validate, issues, type DefName } from "@aexhq/brain-protocol";
import { readExamples } from "../src/generate.ts";
import type { ProtocolSchema, SchemaNode } from "../src/json-schema.ts";
import { refName } from "../src/json-schema.ts";

const root = join(import.meta.dirname, "../..");
const schema = JSON.parse(readFileSync(join(root, "contract/protocol.schema.json"), "utf8")) as ProtocolSchema;
const examples = readExamples(root);
const defNames = Object.keys(schema.$defs) as DefName[];

test("every $defs entry has a description and an example", () => {
  for (const name of defNames) {
    assert.ok(schema.$defs[name]!.description, `${name} has no description`);
    assert.ok(examples.has(name), `contract/examples/${name}.json is missing`);
  }
  assert.is(Object.keys(validate).length, defNames.length, "one compiled validator per def");
});

test("every example validates against its def with the generated validator", () => {
  for (const [name, value] of examples) {
    assert.ok(name in validate, `example ${name}.json names no def`);
    assert.equal(issues(name as DefName, value), [], `${name}.json`);
  }
});

/** The object-shaped def an example instantiates (following $ref and picking the union member it matches). */
function objectShape(node: SchemaNode, value: unknown): SchemaNode | undefined {
  if (node.$ref) return objectShape(schema.$defs[refName(node.$ref)]!, value);
  if (node.oneOf) {
    for (const member of node.oneOf) {
      const name = refName(member.$ref!) as DefName;
      if (validate[name].Check(value)) return objectShape(member, value);
    }
    return undefined;
  }
  return node.type === "object" && node.properties ? node : undefined;
}

const wrongTypeFor = (value: unknown) => (typeof value === "string" ? 12345 : "not-the-right-type");

test("a copy of each example without a required field is rejected", () => {
  let mutated = 0;
  for (const [name, value] of examples) {
    const shape = objectShape(schema.$defs[name]!, value);
    for (const key of shape?.required ?? []) {
      const copy = structuredClone(value) as Record<string, unknown>;
      delete copy[key];
      assert.ok(!validate[name as DefName].Check(copy), `${name} without "${key}" was accepted`);
      mutated++;
    }
  }
  assert.ok(mutated > 100, `only ${mutated} mutations were tried`);
});

test("a copy of each example with a field of the wrong type is rejected", () => {
  for (const [name, value] of examples) {
    const def = schema.$defs[name]!;
    if (def.type === "string" || def.enum) {
      assert.ok(!validate[name as DefName].Check(42), `${name} accepted a number`);
      assert.ok(!validate[name as DefName].Check("no-such-value"), `${name} accepted an unlisted string`);
      continue;
    }
    const shape = objectShape(def, value);
    if (!shape) {
      assert.is(name, "JsonValue", `${name} has no object shape to mutate`);
      continue;
    }
    // Any JSON is acceptable where the schema says so; mutate a property that has a real type.
    const present = Object.keys(shape.properties!).filter((k) => k in (value as object));
    const typed = present.filter((k) => {
      const p = shape.properties![k]!;
      return p.type !== undefined || p.$ref !== undefined && refName(p.$ref) !== "JsonValue" || p.const !== undefined || p.enum !== undefined;
    });
    assert.ok(typed.length > 0, `${name} has no typed property to mutate`);
    for (const key of typed) {
      const copy = structuredClone(value) as Record<string, unknown>;
      copy[key] = wrongTypeFor(copy[key]);
      assert.ok(!validate[name as DefName].Check(copy), `${name} with "${key}" of the wrong type was accepted`);
    }
    if (shape.additionalProperties === false) {
      const copy = { ...(value as object), unexpectedProperty: 1 };
      assert.ok(!validate[name as DefName].Check(copy), `${name} accepted an extra property`);
    }
  }
});

test("outcome envelopes with a reserved status but the wrong shape are rejected", () => {
  const bad = [
    { status: "ok" },
    { status: "ok", value: 1, extra: true },
    { status: "error", error: { message: "no code" } },
    { status: "error", error: { code: "x", message: "m", retryable: "yes" } },
    { status: "timeout", value: 1 },
    { status: "unknown", error: {} },
  ];
  for (const value of bad) assert.ok(!validate.Outcome.Check(value), JSON.stringify(value));
  assert.ok(validate.Outcome.Check({ status: "ok", value: { status: "done" } }));
});

test.run();
