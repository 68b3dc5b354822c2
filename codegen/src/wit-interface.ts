/**
 * A reader for the part of WIT that tool.wit uses: interfaces holding records, enums and
 * functions, with `///` doc comments. jco validates the whole file (emit-wit.ts); this reader
 * only extracts the shapes the host-import generator needs, and refuses anything it does not
 * understand so a contract change cannot silently produce wrong bindings.
 */

/** A WIT type expression: a primitive, a named type, or option/result/list of types. */
export type WitType =
  | { kind: "primitive"; name: "string" | "bool" | "u8" | "u16" | "u32" | "u64" | "s8" | "s16" | "s32" | "s64" | "f32" | "f64" }
  | { kind: "named"; name: string }
  | { kind: "option"; of: WitType }
  | { kind: "result"; ok?: WitType; err?: WitType }
  | { kind: "list"; of: WitType };

export interface WitParam {
  name: string;
  type: WitType;
  docs?: string;
}

export interface WitFunction {
  name: string;
  docs: string;
  params: WitParam[];
  result?: WitType;
}

export interface WitRecord {
  kind: "record";
  name: string;
  docs: string;
  fields: WitParam[];
}

export interface WitEnum {
  kind: "enum";
  name: string;
  docs: string;
  cases: string[];
}

export interface WitInterface {
  name: string;
  docs: string;
  /** Names brought in by `use other.{a, b};`, mapped to the interface that defines them. */
  uses: Map<string, string>;
  types: (WitRecord | WitEnum)[];
  functions: WitFunction[];
}

const PRIMITIVES = new Set(["string", "bool", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f32", "f64"]);

/** Every top-level interface of a WIT package source, by name. */
export function readInterfaces(source: string): Map<string, WitInterface> {
  const out = new Map<string, WitInterface>();
  const tokens = lines(source);
  for (let i = 0; i < tokens.length; i++) {
    const m = /^interface\s+([a-z][a-z0-9-]*)\s*\{$/.exec(tokens[i]!.text);
    if (!m) continue;
    const iface: WitInterface = { name: m[1]!, docs: tokens[i]!.docs, uses: new Map(), types: [], functions: [] };
    for (i++; i < tokens.length && tokens[i]!.text !== "}"; i++) {
      const { text, docs } = tokens[i]!;
      let u: RegExpExecArray | null;
      if ((u = /^use\s+([a-z][a-z0-9-]*)\.\{([^}]*)\};$/.exec(text))) {
        for (const name of u[2]!.split(",").map((s) => s.trim()).filter(Boolean)) iface.uses.set(name, u[1]!);
      } else if ((u = /^(record|enum)\s+([a-z][a-z0-9-]*)\s*\{$/.exec(text))) {
        const body: string[] = [];
        const fieldDocs: string[] = [];
        for (i++; tokens[i]!.text !== "}"; i++) {
          body.push(tokens[i]!.text.replace(/,$/, ""));
          fieldDocs.push(tokens[i]!.docs);
        }
        if (u[1] === "enum") iface.types.push({ kind: "enum", name: u[2]!, docs, cases: body });
        else iface.types.push({ kind: "record", name: u[2]!, docs, fields: body.map((f, k) => ({ ...param(f), docs: fieldDocs[k]! })) });
      } else if ((u = /^([a-z][a-z0-9-]*)\s*:\s*func\((.*)\)\s*(?:->\s*(.+))?;$/.exec(text))) {
        const params = splitTopLevel(u[2]!).map((p) => param(p));
        iface.functions.push({ name: u[1]!, docs, params, ...(u[3] ? { result: typeOf(u[3]) } : {}) });
      } else {
        throw new Error(`tool.wit: the host-import generator does not understand \`${text}\` in interface ${iface.name}`);
      }
    }
    out.set(iface.name, iface);
  }
  return out;
}

function param(text: string): WitParam {
  const m = /^([a-z][a-z0-9-]*)\s*:\s*(.+)$/.exec(text.trim());
  if (!m) throw new Error(`tool.wit: cannot read parameter \`${text}\``);
  return { name: m[1]!, type: typeOf(m[2]!) };
}

/** Parses one type expression such as `result<u64, tool-error>` or `option<string>`. */
export function typeOf(text: string): WitType {
  const t = text.trim();
  const generic = /^(option|result|list)<(.*)>$/.exec(t);
  if (generic) {
    const args = splitTopLevel(generic[2]!);
    if (generic[1] === "option") return { kind: "option", of: typeOf(args[0]!) };
    if (generic[1] === "list") return { kind: "list", of: typeOf(args[0]!) };
    const ok = args[0] === "_" ? undefined : typeOf(args[0]!);
    return { kind: "result", ...(ok ? { ok } : {}), ...(args[1] ? { err: typeOf(args[1]) } : {}) };
  }
  if (t === "result") return { kind: "result" };
  if (PRIMITIVES.has(t)) return { kind: "primitive", name: t as Extract<WitType, { kind: "primitive" }>["name"] };
  if (/^[a-z][a-z0-9-]*$/.test(t)) return { kind: "named", name: t };
  throw new Error(`tool.wit: unsupported type expression \`${t}\``);
}

/** Splits `a, b<c, d>, e` on the commas that are not inside angle brackets. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "<") depth++;
    if (ch === ">") depth--;
    if (ch === "," && depth === 0) {
      parts.push(current.trim());
      current = "";
    } else current += ch;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

/** Source lines without comments, each with the `///` docs that precede it; multi-line items joined. */
function lines(source: string): { text: string; docs: string }[] {
  const out: { text: string; docs: string }[] = [];
  let docs: string[] = [];
  let pending = "";
  for (const raw of source.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("///")) {
      docs.push(line.slice(3).replace(/^ /, ""));
      continue;
    }
    const code = line.replace(/\/\/.*$/, "").trim();
    if (!code) continue;
    pending = pending ? `${pending} ${code}` : code;
    // A function signature may span lines; everything else here ends in `{`, `}`, `;` or `,`.
    if (!/[{};,]$/.test(pending)) continue;
    out.push({ text: pending, docs: docs.join("\n") });
    pending = "";
    docs = [];
  }
  return out;
}

/** kebab-case → camelCase, as jco names functions and parameters. */
export function camel(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** kebab-case → PascalCase, as jco names types. */
export function pascal(name: string): string {
  const c = camel(name);
  return c.charAt(0).toUpperCase() + c.slice(1);
}
