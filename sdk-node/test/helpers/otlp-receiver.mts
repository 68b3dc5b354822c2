// A real OTLP/HTTP trace receiver on loopback, as a collector's `otlp` receiver is: it accepts
// POST /v1/traces with the OTLP JSON encoding (what @opentelemetry/exporter-trace-otlp-http sends),
// decodes every ExportTraceServiceRequest and keeps the spans, flattened with their resource's
// service.name. It answers as the OTLP spec says (200 with an ExportTraceServiceResponse).
import { createServer } from "node:http";
import type { Server } from "node:http";

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
        receiver.contentTypes.push(req.headers["content-type"] ?? "");
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { resourceSpans: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans: Array<{ spans?: any[] }> }> };
        receiver.bodies.push(body);
        for (const rs of body.resourceSpans) {
          const service = String(attributesOf(rs.resource?.attributes)["service.name"] ?? "");
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
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
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
