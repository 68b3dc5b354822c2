import { SdkError, packInstalledWith, type ExecutableReference, type PackageFiles, type PackageUpload, type Platform, type WebSocketLike } from "@aexhq/brain-core";

/** Names the Deno permission flag a failed operation needs, so the error says how to fix it. */
function permissionError(e: unknown, flag: string, what: string): never {
  if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
    throw new Deno.errors.NotCapable(`${what} needs the Deno permission ${flag} (${(e as Error).message})`);
  }
  throw e;
}

/** An absolute file path from a file: URL (Windows drive paths lose the leading "/"). */
const filePath = (url: URL) => decodeURIComponent(url.pathname).replace(/^\/([A-Za-z]:)/, "$1");

/**
 * Deno's file system for packing (Deno.*Sync). A place the lookup may not read counts as absent
 * and is remembered in `denied`, so that "not installed" can name the permission; reading a found
 * package without permission throws NotCapable naming the flag.
 */
function denoPackageFiles(denied: string[]): PackageFiles {
  const read = <T>(path: string, f: () => T): T => {
    try {
      return f();
    } catch (e) {
      return permissionError(e, `--allow-read=${path}`, `packing the installed package (reading ${path})`);
    }
  };
  return {
    stat(path) {
      try {
        const st = Deno.statSync(path);
        return { isFile: st.isFile, isDirectory: st.isDirectory, executable: ((st.mode ?? 0) & 0o111) !== 0 };
      } catch (e) {
        if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) return undefined;
        if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
          denied.push(path);
          return undefined;
        }
        throw e;
      }
    },
    readDir: (path) => read(path, () => [...Deno.readDirSync(path)].map((e) => e.name)),
    readFile: (path) => read(path, () => Deno.readFileSync(path)),
    realPath: (path) => read(path, () => Deno.realPathSync(path)),
  };
}

/** The application's folders: the working directory, then the main module's folder (a local one). */
function applicationDirs(): string[] {
  let cwd: string;
  try {
    cwd = Deno.cwd();
  } catch (e) {
    return permissionError(e, "--allow-read", "finding the installed package from the working directory");
  }
  const main = new URL(Deno.mainModule);
  return main.protocol === "file:" ? [cwd, filePath(new URL(".", main))] : [cwd];
}

/** Where Deno's global npm cache would hold `name@version`, when the environment says where the cache is. */
function globalNpmCache(name: string, version: string): string | undefined {
  const env = (v: string) => (Deno.permissions.querySync({ name: "env", variable: v }).state === "granted" ? Deno.env.get(v) : undefined);
  const home = env("HOME");
  const dir = env("DENO_DIR") ??
    (Deno.build.os === "windows" ? (env("LOCALAPPDATA") ? `${env("LOCALAPPDATA")}/deno` : undefined)
      : Deno.build.os === "darwin" ? (home ? `${home}/Library/Caches/deno` : undefined)
      : env("XDG_CACHE_HOME") ? `${env("XDG_CACHE_HOME")}/deno` : home ? `${home}/.cache/deno` : undefined);
  return dir === undefined ? undefined : `${dir}/npm/registry.npmjs.org/${name}/${version}`;
}

const NODE_MODULES_HINT = 'under Deno the SDK packs the package from a node_modules folder: set "nodeModulesDir": "auto" in deno.json (Deno then installs npm packages into ./node_modules), or use "manual" with npm install';

/**
 * The upload brainEnv({ runtime }) makes of the installed package `executable` names (a gzip tar in
 * npm pack layout with its run-time dependencies, and its sha256), read from a node_modules folder
 * found as Node finds it: looked up from `from` (default: the working directory, then the main
 * module's folder) and every folder above. Deno's global npm cache is not read (it holds no layout
 * of the dependencies): SdkError `unsupported` saying to use a node_modules folder.
 */
export async function packInstalled(executable: ExecutableReference, from?: string[]): Promise<PackageUpload> {
  const denied: string[] = [];
  const dirs = from ?? applicationDirs();
  try {
    return await packInstalledWith(denoPackageFiles(denied), executable, { from: dirs, hint: NODE_MODULES_HINT });
  } catch (e) {
    if (!(e instanceof SdkError) || (e.code !== "package_not_installed" && e.code !== "package_incomplete")) throw e;
    const cached = e.code === "package_not_installed" ? globalNpmCache(executable.package, executable.version) : undefined;
    let inCache = false;
    try {
      inCache = cached !== undefined && Deno.statSync(`${cached}/package.json`).isFile;
    } catch { /* not there, or not readable: say nothing about the cache */ }
    if (inCache) {
      throw new SdkError("unsupported", `package ${executable.package}@${executable.version} is in Deno's global npm cache (${cached}) but in no node_modules folder looked up from ${dirs.join(", ")}; ${NODE_MODULES_HINT}`, { package: executable.package, version: executable.version, cache: cached });
    }
    if (denied.length === 0) throw e;
    const unread = [...new Set(denied)];
    throw new SdkError(e.code, `${e.message} (not looked at, without the Deno permission --allow-read: ${unread.join(", ")})`, { ...(e.details as object), unreadable: unread });
  }
}

/**
 * Whether the main module has finished evaluating: Deno dispatches "load" then (after top-level
 * await). This module is in the main module's import graph, so it listens before that happens.
 */
let mainDone = false;
const mainDoneListeners = new Set<() => void>();
globalThis.addEventListener("load", () => {
  mainDone = true;
  for (const f of [...mainDoneListeners]) f();
  mainDoneListeners.clear();
});

/** Deno's Platform: the native WebSocket, Deno.env and Deno.readFile; packing reads node_modules with Deno.*Sync. */
export const denoPlatform: Platform = {
  connectWebSocket(url) {
    try {
      return new WebSocket(url) as unknown as WebSocketLike;
    } catch (e) {
      return permissionError(e, `--allow-net=${new URL(url).host}`, `connecting to Brain at ${url}`);
    }
  },
  env(name) {
    // An unset variable and a variable we may not read both mean "use the default"; reading one we
    // are not allowed to would throw, so ask first instead of prompting.
    if (Deno.permissions.querySync({ name: "env", variable: name }).state !== "granted") return undefined;
    return Deno.env.get(name);
  },
  unreadableEnv(name) {
    return Deno.permissions.querySync({ name: "env", variable: name }).state === "granted" ? undefined : `${name} is not readable without the Deno permission --allow-env=${name}`;
  },
  async readFile(url) {
    try {
      return await Deno.readFile(url);
    } catch (e) {
      return permissionError(e, `--allow-read=${url.protocol === "file:" ? decodeURIComponent(url.pathname) : url}`, `reading ${url}`);
    }
  },
  // The installed package of a packaged tool, for a Brain-managed host (brainEnv({ runtime })).
  packageUpload: (executable) => packInstalled(executable),
  unrefTimer: (timer) => Deno.unrefTimer(timer as unknown as number),
  // A Deno WebSocket cannot be unref'd: the hint for a forgotten close() comes when the main module is done.
  onMainDone(fn) {
    if (mainDone) return () => undefined;
    mainDoneListeners.add(fn);
    return () => void mainDoneListeners.delete(fn);
  },
};
