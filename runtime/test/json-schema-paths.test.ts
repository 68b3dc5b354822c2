// The paths of validateSchema's issues are JSON Pointers (RFC 6901): `~` and `/` in a key are
// escaped, any other key is taken as it is.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { validateSchema } from "../src/environments/json-schema.ts";

const schema = { type: "object", additionalProperties: { type: "number" } };

test("a key without ~ or / is the pointer's token as it is", () => {
  assert.equal(validateSchema(schema, { x: "no", "é b": "no" }).map((i) => i.path), ["/x", "/é b"]);
});

test("~ and / in a key are escaped as ~0 and ~1, at every depth", () => {
  assert.equal(validateSchema(schema, { "a/b~c": "no" }).map((i) => i.path), ["/a~1b~0c"]);
  const nested = { type: "object", properties: { "p/q": { type: "array", items: { type: "object", required: ["~k"] } } } };
  assert.equal(validateSchema(nested, { "p/q": [{}, { "~k": 1 }, {}] }).map((i) => i.path), ["/p~1q/0/~0k", "/p~1q/2/~0k"]);
});

test.run();
