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
  {
    kind: "link", direction: "owner-to-host-node", title: "Node to node: owner → host's node",
    intro: "**Node to node only: third-party bindings never speak these.** A runtime of several nodes on one PostgreSQL database relays a call between the node that owns its session and the node its host is connected to, over a WebSocket between the two nodes (`/v1/cluster/link`, opened with the operator token every node shares; see `LinkMessage` for requests, answers and what a lost link means). A binding sees the relay only as the answers listed in \"Several nodes\" above. The messages are part of this contract so that every wire of Brain is defined here and validated by generated code (`routeLinkMessage` in `@aexhq/brain-protocol`). Sent by the node that owns the call's session:",
  },
  { kind: "link", direction: "host-node-to-owner", title: "Node to node: host's node → owner", intro: "Node to node only. Sent by the node the host is connected to, for a call relayed to it: each host frame for the call becomes the link request of the same type." },
  { kind: "link", direction: "either", title: "Node to node: answers, and every link message", intro: "Node to node only. Each answer carries the `id` of the request it answers as `re`." },
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

/** One row of contract/digest-vectors.json. */
export interface DigestVector { name: string; note: string; contract: string; canonical: string; digest: string }

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");
const code = (text: string) => "`` " + text.replace(/\|/g, "\\|") + " ``";

/** The tables the hand-written guide asks for with `{{name}}`. */
function guideTables(schema: ProtocolSchema, vectors: DigestVector[]): Record<string, string[]> {
  const digest = schema["x-brain-digest"];
  return {
    digest: [`${digest.description} Fields, in the canonical form's own key order: ${[...digest.fields].sort().map((f) => `\`${f}\``).join(", ")}.`],
    "digest-vectors": [
      "| vector | input (ToolContract JSON text) | canonical form | digest |", "| --- | --- | --- | --- |",
      ...vectors.map((v) => `| \`${v.name}\`: ${cell(v.note)} | ${code(v.contract)} | ${code(v.canonical)} | \`${v.digest}\` |`),
    ],
    "close-codes": [
      "| code | name | when | what the host does |", "| --- | --- | --- | --- |",
      ...schema["x-brain-close-codes"].map((c) => `| ${c.code} | \`${c.name}\` | ${cell(c.when)} | ${cell(c.host)} |`),
    ],
  };
}

/** The guide with every `{{name}}` replaced; an unknown name is an error, so a typo cannot ship. */
function renderGuide(guide: string, tables: Record<string, string[]>): string {
  return guide.replace(/\{\{([a-z-]+)\}\}/g, (_, name: string) => {
    const table = tables[name];
    if (table === undefined) throw new Error(`contract/protocol-guide.md: unknown table {{${name}}}`);
    return table.join("\n");
  });
}

function linkRole(def: SchemaNode): string {
  const props = def.properties ?? {};
  if ("id" in props) return "a request (answered once)";
  if ("re" in props) return "an answer";
  return "a notice (not answered)";
}

function answerTable(def: SchemaNode): string[] {
  const answers = def["x-brain-answers"] as { answer: string; code?: string; when: string }[] | undefined;
  if (!answers) return [];
  return [
    "Answers:", "",
    "| answer | code | when |", "| --- | --- | --- |",
    ...answers.map((a) => `| \`${a.answer}\` | ${a.code === undefined ? "" : a.code === "*" ? "any other" : `\`${a.code}\``} | ${cell(a.when)} |`),
    "",
  ];
}

/** contract/PROTOCOL.md: the frame-by-frame reference a third-party implementer reads. */
export function emitProtocolMd(schema: ProtocolSchema, examples: Map<string, unknown>, headerText: string, guide: string, vectors: DigestVector[]): string {
  const out: string[] = [headerText, `# ${schema.title}`, "", schema.description, ""];
  out.push("## Limits", "", "| name | value | meaning |", "| --- | --- | --- |");
  for (const [name, l] of Object.entries(schema["x-brain-limits"]).sort(([a], [b]) => a.localeCompare(b))) {
    out.push(`| \`${name}\` | ${l.value} | ${l.description} |`);
  }
  out.push("", `Reserved statuses: ${schema["x-brain-reserved-statuses"].map((s) => `\`${s}\``).join(", ")}.`, "");
  out.push(renderGuide(guide, guideTables(schema, vectors)), "");
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
      if (typeof frameType === "string" && section.kind === "link") out.push(`Message type \`${frameType}\`, ${linkRole(def)}.`, "");
      if (typeof def["x-brain-route"] === "string") out.push(`Route: \`${def["x-brain-route"]}\`.`, "");
      out.push(def.description ?? "", "");
      if (def.oneOf) out.push(`One of: ${def.oneOf.map(typeText).join(", ")}.`, "");
      else if (def.enum) out.push(`Values: ${def.enum.map((v) => `\`${String(v)}\``).join(", ")}.`, "");
      const table = fieldTable(def);
      if (table.length) out.push(...table, "");
      out.push(...answerTable(def));
      if (examples.has(name)) out.push("Example:", "", "```json", JSON.stringify(examples.get(name), null, 2), "```", "");
    }
  }
  return out.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n";
}
