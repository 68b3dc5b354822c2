// The subset of JSON Schema 2020-12 that contract/protocol.schema.json uses. The generator
// refuses anything outside it, so a contract change that needs a new keyword fails loudly here
// instead of producing a validator that silently accepts too much.
export interface SchemaNode {
  $ref?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, SchemaNode>;
  required?: string[];
  additionalProperties?: boolean;
  items?: SchemaNode;
  oneOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  minItems?: number;
  uniqueItems?: boolean;
  description?: string;
  [key: `x-${string}`]: unknown;
}

/** How a contract digest is computed (x-brain-digest). */
export interface DigestSpec { def: string; fields: string[]; canonicalization: string; hash: string; description: string }

export interface LimitEntry { value: number; description: string }

export interface ProtocolSchema {
  $schema: string;
  title: string;
  description: string;
  "x-brain-protocol": string;
  "x-brain-limits": Record<string, LimitEntry>;
  "x-brain-reserved-statuses": string[];
  "x-brain-digest": DigestSpec;
  "x-brain-close-codes": { code: number; name: string; when: string; host: string }[];
  $defs: Record<string, SchemaNode>;
}

export type DefKind = "common" | "outcome" | "model" | "frame" | "http" | "error" | "journal" | "link";
export type Direction = "host-to-runtime" | "runtime-to-host";

const KNOWN_KEYS = new Set([
  "$ref", "type", "const", "enum", "properties", "required", "additionalProperties", "items",
  "oneOf", "anyOf", "minLength", "maxLength", "pattern", "minimum", "minItems", "uniqueItems", "description",
]);

/**
 * Schemas another schema may reference by `$id` (`<id>#/$defs/Name`): the id, the namespace the
 * generated module imports them under, and the defs that exist there.
 */
export interface ExternalSchemas {
  id: string;
  alias: string;
  defs: Record<string, SchemaNode>;
}

/** The name of a local def, or `Alias.Name` for a def of an external schema. */
export function refExpression(ref: string, external?: ExternalSchemas): string {
  if (external && ref.startsWith(`${external.id}#/$defs/`)) {
    const name = ref.slice(`${external.id}#/$defs/`.length);
    if (!(name in external.defs)) throw new Error(`$ref ${ref}: ${external.id} has no def ${name}`);
    return `${external.alias}.${name}`;
  }
  return refName(ref);
}

function isExternal(ref: string): boolean {
  return !ref.startsWith("#");
}

export function refName(ref: string): string {
  const prefix = "#/$defs/";
  if (!ref.startsWith(prefix)) throw new Error(`unsupported $ref ${ref}: only local #/$defs/ references`);
  return ref.slice(prefix.length);
}

/** Throws on keywords the generator does not translate. */
export function assertSupported(node: SchemaNode, where: string): void {
  for (const key of Object.keys(node)) {
    if (key.startsWith("x-")) continue;
    if (!KNOWN_KEYS.has(key)) throw new Error(`${where}: JSON Schema keyword "${key}" is not supported by codegen`);
  }
  for (const [name, child] of Object.entries(node.properties ?? {})) assertSupported(child, `${where}.${name}`);
  if (node.items) assertSupported(node.items, `${where}[]`);
  for (const [i, child] of (node.oneOf ?? node.anyOf ?? []).entries()) assertSupported(child, `${where}|${i}`);
}

/** Names of the defs a node refers to, directly or nested. */
export function refsOf(node: SchemaNode, out = new Set<string>()): Set<string> {
  // References into another schema are imported, not ordered.
  if (node.$ref && !isExternal(node.$ref)) out.add(refName(node.$ref));
  for (const child of Object.values(node.properties ?? {})) refsOf(child, out);
  if (node.items) refsOf(node.items, out);
  for (const child of node.oneOf ?? node.anyOf ?? []) refsOf(child, out);
  return out;
}

/** Defs in an order where every def comes after the defs it references. */
export function topologicalOrder(defs: Record<string, SchemaNode>): string[] {
  const order: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string, path: string[]) => {
    if (!(name in defs)) throw new Error(`${path.join(" → ")}: reference to missing def ${name}`);
    const s = state.get(name);
    if (s === "done") return;
    if (s === "visiting") throw new Error(`recursive defs are not supported: ${[...path, name].join(" → ")}`);
    state.set(name, "visiting");
    for (const dep of [...refsOf(defs[name]!)].sort()) visit(dep, [...path, name]);
    state.set(name, "done");
    order.push(name);
  };
  for (const name of Object.keys(defs).sort()) visit(name, []);
  return order;
}

export function frameType(def: SchemaNode): string {
  const t = def.properties?.type?.const;
  if (typeof t !== "string") throw new Error("a frame def needs properties.type.const");
  return t;
}

/** `emit_result` → `emitResult`: the handler method name for a frame type. */
export function handlerName(type: string): string {
  return type.replace(/[_-]([a-z])/g, (_, c: string) => c.toUpperCase());
}
