// Enforces the layering of docs/ARCHITECTURE.md over every TypeScript file in the repository, and
// shows on synthetic files that each rule really fires.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { checkFile, checkRepository, classify } from "../import-rules.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const messages = (rel, text) => checkFile(rel, text).map((v) => v.message);
const rejects = (rel, text, pattern) => {
  const found = messages(rel, text);
  assert.ok(found.length > 0, `expected a violation in ${rel} for:\n${text}`);
  if (pattern) assert.ok(found.some((m) => pattern.test(m)), `expected ${pattern} in ${JSON.stringify(found)}`);
};
const accepts = (rel, text) => assert.equal(messages(rel, text), [], `expected no violation in ${rel} for:\n${text}`);

test("every TypeScript file in the repository keeps to the layering", () => {
  const { files, violations } = checkRepository(root);
  assert.ok(files.length > 0, "the scan found no TypeScript files at all");
  const report = violations.map((v) => `${v.file}:${v.line}: ${v.message}`).join("\n");
  assert.is(violations.length, 0, `import-boundary violations:\n${report}`);
});

test("sdk-node/contracts/tool.wit is byte-identical to contract/tool.wit (run scripts/copy-contract.mjs)", () => {
  const contract = readFileSync(join(root, "contract/tool.wit"));
  const copy = readFileSync(join(root, "sdk-node/contracts/tool.wit"));
  assert.ok(contract.equals(copy), "sdk-node/contracts/tool.wit has drifted from contract/tool.wit");
});

test("sdk-core rejects node:* imports in every import form", () => {
  rejects("sdk-core/src/a.ts", `import { readFile } from "node:fs";`, /Node builtins/);
  rejects("sdk-core/src/a.ts", `import type { Server } from "node:http";`, /Node builtins/);
  rejects("sdk-core/src/a.ts", `export { EventEmitter } from "events";`, /Node builtins/);
  rejects("sdk-core/src/a.ts", `const fs = await import("node:fs/promises");`, /Node builtins/);
  rejects("sdk-core/src/a.ts", `type T = import("node:stream").Readable;`, /Node builtins/);
  rejects("sdk-core/src/a.ts", `/// <reference types="node" />\nexport const x = 1;`);
});

test("sdk-core rejects Node and Deno globals but not property names or local bindings", () => {
  rejects("sdk-core/src/a.ts", `export const port = process.env.PORT;`, /`process`/);
  rejects("sdk-core/src/a.ts", `export const b = Buffer.from("x");`, /`Buffer`/);
  rejects("sdk-core/src/a.ts", `export const d = Deno.env.get("X");`, /`Deno`/);
  rejects("sdk-core/src/a.ts", `export const p = globalThis.process;`, /`process`/);
  rejects("sdk-core/src/a.ts", `export const p = globalThis["Deno"];`, /`Deno`/);
  rejects("sdk-core/src/a.ts", `declare const process: { env: Record<string, string> };\nexport const e = process.env;`, /`process`/);
  rejects("sdk-core/src/a.ts", `export const o = { process: 1 };\nexport const e = process.env;`, /`process`/);
  accepts("sdk-core/src/a.ts", `export const o = { process: 1, Buffer: 2 };\nexport const q = o.process;\ninterface I { process: number }`);
  accepts("sdk-core/src/a.ts", `export function run(process: () => void) { process(); }`);
  accepts("sdk-core/src/a.ts", `// process.env is not allowed here\nexport const s = "Buffer and Deno";`);
});

test("runtime: an empty rejection handler or error listener needs a comment saying where the failure is handled", () => {
  rejects("runtime/src/cluster/a.ts", `void p.then((x) => x, () => {});`, /empty rejection handler/);
  rejects("runtime/src/hosts/a.ts", `ws.on("error", () => {});`, /empty `error` listener/);
  accepts("runtime/src/hosts/a.ts", `ws.on("error", () => {\n  // the close that follows ends the connection's calls\n});`);
  accepts("runtime/src/cluster/a.ts", `void p.then((x) => x, () => {\n  // never opened: nothing to close\n});`);
  accepts("runtime/src/hosts/a.ts", `ws.on("message", () => {});`);
});

