import type { Attributes, Span, SpanKind } from "@opentelemetry/api";

/**
 * The key of what Brain's own tracer (brain-tracer.ts) adds to the API's Tracer: a span started
 * without the Context and options objects the API's startSpan takes. A symbol rather than a method
 * name, so a tracer of the user's (`startBrain({ tracerProvider })`) is never taken for it, and
 * telemetry.ts finds it without loading the writer.
 */
export const START_CHILD: unique symbol = Symbol("brain.tracer.startChild");

export interface DirectTracer {
  [START_CHILD](name: string, parent: Span | undefined, attributes: Attributes, kind: SpanKind, startTime: number | undefined): Span;
}
