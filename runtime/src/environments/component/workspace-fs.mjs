// wasi:filesystem for one component worker: the binding's one preopen, `/workspace`, or none.
// Plain JavaScript: it runs inside the component worker (see worker.mjs).
//
// Directories and every path-taking operation are ours, done with synchronous node:fs calls in
// this thread: a directory descriptor is its real host path (no file descriptor is held), and
// every path is resolved through confine.mjs first, so nothing leaves the workspace. preview2-shim
// does these in this thread too, except that opening anything, a directory included, and closing
// it are calls to its own I/O thread (a postMessage and an Atomics.wait each way, 300-700 µs on a
// loaded 2-core machine); its directory descriptors and directory streams also held a file
// descriptor of this process until the guest dropped them, and a componentize-js guest drops them
// only when its own GC runs: two file descriptors leaked per `inspect` call.
//
// Files are preview2-shim's: a file opened by the guest is opened by the shim (its I/O thread owns
// the file descriptor, and its wasi:io streams read and write it), and our descriptor passes the
// file operations to it. Only its file operations are used, never its path resolution on a guest
// path: the shim gets the path this module resolved.
//
// A read grant: every mutating operation fails with `read-only`, and so does an open that asks to
// create, truncate, write or mutate.
import { closeSync, fsyncSync, linkSync, lstatSync, lutimesSync, mkdirSync, openSync, readdirSync, readlinkSync, renameSync, rmdirSync, statSync, symlinkSync, unlinkSync, utimesSync } from "node:fs";
import { isAbsolute, relative } from "node:path";
import { createFilesystem } from "@bytecodealliance/preview2-shim/filesystem";
import { confinement } from "./confine.mjs";
import { CABI_REP, lowerFilesystem, repTable } from "./workspace-fs-lower.mjs";

/**
 * The `filesystem` option of preview2-shim's WASIShim: `{ types, preopens }` for wasi:filesystem.
 * @param {{ hostPath: string, mode: "read" | "write" } | undefined} preopen
 */
export function workspaceFilesystem(preopen) {
  const shimTypes = createFilesystem({ preopens: {} }).types;
  // Every Descriptor and DirectoryEntryStream the guest can name, by rep (workspace-fs-lower.mjs).
  const reps = repTable();
  const { Descriptor, DirectoryEntryStream, preopenDescriptor } = descriptorClasses(preopen, reps);
  const entries = preopenDescriptor === undefined ? [] : [[preopenDescriptor, "/workspace"]];
  const getDirectories = () => [...entries];
  // The calls a guest makes on every run skip jco's generic per-call glue.
  lowerFilesystem({ Descriptor, DirectoryEntryStream, getDirectories, reps });
  return {
    types: { Descriptor, DirectoryEntryStream, filesystemErrorCode: shimTypes.filesystemErrorCode },
    preopens: { getDirectories },
  };
}

/**
 * Makes the methods of `Class` run on the object a handle names when jco's glue calls them on a
 * stand-in: for a handle it did not create itself (ours are made by workspace-fs-lower.mjs), the
 * glue builds an object of the class's prototype holding only the rep (Symbol.for("cabiRep")).
 */
function resolveStandIns(Class, realOf) {
  const proto = Class.prototype;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const method = proto[name];
    if (name === "constructor" || typeof method !== "function") continue;
    proto[name] = {
      [name](...args) {
        return method.apply(realOf(this), args);
      },
    }[name];
  }
}

