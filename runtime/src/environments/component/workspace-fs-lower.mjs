// Raw canonical-ABI lowerings of the wasi:filesystem calls a guest makes on every run (listing and
// stat-ing its workspace): get-directories, descriptor.open-at / stat-at / read-directory and
// directory-entry-stream.read-directory-entry. Plain JavaScript: it runs inside the component
// worker (see worker.mjs).
//
// Why: components are transpiled with jco's "hybrid" bindings (store.ts). An import function
// carrying a Symbol.for("cabiLower") factory is linked as the core function that factory returns;
// every other import goes through jco's generic glue, which builds a task and a subtask, tracks
// borrows and checks its debug switch on each call (inspect-js, 6 filesystem calls a run: about a
// third of the guest's time outside its own wasm). Here each call reads its arguments from linear
// memory, calls the same workspace-fs.mjs method the glue would, and writes the result where the
// canonical ABI puts it. preview2-shim lowers its poll functions the same way (worker-io.js).
//
// Resources: jco keeps a component's handles in one array per resource type, `[free-list head,
// (scope, rep | T_FLAG) pairs...]`; a handle's rep names the host object. Our objects carry their
// own rep (Symbol.for("cabiRep"), which jco's glue also honours when it lowers one of them), and
// `reps` maps it back; a handle the guest drops reaches the class's Symbol.for("cabiDispose").
// Layouts (offsets from the return pointer) are the canonical ABI's for wasi:filesystem@0.2.

export const CABI_LOWER = Symbol.for("cabiLower");
export const CABI_DISPOSE = Symbol.for("cabiDispose");
export const CABI_REP = Symbol.for("cabiRep");
const T_FLAG = 1 << 30;

/** wasi:filesystem error-code, in WIT order (its enum discriminant). */
const ERROR_CODE = new Map(
  [
    "access", "would-block", "already", "bad-descriptor", "busy", "deadlock", "quota", "exist", "file-too-large",
    "illegal-byte-sequence", "in-progress", "interrupted", "invalid", "io", "is-directory", "loop", "too-many-links",
    "message-size", "name-too-long", "no-device", "no-entry", "no-lock", "insufficient-memory", "insufficient-space",
    "not-directory", "not-empty", "not-recoverable", "unsupported", "no-tty", "no-such-device", "overflow",
    "not-permitted", "pipe", "read-only", "invalid-seek", "text-file-busy", "cross-device",
  ].map((c, i) => [c, i]),
);
/** wasi:filesystem descriptor-type, in WIT order. */
const DESCRIPTOR_TYPE = new Map(
  ["unknown", "block-device", "character-device", "directory", "fifo", "symbolic-link", "regular-file", "socket"].map((t, i) => [t, i]),
);

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * Host objects by rep, for one worker. Reps come from a counter (not reused short of a billion),
 * so a stale rep finds nothing; `keep` objects (the preopen, handed out again on every
 * get-directories) stay mapped when a handle to them is dropped.
 */
export function repTable() {
  const objects = new Map();
  const kept = new Set();
  let next = 0;
  return {
    /** Gives `obj` a rep (once) and maps it. */
    add(obj, keep = false) {
      if (obj[CABI_REP] === undefined) {
        // Reps live below T_FLAG; after a billion resources the counter wraps past those in use.
        do next = next >= T_FLAG - 1 ? 1 : next + 1;
        while (objects.has(next));
        obj[CABI_REP] = next;
      }
      objects.set(obj[CABI_REP], obj);
      if (keep) kept.add(obj[CABI_REP]);
      return obj;
    },
    get: (rep) => objects.get(rep),
    /** Unmaps the object a dropped handle named and returns it; undefined when there is none or it is kept. */
    release(rep) {
      if (kept.has(rep)) return undefined;
      const obj = objects.get(rep);
      objects.delete(rep);
      return obj;
    },
  };
}

/** A new own handle for `rep` in a jco handle table (as jco's rscTableCreateOwn, and preview2-shim's). */
function ownHandle(table, rep) {
  const free = table[0] & ~T_FLAG;
  if (free === 0) {
    table.push(0);
    table.push(rep | T_FLAG);
    return (table.length >> 1) - 1;
  }
  table[0] = table[free << 1];
  table[free << 1] = 0;
  table[(free << 1) + 1] = rep | T_FLAG;
  return free;
}

