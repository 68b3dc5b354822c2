// Confines every path-taking WASI descriptor operation of one worker to its preopen's real path.
// Plain JavaScript: it runs inside the component worker (see worker.mjs).
//
// preview2-shim resolves paths itself and refuses absolute symlink targets, but it resolves
// relative ones against the descriptor and the open happens later in its I/O thread by path. This
// is an independent check in front of it, not a replacement: before the shim sees a path, the
// path is resolved here segment by segment from the descriptor's real host path, following
// symlinks (lstat + readlink) the way the operation will, and every step must stay inside the
// real path of the preopen root. A symlink that leads outside (created on the host side, absolute
// or relative, dangling or not) fails with `not-permitted`; so does creating one that would.
//
// Left to the host: a symlink swapped on the host side between this check and the shim's open
// (a race only a host process can run; the guest is single-threaded), and hard links made on the
// host side to files outside (they are the same file, not a path).
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, sep } from "node:path";

const MAX_SYMLINKS = 40;

/**
 * @param {any} Descriptor the shim's Descriptor class (its prototype gets wrapped)
 * @param {Array<[any, string]>} preopens [descriptor, host path] pairs
 */
export function confineDescriptors(Descriptor, preopens) {
  /** descriptor -> { root: real path of its preopen, at: real host path of the descriptor } */
  const where = new WeakMap();
  for (const [d, hostPath] of preopens) {
    const root = realpathSync(hostPath);
    where.set(d, { root, at: root });
  }
  const inside = (root, p) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

  /** The host path `path` names from descriptor `d`; throws "not-permitted" if any step leaves the root. */
  function resolve(d, path, followFinal) {
    const w = where.get(d);
    if (w === undefined) throw "bad-descriptor";
    if (typeof path !== "string" || isAbsolute(path)) throw "not-permitted";
    let segs = path.split("/").filter((s) => s !== "" && s !== ".");
    let cur = w.at;
    let links = 0;
    while (segs.length > 0) {
      const s = segs.shift();
      const next = s === ".." ? dirname(cur) : join(cur, s);
      if (!inside(w.root, next)) throw "not-permitted";
      if (s === "..") {
        cur = next;
        continue;
      }
      const st = lstatSync(next, { throwIfNoEntry: false });
      if (st !== undefined && st.isSymbolicLink() && (segs.length > 0 || followFinal)) {
        if (++links > MAX_SYMLINKS) throw "loop";
        const target = readlinkSync(next);
        // An absolute target names a host path, never something under the guest's root (the shim
        // refuses these too).
        if (isAbsolute(target)) throw "not-permitted";
        segs = [...target.split("/").filter((x) => x !== "" && x !== "."), ...segs];
        continue;
      }
      // A missing entry ends the walk's knowledge: what follows is created (or fails) lexically.
      cur = next;
      if (st === undefined) {
        for (const rest of segs) {
          cur = rest === ".." ? dirname(cur) : join(cur, rest);
          if (!inside(w.root, cur)) throw "not-permitted";
        }
        break;
      }
    }
    return { root: w.root, at: cur };
  }

  const wrap = (name, check) => {
    const original = Descriptor.prototype[name];
    if (typeof original !== "function") return;
    Descriptor.prototype[name] = function (...args) {
      check(this, args);
      return original.apply(this, args);
    };
  };
  const follows = (flags) => Boolean(flags?.symlinkFollow);

  for (const name of ["statAt", "setTimesAt", "metadataHashAt"]) wrap(name, (d, a) => resolve(d, a[1], follows(a[0])));
  // readlink reads the link itself, but a link that leads outside is not shown to the guest.
  wrap("readlinkAt", (d, a) => resolve(d, a[0], true));
  for (const name of ["createDirectoryAt", "removeDirectoryAt", "unlinkFileAt"]) wrap(name, (d, a) => resolve(d, a[0], false));
  wrap("linkAt", (d, a) => {
    resolve(d, a[1], follows(a[0]));
    resolve(a[2], a[3], false);
  });
  wrap("renameAt", (d, a) => {
    resolve(d, a[0], false);
    resolve(a[1], a[2], false);
  });
  wrap("symlinkAt", (d, a) => {
    resolve(d, a[1], false);
    // The new link's target, from the link's own directory: refuse a link that would lead out.
    if (typeof a[0] !== "string" || isAbsolute(a[0])) throw "not-permitted";
    const parent = a[1].split("/").slice(0, -1).join("/");
    resolve(d, parent === "" ? a[0] : `${parent}/${a[0]}`, true);
  });

  // openAt also records where the new descriptor is, for the operations made through it.
  const openAt = Descriptor.prototype.openAt;
  Descriptor.prototype.openAt = function (pathFlags, path, openFlags, descriptorFlags) {
    const target = resolve(this, path, follows(pathFlags));
    const opened = openAt.call(this, pathFlags, path, openFlags, descriptorFlags);
    where.set(opened, target);
    return opened;
  };
}
