import { z } from "zod";

/**
 * The JSON Schema Brain advertises for a Zod schema. Input uses io "input" (what is accepted before
 * parsing: defaulted fields optional); output uses io "output" (the parsed value). Unrepresentable
 * schemas throw a TypeError at declaration, as the spec requires.
 */
export function jsonSchemaOf(schema: z.ZodType, io: "input" | "output", what: string): Record<string, unknown> {
  try {
    const json = z.toJSONSchema(schema, { io, unrepresentable: "throw", target: "draft-2020-12" }) as Record<string, unknown>;
    return json;
  } catch (e) {
    throw new TypeError(`${what} cannot be represented as JSON Schema: ${(e as Error).message}`);
  }
}

export function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === "object" && value !== null && typeof (value as { safeParseAsync?: unknown }).safeParseAsync === "function" && "_zod" in value;
}

/** Zod issues as plain JSON for `details`. */
export function issuesOf(error: z.ZodError): { path: (string | number)[]; message: string; code: string }[] {
  return error.issues.map((i) => ({ path: i.path.map((p) => (typeof p === "symbol" ? String(p) : p)), message: i.message, code: i.code }));
}