/** The host object a borrowed (or owned) handle names; an unknown handle traps, as in jco's glue. */
function objectOf(table, reps, handle) {
  const obj = reps.get(table[(handle << 1) + 1] & ~T_FLAG);
  if (obj === undefined) throw new WebAssembly.RuntimeError(`unknown handle index ${handle}`);
  return obj;
}

/** Flags with bits beyond `count` set are a guest bug: jco's glue traps on them too. */
function flags(value, count) {
  if ((value & ~((1 << count) - 1)) !== 0) throw new TypeError("flags have extraneous bits set");
  return value;
}

/**
 * Writes result<_, error-code>'s error case for a thrown error-code string; anything else thrown
 * (a bug, a trap) propagates, as jco's glue lets it.
 */
function writeError(view, retptr, payloadOffset, e) {
  const code = typeof e === "string" ? ERROR_CODE.get(e) : undefined;
  if (code === undefined) throw e;
  view.setUint8(retptr, 1);
  view.setUint8(retptr + payloadOffset, code);
}

function typeCode(type) {
  const code = DESCRIPTOR_TYPE.get(type);
  if (code === undefined) throw new TypeError(`"${type}" is not one of the cases of descriptor-type`);
  return code;
}

/** A string copied into guest memory: one exact allocation (the preview1 adapter's realloc allows no other). */
function lowerString(s, memory, realloc) {
  if (s.length === 0) return [1, 0];
  const bytes = encoder.encode(s);
  const ptr = realloc(0, 0, 1, bytes.length);
  new Uint8Array(memory.buffer, ptr, bytes.length).set(bytes);
  return [ptr, bytes.length];
}

/** option<datetime> at `at`: discriminant, then seconds u64 at +8 and nanoseconds u32 at +16. */
function writeDatetime(view, at, t) {
  if (t === undefined || t === null) {
    view.setUint8(at, 0);
    return;
  }
  view.setUint8(at, 1);
  view.setBigUint64(at + 8, BigInt.asUintN(64, t.seconds), true);
  view.setUint32(at + 16, t.nanoseconds, true);
}

/**
 * Attaches the raw lowerings to workspace-fs.mjs's classes. `reps` holds every Descriptor and
 * DirectoryEntryStream the guest can name (the classes add them as they make them).
 */
