import { context as contexts, isSpanContextValid, trace } from "@opentelemetry/api";
import type { Attributes, Context, Link, Span, SpanContext, SpanKind, SpanOptions, Tracer, TracerProvider } from "@opentelemetry/api";
import { draw, hexOf, idPool, isZero } from "./span-ids.ts";
import type { IdPool } from "./span-ids.ts";
import { START_CHILD } from "./direct-tracer.ts";
import type { DirectTracer } from "./direct-tracer.ts";
import { WrittenSpan, epochMs, nowMs } from "./written-span.ts";
import type { EndedSpans, SpanScope } from "./written-span.ts";

/** Which new spans are recorded: OTEL_TRACES_SAMPLER's semantics (config.ts reads it). */
export interface SamplerSettings {
  /** The fraction of root traces kept (always_on 1, always_off 0, traceidratio its argument). */
  ratio: number;
  /** parentbased_*: a span with a parent (remote or local) follows the parent's sampled flag. */
  parentBased: boolean;
}

/**
 * Brain's own TracerProvider for the OTEL_* set-up (tracing-export.ts): it implements the
 * `@opentelemetry/api` interfaces that telemetry.ts uses, so the runtime is written once against
 * the API and an application's own provider (`startBrain({ tracerProvider })`) works the same.
 * A sampled span is a WrittenSpan that goes to `sink` when it ends; an unsampled one is the API's
 * non-recording span, which still carries its context (flags 00) to the hosts.
 */
export class BrainTracerProvider implements TracerProvider {
  private readonly tracers = new Map<string, BrainTracer>();
  /** traceidratio's bound on a trace id's accumulated 32-bit words (the SDK's TraceIdRatioBasedSampler). */
  private readonly bound: number;

  constructor(
    private readonly sink: EndedSpans,
    private readonly sampler: SamplerSettings,
  ) {
    this.bound = Math.floor(Math.min(Math.max(sampler.ratio, 0), 1) * 0xffffffff);
  }

  getTracer(name: string, version?: string): Tracer {
    const key = `${name}@${version ?? ""}`;
    let tracer = this.tracers.get(key);
    if (tracer === undefined) this.tracers.set(key, (tracer = new BrainTracer(this, this.sink, { name, version })));
    return tracer;
  }

  /** Whether a span of `traceId` is recorded, given its parent's flags (undefined: a root). */
  sampled(traceId: string, parentFlags: number | undefined): boolean {
    if (parentFlags !== undefined && this.sampler.parentBased) return (parentFlags & 1) === 1;
    const ratio = this.sampler.ratio;
    if (ratio >= 1) return true;
    if (ratio <= 0) return false;
    // The OpenTelemetry JS SDK's rule, so a ratio keeps the same traces it kept before.
    let accumulation = 0;
    for (let i = 0; i < 32; i += 8) accumulation = (accumulation ^ parseInt(traceId.slice(i, i + 8), 16)) >>> 0;
    return accumulation < this.bound;
  }
}

class BrainTracer implements Tracer, DirectTracer {
  constructor(
    private readonly provider: BrainTracerProvider,
    private readonly sink: EndedSpans,
    private readonly scope: SpanScope,
  ) {}

  startSpan(name: string, options: SpanOptions = {}, ctx: Context = contexts.active()): Span {
    const span = options.root === true ? undefined : trace.getSpan(ctx);
    const parent = span?.spanContext();
    const valid = parent !== undefined && isSpanContextValid(parent);
    const start = options.startTime === undefined ? nowMs() : epochMs(options.startTime);
    return this.start(name, valid ? parent : undefined, valid && span instanceof WrittenSpan ? span : undefined, options.kind ?? 0, start, options.attributes ?? {}, options.links);
  }

  /**
   * Telemetry's way in (found by its symbol, direct-tracer.ts): a span under `parent` (a span of
   * this writer, or of any tracer), or a root, without the Context and options objects the API's
   * startSpan takes, which were a good part of making a span.
   */
  [START_CHILD](name: string, parent: Span | undefined, attributes: Attributes, kind: SpanKind, startTime: number | undefined): Span {
    let context: SpanContext | undefined;
    let local: WrittenSpan | undefined;
    if (parent !== undefined) {
      context = parent.spanContext();
      // A WrittenSpan's ids are this writer's own, valid by construction; anything else is checked.
      if (parent instanceof WrittenSpan) local = parent;
      else if (!isSpanContextValid(context)) context = undefined;
    }
    return this.start(name, context, local, kind, startTime === undefined ? nowMs() : epochMs(startTime), attributes, undefined);
  }

  /**
   * A new span id under `parent` (a new trace id too for a root). The span keeps where its ids'
   * bytes are, and its parent's when the parent is a span of this writer (`local`), so the encoder
   * copies bytes; ids from elsewhere (a remote `traceparent`, another tracer) are only hex.
   */
  private start(name: string, parent: SpanContext | undefined, local: WrittenSpan | undefined, kind: SpanKind, startMs: number, attributes: Attributes, links: Link[] | undefined): Span {
    let traceId: string;
    let tracePool: IdPool | undefined;
    let traceAt = 0;
    let at: number;
    if (parent === undefined) {
      // A root's trace and span ids in one draw: 16 bytes and 8.
      at = draw(24);
      while (isZero(idPool(), at, 16) || isZero(idPool(), at + 16, 8)) at = draw(24);
      tracePool = idPool();
      traceAt = at;
      traceId = hexOf(tracePool, at, 16);
      at += 16;
    } else {
      traceId = parent.traceId;
      if (local !== undefined) (tracePool = local.tracePool), (traceAt = local.traceAt);
      at = draw(8);
      while (isZero(idPool(), at, 8)) at = draw(8);
    }
    const pool = idPool();
    const spanId = hexOf(pool, at, 8);
    if (!this.provider.sampled(traceId, parent?.traceFlags)) {
      return trace.wrapSpanContext({ traceId, spanId, traceFlags: 0, ...(parent?.traceState !== undefined ? { traceState: parent.traceState } : {}) });
    }
    return new WrittenSpan(this.sink, this.scope, traceId, spanId, parent?.spanId, tracePool, traceAt, pool, at, local?.spanPool, local === undefined ? 0 : local.spanAt, name, kind, startMs, attributes, links);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]): ReturnType<F> {
    const fn = rest[rest.length - 1] as F;
    const options = rest.length > 1 ? (rest[0] as SpanOptions) : {};
    const parent = rest.length > 2 ? (rest[1] as Context) : contexts.active();
    const span = this.startSpan(name, options, parent);
    return contexts.with(trace.setSpan(parent, span), fn as (span: Span) => ReturnType<F>, undefined, span);
  }
}