test("runtime: process.env is read in runtime/src/config.ts only", () => {
  rejects("runtime/src/environments/managed/a.ts", `export const bin = process.env.BRAIN_NODE;`, /config\.ts only/);
  rejects("runtime/src/server.ts", `export const e = process["env"];`, /config\.ts only/);
  rejects("runtime/src/cluster/node.ts", `const { PATH } = process.env;`, /config\.ts only/);
  accepts("runtime/src/config.ts", `export const bin = process.env.BRAIN_NODE;`);
  accepts("runtime/test/a.test.ts", `const dir = process.env.TMPDIR;`);
  accepts("runtime/src/cli.ts", `process.exit(0);\nexport const argv = process.argv;`);
});

test("runtime: a swallowed failure is logged or says why it is handled", () => {
  rejects("runtime/src/dispatch/a.ts", `export const f = (p: Promise<void>) => p.catch(() => {});`, /empty callback drops a failure/);
  rejects("runtime/src/dispatch/a.ts", `export const f = (p: Promise<void>) => p.catch(function () {});`, /empty callback/);
  rejects("runtime/src/dispatch/a.ts", `export const f = (p: Promise<void>) => void p.then(() => 1).catch((_e) => {}).finally(() => {});`, /empty callback/);
  rejects("runtime/src/dispatch/a.ts", `export const f = (p: Promise<void>) => p.catch(() => {}); // a comment outside does not count`, /empty callback/);
  rejects("runtime/src/http/a.ts", `export function f(s: string) {\n  try {\n    JSON.parse(s);\n  } catch {}\n}`, /empty `catch \{\}`/);
  rejects("runtime/src/http/a.ts", `export function f(s: string) {\n  try {\n    JSON.parse(s);\n  } catch (e) {\n  }\n}`, /empty `catch \{\}`/);
  accepts("runtime/src/dispatch/a.ts", `export const f = (p: Promise<void>) => p.catch(() => {\n  // Handled: the caller awaits p and reports it.\n});`);
  accepts("runtime/src/dispatch/a.ts", `export const f = (p: Promise<void>) => p.catch(() => { /* harmless: already closed */ });`);
  accepts("runtime/src/dispatch/a.ts", `import type { Logger } from "../logger.ts";\nexport const f = (p: Promise<void>, log: Logger) => p.catch((e) => log.warn("x failed", { error: String(e) }));`);
  accepts("runtime/src/dispatch/a.ts", `export const f = (p: Promise<number>) => p.catch(() => 0);\nexport const g = (p: Promise<void>) => p.then(() => {}, () => undefined);`);
  accepts("runtime/src/http/a.ts", `export function f(s: string) {\n  try {\n    return JSON.parse(s);\n  } catch {\n    // not JSON: the caller gets undefined\n  }\n}`);
  accepts("runtime/src/journal/postgres.ts", `export const f = (c: { end(): Promise<void> }) => c.end().catch(() => {});`);
  accepts("runtime/test/a.test.ts", `export const f = (p: Promise<void>) => p.catch(() => {});`);
  accepts("sdk-node/src/a.ts", `export const f = (p: Promise<void>) => p.catch(() => {});`);
});

test("runtime: only the CLI uses console; everything else logs through its Logger", () => {
  rejects("runtime/src/sessions/a.ts", `console.error("x failed");`, /not `console`/);
  rejects("runtime/src/server.ts", `export const warn = console.warn;`, /not `console`/);
  rejects("runtime/src/environments/a.ts", `console["log"]("x");`, /not `console`/);
  accepts("runtime/src/cli.ts", `console.error("brain: x");`);
  accepts("runtime/src/keys-command.ts", `console.log("key_1");`);
  accepts("runtime/test/a.test.ts", `console.log("debugging a test");`);
  accepts("runtime/src/sessions/a.ts", `// console.error is not used here\nexport const o = { console: 1 };\nexport const c = o.console;`);
});

