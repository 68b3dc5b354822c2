import type { ExecutableReference } from "./tool.ts";

/** The few things the core cannot do with Web APIs alone; each runtime adapter supplies them. */
export interface Platform {
  /** Opens a WebSocket (Node 20 has no global one). */
  connectWebSocket(url: string): WebSocketLike;
  /** Reads a configuration variable (BRAIN_URL, BRAIN_TOKEN, ...); undefined when unset or not permitted. */
  env(name: string): string | undefined;
  /**
   * When env(name) could not read the variable (a missing permission, not an unset variable): how
   * to allow it, e.g. "run Deno with --allow-env=BRAIN_TOKEN". Errors that a missing value causes name it.
   */
  unreadableEnv?(name: string): string | undefined;
  /** Reads a file named by a file: URL (component bytes). */
  readFile(url: URL): Promise<Uint8Array>;
  /**
   * Optional: the upload of the installed package that `executable` names, for a Brain-managed
   * host (brainEnv({ runtime })): a gzip tar in npm pack layout with the package's run-time
   * dependencies under package/node_modules/, and its sha256 (lowercase hex). Node and Deno bind
   * packInstalledWith (pack.ts) to their file system and find the package from the application (its
   * working directory and main module); a platform without it cannot place packaged tools in a
   * managed brainEnv.
   */
  packageUpload?(executable: ExecutableReference): Promise<PackageUpload>;
  /**
   * Optional: whether an open WebSocket keeps the process alive (Node: ref/unref its socket). The
   * host connection holds it only while it has work (answers awaited, calls running, `serve`), so a
   * script that forgets `brain.close()` can still exit.
   */
  keepAlive?(ws: WebSocketLike, keep: boolean): void;
  /** Optional: lets a timer not keep the process alive (Node: timer.unref()). */
  unrefTimer?(timer: ReturnType<typeof setTimeout>): void;
  /**
   * Optional: calls `fn` when the process is about to exit on its own (Node: "beforeExit") so a
   * client left open can say so; returns the unsubscribe function.
   */
  onIdleExit?(fn: () => void): () => void;
  /**
   * Optional, for a platform where an open WebSocket always keeps the process alive (Deno): calls
   * `fn` once, when the main module has finished evaluating (top-level await included), so a
   * client still open then can give the hint Node gives at exit; never, if that already happened
   * when the client connected. Returns the unsubscribe function.
   */
  onMainDone?(fn: () => void): () => void;
}

/** The subset of the WHATWG WebSocket the host connection uses. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  /**
   * Optional: drops the connection at once, without a closing handshake (Node's ws). Used on a
   * silent runtime, which would never answer the handshake; without it the core calls close().
   */
  terminate?(): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

/** The bytes of a package upload (PUT /v1/packages/<digest>) and their sha256. */
export interface PackageUpload {
  readonly bytes: Uint8Array;
  readonly digest: string;
}
