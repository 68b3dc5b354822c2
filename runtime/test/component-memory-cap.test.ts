// capMemories over real core modules (assembled from WAT with wasm-tools) run by V8: memory.grow
// past the cap fails inside the module, memory imports are made compatible, oversize starts refused.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { MemoryCapError, WASM_PAGE_BYTES, capMemories } from "../src/environments/component/memory-cap.ts";

type Wasm = {
  Module: new (b: Uint8Array) => object;
  Instance: new (m: object, i?: object) => { exports: Record<string, unknown> };
  Memory: new (d: { initial: number; maximum?: number }) => { buffer: ArrayBuffer };
};
const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

async function wat(text: string): Promise<Uint8Array> {
  const { parse } = await import("@bytecodealliance/jco-transpile/wasm-tools");
  return parse(text);
}

const MiB = 1024 * 1024;

test("a defined memory without max gets the cap: growing past it returns -1 inside the module", async () => {
  const bytes = await wat(`(module (memory (export "m") 1)
    (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0))))`);
  const capped = capMemories(bytes, 4 * MiB);
  assert.is.not(capped, bytes);
  const { exports } = new wasm.Instance(new wasm.Module(capped));
  const grow = exports.grow as (n: number) => number;
  assert.is(grow(3), 1); // 1 -> 4 pages (256 KiB), below the cap
  assert.is(grow((4 * MiB) / WASM_PAGE_BYTES - 4), 4); // exactly to the cap
  assert.is(grow(1), -1); // past it
  // Uncapped, the same module keeps growing.
  const free = new wasm.Instance(new wasm.Module(bytes)).exports.grow as (n: number) => number;
  assert.is(free((4 * MiB) / WASM_PAGE_BYTES + 1), 1);
});

test("a lower existing max is kept; sections after the memory section stay intact", async () => {
  const bytes = await wat(`(module (memory 1 2) (global (export "g") i32 (i32.const 7))
    (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0))) (data (i32.const 0) "hi"))`);
  const capped = capMemories(bytes, 64 * MiB);
  assert.is(capped, bytes); // nothing to change
  const { exports } = new wasm.Instance(new wasm.Module(capped));
  assert.is((exports.grow as (n: number) => number)(2), -1);
});

test("an imported memory with a max above the cap is lowered, and still accepts a capped memory", async () => {
  const bytes = await wat(`(module (import "env" "m" (memory 1 65536)) (import "env" "f" (func))
    (func (export "size") (result i32) (memory.size)))`);
  const capped = capMemories(bytes, 2 * MiB);
  assert.is.not(capped, bytes);
  const memory = new wasm.Memory({ initial: 1, maximum: 32 });
  const { exports } = new wasm.Instance(new wasm.Module(capped), { env: { m: memory, f: () => {} } });
  assert.is((exports.size as () => number)(), 1);
  // A memory bigger than the cap no longer satisfies the import.
  assert.throws(() => new wasm.Instance(new wasm.Module(capped), { env: { m: new wasm.Memory({ initial: 1, maximum: 64 }), f: () => {} } }));
});

test("a module whose initial memory is over the cap is refused with MemoryCapError", async () => {
  const bytes = await wat(`(module (memory 100))`);
  assert.throws(() => capMemories(bytes, 1 * MiB), (e: unknown) => e instanceof MemoryCapError && /starts at 100 pages/.test((e as Error).message));
});

test("bytes that are not a core module are returned unchanged", () => {
  const notWasm = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.is(capMemories(notWasm, MiB), notWasm);
  const component = new Uint8Array([0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0]);
  assert.is(capMemories(component, MiB), component);
});

test.run();