function descriptorClasses(preopen, reps) {
  const confine = preopen === undefined ? undefined : confinement(preopen.hostPath);
  // The shim's own preopen of the same real path: files are opened through it (never shown to the guest).
  const shimRoot = confine === undefined ? undefined : createFilesystem({ preopens: { "/workspace": confine.root } }).preopens.getDirectories()[0][0];
  const writable = preopen?.mode === "write";
  const mutating = () => {
    if (!writable) throw "read-only";
  };
  let create;
  let streamOf;
  let realDescriptor;
  let realStream;

  /** A directory's entries, read when it was opened for listing (no file descriptor stays open). */
  class DirectoryEntryStream {
    #entries;
    #next = 0;
    static {
      streamOf = (entries) => {
        const s = new DirectoryEntryStream();
        s.#entries = entries;
        return reps.add(s);
      };
      realStream = (o) => (Object(o) !== o || #entries in o ? o : (reps.get(o[CABI_REP]) ?? o));
    }
    readDirectoryEntry() {
      if (this.#next >= this.#entries.length) return undefined;
      const e = this.#entries[this.#next];
      this.#entries[this.#next++] = undefined;
      return { type: typeOf(e), name: e.name };
    }
    [Symbol.dispose]() {
      this.#entries = [];
      reps.release(this[CABI_REP]);
    }
  }
  resolveStandIns(DirectoryEntryStream, realStream);

  class Descriptor {
    /** The directory's real host path (directories only). */
    #at;
    /** preview2-shim's descriptor of the file (files only). */
    #file;
    #flags;
    static {
      create = (at, file, flags) => {
        const d = new Descriptor();
        d.#at = at;
        d.#file = file;
        d.#flags = flags;
        return reps.add(d);
      };
      realDescriptor = (o) => (Object(o) !== o || #at in o ? o : (reps.get(o[CABI_REP]) ?? o));
    }

    /** This descriptor's directory, for a path-taking operation. */
    #dir() {
      if (this.#at === undefined) throw "not-directory";
      return this.#at;
    }
    /** The host path `path` names from this directory (see confine.mjs); a trailing slash follows the final link, as in POSIX. */
    #resolve(path, follow) {
      const slash = typeof path === "string" && path.endsWith("/");
      const at = confine.resolve(this.#dir(), path, follow || slash);
      return slash && at !== confine.root ? `${at}/` : at;
    }
    /** The shim's descriptor, for an operation on a file's contents. */
    #content() {
      if (this.#file === undefined) throw "is-directory";
      return this.#file;
    }

    readViaStream(offset) {
      return this.#content().readViaStream(offset);
    }
    writeViaStream(offset) {
      mutating();
      return this.#content().writeViaStream(offset);
    }
    appendViaStream() {
      mutating();
      return this.#content().appendViaStream();
    }
    advise(offset, length, advice) {
      if (this.#file === undefined) throw "bad-descriptor";
      return this.#file.advise(offset, length, advice);
    }
    syncData() {
      if (this.#file !== undefined) return this.#file.syncData();
      syncDirectory(this.#at);
    }
    sync() {
      if (this.#file !== undefined) return this.#file.sync();
      syncDirectory(this.#at);
    }
    getFlags() {
      return this.#flags;
    }
    getType() {
      return this.#file === undefined ? "directory" : this.#file.getType();
    }
    setSize(size) {
      mutating();
      return this.#content().setSize(size);
    }
    setTimes(atime, mtime) {
      mutating();
      if (this.#file !== undefined) return this.#file.setTimes(atime, mtime);
      setTimesOf(this.#at, true, atime, mtime);
    }
    read(length, offset) {
      return this.#content().read(length, offset);
    }
    write(buffer, offset) {
      mutating();
      return this.#content().write(buffer, offset);
    }
    readDirectory() {
      return streamOf(fsCall(() => readdirSync(this.#dir(), { withFileTypes: true })));
    }
    stat() {
      if (this.#file !== undefined) return this.#file.stat();
      return toStat(fsCall(() => statSync(this.#at, { bigint: true })));
    }
    statAt(pathFlags, path) {
      return toStat(this.#statsAt(pathFlags, path));
    }
    metadataHash() {
      if (this.#file !== undefined) return this.#file.metadataHash();
      return hashOf(fsCall(() => statSync(this.#at, { bigint: true })));
    }
    metadataHashAt(pathFlags, path) {
      return hashOf(this.#statsAt(pathFlags, path));
    }
    /** The stats of a path under this descriptor, following a final symlink only when the guest asked. */
    #statsAt(pathFlags, path) {
      const follow = Boolean(pathFlags?.symlinkFollow);
      const at = this.#resolve(path, follow);
      return fsCall(() => (follow ? statSync : lstatSync)(at, { bigint: true }));
    }
    isSameObject(other) {
      other = realDescriptor(other);
      if (other === this) return true;
      if (!(other instanceof Descriptor) || other.#file !== undefined || this.#file !== undefined) return false;
      return other.#at === this.#at;
    }
    openAt(pathFlags, path, openFlags, descriptorFlags) {
      const o = openFlags ?? {};
      const f = descriptorFlags ?? {};
      if (o.create || o.truncate || f.write || f.mutateDirectory) mutating();
      // As preview2-shim answers them (Wasmtime does too).
      if (f.fileIntegritySync || f.dataIntegritySync || f.requestedWriteSync) throw "unsupported";
      const follow = Boolean(pathFlags?.symlinkFollow);
      const at = this.#resolve(path, follow);
      if (!o.create && !o.truncate && !f.write) {
        const st = fsCall(() => (follow ? statSync : lstatSync)(at, { throwIfNoEntry: false }));
        if (st?.isDirectory()) return create(at.endsWith("/") && at !== "/" ? at.slice(0, -1) : at, undefined, { ...f, write: false });
      }
      // A file (or an error the open will name): the shim opens the path resolved here.
      const file = shimRoot.openAt(pathFlags ?? {}, relative(confine.root, at) + (at.endsWith("/") ? "/" : ""), o, f);
      return create(undefined, file, f);
    }
    readlinkAt(path) {
      // A link whose target leaves the workspace is not shown (its target would reveal a host path).
      this.#resolve(path, true);
      const at = this.#resolve(path, false);
      return fsCall(() => readlinkSync(at));
    }
    createDirectoryAt(path) {
      mutating();
      const at = this.#resolve(path, false);
      fsCall(() => mkdirSync(at));
    }
    removeDirectoryAt(path) {
      mutating();
      const at = this.#resolve(path, false);
      fsCall(() => rmdirSync(at));
    }
    unlinkFileAt(path) {
      mutating();
      const at = this.#resolve(path, false);
      if (at.endsWith("/")) {
        // unlink(2) of "name/": Linux says EISDIR for a directory, ENOTDIR otherwise.
        throw fsCall(() => statSync(at)).isDirectory() ? "is-directory" : "not-directory";
      }
      fsCall(() => unlinkSync(at));
    }
    setTimesAt(pathFlags, path, atime, mtime) {
      mutating();
      const follow = Boolean(pathFlags?.symlinkFollow);
      setTimesOf(this.#resolve(path, follow), follow, atime, mtime);
    }
    linkAt(oldPathFlags, oldPath, newDescriptor, newPath) {
      mutating();
      const from = this.#resolve(oldPath, Boolean(oldPathFlags?.symlinkFollow));
      const to = directoryOf(newDescriptor).#resolve(newPath, false);
      fsCall(() => linkSync(from, to));
    }
    renameAt(oldPath, newDescriptor, newPath) {
      mutating();
      const from = this.#resolve(oldPath, false);
      const to = directoryOf(newDescriptor).#resolve(newPath, false);
      fsCall(() => renameSync(from, to));
    }
    symlinkAt(target, path) {
      mutating();
      const at = this.#resolve(path, false);
      // The new link's target, from the link's own directory: refuse a link that would lead out.
      if (typeof target !== "string" || isAbsolute(target)) throw "not-permitted";
      const parent = path.split("/").slice(0, -1).join("/");
      this.#resolve(parent === "" ? target : `${parent}/${target}`, true);
      fsCall(() => symlinkSync(target, at));
    }
    [Symbol.dispose]() {
      this.#file?.[Symbol.dispose]?.();
      reps.release(this[CABI_REP]);
    }
  }
  resolveStandIns(Descriptor, realDescriptor);
  /** The directory of a descriptor given as an argument (rename-at, link-at). */
  const directoryOf = (d) => {
    if (!(d instanceof Descriptor)) throw "bad-descriptor";
    return realDescriptor(d);
  };

  // Handed out again on every get-directories: it stays mapped when one of its handles is dropped.
  const preopenDescriptor = confine === undefined ? undefined : reps.add(create(confine.root, undefined, { read: true, mutateDirectory: writable }), true);
  return { Descriptor, DirectoryEntryStream, preopenDescriptor };
}

function syncDirectory(at) {
  fsCall(() => {
    const fd = openSync(at, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  });
}

/** utimes/lutimes from wasi new-timestamp values ({tag: "no-change" | "now" | "timestamp", val}). */
function setTimesOf(at, follow, atime, mtime) {
  fsCall(() => {
    const needStat = atime?.tag === "no-change" || mtime?.tag === "no-change";
    const st = needStat ? (follow ? statSync : lstatSync)(at) : undefined;
    const seconds = (t, current) => (t?.tag === "timestamp" ? Number(t.val.seconds) + t.val.nanoseconds / 1e9 : t?.tag === "now" ? Date.now() / 1000 : current / 1000);
    (follow ? utimesSync : lutimesSync)(at, seconds(atime, st?.atimeMs), seconds(mtime, st?.mtimeMs));
  });
}

const NS = 1_000_000_000n;
const datetime = (ns) => ({ seconds: ns / NS, nanoseconds: Number(ns % NS) });

function toStat(st) {
  return {
    type: typeOf(st),
    linkCount: st.nlink,
    size: st.size,
    dataAccessTimestamp: datetime(st.atimeNs),
    dataModificationTimestamp: datetime(st.mtimeNs),
    statusChangeTimestamp: datetime(st.ctimeNs),
  };
}

/** As preview2-shim's metadata-hash of an open file: the modification time and the inode. */
const hashOf = (st) => ({ upper: st.mtimeNs, lower: st.ino });

/** wasi:filesystem descriptor-type of a Stats or Dirent. */
function typeOf(s) {
  if (s.isFile()) return "regular-file";
  if (s.isDirectory()) return "directory";
  if (s.isSymbolicLink()) return "symbolic-link";
  if (s.isSocket()) return "socket";
  if (s.isFIFO()) return "fifo";
  if (s.isCharacterDevice()) return "character-device";
  if (s.isBlockDevice()) return "block-device";
  return "unknown";
}

/** Runs a node:fs call; its error becomes the wasi:filesystem error-code (what the guest sees). */
function fsCall(fn) {
  try {
    return fn();
  } catch (e) {
    if (typeof e === "string") throw e;
    throw errorCode(e);
  }
}

const ERROR_CODES = {
  EACCES: "access",
  EAGAIN: "would-block",
  EWOULDBLOCK: "would-block",
  EALREADY: "already",
  EBADF: "bad-descriptor",
  EBUSY: "busy",
  EDEADLK: "deadlock",
  EDQUOT: "quota",
  EEXIST: "exist",
  EFBIG: "file-too-large",
  EILSEQ: "illegal-byte-sequence",
  EINPROGRESS: "in-progress",
  EINTR: "interrupted",
  EINVAL: "invalid",
  EIO: "io",
  EISDIR: "is-directory",
  ELOOP: "loop",
  EMLINK: "too-many-links",
  EMSGSIZE: "message-size",
  ENAMETOOLONG: "name-too-long",
  ENODEV: "no-device",
  ENOENT: "no-entry",
  ENOLCK: "no-lock",
  ENOMEM: "insufficient-memory",
  ENOSPC: "insufficient-space",
  ENOTDIR: "not-directory",
  ENOTEMPTY: "not-empty",
  ENOTRECOVERABLE: "not-recoverable",
  ENOTSUP: "unsupported",
  ENOTTY: "no-tty",
  ENXIO: "no-such-device",
  EOVERFLOW: "overflow",
  EPERM: "not-permitted",
  EPIPE: "pipe",
  EROFS: "read-only",
  ESPIPE: "invalid-seek",
  ETXTBSY: "text-file-busy",
  EXDEV: "cross-device",
};

/** A node:fs error as a wasi:filesystem error-code; one it has no name for is `io`. */
function errorCode(e) {
  return ERROR_CODES[e?.code] ?? "io";
}
