import type { ErrorBody } from "@aexhq/brain-protocol";
import { protocolError, SdkError } from "../errors.ts";
import { fetchFailure } from "./fetch-failure.ts";

/** JSON over fetch with the bearer token; every HTTP error becomes a ProtocolError with the runtime's code. */
export class HttpClient {
  constructor(readonly baseUrl: string, private readonly token: () => string) {}

  async request<T>(method: string, path: string, body?: unknown, init?: { signal?: AbortSignal; headers?: Record<string, string> }): Promise<T> {
    let res: Response;
    const token = this.token(); // a missing token is its own error, not a connection failure
    const startedAt = Date.now();
    try {
      res = await fetch(new URL(path, this.baseUrl), {
        method,
        headers: { ...init?.headers, authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
        signal: init?.signal,
      });
    } catch (e) {
      throw fetchFailure(e, this.baseUrl, `${method} ${path}`, startedAt);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      // The answer began and broke off: the request reached Brain.
      throw new SdkError("connection_lost", `the connection to Brain at ${this.baseUrl} was lost while ${method} ${path} was answered: ${(e as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new SdkError("bad_response", `${method} ${path}: the runtime answered ${res.status} with non-JSON`);
    }
    if (!res.ok) {
      const error = (parsed as ErrorBody | undefined)?.error;
      throw protocolError(error ?? { code: "internal", message: `${method} ${path}: HTTP ${res.status}` }, res.status, res.headers.get("retry-after"));
    }
    return parsed as T;
  }

  /** Opens an SSE stream of events. */
  async stream(path: string, signal: AbortSignal): Promise<ReadableStream<Uint8Array>> {
    const token = this.token();
    const startedAt = Date.now();
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl), { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" }, signal });
    } catch (e) {
      if (signal.aborted) throw e;
      throw fetchFailure(e, this.baseUrl, `GET ${path}`, startedAt);
    }
    if (!res.ok || !res.body) {
      const body = (await res.json().catch(() => undefined)) as ErrorBody | undefined;
      throw protocolError(body?.error ?? { code: "internal", message: `event stream: HTTP ${res.status}` }, res.status, res.headers.get("retry-after"));
    }
    return res.body;
  }
}

/** Status and parsed body of a request whose non-2xx answers the caller handles itself. */
export async function rawRequest(base: string, token: string, method: string, path: string, body?: Uint8Array, contentType?: string): Promise<{ status: number; body: unknown }> {
  let res: Response;
  const startedAt = Date.now();
  try {
    res = await fetch(new URL(path, base), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(contentType ? { "content-type": contentType } : {}) },
      body: body as Uint8Array<ArrayBuffer> | undefined,
    });
  } catch (e) {
    throw fetchFailure(e, base, `${method} ${path}`, startedAt);
  }
  const text = method === "HEAD" ? "" : await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed };
}
