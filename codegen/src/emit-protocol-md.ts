import type { ProtocolSchema, SchemaNode } from "./json-schema.ts";
import { refName } from "./json-schema.ts";

const SECTIONS: { kind: string; direction?: string; title: string; intro: string }[] = [
  { kind: "frame", direction: "host-to-runtime", title: "Frames: host → runtime", intro: "Sent by a host binding on the WebSocket `/v1/hosts/connect`. The first frame must be `register`." },
  { kind: "frame", direction: "runtime-to-host", title: "Frames: runtime → host", intro: "Sent by the runtime. `committed` and `rejected` answer the host frame with the same `ref`." },
  { kind: "outcome", title: "Outcomes", intro: "A value whose top-level `status` is one of the reserved statuses is an envelope and must match its shape exactly; otherwise it becomes an `error` with code `invalid_output`." },
  { kind: "http", title: "HTTP bodies", intro: "Every route except `GET /healthz` needs `Authorization: Bearer <token>`." },
  { kind: "journal", title: "Journal records", intro: "Append-only per session, gap-free sequences from 1. `tool.finished` appears exactly once per call." },
  { kind: "model", title: "Models", intro: "Model configuration, ModelRequest and ModelResult." },
  { kind: "error", title: "Errors", intro: "HTTP error bodies." },
  { kind: "common", title: "Common types", intro: "Referenced by the messages above." },
];

function typeText(node: SchemaNode): string {
  if (node.$ref) return `[${refName(node.$ref)}](#${refName(node.$ref).toLowerCase()})`;
  if ("const" in node) return `\`${JSON.stringify(node.const)}\``;
  if (node.enum) return node.enum.map((v) => `\`${JSON.stringify(v)}\``).join(" \\| ");
  if (node.oneOf || node.anyOf) return (node.oneOf ?? node.anyOf)!.map(typeText).join(" \\| ");
  if (Array.isArray(node.type)) return node.type.join(" \\| ");
  if (node.type === "array") return `${typeText(node.items ?? {})}[]`;
  if (node.type === undefined) return "any JSON";
  return node.type;
}

function fieldTable(node: SchemaNode): string[] {
  const props = Object.entries(node.properties ?? {});
  if (props.length === 0) return [];
  const required = new Set(node.required ?? []);
  const rows = props.map(([name, child]) => {
    const notes = [child.description, child.pattern && `pattern \`${child.pattern}\``, child.minimum !== undefined && `≥ ${child.minimum}`]
      .filter(Boolean).join("; ").replace(/\|/g, "\\|").replace(/\n/g, " ");
    return `| \`${name}\` | ${typeText(child)} | ${required.has(name) ? "yes" : "no"} | ${notes} |`;
  });
  const closed = node.additionalProperties === false ? ["", "No other properties are allowed."] : [];
  return ["| field | type | required | notes |", "| --- | --- | --- | --- |", ...rows, ...closed];
}

/** contract/PROTOCOL.md: the frame-by-frame reference a third-party implementer reads. */
export function emitProtocolMd(schema: ProtocolSchema, examples: Map<string, unknown>, headerText: string): string {
  const out: string[] = [headerText, `# ${schema.title}`, "", schema.description, ""];
  out.push("## Limits", "", "| name | value | meaning |", "| --- | --- | --- |");
  for (const [name, l] of Object.entries(schema["x-brain-limits"]).sort(([a], [b]) => a.localeCompare(b))) {
    out.push(`| \`${name}\` | ${l.value} | ${l.description} |`);
  }
  out.push("", `Reserved statuses: ${schema["x-brain-reserved-statuses"].map((s) => `\`${s}\``).join(", ")}.`, "");
  for (const section of SECTIONS) {
    const defs = Object.entries(schema.$defs)
      .filter(([, d]) => d["x-brain-kind"] === section.kind && (!section.direction || d["x-brain-direction"] === section.direction))
      .sort(([a], [b]) => a.localeCompare(b));
    if (defs.length === 0) continue;
    out.push(`## ${section.title}`, "", section.intro, "");
    for (const [name, def] of defs) {
      const frameType = def.properties?.type?.const;
      out.push(`### ${name}`, "");
      if (typeof frameType === "string" && section.kind === "frame") out.push(`Frame type \`${frameType}\`.`, "");
      if (typeof def["x-brain-route"] === "string") out.push(`Route: \`${def["x-brain-route"]}\`.`, "");
      out.push(def.description ?? "", "");
      if (def.oneOf) out.push(`One of: ${def.oneOf.map(typeText).join(", ")}.`, "");
      else if (def.enum) out.push(`Values: ${def.enum.map((v) => `\`${String(v)}\``).join(", ")}.`, "");
      const table = fieldTable(def);
      if (table.length) out.push(...table, "");
      if (examples.has(name)) out.push("Example:", "", "```json", JSON.stringify(examples.get(name), null, 2), "```", "");
    }
  }
  return out.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n";
}
