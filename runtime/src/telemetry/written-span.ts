import type { IdPool } from "./span-ids.ts";
import type { Attributes, AttributeValue, Exception, HrTime, Link, Span, SpanAttributes, SpanContext, SpanKind, SpanStatus, TimeInput } from "@opentelemetry/api";

/** The tracer's name and version, as OTLP's InstrumentationScope says them. */
export interface SpanScope {
  readonly name: string;
  readonly version: string | undefined;
}

/** An event of a span (addEvent, recordException). */
export interface SpanEvent {
  readonly name: string;
  readonly timeMs: number;
  readonly attributes: Attributes | undefined;
}

/** Where an ended span goes: the writer's queue (span-queue.ts). */
export interface EndedSpans {
  ended(span: WrittenSpan): void;
}

/**
 * A sampled span of Brain's own span writer (brain-tracer.ts): the data the OTLP encoders read,
 * kept as plain fields. Times are epoch milliseconds as numbers (a double holds them to a fraction
 * of a microsecond), converted to OTLP's nanoseconds only when encoded. The attributes object given
 * to startSpan is kept, not copied: the runtime builds a fresh one for every span (telemetry.ts),
 * and copying it was a measurable part of each call's cost in the SDK.
 */
export class WrittenSpan implements Span {
  endMs = -1;
  statusCode = 0;
  statusMessage: string | undefined = undefined;
  events: SpanEvent[] | undefined = undefined;
  links: Link[] | undefined;
  private context: SpanContext | undefined = undefined;

  constructor(
    private readonly sink: EndedSpans,
    readonly scope: SpanScope,
    readonly traceId: string,
    readonly spanId: string,
    readonly parentSpanId: string | undefined,
    /**
     * Where the ids' bytes are (span-ids.ts), for the encoder to copy: the span id's always, the
     * trace id's and the parent's when this writer drew them (undefined: decoded from the hex).
     */
    readonly tracePool: IdPool | undefined,
    readonly traceAt: number,
    readonly spanPool: IdPool,
    readonly spanAt: number,
    readonly parentPool: IdPool | undefined,
    readonly parentAt: number,
    public name: string,
    readonly kind: SpanKind,
    readonly startMs: number,
    public attributes: Attributes,
    links: Link[] | undefined,
  ) {
    this.links = links;
  }

  spanContext(): SpanContext {
    return (this.context ??= { traceId: this.traceId, spanId: this.spanId, traceFlags: 1 });
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (this.endMs < 0 && value !== undefined && value !== null) this.attributes[key] = value;
    return this;
  }

  setAttributes(attributes: SpanAttributes): this {
    for (const key in attributes) this.setAttribute(key, attributes[key]!);
    return this;
  }

  addEvent(name: string, attributesOrTime?: SpanAttributes | TimeInput, time?: TimeInput): this {
    if (this.endMs >= 0) return this;
    const isTime = typeof attributesOrTime === "number" || Array.isArray(attributesOrTime) || attributesOrTime instanceof Date;
    const at = isTime ? (attributesOrTime as TimeInput) : time;
    (this.events ??= []).push({ name, timeMs: at === undefined ? nowMs() : epochMs(at), attributes: isTime ? undefined : (attributesOrTime as Attributes | undefined) });
    return this;
  }

  addLink(link: Link): this {
    if (this.endMs < 0) (this.links ??= []).push(link);
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.endMs >= 0 || this.statusCode === 1) return this; // OK is final, as the API says
    this.statusCode = status.code;
    this.statusMessage = status.code === 2 ? status.message : undefined;
    return this;
  }

  updateName(name: string): this {
    if (this.endMs < 0) this.name = name;
    return this;
  }

  end(endTime?: TimeInput): void {
    if (this.endMs >= 0) return;
    const end = endTime === undefined ? nowMs() : epochMs(endTime);
    this.endMs = end < this.startMs ? this.startMs : end;
    this.sink.ended(this);
  }

  isRecording(): boolean {
    return this.endMs < 0;
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === "string") attributes["exception.message"] = exception;
    else {
      if (exception.code !== undefined) attributes["exception.type"] = String(exception.code);
      else if (exception.name !== undefined) attributes["exception.type"] = exception.name;
      if (exception.message !== undefined) attributes["exception.message"] = exception.message;
      if (exception.stack !== undefined) attributes["exception.stacktrace"] = exception.stack;
    }
    this.addEvent("exception", attributes, time);
  }
}

const origin = performance.timeOrigin;

/** Now, in epoch milliseconds (sub-millisecond, monotonic within the process). */
export function nowMs(): number {
  return origin + performance.now();
}

/**
 * A TimeInput in epoch milliseconds, as the OpenTelemetry SDK reads one: a number smaller than the
 * process's time origin is a performance.now() reading, a larger one epoch milliseconds.
 */
export function epochMs(time: TimeInput): number {
  if (typeof time === "number") return time < origin ? origin + time : time;
  if (time instanceof Date) return time.getTime();
  const [seconds, nanos] = time as HrTime;
  return seconds * 1000 + nanos / 1e6;
}
