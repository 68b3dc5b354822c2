import type { ProtocolSchema } from "./json-schema.ts";

/**
 * generated/digest.ts: the one implementation of the contract digest, for the runtime and every
 * SDK. The canonical form is RFC 8785 (JCS) through the `canonicalize` package (the reference
 * implementation by one of the RFC's authors); the hash is Web Crypto's SHA-256, so the module stays
 * platform-neutral (Node, Deno, browsers). The fields come from the schema's `x-brain-digest`.
 */
export function emitDigest(schema: ProtocolSchema, headerText: string): string {
  const spec = schema["x-brain-digest"];
  if (spec.canonicalization !== "RFC 8785" || spec.hash !== "SHA-256") {
    throw new Error(`x-brain-digest: only RFC 8785 + SHA-256 is implemented, not ${spec.canonicalization} + ${spec.hash}`);
  }
  const def = schema.$defs[spec.def];
  if (def === undefined) throw new Error(`x-brain-digest: no def ${spec.def}`);
  const required = new Set(def.required ?? []);
  for (const f of spec.fields) if (!def.properties?.[f]) throw new Error(`x-brain-digest: ${spec.def} has no property ${f}`);
  const fieldType = (f: string) => (def.properties![f]!.type === "string" ? "string" : "unknown");
  const iface = spec.fields.map((f) => `  ${f}${required.has(f) ? "" : "?"}: ${fieldType(f)};`).join("\n");
  const body = spec.fields.map((f) => `    ${f}: ${required.has(f) ? `c.${f}` : `c.${f} ?? null`},`).join("\n");
  return `${headerText}
import canonicalize from "canonicalize";

/** The fields of a ${spec.def} its digest covers, in the order x-brain-digest lists them. */
export const DIGEST_FIELDS: readonly string[] = ${JSON.stringify(spec.fields)};

/** What the digest is computed from: a ${spec.def} without \`digest\` (other properties are ignored). */
export interface DigestInput {
${iface}
}

/**
 * RFC 8785 JSON Canonicalization Scheme: keys sorted by UTF-16 code units, numbers as ECMAScript
 * writes IEEE 754 doubles, no whitespace. Throws on a value that is not JSON (NaN, Infinity, a
 * cycle); a property whose value is undefined is left out, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("canonicalJson: the value has no JSON form");
  return text;
}

/** The canonical text a digest hashes: JCS of {${spec.fields.join(", ")}}, an absent schema as null. */
export function contractDigestText(c: DigestInput): string {
  return canonicalJson({
${body}
  });
}

/** Lowercase hex SHA-256 (Web Crypto) of bytes, or of a string's UTF-8 bytes. */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const hash = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  let hex = "";
  for (const b of new Uint8Array(hash)) hex += b.toString(16).padStart(2, "0");
  return hex;
}

/** ${spec.description.replace(/\*\//g, "*\\/")} */
export function contractDigest(c: DigestInput): Promise<string> {
  return sha256Hex(contractDigestText(c));
}

/**
 * The digest an approval names (ToolCallStartedRecord \`approval.inputDigest\`): lowercase hex SHA-256
 * of the UTF-8 bytes of the RFC 8785 canonical form of a call's input, as journaled. One digest for
 * the runtime that asks and every client that decides, so a decision names exactly the input seen.
 */
export function inputDigest(input: unknown): Promise<string> {
  return sha256Hex(canonicalJson(input));
}
`;
}
