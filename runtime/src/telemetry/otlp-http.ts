import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { IncomingHttpHeaders } from "node:http";
import type { Logger } from "../logger.ts";
import type { SpanBatch, SpanExporter } from "./span-queue.ts";

/** A batch that encodes itself as one request body (otlp-json.ts, otlp-protobuf.ts). */
export interface EncodedBatch extends SpanBatch {
  /** The request body; valid until release(). */
  encoded(): Buffer;
  /** Called once the request is done with the body (sent, or given up). */
  release?(): void;
}

/**
 * The retry rules of the OpenTelemetry JS exporter this replaced (otlp-exporter-base), kept so a
 * collector that sheds load sees the same behaviour: 429, 502, 503, 504 and network errors are
 * retried up to 5 times, 1 s apart growing ×1.5 to at most 5 s, ±20 % jitter, or as Retry-After
 * says, all within the export's timeout (OTEL_EXPORTER_OTLP_TIMEOUT, default 10 s).
 */
const MAX_RETRIES = 5;
const INITIAL_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 5000;
const BACKOFF_MULTIPLIER = 1.5;
const JITTER = 0.2;
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);
const RETRYABLE_ERRORS = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "EAI_AGAIN", "ENOTFOUND", "ECONNABORTED", "EHOSTUNREACH", "ENETUNREACH"]);

type Attempt = { ok: true } | { ok: false; retry: boolean; retryInMs?: number; error: Error };

/**
 * OTLP/HTTP to the collector: one POST per batch on a keep-alive connection, with the configured
 * headers (OTEL_EXPORTER_OTLP_HEADERS). A 2xx answer that reports a partial success (spans the
 * collector rejected) is logged; anything else is retried as above or fails the batch.
 */
export class OtlpHttpExporter<B extends EncodedBatch> implements SpanExporter<B> {
  private readonly url: URL;
  private readonly agent: HttpAgent;
  private readonly request: typeof httpRequest;

  constructor(
    url: string,
    private readonly headers: Record<string, string>,
    /** A new, empty batch in the exporter's encoding. */
    readonly batch: () => B,
    private readonly contentType: string,
    private readonly timeoutMs: number,
    private readonly userAgent: string,
    private readonly logger: Logger,
  ) {
    this.url = new URL(url);
    const https = this.url.protocol === "https:";
    // One export runs at a time (span-queue.ts): one socket, kept open between batches.
    this.agent = https ? new HttpsAgent({ keepAlive: true, maxSockets: 1 }) : new HttpAgent({ keepAlive: true, maxSockets: 1 });
    this.request = https ? httpsRequest : httpRequest;
  }

  async export(spans: B): Promise<void> {
    try {
      await this.post(spans.encoded());
    } finally {
      spans.release?.();
    }
  }

  private async post(batch: Buffer): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    let backoff = INITIAL_BACKOFF_MS;
    let result = await this.attempt(batch, this.timeoutMs);
    for (let retries = 0; !result.ok && result.retry && retries < MAX_RETRIES; retries++) {
      const wait = result.retryInMs ?? Math.min(backoff * (1 + (Math.random() * 2 - 1) * JITTER), MAX_BACKOFF_MS);
      backoff *= BACKOFF_MULTIPLIER;
      const left = deadline - Date.now();
      if (wait > left) break;
      await new Promise((r) => setTimeout(r, wait));
      result = await this.attempt(batch, deadline - Date.now());
    }
    if (!result.ok) throw result.error;
  }

  async shutdown(): Promise<void> {
    this.agent.destroy();
  }

  private attempt(body: Buffer, timeoutMs: number): Promise<Attempt> {
    return new Promise<Attempt>((resolve) => {
      const req = this.request(this.url, {
        method: "POST",
        agent: this.agent,
        headers: { ...this.headers, "content-type": this.contentType, "content-length": body.length, "user-agent": this.userAgent },
      });
      req.setTimeout(Math.max(timeoutMs, 1), () => {
        req.destroy();
        resolve({ ok: false, retry: true, error: new Error("the collector did not answer in time") });
      });
      req.on("error", (e: NodeJS.ErrnoException) => resolve({ ok: false, retry: RETRYABLE_ERRORS.has(e.code ?? ""), error: e }));
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", (e) => resolve({ ok: false, retry: true, error: e }));
        res.on("end", () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            this.partialSuccess(res.headers, Buffer.concat(chunks));
            resolve({ ok: true });
            return;
          }
          const error = new Error(`the collector answered ${status}${res.statusMessage ? ` ${res.statusMessage}` : ""}`);
          if (!RETRYABLE_STATUS.has(status)) resolve({ ok: false, retry: false, error });
          else {
            const after = retryAfterMs(res.headers["retry-after"]);
            resolve(after === undefined ? { ok: false, retry: true, error } : { ok: false, retry: true, retryInMs: after, error });
          }
        });
      });
      req.end(body);
    });
  }

  /** An ExportTraceServiceResponse with rejected spans (JSON only: a protobuf answer is not decoded). */
  private partialSuccess(headers: IncomingHttpHeaders, body: Buffer): void {
    if (body.length <= 2 || !(headers["content-type"] ?? "").includes("json")) return;
    try {
      const answer = JSON.parse(body.toString("utf8")) as { partialSuccess?: { rejectedSpans?: number | string; errorMessage?: string } };
      const rejected = Number(answer.partialSuccess?.rejectedSpans ?? 0);
      if (rejected > 0) this.logger.warn("tracing: the collector rejected spans", { spans: rejected, error: answer.partialSuccess?.errorMessage ?? "" });
    } catch {
      // Not JSON after all: the spans were accepted (2xx), which is all that matters here.
    }
  }
}

/** Retry-After in ms: seconds, or an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number.parseInt(value, 10);
  if (Number.isInteger(seconds)) return Math.max(seconds, 0) * 1000;
  const at = new Date(value).getTime();
  return Number.isNaN(at) ? undefined : Math.max(at - Date.now(), 0);
}