test("runtime layers: a lower folder may not import a higher one", () => {
  rejects("runtime/src/journal/a.ts", `import type { Dispatcher } from "../dispatch/dispatcher.ts";`, /runtime layer journal may not import the higher layer dispatch/);
  rejects("runtime/src/models/a.ts", `import { SessionManager } from "../sessions/manager.ts";`, /higher layer sessions/);
  rejects("runtime/src/dispatch/a.ts", `import type { HostEnvironment } from "../environments/host.ts";`, /higher layer environments/);
  rejects("runtime/src/environments/component/a.ts", `import { environmentPlugins } from "../../server.ts";`, /higher layer the top files/);
  rejects("runtime/src/errors.ts", `import { x } from "./journal/store.ts";`, /runtime layer errors.ts \+ json-limits.ts \+ redact.ts \+ logger.ts may not import/);
  rejects("runtime/src/json-limits.ts", `import { x } from "./hosts/registry.ts";`, /may not import the higher layer hosts/);
  accepts("runtime/src/sessions/a.ts", `import { SessionState } from "../journal/session.ts";\nimport { Agentloop } from "../agentloop/loop.ts";\nimport { b } from "./b.ts";`);
  accepts("runtime/src/environments/component/a.ts", `import { sendJson } from "../../http/respond.ts";\nimport { BrainRuntimeError } from "../../errors.ts";`);
  accepts("runtime/src/server.ts", `import { handle } from "./http/routes.ts";\nimport { environmentPlugins } from "./environments/plugins.ts";`);
  accepts("runtime/test/a.test.ts", `import { startBrain } from "../src/server.ts";`);
});

test("runtime floor: errors.ts and json-limits.ts may be imported from every layer, and from each other", () => {
  for (const from of ["journal/a.ts", "models/a.ts", "dispatch/a.ts", "hosts/a.ts", "agentloop/a.ts", "sessions/a.ts", "http/a.ts"]) {
    accepts(`runtime/src/${from}`, `import { checkJsonTextDepth } from "../json-limits.ts";\nimport { BrainRuntimeError } from "../errors.ts";`);
  }
  accepts("runtime/src/environments/component/a.ts", `import { jsonTextDepth } from "../../json-limits.ts";`);
  accepts("runtime/src/server.ts", `import { jsonTextDepth } from "./json-limits.ts";`);
  accepts("runtime/src/errors.ts", `import { tooDeepMessage } from "./json-limits.ts";`);
  accepts("runtime/src/json-limits.ts", `import { BrainRuntimeError } from "./errors.ts";`);
});

test("sdk-core may import generated and zod only", () => {
  accepts("sdk-core/src/a.ts", `import { validate } from "@aexhq/brain-protocol";\nimport { z } from "zod";\nimport { b } from "./b.ts";`);
  rejects("sdk-core/src/a.ts", `import WebSocket from "ws";`, /may not depend on ws/);
  rejects("sdk-core/src/a.ts", `import { startBrain } from "@aexhq/brain-runtime";`, /may not import from runtime/);
});

test("generated may import only @sinclair/typebox, WIT interfaces and itself", () => {
  accepts("generated/a.ts", `import { Type } from "@sinclair/typebox";\nimport { TypeCompiler } from "@sinclair/typebox/compiler";\nimport { x } from "./schemas.ts";`);
  accepts("generated/wit/host/tool.d.ts", `import type { Outcome } from "brain:tool/types@0.2.0";`);
  rejects("generated/a.ts", `import { z } from "zod";`, /may not depend on zod/);
  rejects("generated/a.ts", `import { readFileSync } from "node:fs";`, /Node builtins/);
});

test("contract imports nothing; codegen only contract and its own tools", () => {
  rejects("contract/x.ts", `import { Type } from "@sinclair/typebox";`);
  accepts("codegen/src/a.ts", `import { Project } from "ts-morph";\nimport { readFileSync } from "node:fs";\nimport schema from "../../contract/protocol.schema.json" with { type: "json" };`);
  rejects("codegen/src/a.ts", `import { validate } from "@aexhq/brain-protocol";`, /may not import from generated/);
});

test("runtime may import generated, Node, ws and better-sqlite3 but no SDK", () => {
  accepts("runtime/src/a.ts", `import { routeRuntimeFrame } from "@aexhq/brain-protocol";\nimport { WebSocketServer } from "ws";\nimport Database from "better-sqlite3";\nimport { createServer } from "node:http";`);
  rejects("runtime/src/a.ts", `import { tool } from "@aexhq/brain";`, /may not import from sdk-node/);
  rejects("runtime/src/a.ts", `import { tool } from "@aexhq/brain-core";`, /may not import from sdk-core/);
});

