import type { z } from "zod";

/**
 * Whether a Zod schema parses the same with `safeParse` as with `safeParseAsync`: true only when
 * no part of it runs a function of the tool's author that Zod would await (a refinement, a
 * transform, a codec, `z.custom`, a lazy or promise schema). For those the async parse stays the
 * only one: a sync attempt would drop an async refinement's promise (an unhandled rejection) and
 * run the refinement twice (bench/README.md, "Tried and dropped"). Decided on the schema's
 * definition, never by trying, and conservatively: a type or check kind not listed here (a later
 * Zod's) counts as async. The sync parse saves ~0.5 µs a call (Zod compiles plain objects to one
 * function in sync mode only), and the microtask turn the await took.
 */
export function parsesSynchronously(schema: z.ZodType): boolean {
  let answer = decided.get(schema);
  if (answer === undefined) decided.set(schema, (answer = syncOnly(schema, new Set())));
  return answer;
}

const decided = new WeakMap<object, boolean>();

/** Built-in checks: they run no author's function, or run it synchronously in both modes (overwrite: `.trim()`, `.overwrite(fn)`). */
const SYNC_CHECKS = new Set([
  "bigint_format", "greater_than", "length_equals", "less_than", "max_length", "max_size", "mime_type",
  "min_length", "min_size", "multiple_of", "number_format", "overwrite", "size_equals", "string_format",
]);

/** Types with no inner schema and nothing awaited. */
const LEAVES = new Set([
  "any", "bigint", "boolean", "date", "enum", "file", "literal", "nan", "never", "null", "number", "string",
  "symbol", "template_literal", "undefined", "unknown", "void",
]);

/** Wrappers of one inner schema (`innerType`); default, prefault and catch call their value functions synchronously in both modes. */
const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "nonoptional", "readonly", "catch", "success"]);

interface Def {
  type: string;
  checks?: Array<{ _zod?: { def?: { check?: string } } }>;
  [key: string]: unknown;
}

function syncOnly(schema: unknown, seen: Set<unknown>): boolean {
  // A recursive schema (an object's shape getter naming itself): its other parts decide.
  if (seen.has(schema)) return true;
  seen.add(schema);
  const def = (schema as { _zod?: { def?: Def } } | undefined)?._zod?.def;
  if (def === undefined || typeof def.type !== "string") return false;
  for (const c of def.checks ?? []) if (!SYNC_CHECKS.has(c?._zod?.def?.check ?? "")) return false;
  const inner = innerSchemas(def);
  if (inner === undefined) return false;
  for (const s of inner) if (!syncOnly(s, seen)) return false;
  return true;
}

/** The schemas a definition contains, or undefined for a type that may await (or that this list does not know). */
function innerSchemas(def: Def): unknown[] | undefined {
  if (LEAVES.has(def.type)) return [];
  if (WRAPPERS.has(def.type)) return [def.innerType];
  switch (def.type) {
    case "object":
      return def.catchall === undefined ? Object.values(def.shape as object) : [...Object.values(def.shape as object), def.catchall];
    case "array":
      return [def.element];
    case "set":
      return [def.valueType];
    case "record":
    case "map":
      return [def.keyType, def.valueType];
    case "tuple":
      return def.rest == null ? [...(def.items as unknown[])] : [...(def.items as unknown[]), def.rest];
    case "union":
      return [...(def.options as unknown[])];
    case "intersection":
      return [def.left, def.right];
    case "pipe":
      // A codec is a pipe with its own transforms.
      return def.transform === undefined ? [def.in, def.out] : undefined;
    default:
      // transform, custom, lazy, promise, function, and any type not listed.
      return undefined;
  }
}
