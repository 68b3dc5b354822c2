// Path confinement for one component worker's preopen: every path a guest names is resolved here
// segment by segment from a directory's real host path, following symlinks (lstat + readlink) the
// way the operation will, and every step must stay inside the real path of the preopen root. A
// symlink that leads outside (created on the host side, absolute or relative, dangling or not)
// fails with `not-permitted`. Plain JavaScript: it runs inside the component worker (see
// worker.mjs); workspace-fs.mjs resolves every path-taking operation through it before it
// touches the path.
//
// Left to the host: a symlink swapped on the host side between this check and the operation (a
// race only a host process can run; the guest is single-threaded), and hard links made on the host
// side to files outside (they are the same file, not a path).
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, sep } from "node:path";

const MAX_SYMLINKS = 40;

/**
 * @param {string} hostRoot the preopen's host path
 * @returns {{ root: string, resolve(at: string, path: string, followFinal: boolean): string }}
 *   `root` is the preopen's real path; `resolve` gives the host path that `path` names from the
 *   directory at host path `at` (itself inside root), or throws "not-permitted" if any step
 *   leaves the root ("loop" past 40 links).
 */
export function confinement(hostRoot) {
  const root = realpathSync(hostRoot);
  const prefix = root.endsWith(sep) ? root : root + sep;
  const inside = (p) => p === root || p.startsWith(prefix);

  function resolve(at, path, followFinal) {
    if (typeof path !== "string" || isAbsolute(path)) throw "not-permitted";
    let segs = path.split("/").filter((s) => s !== "" && s !== ".");
    let cur = at;
    let links = 0;
    while (segs.length > 0) {
      const s = segs.shift();
      const next = s === ".." ? dirname(cur) : join(cur, s);
      if (!inside(next)) throw "not-permitted";
      if (s === "..") {
        cur = next;
        continue;
      }
      const st = lstatSync(next, { throwIfNoEntry: false });
      if (st !== undefined && st.isSymbolicLink() && (segs.length > 0 || followFinal)) {
        if (++links > MAX_SYMLINKS) throw "loop";
        const target = readlinkSync(next);
        // An absolute target names a host path, never something under the guest's root.
        if (isAbsolute(target)) throw "not-permitted";
        segs = [...target.split("/").filter((x) => x !== "" && x !== "."), ...segs];
        continue;
      }
      // A missing entry ends the walk's knowledge: what follows is created (or fails) lexically.
      cur = next;
      if (st === undefined) {
        for (const rest of segs) {
          cur = rest === ".." ? dirname(cur) : join(cur, rest);
          if (!inside(cur)) throw "not-permitted";
        }
        break;
      }
    }
    return cur;
  }

  return { root, resolve };
}