export function lowerFilesystem({ Descriptor, DirectoryEntryStream, getDirectories, reps }) {
  // descriptor.open-at(self, path-flags, path, open-flags, descriptor-flags) -> result<own<descriptor>, error-code>
  Descriptor.prototype.openAt[CABI_LOWER] = ({ memory, resourceTables: [descriptors] }) =>
    function openAt(handle, pathFlags, pathPtr, pathLen, openFlags, descriptorFlags, retptr) {
      const self = objectOf(descriptors, reps, handle);
      const p = flags(pathFlags, 1);
      const o = flags(openFlags, 4);
      const d = flags(descriptorFlags, 6);
      const path = decoder.decode(new Uint8Array(memory.buffer, pathPtr, pathLen));
      let opened;
      try {
        opened = self.openAt(
          { symlinkFollow: (p & 1) !== 0 },
          path,
          { create: (o & 1) !== 0, directory: (o & 2) !== 0, exclusive: (o & 4) !== 0, truncate: (o & 8) !== 0 },
          {
            read: (d & 1) !== 0,
            write: (d & 2) !== 0,
            fileIntegritySync: (d & 4) !== 0,
            dataIntegritySync: (d & 8) !== 0,
            requestedWriteSync: (d & 16) !== 0,
            mutateDirectory: (d & 32) !== 0,
          },
        );
      } catch (e) {
        return writeError(new DataView(memory.buffer), retptr, 4, e);
      }
      const view = new DataView(memory.buffer);
      view.setUint8(retptr, 0);
      view.setInt32(retptr + 4, ownHandle(descriptors, reps.add(opened)[CABI_REP]), true);
    };

  // descriptor.stat-at(self, path-flags, path) -> result<descriptor-stat, error-code>
  Descriptor.prototype.statAt[CABI_LOWER] = ({ memory, resourceTables: [descriptors] }) =>
    function statAt(handle, pathFlags, pathPtr, pathLen, retptr) {
      const self = objectOf(descriptors, reps, handle);
      const p = flags(pathFlags, 1);
      const path = decoder.decode(new Uint8Array(memory.buffer, pathPtr, pathLen));
      let st;
      try {
        st = self.statAt({ symlinkFollow: (p & 1) !== 0 }, path);
      } catch (e) {
        return writeError(new DataView(memory.buffer), retptr, 8, e);
      }
      // descriptor-stat at +8: type u8, link-count u64 at +16, size u64 at +24, then three option<datetime> at +32, +56, +80.
      const view = new DataView(memory.buffer);
      view.setUint8(retptr, 0);
      view.setUint8(retptr + 8, typeCode(st.type));
      view.setBigUint64(retptr + 16, BigInt.asUintN(64, st.linkCount), true);
      view.setBigUint64(retptr + 24, BigInt.asUintN(64, st.size), true);
      writeDatetime(view, retptr + 32, st.dataAccessTimestamp);
      writeDatetime(view, retptr + 56, st.dataModificationTimestamp);
      writeDatetime(view, retptr + 80, st.statusChangeTimestamp);
    };

  // descriptor.read-directory(self) -> result<own<directory-entry-stream>, error-code>
  Descriptor.prototype.readDirectory[CABI_LOWER] = ({ memory, resourceTables: [descriptors, streams] }) =>
    function readDirectory(handle, retptr) {
      const self = objectOf(descriptors, reps, handle);
      let stream;
      try {
        stream = self.readDirectory();
      } catch (e) {
        return writeError(new DataView(memory.buffer), retptr, 4, e);
      }
      const view = new DataView(memory.buffer);
      view.setUint8(retptr, 0);
      view.setInt32(retptr + 4, ownHandle(streams, reps.add(stream)[CABI_REP]), true);
    };

  // directory-entry-stream.read-directory-entry(self) -> result<option<directory-entry>, error-code>
  DirectoryEntryStream.prototype.readDirectoryEntry[CABI_LOWER] = ({ memory, realloc, resourceTables: [streams] }) =>
    function readDirectoryEntry(handle, retptr) {
      const self = objectOf(streams, reps, handle);
      let entry;
      try {
        entry = self.readDirectoryEntry();
      } catch (e) {
        return writeError(new DataView(memory.buffer), retptr, 4, e);
      }
      // Before the first view: realloc may grow the memory (a view of the old buffer is detached).
      const name = entry === undefined ? undefined : lowerString(entry.name, memory, realloc);
      const view = new DataView(memory.buffer);
      view.setUint8(retptr, 0);
      if (entry === undefined) return view.setUint8(retptr + 4, 0);
      // directory-entry at +8: type u8, then name (ptr at +12, len at +16).
      view.setUint8(retptr + 4, 1);
      view.setUint8(retptr + 8, typeCode(entry.type));
      view.setUint32(retptr + 12, name[0], true);
      view.setUint32(retptr + 16, name[1], true);
    };

  // get-directories() -> list<tuple<own<descriptor>, string>>: (ptr, len) at retptr, 12-byte elements.
  getDirectories[CABI_LOWER] = ({ memory, realloc, resourceTables: [descriptors] }) =>
    function getDirectoriesLowered(retptr) {
      const list = getDirectories();
      // Even for an empty list, as jco's glue does (the guest frees what it was given).
      const base = realloc(0, 0, 4, list.length * 12);
      for (let i = 0; i < list.length; i++) {
        const [descriptor, name] = list[i];
        const handle = ownHandle(descriptors, reps.add(descriptor)[CABI_REP]);
        const [ptr, len] = lowerString(name, memory, realloc);
        const view = new DataView(memory.buffer);
        view.setInt32(base + i * 12, handle, true);
        view.setUint32(base + i * 12 + 4, ptr, true);
        view.setUint32(base + i * 12 + 8, len, true);
      }
      const view = new DataView(memory.buffer);
      view.setUint32(retptr, base, true);
      view.setUint32(retptr + 4, list.length, true);
    };

  // A handle the guest dropped (jco calls this for reps it did not lower itself).
  for (const Class of [Descriptor, DirectoryEntryStream]) {
    Class[CABI_DISPOSE] = (rep) => reps.release(rep)?.[Symbol.dispose]?.();
  }
}
