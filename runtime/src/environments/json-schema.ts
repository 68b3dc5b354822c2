/**
 * A small JSON Schema (2020-12 / draft-07 subset) validator for the schemas tools advertise.
 *
 * Why hand-written: the tree has no raw-JSON-Schema validator (TypeBox's Value.Check needs TypeBox
 * schemas, ajv is not installed), and tools that run inside the runtime must have input and output
 * checked against their advertised schemas. It covers what `z.toJSONSchema` emits: type (single or
 * list), const, enum, properties/required/additionalProperties, items/prefixItems, min/max
 * (exclusive too), minLength/maxLength, pattern, minItems/maxItems, anyOf/oneOf/allOf/not,
 * propertyNames, $ref to "#" and "#/$defs/..." (or definitions). Unknown keywords (format,
 * description, default, title, ...) are ignored, as the spec allows for annotations.
 */

export interface SchemaIssue {
  path: string;
  message: string;
}

type Schema = boolean | Record<string, unknown>;

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function typeMatches(want: string, v: unknown): boolean {
  const got = typeOf(v);
  if (want === "number") return got === "number" || got === "integer";
  return got === want;
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => equal((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function resolveRef(root: Schema, ref: string): Schema | undefined {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    } catch {
      return undefined; // a bad percent-escape in the pointer: unresolvable, like any other
    }
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur as Schema | undefined;
}

function at(path: string, key: string | number): string {
  const k = String(key);
  // Most keys need no escape: no regular expression runs for them (every property of every checked value comes here).
  return k.includes("~") || k.includes("/") ? `${path}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}` : `${path}/${k}`;
}

function check(root: Schema, schema: Schema, v: unknown, path: string, out: SchemaIssue[], depth: number): void {
  if (depth > 64) {
    out.push({ path, message: "schema nesting too deep" });
    return;
  }
  if (schema === true) return;
  if (schema === false) {
    out.push({ path, message: "no value is allowed here" });
    return;
  }
  const s = schema;
  if (typeof s.$ref === "string") {
    const target = resolveRef(root, s.$ref);
    if (target === undefined) out.push({ path, message: `unresolvable $ref ${s.$ref}` });
    else check(root, target, v, path, out, depth + 1);
  }
  if (s.type !== undefined) {
    // A single type (the common case) is checked without making a list of it.
    const matches = typeof s.type === "string" ? typeMatches(s.type, v) : Array.isArray(s.type) && (s.type as string[]).some((t) => typeMatches(t, v));
    if (!matches) {
      const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
      out.push({ path, message: `expected ${types.join(" or ")}, got ${typeOf(v)}` });
      return;
    }
  }
  if ("const" in s && !equal(s.const, v)) out.push({ path, message: `expected ${JSON.stringify(s.const)}` });
  if (Array.isArray(s.enum) && !s.enum.some((e) => equal(e, v))) {
    out.push({ path, message: `expected one of ${JSON.stringify(s.enum)}` });
  }
  if (typeof v === "number") {
    if (typeof s.minimum === "number" && v < s.minimum) out.push({ path, message: `must be >= ${s.minimum}` });
    if (typeof s.maximum === "number" && v > s.maximum) out.push({ path, message: `must be <= ${s.maximum}` });
    if (typeof s.exclusiveMinimum === "number" && v <= s.exclusiveMinimum) out.push({ path, message: `must be > ${s.exclusiveMinimum}` });
    if (typeof s.exclusiveMaximum === "number" && v >= s.exclusiveMaximum) out.push({ path, message: `must be < ${s.exclusiveMaximum}` });
    if (typeof s.multipleOf === "number" && !Number.isInteger(v / s.multipleOf)) out.push({ path, message: `must be a multiple of ${s.multipleOf}` });
  }
  if (typeof v === "string") {
    const len = [...v].length;
    if (typeof s.minLength === "number" && len < s.minLength) out.push({ path, message: `must have at least ${s.minLength} characters` });
    if (typeof s.maxLength === "number" && len > s.maxLength) out.push({ path, message: `must have at most ${s.maxLength} characters` });
    if (typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(v)) out.push({ path, message: `must match ${s.pattern}` });
  }
  if (Array.isArray(v)) {
    if (typeof s.minItems === "number" && v.length < s.minItems) out.push({ path, message: `must have at least ${s.minItems} items` });
    if (typeof s.maxItems === "number" && v.length > s.maxItems) out.push({ path, message: `must have at most ${s.maxItems} items` });
    const prefix = Array.isArray(s.prefixItems) ? (s.prefixItems as Schema[]) : [];
    prefix.forEach((ps, i) => {
      if (i < v.length) check(root, ps, v[i], at(path, i), out, depth + 1);
    });
    if (s.items !== undefined && !Array.isArray(s.items)) {
      for (let i = prefix.length; i < v.length; i++) check(root, s.items as Schema, v[i], at(path, i), out, depth + 1);
    }
  }
  if (typeOf(v) === "object") {
    const obj = v as Record<string, unknown>;
    const props = (s.properties ?? {}) as Record<string, Schema>;
    if (Array.isArray(s.required)) {
      for (const k of s.required as string[]) if (!(k in obj)) out.push({ path: at(path, k), message: "required" });
    }
    for (const k in obj) {
      if (!Object.hasOwn(obj, k)) continue;
      const val = obj[k];
      if (k in props) check(root, props[k]!, val, at(path, k), out, depth + 1);
      else if (s.additionalProperties === false) out.push({ path: at(path, k), message: "unexpected property" });
      else if (s.additionalProperties !== undefined && s.additionalProperties !== true) {
        check(root, s.additionalProperties as Schema, val, at(path, k), out, depth + 1);
      }
      if (s.propertyNames !== undefined) check(root, s.propertyNames as Schema, k, at(path, k), out, depth + 1);
    }
  }
  if (Array.isArray(s.allOf)) for (const sub of s.allOf as Schema[]) check(root, sub, v, path, out, depth + 1);
  if (Array.isArray(s.anyOf)) {
    const ok = (s.anyOf as Schema[]).some((sub) => validateSchema(sub, v, root).length === 0);
    if (!ok) out.push({ path, message: "matches none of anyOf" });
  }
  if (Array.isArray(s.oneOf)) {
    const n = (s.oneOf as Schema[]).filter((sub) => validateSchema(sub, v, root).length === 0).length;
    if (n !== 1) out.push({ path, message: n === 0 ? "matches none of oneOf" : "matches more than one of oneOf" });
  }
  if (s.not !== undefined && validateSchema(s.not as Schema, v, root).length === 0) out.push({ path, message: "must not match `not`" });
}

/** Issues of `value` against `schema` (empty = valid). `root` resolves $ref; defaults to `schema`. */
export function validateSchema(schema: unknown, value: unknown, root: unknown = schema): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  check(root as Schema, schema as Schema, value, "", out, 0);
  return out;
}

/**
 * The smallest value `schema` accepts, as far as this validator's subset goes, or undefined when
 * none is found: required properties only, empty strings and arrays (or as short as min* allow),
 * 0 or the lower bound for numbers, false, the first `const` / `enum` / anyOf / oneOf branch. Made
 * for a component's warm-up run (component/pool.ts), which only needs an input the tool accepts.
 */
export function sampleOf(schema: unknown, root: unknown = schema): unknown {
  const v = sample(root as Schema, schema as Schema, 0);
  return v !== undefined && validateSchema(schema, v, root).length === 0 ? v : undefined;
}

function sample(root: Schema, schema: Schema, depth: number): unknown {
  if (depth > 16 || schema === false) return undefined;
  if (schema === true) return null;
  const s = schema;
  if (typeof s.$ref === "string") {
    const target = resolveRef(root, s.$ref);
    return target === undefined ? undefined : sample(root, target, depth + 1);
  }
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  for (const key of ["anyOf", "oneOf", "allOf"] as const) {
    if (Array.isArray(s[key]) && s.type === undefined && s.properties === undefined) return sample(root, (s[key] as Schema[])[0]!, depth + 1);
  }
  const type = Array.isArray(s.type) ? (s.type as string[])[0] : (s.type as string | undefined) ?? (s.properties !== undefined ? "object" : undefined);
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      const props = (s.properties ?? {}) as Record<string, Schema>;
      for (const k of Array.isArray(s.required) ? (s.required as string[]) : []) {
        const v = k in props ? sample(root, props[k]!, depth + 1) : null;
        if (v === undefined) return undefined;
        out[k] = v;
      }
      return out;
    }
    case "array": {
      const n = typeof s.minItems === "number" ? s.minItems : 0;
      if (n === 0) return [];
      const item = s.items !== undefined && !Array.isArray(s.items) ? sample(root, s.items as Schema, depth + 1) : null;
      return item === undefined ? undefined : Array.from({ length: n }, () => item);
    }
    case "string":
      return "a".repeat(typeof s.minLength === "number" ? s.minLength : 0);
    case "integer":
    case "number": {
      if (typeof s.minimum === "number") return type === "integer" ? Math.ceil(s.minimum) : s.minimum;
      if (typeof s.exclusiveMinimum === "number") return Math.floor(s.exclusiveMinimum) + 1;
      if (typeof s.maximum === "number" && s.maximum < 0) return type === "integer" ? Math.floor(s.maximum) : s.maximum;
      if (typeof s.exclusiveMaximum === "number" && s.exclusiveMaximum <= 0) return Math.ceil(s.exclusiveMaximum) - 1;
      return 0;
    }
    case "boolean":
      return false;
    case "null":
      return null;
    default:
      return {};
  }
}
