import { type ExternalSchemas, type SchemaNode, refExpression } from "./json-schema.ts";

// Translates one JSON Schema node into the source text of an equivalent TypeBox expression.
// Defs are emitted as named constants in dependency order, so a $ref is just the constant's name.
export function typeboxExpression(node: SchemaNode, external?: ExternalSchemas): string {
  const opts = options(node);
  if (node.$ref) return refExpression(node.$ref, external);
  if (node.oneOf || node.anyOf) {
    const members = (node.oneOf ?? node.anyOf)!.map((m) => typeboxExpression(m, external));
    return `Type.Union([${members.join(", ")}]${opts})`;
  }
  if ("const" in node) return `Type.Literal(${JSON.stringify(node.const)}${opts})`;
  if (node.enum) return `Type.Union([${node.enum.map((v) => `Type.Literal(${JSON.stringify(v)})`).join(", ")}]${opts})`;
  if (Array.isArray(node.type)) {
    return `Type.Union([${node.type.map((t) => typeboxExpression({ ...node, type: t, description: undefined }, external)).join(", ")}]${opts})`;
  }
  switch (node.type) {
    case undefined: return `Type.Unknown(${opts.slice(2)})`;
    case "string": return `Type.String(${options(node, ["minLength", "maxLength", "pattern"]).slice(2)})`;
    case "integer": return `Type.Integer(${options(node, ["minimum"]).slice(2)})`;
    case "number": return `Type.Number(${options(node, ["minimum"]).slice(2)})`;
    case "boolean": return `Type.Boolean(${opts.slice(2)})`;
    case "null": return `Type.Null(${opts.slice(2)})`;
    case "array": {
      if (!node.items) throw new Error("array without items");
      return `Type.Array(${typeboxExpression(node.items, external)}${options(node, ["minItems", "uniqueItems"])})`;
    }
    case "object": {
      const required = new Set(node.required ?? []);
      const props = Object.entries(node.properties ?? {}).map(([key, child]) => {
        const expr = typeboxExpression(child, external);
        return `${JSON.stringify(key)}: ${required.has(key) ? expr : `Type.Optional(${expr})`}`;
      });
      for (const key of required) {
        if (!(key in (node.properties ?? {}))) throw new Error(`required property ${key} is not declared`);
      }
      const extra: (keyof SchemaNode)[] = node.additionalProperties === false ? ["additionalProperties"] : [];
      return `Type.Object({ ${props.join(", ")} }${options(node, extra)})`;
    }
    default: throw new Error(`unsupported type ${String(node.type)}`);
  }
}

function options(node: SchemaNode, keys: (keyof SchemaNode)[] = []): string {
  const picked: Record<string, unknown> = {};
  if (node.description !== undefined) picked.description = node.description;
  for (const key of keys) if (node[key] !== undefined) picked[key] = node[key];
  return Object.keys(picked).length === 0 ? "" : `, ${JSON.stringify(picked)}`;
}

/** The TypeBox types `typeboxType` may name; emitters import them (type-only) from @sinclair/typebox. */
export const TYPEBOX_TYPES = ["TArray", "TBoolean", "TInteger", "TLiteral", "TNull", "TNumber", "TObject", "TOptional", "TString", "TUnion", "TUnknown"];

/**
 * The declared type of `typeboxExpression(node)`, written out so every exported constant has an
 * explicit type (JSR's "no slow types"): it mirrors the expression node for node, and a one-member
 * union is the member itself, as `Type.Union` returns it.
 */
export function typeboxType(node: SchemaNode, external?: ExternalSchemas): string {
  const union = (members: string[]) => (members.length === 1 ? members[0]! : `TUnion<[${members.join(", ")}]>`);
  if (node.$ref) return `typeof ${refExpression(node.$ref, external)}`;
  if (node.oneOf || node.anyOf) return union((node.oneOf ?? node.anyOf)!.map((m) => typeboxType(m, external)));
  if ("const" in node) return `TLiteral<${JSON.stringify(node.const)}>`;
  if (node.enum) return union(node.enum.map((v) => `TLiteral<${JSON.stringify(v)}>`));
  if (Array.isArray(node.type)) return union(node.type.map((t) => typeboxType({ ...node, type: t, description: undefined }, external)));
  switch (node.type) {
    case undefined: return "TUnknown";
    case "string": return "TString";
    case "integer": return "TInteger";
    case "number": return "TNumber";
    case "boolean": return "TBoolean";
    case "null": return "TNull";
    case "array": return `TArray<${typeboxType(node.items!, external)}>`;
    case "object": {
      const required = new Set(node.required ?? []);
      const props = Object.entries(node.properties ?? {}).map(([key, child]) => {
        const t = typeboxType(child, external);
        return `${JSON.stringify(key)}: ${required.has(key) ? t : `TOptional<${t}>`}`;
      });
      return `TObject<{ ${props.join("; ")} }>`;
    }
    default: throw new Error(`unsupported type ${String(node.type)}`);
  }
}
