import type { IncomingMessage } from "node:http";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, isSpanContextValid, trace } from "@opentelemetry/api";
import type { Attributes, Context, Span, Tracer, TracerProvider } from "@opentelemetry/api";
import type { JournalRecord } from "@aexhq/brain-protocol";
import type { Redactor } from "../redact.ts";
import { Metrics } from "./metrics.ts";
import type { MetricGauges } from "./metrics.ts";
import { formatTraceparent } from "./traceparent.ts";
import { START_CHILD } from "./direct-tracer.ts";
import type { DirectTracer } from "./direct-tracer.ts";

export { SpanKind };
export type { Span, Context };

/** How many calls' trace ids are kept for the session viewer. */
const RECENT_TRACES = 10_000;

/** The tracer's name and version in every span's instrumentation scope. */
const SCOPE = "@aexhq/brain-runtime";

/**
 * The runtime's telemetry: its metrics (always counted, scraped at /metrics) and, when a tracer
 * provider is given (OTEL_* variables, or `startBrain({ tracerProvider })`), its spans. Without one
 * every span helper returns undefined at once: the default server creates no span object at all,
 * not even a no-op one, and callers write `span?.…`.
 *
 * Spans follow explicit parents (a turn's span is the parent of its model and tool calls), never
 * an ambient context, so the runtime needs no global context manager and does not disturb an
 * embedding application's. Attribute values that could carry a secret (error messages) go
 * through the redactor first; span data is best-effort diagnostics and never enters history.
 */
export class Telemetry {
  readonly metrics: Metrics;
  private readonly tracer: Tracer | undefined;
  /** The same tracer when it is Brain's own span writer (brain-tracer.ts): spans start without a Context. */
  private readonly direct: DirectTracer | undefined;
  /** The span of each request being served (http/routes.ts reads it to parent a turn to its request). */
  private readonly requests = new WeakMap<IncomingMessage, Span>();
  /** The span of each session's running turn: a group commit of its records is parented to it. */
  private readonly turns = new Map<string, Span>();
  /**
   * Recent calls' trace ids (the /ui call panel links to them), at most RECENT_TRACES: a ring of
   * three columns, the oldest overwritten. Plain array stores, where a Map keyed by call id cost a
   * traced call ~1–4 µs at 64 sessions (bench §15: hashing, and evicting its first key walks the
   * deleted entries V8 has not compacted); only the session viewer reads it, by a scan.
   */
  private readonly recentCalls: string[] = [];
  private readonly recentSessions: string[] = [];
  private readonly recentTraces: string[] = [];
  private recentAt = 0;

  constructor(
    gauges: MetricGauges,
    provider: TracerProvider | undefined,
    private readonly redactor: Redactor | undefined,
    version: string,
  ) {
    this.metrics = new Metrics(gauges);
    this.tracer = provider?.getTracer(SCOPE, version);
    const direct = this.tracer as Partial<DirectTracer> | undefined;
    this.direct = typeof direct?.[START_CHILD] === "function" ? (direct as DirectTracer) : undefined;
  }

  get tracing(): boolean {
    return this.tracer !== undefined;
  }

  /**
   * Starts a span under `parent` (a span, or none: a root); undefined when tracing is off.
   * `startTime` is epoch milliseconds or a performance.now() reading (the API's TimeInput rule).
   */
  span(name: string, parent: Span | undefined, attributes: Attributes, kind: SpanKind = SpanKind.INTERNAL, startTime?: number): Span | undefined {
    if (this.tracer === undefined) return undefined;
    if (this.direct !== undefined) return this.direct[START_CHILD](name, parent, attributes, kind, startTime);
    const ctx: Context = parent === undefined ? ROOT_CONTEXT : trace.setSpan(ROOT_CONTEXT, parent);
    return this.tracer.startSpan(name, startTime === undefined ? { kind, attributes } : { kind, attributes, startTime }, ctx);
  }

