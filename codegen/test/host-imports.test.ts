import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readInterfaces } from "../src/wit-interface.ts";
import { emitHostImports } from "../src/emit-host-imports.ts";
import { witTypes } from "../src/emit-wit.ts";
import { HOST_IMPORT_KEY, HOST_INTERFACE, hostImports } from "@aexhq/brain-protocol/host-imports";
import { dispatchHostImport, type HostImportHandler } from "@aexhq/brain-protocol";

const root = join(import.meta.dirname, "../..");
const wit = readFileSync(join(root, "contract/tool.wit"), "utf8");

test("the WIT reader sees every host function with its parameters and docs", () => {
  const host = readInterfaces(wit).get("host")!;
  assert.equal(host.functions.map((f) => f.name), ["emit", "emit-result", "finish", "returned", "model", "telemetry"]);
  const finish = host.functions.find((f) => f.name === "finish")!;
  assert.equal(finish.params.map((p) => p.name), ["outcome-json", "content"]);
  assert.equal(finish.params[0]!.type, { kind: "option", of: { kind: "primitive", name: "string" } });
  assert.equal(finish.result, { kind: "result", ok: { kind: "primitive", name: "u64" }, err: { kind: "named", name: "tool-error" } });
  assert.match(finish.docs, "Later emissions are rejected.");
  assert.equal(host.uses.get("tool-error"), "types");
});

