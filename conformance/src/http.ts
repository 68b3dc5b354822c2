import type { ErrorBody } from "@aexhq/brain-protocol";

/** A minimal client for the runtime's HTTP API, as a third-party runner would write it. */
export class RuntimeApi {
  constructor(readonly url: string, private readonly token: string) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(new URL(path, this.url), {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
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
