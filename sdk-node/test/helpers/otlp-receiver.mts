// A real OTLP/HTTP trace receiver on loopback, as a collector's `otlp` receiver is: it accepts
// POST /v1/traces in either OTLP/HTTP encoding, JSON (what @opentelemetry/exporter-trace-otlp-http
// sends, and the runtime with OTEL_EXPORTER_OTLP_PROTOCOL=http/json) or protobuf (the runtime's
// default, decoded by otlp-protobuf.mts), decodes every ExportTraceServiceRequest and keeps the
// spans, flattened with their resource's service.name. It answers as the OTLP spec says (200 with
// an ExportTraceServiceResponse in the request's encoding: an empty one).
import { createServer } from "node:http";
import type { Server } from "node:http";
import { decodeTraceRequest } from "./otlp-protobuf.mts";

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
  startTimeUnixNano: string;
  endTimeUnixNano: string;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue };

function valueOf(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  throw new Error(`unexpected OTLP attribute value ${JSON.stringify(v)}`);
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Every request body as received (the docs' trace excerpt is one of them). */
  readonly bodies: unknown[] = [];
  readonly contentTypes: string[] = [];
  /** Each request's user-agent, beside its content type (which exporter sent it). */
  readonly userAgents: string[] = [];
  /** Each request's headers (a collector's API key arrives in one). */
  readonly headers: Array<Record<string, string | string[] | undefined>> = [];
  /** The resource attributes of every ResourceSpans received, by service.name. */
  readonly resources = new Map<string, Record<string, string | number | boolean>>();
  /** Status codes to answer before accepting (a collector shedding load), taken one per request. */
  readonly refusals: number[] = [];

  private constructor(private server: Server, readonly endpoint: string) {}

  static async start(): Promise<OtlpReceiver> {
    let receiver!: OtlpReceiver;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        if (req.method !== "POST" || req.url !== "/v1/traces") {
          res.writeHead(404).end();
          return;
        }
        const refusal = receiver.refusals.shift();
        if (refusal !== undefined) {
          res.writeHead(refusal).end();
          return;
        }
        const contentType = req.headers["content-type"] ?? "";
        receiver.contentTypes.push(contentType);
        receiver.userAgents.push(req.headers["user-agent"] ?? "");
        receiver.headers.push(req.headers);
        const protobuf = contentType.startsWith("application/x-protobuf");
        if (!protobuf && !contentType.startsWith("application/json")) {
          res.writeHead(415).end();
          return;
        }
        const bytes = Buffer.concat(chunks);
        const body = (protobuf ? decodeTraceRequest(bytes) : JSON.parse(bytes.toString("utf8"))) as { resourceSpans: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans: Array<{ spans?: any[] }> }> };
        receiver.bodies.push(body);
        for (const rs of body.resourceSpans) {
          const resource = attributesOf(rs.resource?.attributes);
          const service = String(resource["service.name"] ?? "");
          receiver.resources.set(service, resource);
          for (const ss of rs.scopeSpans) {
            for (const s of ss.spans ?? []) {
              receiver.spans.push({
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId === undefined || s.parentSpanId === "" ? undefined : s.parentSpanId,
                name: s.name,
                kind: s.kind,
                attributes: attributesOf(s.attributes),
                status: s.status ?? {},
                startTimeUnixNano: String(s.startTimeUnixNano),
                endTimeUnixNano: String(s.endTimeUnixNano),
              });
            }
          }
        }
        if (protobuf) res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
        else res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const address = server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${port}`);
    return receiver;
  }

  /** Waits until `pred` holds for the spans received so far. */
  async until(pred: (spans: ReceivedSpan[]) => boolean, timeoutMs = 10_000): Promise<ReceivedSpan[]> {
    const end = Date.now() + timeoutMs;
    while (!pred(this.spans)) {
      if (Date.now() > end) throw new Error(`timed out; spans received: ${this.spans.map((s) => `${s.service}:${s.name}`).join(", ")}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.spans;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
