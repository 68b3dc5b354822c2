import type { ErrorBody } from "@aexhq/brain-protocol";

/** A minimal client for the runtime's HTTP API, as a third-party runner would write it. */
export class RuntimeApi {
  /** Set by `restarted()` until a request succeeds: see there. */
  private staleConnections = false;

  constructor(readonly url: string, private readonly token: string) {}

  /**
   * The runtime just restarted on the same port: fetch's pool may still hold a keep-alive
   * connection to the old server, and a request sent on it fails ("fetch failed", the other side
   * closed) without reaching any server. Until one request succeeds, a request that fails that way
   * is sent once more, on a new connection.
   */
  restarted(): void {
    this.staleConnections = true;
  }

  async call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const send = () =>
      fetch(new URL(path, this.url), {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    let res: Response;
    try {
      res = await send();
    } catch (e) {
      const code = (e as { cause?: { code?: unknown } }).cause?.code;
      if (!this.staleConnections || (code !== "UND_ERR_SOCKET" && code !== "ECONNRESET")) throw e;
      res = await send();
    }
    this.staleConnections = false;
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  /** PUT raw bytes (a component upload), answering like `call`. */
  async put<T>(path: string, bytes: Uint8Array, contentType: string): Promise<{ status: number; body: T }> {
    const res = await fetch(new URL(path, this.url), { method: "PUT", headers: { authorization: `Bearer ${this.token}`, "content-type": contentType }, body: bytes });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  async ok<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.call<T | ErrorBody>(method, path, body);
    if (res.status >= 400) {
      const error = (res.body as ErrorBody | undefined)?.error;
      throw new Error(`${method} ${path} → ${res.status} ${error?.code ?? ""}: ${error?.message ?? JSON.stringify(res.body)}`);
    }
    return res.body as T;
  }
}
