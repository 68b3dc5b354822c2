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
