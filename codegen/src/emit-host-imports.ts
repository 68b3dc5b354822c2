import { type WitFunction, type WitInterface, type WitType, camel, pascal, readInterfaces } from "./wit-interface.ts";
import { witPackage } from "./emit-wit.ts";
import { emitHostLowerings } from "./emit-host-lowering.ts";

/**
 * The host side of `brain:tool/host`, generated from tool.wit:
 *
 * - `wit/host-imports.mjs` (+ `.d.mts`): the import object a jco-transpiled component gets. It
 *   runs in the component's worker thread, where no TypeScript loader applies, hence plain JS.
 *   Each function forwards to a bridge: a function with a result blocks on `bridge.call` and
 *   turns `{err}` into the thrown `{payload}` jco lowers into the WIT `result`'s error case; a
 *   function without a result has nothing to wait for and is sent with `bridge.post` (in call
 *   order, on the same channel as the calls).
 * - `wit/host-dispatch.ts`: the runtime's side: argument and result types per function, the
 *   `HostImportHandler` the runtime implements (so a function added to the WIT is a type error
 *   until it is wired), and `dispatchHostImport`, which checks a message from the worker before
 *   calling the handler.
 *
 * Values cross the bridge as JSON: u64/s64 travel as numbers (journal sequences stay far below
 * 2^53) and become BigInt again on the guest side.
 */
export interface HostImportFiles {
  mjs: string;
  dmts: string;
  dispatch: string;
}

export function emitHostImports(witSource: string, headerText: string): HostImportFiles {
  const pkg = witPackage(witSource);
  const ifaces = readInterfaces(witSource);
  const host = ifaces.get("host");
  if (!host) throw new Error("tool.wit has no `interface host`");
  const [ns, version] = pkg.split("@") as [string, string];
  const interfaceName = `${ns}/host@${version}`;
  const named = namedTypes(host, ifaces);
  return {
    mjs: emitMjs(host, interfaceName, named, headerText),
    dmts: emitDmts(host, interfaceName, headerText),
    dispatch: emitDispatch(host, interfaceName, named, headerText),
  };
}

type Named = Map<string, { kind: "enum"; cases: string[]; docs: string } | { kind: "record"; fields: { name: string; type: WitType; docs?: string }[]; docs: string }>;

/** The records and enums the host interface can mention: its own and those it `use`s. */
function namedTypes(host: WitInterface, ifaces: Map<string, WitInterface>): Named {
  const out: Named = new Map();
  for (const t of host.types) out.set(t.name, t.kind === "enum" ? { kind: "enum", cases: t.cases, docs: t.docs } : { kind: "record", fields: t.fields, docs: t.docs });
  for (const [name, from] of host.uses) {
    const t = ifaces.get(from)?.types.find((x) => x.name === name);
    if (!t) throw new Error(`tool.wit: interface host uses ${from}.${name}, which does not exist`);
    out.set(name, t.kind === "enum" ? { kind: "enum", cases: t.cases, docs: t.docs } : { kind: "record", fields: t.fields, docs: t.docs });
  }
  return out;
}

const isPost = (f: WitFunction) => f.result === undefined;
const resultOf = (f: WitFunction) => (f.result?.kind === "result" ? f.result : f.result === undefined ? undefined : { kind: "result" as const, ok: f.result });

