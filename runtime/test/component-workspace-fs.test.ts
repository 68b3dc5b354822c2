// The component worker's wasi:filesystem (workspace-fs.mjs), called the way jco's glue calls it:
// the same answers as preview2-shim's for what stays inside the workspace, every mutation refused
// under a read grant, nothing outside reachable, and no file descriptor held by directories.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFilesystem } from "@bytecodealliance/preview2-shim/filesystem";
// @ts-ignore: plain .mjs without declarations (it runs inside worker threads).
import { workspaceFilesystem } from "../src/environments/component/workspace-fs.mjs";

/** A workspace: a file, a folder with a file, links that stay inside, links that leave. */
function tree(): { root: string; outside: string } {
  const base = mkdtempSync(join(tmpdir(), "brain-wsfs-"));
  const root = join(base, "ws");
  const outside = join(base, "outside");
  mkdirSync(join(root, "sub", "deeper"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "secret");
  writeFileSync(join(root, "a.txt"), "hello");
  writeFileSync(join(root, "sub", "b.txt"), "inside b");
  symlinkSync("sub", join(root, "to-sub"));
  symlinkSync("a.txt", join(root, "to-a"));
  symlinkSync("missing", join(root, "dangling-inside"));
  symlinkSync("../outside", join(root, "out-dir"));
  symlinkSync(outside, join(root, "abs-out"));
  return { root, outside };
}

type Fs = { preopens: { getDirectories(): Array<[any, string]> } };
const rootOf = (fs: Fs) => fs.preopens.getDirectories()[0]![0];

/** What a call gives: its value, or the WASI error code it threw (a string), or the Error's message. */
function outcome(fn: () => unknown): unknown {
  try {
    return { ok: fn() };
  } catch (e) {
    return { err: typeof e === "string" ? e : String((e as Error).message ?? e) };
  }
}

const follow = { symlinkFollow: true };
const nofollow = { symlinkFollow: false };
const list = (dir: any) => {
  const s = dir.readDirectory();
  const out: string[] = [];
  for (let e = s.readDirectoryEntry(); e !== undefined; e = s.readDirectoryEntry()) out.push(`${e.name}:${e.type}`);
  return out.sort();
};
const read = (f: any) => new TextDecoder().decode(f.read(1n << 20n, 0n)[0]);
const statType = (st: { type: string; size: bigint }) => `${st.type}:${st.type === "regular-file" ? st.size : ""}`;

/** Operations whose answers preview2-shim and ours must agree on (nothing here leaves the workspace). */
const same: Array<[string, (root: any) => unknown]> = [
  ["stat a file", (r) => statType(r.statAt(nofollow, "a.txt"))],
  ["stat a folder", (r) => statType(r.statAt(nofollow, "sub"))],
  ["stat a link without following", (r) => statType(r.statAt(nofollow, "to-a"))],
  ["stat a link, following", (r) => statType(r.statAt(follow, "to-a"))],
  ["stat through a link to a folder", (r) => statType(r.statAt(nofollow, "to-sub/b.txt"))],
  ["stat missing", (r) => r.statAt(follow, "nope")],
  ["stat a dangling link, following", (r) => r.statAt(follow, "dangling-inside")],
  ["stat a file with a trailing slash", (r) => r.statAt(nofollow, "a.txt/")],
  ["stat .. inside", (r) => statType(r.statAt(nofollow, "sub/../a.txt"))],
  ["list the root", (r) => list(r.openAt(nofollow, ".", { directory: true }, { read: true }))],
  ["list a folder through a link", (r) => list(r.openAt(follow, "to-sub", { directory: true }, { read: true }))],
  ["list a file", (r) => list(r.openAt(nofollow, "a.txt", {}, { read: true }))],
  ["open a file as a folder", (r) => r.openAt(nofollow, "a.txt", { directory: true }, { read: true })],
  ["open missing", (r) => r.openAt(nofollow, "nope", {}, { read: true })],
  ["open a folder for writing", (r) => r.openAt(nofollow, "sub", {}, { write: true })],
  ["open a link without following", (r) => r.openAt(nofollow, "to-a", {}, { read: true })],
  ["read a file", (r) => read(r.openAt(nofollow, "a.txt", {}, { read: true }))],
  ["read a file through a link", (r) => read(r.openAt(follow, "to-a", {}, { read: true }))],
  ["read a file from an opened folder", (r) => read(r.openAt(nofollow, "sub", { directory: true }, { read: true }).openAt(nofollow, "b.txt", {}, { read: true }))],
  ["file type of an opened file", (r) => r.openAt(nofollow, "a.txt", {}, { read: true }).getType()],
  ["stat of an opened file", (r) => statType(r.openAt(nofollow, "a.txt", {}, { read: true }).stat())],
  ["readlink inside", (r) => r.readlinkAt("to-sub")],
  ["readlink of a file", (r) => r.readlinkAt("a.txt")],
  ["paths from an opened file", (r) => r.openAt(nofollow, "a.txt", {}, { read: true }).statAt(nofollow, "x")],
  ["absolute path", (r) => r.statAt(nofollow, "/etc")],
  ["above the root", (r) => r.statAt(nofollow, "../outside")],
  ["a link to an absolute path", (r) => r.statAt(follow, "abs-out")],
  ["create, write, read back", (r) => {
    const f = r.openAt(nofollow, "new.txt", { create: true, exclusive: true }, { read: true, write: true });
    f.write(new TextEncoder().encode("written"), 0n);
    return read(f);
  }],
  ["create an existing file exclusively", (r) => r.openAt(nofollow, "a.txt", { create: true, exclusive: true }, { write: true })],
  ["mkdir, list, rmdir", (r) => {
    r.createDirectoryAt("made");
    const seen = list(r.openAt(nofollow, "made", { directory: true }, { read: true }));
    r.removeDirectoryAt("made");
    return seen;
  }],
  ["mkdir existing", (r) => r.createDirectoryAt("sub")],
  ["rmdir a non-empty folder", (r) => r.removeDirectoryAt("sub")],
  ["unlink a folder", (r) => r.unlinkFileAt("sub")],
  ["unlink missing", (r) => r.unlinkFileAt("nope")],
  ["rename and back", (r) => {
    r.renameAt("a.txt", r, "renamed.txt");
    const seen = statType(r.statAt(nofollow, "renamed.txt"));
    r.renameAt("renamed.txt", r, "a.txt");
    return seen;
  }],
  ["symlink inside, read through it", (r) => {
    r.symlinkAt("sub/b.txt", "to-b");
    const text = read(r.openAt(follow, "to-b", {}, { read: true }));
    r.unlinkFileAt("to-b");
    return text;
  }],
  ["metadata hash of a path and of its open file", (r) => {
    const a = r.metadataHashAt(nofollow, "a.txt");
    const b = r.openAt(nofollow, "a.txt", {}, { read: true }).metadataHash();
    return a.lower === b.lower && a.upper === b.upper;
  }],
];

test("answers like preview2-shim for everything that stays inside the workspace", () => {
  const mine = tree();
  const theirs = tree();
  try {
    const ours = rootOf(workspaceFilesystem({ hostPath: mine.root, mode: "write" }));
    // (Typed from its browser declarations, which need an adapter; this is its Node build.)
    const shim = rootOf((createFilesystem as unknown as (o: { preopens: Record<string, string> }) => Fs)({ preopens: { "/workspace": theirs.root } }));
    for (const [what, op] of same) assert.equal(outcome(() => op(ours)), outcome(() => op(shim)), what);
    // Where the shim throws a JavaScript Error (a trap in the guest), ours answers the error code.
    const readFolder = (r: any) => r.openAt(nofollow, "sub", { directory: true }, { read: true }).read(10n, 0n);
    assert.equal(outcome(() => readFolder(ours)), { err: "is-directory" });
    assert.match(String((outcome(() => readFolder(shim)) as { err: string }).err), "EISDIR");
    assert.equal(readdirSync(mine.root).sort(), readdirSync(theirs.root).sort());
  } finally {
    rmSync(join(mine.root, ".."), { recursive: true, force: true });
    rmSync(join(theirs.root, ".."), { recursive: true, force: true });
  }
});

test("nothing outside the workspace: links that leave, .. above the root, a trailing slash on a link that leaves", () => {
  const { root, outside } = tree();
  try {
    const r = rootOf(workspaceFilesystem({ hostPath: root, mode: "write" }));
    const refused: Array<[string, () => unknown]> = [
      ["stat through a relative link out", () => r.statAt(nofollow, "out-dir/secret.txt")],
      ["stat a link out, following", () => r.statAt(follow, "out-dir")],
      ["a link out, not following, with a trailing slash", () => r.statAt(nofollow, "out-dir/")],
      ["list a link out", () => r.openAt(follow, "out-dir", { directory: true }, { read: true })],
      ["open a file through a link out", () => r.openAt(nofollow, "out-dir/secret.txt", {}, { read: true })],
      ["write through a link out", () => r.openAt(nofollow, "out-dir/new.txt", { create: true }, { write: true })],
      ["mkdir through a link out", () => r.createDirectoryAt("out-dir/made")],
      ["readlink of a link out", () => r.readlinkAt("out-dir")],
      ["a symlink that would lead out", () => r.symlinkAt("../outside", "mine")],
      ["rename out", () => r.renameAt("a.txt", r, "../outside/a.txt")],
      ["link out", () => r.linkAt(nofollow, "a.txt", r, "out-dir/a.txt")],
      ["from an opened folder, .. twice", () => r.openAt(nofollow, "sub", { directory: true }, { read: true }).statAt(nofollow, "../../outside")],
    ];
    for (const [what, op] of refused) assert.equal(outcome(op), { err: "not-permitted" }, what);
    assert.equal(readdirSync(outside), ["secret.txt"]);
    assert.not.ok(existsSync(join(root, "mine")));
  } finally {
    rmSync(join(root, ".."), { recursive: true, force: true });
  }
});

test("read grant: reading works, every mutation is refused with read-only, nothing on disk changes", () => {
  const { root } = tree();
  try {
    const before = readdirSync(root, { recursive: true }).map(String).sort();
    const r = rootOf(workspaceFilesystem({ hostPath: root, mode: "read" }));
    assert.equal(r.getFlags(), { read: true, mutateDirectory: false });
    assert.is(read(r.openAt(nofollow, "a.txt", {}, { read: true })), "hello");
    const file = r.openAt(nofollow, "a.txt", {}, { read: true });
    const mutations: Array<[string, () => unknown]> = [
      ["create", () => r.openAt(nofollow, "new.txt", { create: true }, { write: true })],
      ["truncate", () => r.openAt(nofollow, "a.txt", { truncate: true }, { read: true })],
      ["open to write", () => r.openAt(nofollow, "a.txt", {}, { write: true })],
      ["open a folder to mutate", () => r.openAt(nofollow, "sub", { directory: true }, { read: true, mutateDirectory: true })],
      ["write", () => file.write(new Uint8Array([1]), 0n)],
      ["write via stream", () => file.writeViaStream(0n)],
      ["append via stream", () => file.appendViaStream()],
      ["set size", () => file.setSize(0n)],
      ["set times", () => file.setTimes({ tag: "now" }, { tag: "now" })],
      ["mkdir", () => r.createDirectoryAt("made")],
      ["rmdir", () => r.removeDirectoryAt("sub/deeper")],
      ["unlink", () => r.unlinkFileAt("a.txt")],
      ["rename", () => r.renameAt("a.txt", r, "b.txt")],
      ["symlink", () => r.symlinkAt("a.txt", "l")],
      ["link", () => r.linkAt(nofollow, "a.txt", r, "hard")],
      ["set times at", () => r.setTimesAt(nofollow, "a.txt", { tag: "now" }, { tag: "now" })],
    ];
    for (const [what, op] of mutations) assert.equal(outcome(op), { err: "read-only" }, what);
    assert.equal(readdirSync(root, { recursive: true }).map(String).sort(), before);
    assert.is(readFileSync(join(root, "a.txt"), "utf8"), "hello");
  } finally {
    rmSync(join(root, ".."), { recursive: true, force: true });
  }
});

test("no binding: no preopen", () => {
  assert.equal(workspaceFilesystem(undefined).preopens.getDirectories(), []);
});

// Counted in /proc/self/fd (Linux).
const onLinux = existsSync("/proc/self/fd");
(onLinux ? test : test.skip)("listing folders holds no file descriptor, whether or not the guest drops them", () => {
  const { root } = tree();
  try {
    const r = rootOf(workspaceFilesystem({ hostPath: root, mode: "read" }));
    const fds = () => readdirSync("/proc/self/fd").length;
    list(r.openAt(nofollow, ".", { directory: true }, { read: true }));
    const before = fds();
    // What the inspect example does on every call, never dropping what it opened (a guest whose GC has not run).
    const kept: unknown[] = [];
    for (let i = 0; i < 200; i++) {
      const dir = r.openAt(nofollow, ".", { directory: true }, { read: true });
      kept.push(dir, dir.readDirectory(), r.statAt(nofollow, "."));
    }
    assert.ok(fds() <= before + 2, `file descriptors: ${before} before, ${fds()} after 200 listings`);
  } finally {
    rmSync(join(root, ".."), { recursive: true, force: true });
  }
});

test.run();
