import type { Attributes } from "@opentelemetry/api";
import type { SpanExporter } from "./span-queue.ts";
import type { WrittenSpan } from "./written-span.ts";

/**
 * OTEL_TRACES_EXPORTER=console: each span as one JSON line on stdout, for a developer watching a
 * local server (not a log line: it is the exporter's output, as the SDK's ConsoleSpanExporter
 * printed it, in a form a pipe can read).
 */
export class ConsoleSpanExporter implements SpanExporter<ConsoleBatch> {
  constructor(
    private readonly resource: Attributes,
    private readonly write: (text: string) => void = (text) => void process.stdout.write(text),
  ) {}

  batch(): ConsoleBatch {
    return new ConsoleBatch(this.resource);
  }

  async export(batch: ConsoleBatch): Promise<void> {
    this.write(batch.text);
  }

  async shutdown(): Promise<void> {}
}

class ConsoleBatch {
  size = 0;
  text = "";

  constructor(private readonly resource: Attributes) {}

  add(s: WrittenSpan): void {
    this.size++;
    this.text += `${JSON.stringify({
      resource: this.resource,
      scope: s.scope,
      traceId: s.traceId,
      spanId: s.spanId,
      parentSpanId: s.parentSpanId,
      name: s.name,
      kind: s.kind,
      startTime: new Date(s.startMs).toISOString(),
      durationMs: Math.round((s.endMs - s.startMs) * 1000) / 1000,
      attributes: s.attributes,
      status: s.statusMessage === undefined ? { code: s.statusCode } : { code: s.statusCode, message: s.statusMessage },
      events: s.events,
      links: s.links?.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, attributes: l.attributes })),
    })}\n`;
  }
}
