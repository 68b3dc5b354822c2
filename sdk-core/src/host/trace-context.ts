/**
 * Continuing the runtime's trace in a tool's `run` (the invoke frame's W3C `traceparent`), with
 * whatever OpenTelemetry the application registered and without depending on any of it.
 *
 * `@opentelemetry/api` keeps what an application registers (its context manager, its tracer
 * provider) in one global, `globalThis[Symbol.for("opentelemetry.js.api.1")]`, and keys a context's
 * span by `Symbol.for("OpenTelemetry Context Key SPAN")`: both are how every copy of the API (any
 * 1.x version, npm or Deno's built-in) finds them, so this module uses them the same way. With no
 * context manager registered, `run` runs as it is.
 */
const API_GLOBAL = Symbol.for("opentelemetry.js.api.1");
const SPAN_KEY = Symbol.for("OpenTelemetry Context Key SPAN");
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

interface OtelContext {
  setValue(key: symbol, value: unknown): OtelContext;
}
interface ContextManager {
  active(): OtelContext;
  with<T>(ctx: OtelContext, fn: () => T): T;
}

/** The remote parent as the API's NonRecordingSpan is: its span context, and nothing recorded. */
function remoteSpan(traceId: string, spanId: string, traceFlags: number) {
  const context = { traceId, spanId, traceFlags, isRemote: true };
  const span = {
    spanContext: () => context,
    setAttribute: () => span,
    setAttributes: () => span,
    addEvent: () => span,
    addLink: () => span,
    addLinks: () => span,
    setStatus: () => span,
    updateName: () => span,
    end: () => {},
    isRecording: () => false,
    recordException: () => {},
  };
  return span;
}

/** Runs `fn` with the span `traceparent` names as the active parent, when the application registered a context manager. */
export function inRegisteredTrace<T>(traceparent: string, fn: () => T): T {
  const manager = (globalThis as Record<symbol, { context?: ContextManager } | undefined>)[API_GLOBAL]?.context;
  const m = manager === undefined ? null : TRACEPARENT.exec(traceparent);
  if (manager === undefined || m === null) return fn();
  const parent = manager.active().setValue(SPAN_KEY, remoteSpan(m[1]!, m[2]!, parseInt(m[3]!, 16) & 1));
  return manager.with(parent, fn);
}
