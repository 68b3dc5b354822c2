import { type WitFunction, type WitType, camel } from "./wit-interface.ts";

/**
 * Raw canonical-ABI lowerings of the `brain:tool/host` functions, for wit/host-imports.mjs.
 *
 * Components are transpiled with jco's "hybrid" import bindings: an import function carrying a
 * `Symbol.for("cabiLower")` factory is linked as the core function the factory returns (given the
 * guest's memory and realloc), skipping jco's generic per-call glue (a task, a subtask, borrow
 * tracking: several µs a call, paid on every emit, finish and telemetry). The lowered function
 * reads the flat core arguments, calls the same JS import function, and writes its result where
 * the canonical ABI puts it. A function whose signature uses a type not handled here gets no
 * factory and goes through jco's glue as before (so a WIT change never mis-lowers silently).
 *
 * Handled: parameters `string`, `option<string>`, enums; results none, or
 * `result<u64 | s64 | string | _, E>` with E a string or a record of strings.
 */
export type LoweringNamed = Map<string, { kind: "enum"; cases: string[] } | { kind: "record"; fields: { name: string; type: WitType }[] }>;

const isString = (t: WitType | undefined) => t?.kind === "primitive" && t.name === "string";

/** Size and alignment in linear memory of the result payload types handled here. */
function layout(t: WitType | undefined, named: LoweringNamed): { size: number; align: number } | undefined {
  if (t === undefined) return { size: 0, align: 1 };
  if (t.kind === "primitive" && (t.name === "u64" || t.name === "s64")) return { size: 8, align: 8 };
  if (isString(t)) return { size: 8, align: 4 };
  if (t.kind === "named") {
    const n = named.get(t.name);
    if (n?.kind === "record" && n.fields.every((f) => isString(f.type))) return { size: 8 * n.fields.length, align: 4 };
  }
  return undefined;
}

/** The flat parameters of one WIT parameter and the JS expression lifting them; undefined if unhandled. */
function liftParam(t: WitType, i: number, named: LoweringNamed): { flat: string[]; expr: string } | undefined {
  if (isString(t)) return { flat: [`p${i}`, `n${i}`], expr: `text(memory, p${i}, n${i})` };
  if (t.kind === "option" && isString(t.of)) return { flat: [`d${i}`, `p${i}`, `n${i}`], expr: `d${i} === 0 ? undefined : d${i} === 1 ? text(memory, p${i}, n${i}) : bad("option discriminant")` };
  if (t.kind === "named") {
    const n = named.get(t.name);
    if (n?.kind === "enum") return { flat: [`e${i}`], expr: `${JSON.stringify(n.cases)}[e${i}] ?? bad("${t.name} discriminant")` };
  }
  return undefined;
}

/** Statements writing a payload value `v` of type `t` at `at` (a JS expression). */
function store(t: WitType, v: string, at: string, named: LoweringNamed): string {
  if (t.kind === "primitive" && t.name === "u64") return `new DataView(memory.buffer).setBigUint64(${at}, BigInt.asUintN(64, BigInt(${v})), true);`;
  if (t.kind === "primitive" && t.name === "s64") return `new DataView(memory.buffer).setBigInt64(${at}, BigInt.asIntN(64, BigInt(${v})), true);`;
  if (isString(t)) return `storeText(memory, realloc, ${at}, ${v});`;
  const n = named.get((t as { name: string }).name) as { fields: { name: string }[] };
  return n.fields.map((f, k) => `storeText(memory, realloc, ${at} + ${8 * k}, ${v}.${camel(f.name)});`).join("\n        ");
}

/** `imports.<name>[CABI_LOWER] = ...` for one function, or undefined when its signature is not handled. */
function lowering(f: WitFunction, named: LoweringNamed): string | undefined {
  const lifted = f.params.map((p, i) => liftParam(p.type, i, named));
  if (lifted.some((l) => l === undefined)) return undefined;
  const params = lifted.map((l) => l!.flat).flat();
  const call = `imports.${camel(f.name)}(${lifted.map((l) => l!.expr).join(", ")})`;
  const name = camel(f.name);
  if (f.result === undefined) {
    return `  imports.${name}[CABI_LOWER] = (${params.length ? "{ memory }" : ""}) =>\n    function ${name}(${params.join(", ")}) {\n      ${call};\n    };`;
  }
  if (f.result.kind !== "result") return undefined;
  const ok = layout(f.result.ok, named);
  const err = layout(f.result.err, named);
  if (ok === undefined || err === undefined || f.result.err === undefined) return undefined;
  // result<ok, err>: a u8 discriminant, then the payload at the larger of the two alignments.
  const payload = Math.max(ok.align, err.align);
  const okStore = f.result.ok === undefined ? "" : `\n      ${store(f.result.ok, "value", `retptr + ${payload}`, named)}`;
  return `  imports.${name}[CABI_LOWER] = ({ memory, realloc }) =>
    function ${name}(${[...params, "retptr"].join(", ")}) {
      let value;
      try {
        value = ${call};
      } catch (e) {
        const payload = errorPayload(e);
        ${store(f.result.err, "payload", `retptr + ${payload}`, named)}
        new DataView(memory.buffer).setUint8(retptr, 1);
        return;
      }${okStore}
      new DataView(memory.buffer).setUint8(retptr, 0);
    };`;
}

/** The lowering statements for every handled function, and the helpers they use (module scope). */
export function emitHostLowerings(functions: WitFunction[], named: LoweringNamed): { statements: string; helpers: string } {
  const statements = functions.map((f) => lowering(f, named)).filter((s): s is string => s !== undefined);
  const helpers = `
// --- Raw canonical-ABI lowerings (jco "hybrid" bindings link a function's Symbol.for("cabiLower")
// factory instead of its per-call glue). Traps where jco's glue would: a bad discriminant, a
// thrown value that is not a WIT error.
const CABI_LOWER = Symbol.for("cabiLower");
const textDecoder = new TextDecoder();
const textEncoder = new TextEncoder();

function text(memory, ptr, len) {
  return textDecoder.decode(new Uint8Array(memory.buffer, ptr, len));
}

function bad(what) {
  throw new TypeError(\`invalid \${what}\`);
}

/** A string copied into guest memory, its (ptr, len) stored at \`at\`: one exact allocation. */
function storeText(memory, realloc, at, s) {
  if (typeof s !== "string") throw new TypeError(\`expected a string, received [\${typeof s}]\`);
  let ptr = 1;
  const bytes = textEncoder.encode(s);
  if (bytes.length > 0) {
    ptr = realloc(0, 0, 1, bytes.length);
    new Uint8Array(memory.buffer, ptr, bytes.length).set(bytes);
  }
  const view = new DataView(memory.buffer);
  view.setUint32(at, ptr, true);
  view.setUint32(at + 4, bytes.length, true);
}

/** What jco lowers into a WIT result's error case: a thrown \`{ payload }\`'s payload; an Error traps. */
function errorPayload(e) {
  if (e !== null && typeof e === "object" && Object.hasOwn(e, "payload")) return e.payload;
  if (e instanceof Error) throw e;
  return e;
}
`;
  return { statements: statements.join("\n"), helpers };
}