test("the generated import object has exactly the functions jco declares for the host interface", () => {
  const jcoHost = witTypes(wit).host.get("interfaces/brain-tool-host.d.ts")!;
  const declared = [...jcoHost.matchAll(/export function (\w+)\(/g)].map((m) => m[1]).sort();
  const imports = hostImports({ call: () => ({ ok: 0 }) as never, post: () => {} });
  assert.equal(Object.keys(imports).sort(), declared);
  assert.is(HOST_INTERFACE, "brain:tool/host@0.2.0");
  assert.is(HOST_IMPORT_KEY, "brain:tool/host");
});

/** WebAssembly is a Node global, but this project's lib settings (no DOM) do not declare it. */
const { Memory } = (globalThis as unknown as { WebAssembly: { Memory: new (d: { initial: number }) => { buffer: ArrayBuffer } } }).WebAssembly;

test("the raw lowerings (jco hybrid bindings) read flat arguments and write results at the canonical ABI offsets", () => {
  const memory = new Memory({ initial: 1 });
  let top = 1024;
  const realloc = (_o: number, _s: number, align: number, size: number) => ((top = Math.ceil(top / align) * align), (top += size), top - size);
  const put = (s: string) => {
    const b = new TextEncoder().encode(s);
    const ptr = realloc(0, 0, 1, b.length);
    new Uint8Array(memory.buffer, ptr, b.length).set(b);
    return [ptr, b.length] as const;
  };
  const view = () => new DataView(memory.buffer);
  const text = (at: number) => new TextDecoder().decode(new Uint8Array(memory.buffer, view().getUint32(at, true), view().getUint32(at + 4, true)));
  const seen: unknown[] = [];
  const imports = hostImports({
    call: (op, args) => {
      seen.push([op, args]);
      if (op === "model") return { ok: "réponse" } as never;
      return ((args as { kind?: string }).kind === "bad" ? { err: { code: "invalid_request", message: "no ünïcode" } } : { ok: 2 ** 40 }) as never;
    },
    post: (op, args) => void seen.push([op, args]),
  });
  const lower = (f: unknown) => (f as Record<symbol, (ctx: object) => (...a: number[]) => void>)[Symbol.for("cabiLower")]!({ memory, realloc });
  const RET = 64;
  // emit: result<u64, tool-error> = discriminant, then the payload at +8 (u64 alignment).
  lower(imports.emit)(...put("tick"), ...put("{}"), RET);
  assert.is(view().getUint8(RET), 0);
  assert.is(view().getBigUint64(RET + 8, true), 2n ** 40n);
  lower(imports.emit)(...put("bad"), ...put("{}"), RET);
  assert.is(view().getUint8(RET), 1);
  assert.equal([text(RET + 8), text(RET + 16)], ["invalid_request", "no ünïcode"]);
  // finish: two option<string> (discriminant, ptr, len each).
  lower(imports.finish)(0, 0, 0, 1, ...put("done"), RET);
  assert.is(view().getBigUint64(RET + 8, true), 2n ** 40n);
  // model: result<string, tool-error>: the payload at +4.
  lower(imports.model)(...put("{}"), RET);
  assert.equal([view().getUint8(RET), text(RET + 4)], [0, "réponse"]);
  // telemetry: the level enum by discriminant; a bad one traps.
  lower(imports.telemetry)(2, ...put("careful"));
  assert.throws(() => lower(imports.telemetry)(9, ...put("x")), /invalid level discriminant/);
  assert.throws(() => lower(imports.finish)(2, 0, 0, 0, 0, 0, RET), /invalid option discriminant/);
  lower(imports.returned)();
  assert.equal(seen, [
    ["emit", { kind: "tick", dataJson: "{}" }],
    ["emit", { kind: "bad", dataJson: "{}" }],
    ["finish", { outcomeJson: undefined, content: "done" }],
    ["model", { requestJson: "{}" }],
    ["telemetry", { level: "warn", message: "careful" }],
    ["returned", {}],
  ]);
});

test("a function whose signature the lowering does not handle gets no raw lowering (jco's glue handles it)", () => {
  const out = emitHostImports(wit.replace("telemetry: func(level: level, message: string);", "telemetry: func(level: level, message: list<string>);"), "").mjs;
  assert.not.match(out, "imports.telemetry[CABI_LOWER]");
  assert.match(out, "imports.emit[CABI_LOWER]");
});

test("calls block on the bridge, u64 results become BigInt and an err reply throws the jco payload", () => {
  const seen: unknown[] = [];
  const imports = hostImports({
    call: (op, args) => {
      seen.push(["call", op, args]);
      return (op === "model" ? { err: { code: "unsupported", message: "no model" } } : { ok: 41 }) as never;
    },
    post: (op, args) => void seen.push(["post", op, args]),
  });
  assert.is(imports.emit("tick", "{}"), 41n);
  assert.is(imports.finish(undefined, "done"), 41n);
  imports.returned();
  imports.telemetry("warn", "careful");
  try {
    imports.model("{}");
    assert.unreachable("model should throw");
  } catch (e) {
    assert.equal(e, { payload: { code: "unsupported", message: "no model" } });
  }
  assert.equal(seen, [
    ["call", "emit", { kind: "tick", dataJson: "{}" }],
    ["call", "finish", { outcomeJson: undefined, content: "done" }],
    ["post", "returned", {}],
    ["post", "telemetry", { level: "warn", message: "careful" }],
    ["call", "model", { requestJson: "{}" }],
  ]);
});

test("dispatchHostImport checks arguments from the worker before calling the handler", async () => {
  const calls: unknown[] = [];
  const handler: HostImportHandler = {
    emit: (a) => (calls.push(a), 7),
    emitResult: () => 8,
    finish: (a) => (calls.push(a), 9),
    returned: () => {},
    model: () => "{}",
    telemetry: () => {},
  };
  assert.is(await dispatchHostImport(handler, "emit", { kind: "k", dataJson: "1" }), 7);
  assert.is(await dispatchHostImport(handler, "finish", { outcomeJson: null }), 9);
  assert.equal(calls, [{ kind: "k", dataJson: "1" }, {}]);
  for (const [op, args, message] of [
    ["emit", { kind: 1, dataJson: "1" }, "emit: kind must be string"],
    ["emitResult", { outcomeJson: "{}", content: 5 }, "emit-result: content must be option<string>"],
    ["telemetry", { level: "loud", message: "x" }, "telemetry: level must be level"],
    ["explode", {}, 'has no function "explode"'],
  ] as const) {
    try {
      await dispatchHostImport(handler, op, args);
      assert.unreachable(`${op} should be refused`);
    } catch (e) {
      assert.instance(e, TypeError);
      assert.match((e as Error).message, message);
    }
  }
});

test("a WIT the generator does not understand is refused, not half-generated", () => {
  assert.throws(() => emitHostImports(wit.replace("telemetry: func(level: level, message: string);", "telemetry: func(level: level, message: tuple<string, u8>);"), ""), /unsupported type expression/);
  assert.throws(() => emitHostImports(wit.replace("interface host {", "interface hosted {"), ""), /no `interface host`/);
});

test.run();
