import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { witTypes, witPackage } from "../src/emit-wit.ts";

const root = join(import.meta.dirname, "../..");
const wit = readFileSync(join(root, "contract/tool.wit"), "utf8");

test("tool.wit parses with jco and names brain:tool@0.2.0", () => {
  assert.is(witPackage(wit), "brain:tool@0.2.0");
  const { guest, host } = witTypes(wit);
  const world = guest.get("tool.d.ts");
  assert.ok(world, "guest types for world tool");
  assert.match(world!, "declare module 'brain:tool/tool@0.2.0'");
  assert.match(world!, "export function run(invocation: Invocation): void;");
  assert.ok(host.size > 0, "host types");
});

test("the host interface has emit, emit-result, finish, returned, model and telemetry", () => {
  const hostTypes = witTypes(wit).guest.get("interfaces/brain-tool-host.d.ts")!;
  for (const sig of [
    "export function emit(kind: string, dataJson: string): bigint;",
    "export function emitResult(outcomeJson: string, content: string | undefined): bigint;",
    "export function finish(outcomeJson: string | undefined, content: string | undefined): bigint;",
    "export function returned(): void;",
    "export function model(requestJson: string): string;",
    "export function telemetry(level: Level, message: string): void;",
  ]) assert.match(hostTypes, sig);
});

test("the invocation carries input, options, descriptor and deadline-at-ms, and no session id or sequence", () => {
  const types = witTypes(wit).guest.get("interfaces/brain-tool-types.d.ts")!;
  const invocation = /export interface Invocation \{([\s\S]*?)\n  \}/.exec(types)?.[1] ?? "";
  for (const field of ["input: string", "options: string", "descriptor?: string", "deadlineAtMs: bigint"]) assert.match(invocation, field);
  assert.not.match(invocation, /session/i);
  assert.not.match(invocation, /sequence:/);
});

test("a broken WIT is refused by jco", () => {
  assert.throws(() => witTypes(wit.replace("export run: func(invocation: invocation);", "export run: func(invocation: no-such-type);")));
});

test.run();
