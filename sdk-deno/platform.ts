import type { Platform, WebSocketLike } from "@aexhq/brain-core";

/** Names the Deno permission flag a failed operation needs, so the error says how to fix it. */
function permissionError(e: unknown, flag: string, what: string): never {
  if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
    throw new Deno.errors.NotCapable(`${what} needs the Deno permission ${flag} (${(e as Error).message})`);
  }
  throw e;
}

/** Deno's Platform: the native WebSocket, Deno.env and Deno.readFile. */
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
};