  /** A span whose parent is a remote one (an incoming `traceparent`), or a root. */
  remoteChild(name: string, remote: Parameters<typeof trace.wrapSpanContext>[0] | undefined, attributes: Attributes, kind: SpanKind): Span | undefined {
    if (this.tracer === undefined) return undefined;
    const ctx = remote === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, remote);
    return this.tracer.startSpan(name, { kind, attributes }, ctx);
  }

  /** Ends a span as failed with a contract error code and a (redacted) message. */
  fail(span: Span | undefined, code: string, message?: string): void {
    if (span === undefined) return;
    span.setAttribute("error.type", code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: message === undefined ? code : this.redact(message) });
  }

  /** What a value may say in a span: the server's secrets replaced. */
  redact(text: string): string {
    return this.redactor === undefined ? text : this.redactor.redact(text);
  }

  /**
   * The `traceparent` that continues `span` elsewhere (a host's `invoke` frame): always hex digits
   * and dashes, which InvokeText writes unescaped. Brain's own spans have valid ids by
   * construction; another provider's (`startBrain({ tracerProvider })`) are checked, and a span
   * without valid ids continues nowhere; upper-case hex ids are written in lower case.
   */
  traceparent(span: Span | undefined): string | undefined {
    if (span === undefined) return undefined;
    const context = span.spanContext();
    if (this.direct !== undefined) return formatTraceparent(context);
    if (!isSpanContextValid(context)) return undefined;
    // isSpanContextValid accepts upper-case hex; a traceparent (W3C, and the contract's pattern) is lower case.
    return formatTraceparent({ ...context, traceId: context.traceId.toLowerCase(), spanId: context.spanId.toLowerCase() });
  }

  /** Remembers a call's trace id, for the session viewer (telemetry only: nothing journals it). */
  callTraced(sessionId: string, callId: string, span: Span | undefined): void {
    if (span === undefined) return;
    const at = this.recentAt;
    this.recentCalls[at] = callId;
    this.recentSessions[at] = sessionId;
    this.recentTraces[at] = span.spanContext().traceId;
    this.recentAt = at + 1 === RECENT_TRACES ? 0 : at + 1;
  }

  /** The trace ids of a session's recent calls, by call id. */
  tracesOf(sessionId: string): Record<string, string> {
    const out: Record<string, string> = {};
    const n = this.recentCalls.length;
    // Oldest first, so a call id seen twice keeps its newest trace.
    for (let k = 0; k < n; k++) {
      const i = n < RECENT_TRACES ? k : (this.recentAt + k) % RECENT_TRACES;
      if (this.recentSessions[i] === sessionId) out[this.recentCalls[i]!] = this.recentTraces[i]!;
    }
    return out;
  }

  bindRequest(req: IncomingMessage, span: Span | undefined): void {
    if (span !== undefined) this.requests.set(req, span);
  }

  requestSpan(req: IncomingMessage): Span | undefined {
    return this.tracer === undefined ? undefined : this.requests.get(req);
  }

  turnStarted(sessionId: string, span: Span | undefined): void {
    if (span !== undefined) this.turns.set(sessionId, span);
  }

  turnEnded(sessionId: string, span: Span | undefined): void {
    if (span !== undefined && this.turns.get(sessionId) === span) this.turns.delete(sessionId);
  }

  /**
   * One group commit of the journal, timed by the store: counted, and traced under the running
   * turn of the first of its sessions that has one (a commit with no turn running, a host
   * registration say, is counted only). `startedAt` and `seconds` are from performance.now().
   */
  commit(store: string, records: readonly JournalRecord[], startedAt: number, seconds: number, error?: unknown): void {
    this.metrics.commit(store, records.length, seconds, error === undefined);
    if (this.tracer === undefined || this.turns.size === 0) return;
    let parent: Span | undefined;
    const sessions = new Set<string>();
    for (const r of records) {
      sessions.add(r.sessionId);
      parent ??= this.turns.get(r.sessionId);
    }
    if (parent === undefined) return;
    let bytes = 0;
    for (const r of records) bytes += Buffer.byteLength(JSON.stringify(r.data));
    const start = performance.timeOrigin + startedAt;
    const span = this.span("brain.journal.commit", parent, { "db.system.name": store === "postgres" ? "postgresql" : store, "brain.journal.records": records.length, "brain.journal.bytes": bytes, "brain.journal.sessions": sessions.size }, SpanKind.INTERNAL, start);
    if (error !== undefined) this.fail(span, "unavailable", error instanceof Error ? error.message : String(error));
    span?.end(start + seconds * 1000);
  }
}
