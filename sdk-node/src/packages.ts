// The upload of an installed package for a Brain-managed host (brainEnv({ runtime })): sdk-core's
// packInstalledWith (sdk-core/src/pack.ts: the lookup, the dependency walk, the tar, the digest) over
// node:fs, looked up from the application's working directory and then its main module's folder.
import { existsSync, readFileSync, readdirSync, realpathSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { packInstalledWith, type ExecutableReference, type PackageFiles, type PackageUpload } from "@aexhq/brain-core";

/** node:fs for packing. */
export const nodePackageFiles: PackageFiles = {
  stat(path) {
    let st;
    try {
      st = statSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
      throw e;
    }
    return { isFile: st.isFile(), isDirectory: st.isDirectory(), executable: (st.mode & 0o111) !== 0 };
  },
  readDir: (path) => readdirSync(path),
  readFile: (path) => new Uint8Array(readFileSync(path)),
  realPath: (path) => realpathSync(path),
};

/** The application's folders: its working directory, then its main module's folder. */
function applicationDirs(): string[] {
  const dirs = [process.cwd()];
  const main = process.argv[1];
  if (main && existsSync(main)) dirs.push(dirname(realpathSync(main)));
  return dirs;
}

/**
 * The upload brainEnv({ runtime }) makes of the installed package `executable` names (a gzip tar in
 * npm pack layout with its run-time dependencies, and its sha256), for clients that place packaged
 * tools over the HTTP API. `from`: the folders to look it up from (default: the application's).
 */
export function packInstalled(executable: ExecutableReference, from?: string[]): Promise<PackageUpload> {
  return packInstalledWith(nodePackageFiles, executable, { from: from ?? applicationDirs() });
}
