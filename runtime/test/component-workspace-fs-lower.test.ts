// The raw canonical-ABI lowerings of the per-run wasi:filesystem calls (workspace-fs-lower.mjs),
// called the way jco's "hybrid" glue links them: a factory given the guest's memory, realloc and
// handle tables, returning the core function the guest calls. The bytes they write must be the
// canonical ABI's layout of what the JS methods answer, handles must name the right objects, and a
// handle made here must still work through jco's generic glue (a stand-in holding only the rep).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-ignore: plain .mjs without declarations (it runs inside worker threads).
import { workspaceFilesystem } from "../src/environments/component/workspace-fs.mjs";

const LOWER = Symbol.for("cabiLower");
const DISPOSE = Symbol.for("cabiDispose");
const REP = Symbol.for("cabiRep");
const T_FLAG = 1 << 30;
/** WebAssembly is a Node global, but this project's lib settings (no DOM) do not declare it. */
const { Memory } = (globalThis as unknown as { WebAssembly: { Memory: new (d: { initial: number }) => { buffer: ArrayBuffer } } }).WebAssembly;

/** A guest's side: one page of linear memory, a bump realloc, and jco's empty handle tables. */
function guest() {
  const memory = new Memory({ initial: 1 });
  let top = 1024;
  const realloc = (_old: number, _oldSize: number, align: number, size: number) => {
    top = Math.ceil(top / align) * align;
    const at = top;
    top += size;
    return at;
  };
  const descriptors: number[] = [T_FLAG, 0];
  const streams: number[] = [T_FLAG, 0];
  const view = () => new DataView(memory.buffer);
  const text = (ptr: number, len: number) => new TextDecoder().decode(new Uint8Array(memory.buffer, ptr, len));
  const put = (s: string) => {
    const bytes = new TextEncoder().encode(s);
    const ptr = realloc(0, 0, 1, bytes.length);
    new Uint8Array(memory.buffer, ptr, bytes.length).set(bytes);
    return [ptr, bytes.length] as const;
  };
  return { memory, realloc, descriptors, streams, view, text, put };
}

function workspace() {
  const root = mkdtempSync(join(tmpdir(), "brain-wsfs-lower-"));
  mkdirSync(join(root, "sub"));
  writeFileSync(join(root, "a.txt"), "hello");
  writeFileSync(join(root, "sub", "ünï.txt"), "");
  return root;
}

function lowered(mode: "read" | "write" = "read") {
  const root = workspace();
  const fs = workspaceFilesystem({ hostPath: root, mode });
  const g = guest();
  const { Descriptor, DirectoryEntryStream } = fs.types;
  const ctx = { memory: g.memory, realloc: g.realloc };
  return {
    root,
    fs,
    g,
    getDirectories: fs.preopens.getDirectories[LOWER]({ ...ctx, resourceTables: [g.descriptors] }),
    openAt: Descriptor.prototype.openAt[LOWER]({ ...ctx, resourceTables: [g.descriptors] }),
    statAt: Descriptor.prototype.statAt[LOWER]({ ...ctx, resourceTables: [g.descriptors] }),
    readDirectory: Descriptor.prototype.readDirectory[LOWER]({ ...ctx, resourceTables: [g.descriptors, g.streams] }),
    readDirectoryEntry: DirectoryEntryStream.prototype.readDirectoryEntry[LOWER]({ ...ctx, resourceTables: [g.streams] }),
    repOf: (table: number[], handle: number) => table[(handle << 1) + 1]! & ~T_FLAG,
  };
}

const RET = 256;

/** The preopen's handle, through the lowered get-directories (asserting its name). */
function preopen(l: ReturnType<typeof lowered>): number {
  l.getDirectories(RET);
  const v = l.g.view();
  const base = v.getUint32(RET, true);
  assert.is(v.getUint32(RET + 4, true), 1, "one preopen");
  assert.is(l.g.text(v.getUint32(base + 4, true), v.getUint32(base + 8, true)), "/workspace");
  return v.getInt32(base, true);
}

test("get-directories lowers the preopen with its name, a new own handle each time for the same object", () => {
  const l = lowered();
  try {
    const a = preopen(l);
    const b = preopen(l);
    assert.is.not(a, b);
    assert.is(l.repOf(l.g.descriptors, a), l.repOf(l.g.descriptors, b));
    assert.is(l.g.descriptors[(a << 1) + 1]! & T_FLAG, T_FLAG, "an own handle");
  } finally {
    rmSync(l.root, { recursive: true, force: true });
  }
});