test("sdk-node and sdk-deno sit on sdk-core, not on generated or runtime", () => {
  accepts("sdk-node/src/index.ts", `export * from "@aexhq/brain-core";\nimport WebSocket from "ws";`);
  rejects("sdk-node/src/index.ts", `import { validate } from "@aexhq/brain-protocol";`, /may not import from generated/);
  accepts("sdk-deno/mod.ts", `export * from "@aexhq/brain-core";`);
  rejects("sdk-deno/mod.ts", `import { startBrain } from "@aexhq/brain-runtime";`, /may not import from runtime/);
});

test("cross-folder relative imports must use the package name", () => {
  rejects("sdk-node/src/index.ts", `export * from "../../sdk-core/src/index.ts";`, /package name/);
  rejects("runtime/src/a.ts", `import { x } from "../../../outside.ts";`, /leaves the repository/);
});

test("nothing but bench imports conformance, examples or bench", () => {
  rejects("sdk-node/src/a.ts", `import "@aexhq/brain-examples";`, /may not import from examples/);
  rejects("runtime/test/a.test.ts", `import { scenarios } from "@aexhq/brain-conformance";`, /may not import from conformance/);
  rejects("examples/lookup/main.ts", `import { run } from "../../bench/x.ts";`, /may not import from bench/);
  rejects("conformance/src/a.ts", `import { main } from "../../examples/lookup/main.ts";`, /may not import from examples/);
  accepts("bench/a.ts", `import { x } from "@aexhq/brain-conformance";\nimport "@aexhq/brain-examples";\nimport { y } from "../examples/lookup/main.ts";`);
  accepts("conformance/src/a.ts", `import { startBrain } from "@aexhq/brain-runtime";\nimport { tool } from "@aexhq/brain";`);
  accepts("examples/lookup/main.ts", `import { tool } from "@aexhq/brain";\nimport { startBrain } from "@aexhq/brain-runtime";\nimport { z } from "zod";`);
});

test("tests may use Node and drive the real runtime, even in sdk-core", () => {
  accepts("sdk-core/test/host.test.ts", `import { test } from "uvu";\nimport { spawn } from "node:child_process";\nimport { startBrain } from "@aexhq/brain-runtime";\nconst dir = process.env.TMPDIR;`);
  accepts("sdk-deno/mod_test.ts", `import { assertEquals } from "jsr:@std/assert";\nimport { startBrain } from "@aexhq/brain-runtime";`);
  rejects("sdk-deno/mod.ts", `import { startBrain } from "@aexhq/brain-runtime";`, /may not import from runtime/);
});

test("relative imports name the .ts file so Deno can run the sources", () => {
  rejects("runtime/src/a.ts", `import { open } from "./journal/sqlite";`, /without a file extension/);
  rejects("runtime/src/a.ts", `import { open } from "./journal";`, /without a file extension/);
  const exists = (rel) => rel === "runtime/src/journal/sqlite.ts" || rel === "runtime/src/vendor/lib.js";
  assert.ok(checkFile("runtime/src/a.ts", `import { open } from "./journal/sqlite.js";`, { exists }).some((v) => /not a \.js alias/.test(v.message)));
  assert.equal(checkFile("runtime/src/a.ts", `import lib from "./vendor/lib.js";\nimport { open } from "./journal/sqlite.ts";`, { exists }), []);
  accepts("generated/wit/host/tool.d.ts", `import type { Host } from "./interfaces/brain-tool-host.js";`);
  accepts("codegen/src/a.ts", `import schema from "../../contract/protocol.schema.json" with { type: "json" };`);
});

test("specifiers are classified by package name, scheme and path", () => {
  assert.equal(classify("sdk-core/src/a.ts", "@aexhq/brain/contracts/tool.wit"), { kind: "area", area: "sdk-node", relative: false });
  assert.equal(classify("sdk-deno/mod.ts", "npm:zod@4"), { kind: "external", name: "zod" });
  assert.equal(classify("sdk-deno/mod.ts", "jsr:@std/assert@1/equals"), { kind: "external", name: "@std/assert" });
  assert.equal(classify("runtime/src/a.ts", "fs/promises"), { kind: "node" });
  assert.equal(classify("runtime/src/a.ts", "../../generated/index.ts").area, "generated");
});

test.run();