function jsdoc(text: string, indent = ""): string {
  if (!text) return "";
  return `${indent}/**\n${text.split("\n").map((l) => `${indent} * ${l.replace(/\*\//g, "*\\/")}`.trimEnd()).join("\n")}\n${indent} */\n`;
}

function isWide(t: WitType | undefined): boolean {
  return t?.kind === "primitive" && (t.name === "u64" || t.name === "s64");
}

// --- wit/host-imports.mjs ------------------------------------------------------------------

function emitMjs(host: WitInterface, interfaceName: string, named: Named, headerText: string): string {
  const lowered = emitHostLowerings(host.functions, named);
  const fns = host.functions.map((f) => {
    const params = f.params.map((p) => camel(p.name));
    const args = `{ ${params.join(", ")} }`.replace("{  }", "{}");
    const wide = f.params.filter((p) => isWide(p.type)).map((p) => camel(p.name));
    const argExpr = wide.length ? `{ ${params.map((p) => (wide.includes(p) ? `${p}: Number(${p})` : p)).join(", ")} }` : args;
    let body: string;
    if (isPost(f)) body = `bridge.post(${JSON.stringify(camel(f.name))}, ${argExpr});`;
    else {
      const ok = resultOf(f)!.ok;
      const value = `unwrap(bridge.call(${JSON.stringify(camel(f.name))}, ${argExpr}))`;
      body = ok === undefined ? `${value};` : `return ${isWide(ok) ? `BigInt(${value})` : value};`;
    }
    return `${jsdoc(f.docs, "    ")}    ${camel(f.name)}(${params.join(", ")}) {\n      ${body}\n    },`;
  });
  return `${headerText}
/** The interface a tool component imports the host functions from. */
export const HOST_INTERFACE = ${JSON.stringify(interfaceName)};
/** Its key in a jco \`instantiate\` import object (jco drops the version when only one is imported). */
export const HOST_IMPORT_KEY = ${JSON.stringify(interfaceName.replace(/@.*$/, ""))};

/**
 * The \`${interfaceName}\` import object for a jco-transpiled component (pass it as
 * \`imports[HOST_IMPORT_KEY]\`). \`bridge.call(op, args)\` blocks until the runtime answers
 * \`{ ok }\` or \`{ err }\`; \`bridge.post(op, args)\` sends a function that returns nothing.
 * @param {import("./host-imports.d.mts").HostBridge} bridge
 */
export function hostImports(bridge) {
  const imports = {
${fns.join("\n")}
  };
${lowered.statements}
  return imports;
}

/** A WIT \`result\`: jco lowers a thrown \`{ payload }\` into the error case. */
function unwrap(reply) {
  if (reply.err !== undefined) throw { payload: reply.err };
  return reply.ok;
}
${lowered.helpers}`;
}

function emitDmts(host: WitInterface, interfaceName: string, headerText: string): string {
  const calls = host.functions.filter((f) => !isPost(f)).map((f) => JSON.stringify(camel(f.name)));
  const posts = host.functions.filter(isPost).map((f) => JSON.stringify(camel(f.name)));
  return `${headerText}
import type { HostImportArgs, HostImportResults, WitToolError } from "./host-dispatch.ts";
import type * as Host from "./host/interfaces/brain-tool-host.js";

/** The functions answered by the runtime (they have a WIT result). */
export type HostCallOp = ${calls.join(" | ") || "never"};
/** The functions sent without waiting (no WIT result). */
export type HostPostOp = ${posts.join(" | ") || "never"};

/** How the guest-side import object reaches the runtime. */
export interface HostBridge {
  call<K extends HostCallOp>(op: K, args: HostImportArgs[K]): { ok: HostImportResults[K]; err?: undefined } | { ok?: undefined; err: WitToolError };
  post<K extends HostPostOp>(op: K, args: HostImportArgs[K]): void;
}

export declare const HOST_INTERFACE: ${JSON.stringify(interfaceName)};
export declare const HOST_IMPORT_KEY: ${JSON.stringify(interfaceName.replace(/@.*$/, ""))};
/** Typed against jco's own host declarations of the same WIT, so the two cannot disagree. */
export declare function hostImports(bridge: HostBridge): typeof Host;
`;
}

// --- wit/host-dispatch.ts ------------------------------------------------------------------

function tsType(t: WitType, named: Named): string {
  switch (t.kind) {
    case "primitive":
      return t.name === "string" ? "string" : t.name === "bool" ? "boolean" : "number";
    case "named":
      if (!named.has(t.name)) throw new Error(`tool.wit: unknown type ${t.name} in interface host`);
      return `Wit${pascal(t.name)}`;
    case "option":
      return `${tsType(t.of, named)} | undefined`;
    case "list":
      return `(${tsType(t.of, named)})[]`;
    case "result":
      throw new Error("tool.wit: a result nested in a parameter is not supported by the host-import generator");
  }
}

/** A boolean JS expression checking `v` (a value from the worker) against a WIT type. */
function check(t: WitType, v: string, named: Named): string {
  switch (t.kind) {
    case "primitive":
      if (t.name === "string") return `typeof ${v} === "string"`;
      if (t.name === "bool") return `typeof ${v} === "boolean"`;
      if (t.name.startsWith("u") || t.name.startsWith("s")) return `Number.isSafeInteger(${v})${t.name.startsWith("u") ? ` && (${v} as number) >= 0` : ""}`;
      return `typeof ${v} === "number"`;
    case "option":
      return `(${v} === undefined || ${v} === null || ${check(t.of, v, named)})`;
    case "list":
      return `(Array.isArray(${v}) && (${v} as unknown[]).every((x) => ${check(t.of, "x", named)}))`;
    case "named": {
      const n = named.get(t.name)!;
      if (n.kind === "enum") return `(${JSON.stringify(n.cases)} as unknown[]).includes(${v})`;
      return `(typeof ${v} === "object" && ${v} !== null)`;
    }
    case "result":
      throw new Error("tool.wit: a result parameter is not supported");
  }
}

function describe(t: WitType): string {
  switch (t.kind) {
    case "primitive":
      return t.name;
    case "named":
      return t.name;
    case "option":
      return `option<${describe(t.of)}>`;
    case "list":
      return `list<${describe(t.of)}>`;
    case "result":
      return "result";
  }
}

function emitDispatch(host: WitInterface, interfaceName: string, named: Named, headerText: string): string {
  const types = [...named].map(([name, t]) => {
    if (t.kind === "enum") return `${jsdoc(t.docs)}export type Wit${pascal(name)} = ${t.cases.map((c) => JSON.stringify(c)).join(" | ")};`;
    const fields = t.fields.map((f) => `${jsdoc(f.docs ?? "", "  ")}  ${camel(f.name)}${f.type.kind === "option" ? "?" : ""}: ${tsType(f.type, named)};`).join("\n");
    return `${jsdoc(t.docs)}export interface Wit${pascal(name)} {\n${fields}\n}`;
  });
  const argLines = host.functions.map((f) => {
    const fields = f.params.map((p) => `${camel(p.name)}${p.type.kind === "option" ? "?" : ""}: ${tsType(p.type, named)}`);
    return `${jsdoc(f.docs, "  ")}  ${camel(f.name)}: { ${fields.join("; ")}${fields.length ? ";" : ""} };`.replace("{  }", "{}");
  });
  const resultLines = host.functions.map((f) => {
    const ok = resultOf(f)?.ok;
    return `  ${camel(f.name)}: ${ok === undefined ? "void" : tsType(ok, named)};`;
  });
  const errTypes = new Set(host.functions.map((f) => resultOf(f)?.err).filter((e) => e !== undefined).map((e) => tsType(e!, named)));
  if (errTypes.size > 1) throw new Error("tool.wit: host functions use more than one error type; the bridge carries one");
  const cases = host.functions.map((f) => {
    const name = camel(f.name);
    const checks = f.params.map((p) => {
      const key = camel(p.name);
      return `      if (!(${check(p.type, `a.${key}`, named)})) throw badArgument(${JSON.stringify(f.name)}, ${JSON.stringify(p.name)}, ${JSON.stringify(describe(p.type))});`;
    });
    const fields = f.params.map((p) => {
      const key = camel(p.name);
      return p.type.kind === "option" ? `...(a.${key} === undefined || a.${key} === null ? {} : { ${key}: a.${key} })` : `${key}: a.${key}`;
    });
    const argType = `HostImportArgs[${JSON.stringify(name)}]`;
    return `    case ${JSON.stringify(name)}: {\n${checks.join("\n")}${checks.length ? "\n" : ""}      return handler.${name}({ ${fields.join(", ")} } as ${argType});\n    }`.replace("({  } as", "({} as");
  });
  return `${headerText}
${types.join("\n\n")}

/** The arguments of each \`${interfaceName}\` function, as they cross the bridge (camelCase, like jco). */
export interface HostImportArgs {
${argLines.join("\n")}
}

/** What each function's handler returns on success (its WIT result's ok case). */
export interface HostImportResults {
${resultLines.join("\n")}
}

export type HostImportOp = keyof HostImportArgs;

/**
 * The runtime's implementation of the host interface. A thrown error becomes the WIT result's
 * error case (${[...errTypes].join(", ") || "none"}); functions without a result cannot report one.
 */
export type HostImportHandler = { [K in HostImportOp]: (args: HostImportArgs[K]) => HostImportResults[K] | Promise<HostImportResults[K]> };

/** Checks one message from a component worker and runs it on \`handler\`; a malformed one throws a TypeError. */
export async function dispatchHostImport(handler: HostImportHandler, op: string, args: unknown): Promise<unknown> {
  const a = (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>;
  switch (op) {
${cases.join("\n")}
    default:
      throw new TypeError(\`${interfaceName} has no function \${JSON.stringify(op)}\`);
  }
}

function badArgument(fn: string, param: string, type: string): TypeError {
  return new TypeError(\`${interfaceName} \${fn}: \${param} must be \${type}\`);
}
`;
}