test("stat-at writes descriptor-stat at the canonical offsets, and an error-code for a missing path", () => {
  const l = lowered();
  try {
    const root = preopen(l);
    const [ptr, len] = l.g.put("a.txt");
    l.statAt(root, 0, ptr, len, RET);
    const v = l.g.view();
    const st = lstatSync(join(l.root, "a.txt"), { bigint: true });
    assert.is(v.getUint8(RET), 0, "ok");
    assert.is(v.getUint8(RET + 8), 6, "regular-file");
    assert.is(v.getBigUint64(RET + 16, true), st.nlink);
    assert.is(v.getBigUint64(RET + 24, true), 5n);
    for (const [at, ns] of [[RET + 32, st.atimeNs], [RET + 56, st.mtimeNs], [RET + 80, st.ctimeNs]] as const) {
      assert.is(v.getUint8(at), 1, "some datetime");
      assert.is(v.getBigUint64(at + 8, true), ns / 1_000_000_000n);
      assert.is(v.getUint32(at + 16, true), Number(ns % 1_000_000_000n));
    }
    const [p2, l2] = l.g.put("nope");
    l.statAt(root, 0, p2, l2, RET);
    assert.is(v.getUint8(RET), 1, "err");
    assert.is(v.getUint8(RET + 8), 20, "no-entry");
  } finally {
    rmSync(l.root, { recursive: true, force: true });
  }
});

test("open-at, read-directory and read-directory-entry list a folder; a read grant refuses a create with read-only", () => {
  const l = lowered();
  try {
    const root = preopen(l);
    const v = l.g.view();
    const [ptr, len] = l.g.put("sub");
    // open-flags directory (2), descriptor-flags read (1)
    l.openAt(root, 0, ptr, len, 2, 1, RET);
    assert.is(v.getUint8(RET), 0, "ok");
    const sub = v.getInt32(RET + 4, true);
    l.readDirectory(sub, RET);
    assert.is(v.getUint8(RET), 0, "ok");
    const stream = v.getInt32(RET + 4, true);
    l.readDirectoryEntry(stream, RET);
    assert.equal([v.getUint8(RET), v.getUint8(RET + 4), v.getUint8(RET + 8)], [0, 1, 6], "ok, some, regular-file");
    assert.is(l.g.text(v.getUint32(RET + 12, true), v.getUint32(RET + 16, true)), "ünï.txt");
    l.readDirectoryEntry(stream, RET);
    assert.equal([v.getUint8(RET), v.getUint8(RET + 4)], [0, 0], "ok, none: the end");
    const [p2, l2] = l.g.put("probe");
    // open-flags create|exclusive (5), descriptor-flags write (2)
    l.openAt(root, 0, p2, l2, 5, 2, RET);
    assert.equal([v.getUint8(RET), v.getUint8(RET + 4)], [1, 33], "err read-only");
  } finally {
    rmSync(l.root, { recursive: true, force: true });
  }
});

test("a handle made here works through jco's generic glue (a stand-in with only the rep), and a dropped one is gone", () => {
  const l = lowered("write");
  try {
    const root = preopen(l);
    const v = l.g.view();
    const [ptr, len] = l.g.put("sub");
    l.openAt(root, 0, ptr, len, 2, 1, RET);
    const sub = v.getInt32(RET + 4, true);
    const { Descriptor } = l.fs.types;
    // What jco's glue builds for a rep it did not lower itself, then calls the JS method on.
    const standIn = Object.create(Descriptor.prototype);
    standIn[REP] = l.repOf(l.g.descriptors, sub);
    assert.is(standIn.statAt({ symlinkFollow: false }, "ünï.txt").type, "regular-file");
    const rootStandIn = Object.create(Descriptor.prototype);
    rootStandIn[REP] = l.repOf(l.g.descriptors, root);
    assert.ok(rootStandIn.isSameObject(l.fs.preopens.getDirectories()[0][0]));
    rootStandIn.createDirectoryAt("made");
    assert.is(rootStandIn.statAt({ symlinkFollow: false }, "made").type, "directory");
    // The guest drops the folder's handle (jco calls cabiDispose): it names nothing any more.
    Descriptor[DISPOSE](l.repOf(l.g.descriptors, sub));
    assert.throws(() => l.statAt(sub, 0, ptr, len, RET), /unknown handle/);
    // Dropping a handle to the preopen leaves it usable through its other handles.
    const again = preopen(l);
    Descriptor[DISPOSE](l.repOf(l.g.descriptors, root));
    l.statAt(again, 0, ptr, len, RET);
    assert.equal([v.getUint8(RET), v.getUint8(RET + 8)], [0, 3], "ok, directory");
  } finally {
    rmSync(l.root, { recursive: true, force: true });
  }
});

test.run();
