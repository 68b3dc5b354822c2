/** The few things the core cannot do with Web APIs alone; each runtime adapter supplies them. */
export interface Platform {
  /** Opens a WebSocket (Node 20 has no global one). */
  connectWebSocket(url: string): WebSocketLike;
  /** Reads a configuration variable (BRAIN_URL, BRAIN_TOKEN, ...); undefined when unset or not permitted. */
  env(name: string): string | undefined;
  /** Reads a file named by a file: URL (component bytes). */
  readFile(url: URL): Promise<Uint8Array>;
}

/** The subset of the WHATWG WebSocket the host connection uses. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}
