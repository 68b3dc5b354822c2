import { createRequire } from "node:module";

/**
 * The part of `@opentelemetry/api` the host uses. The package is an optional peer: an application
 * that traces has it (with an SDK registered); one that does not pays one failed resolution, once.
 */
interface OtelApi {
  context: { active(): unknown; with<T>(ctx: unknown, fn: () => T): T };
  trace: { setSpanContext(ctx: unknown, span: { traceId: string; spanId: string; traceFlags: number; isRemote: boolean }): unknown };
}

let api: OtelApi | null | undefined;

function otel(): OtelApi | null {
  if (api === undefined) {
    try {
      // Resolved from the application's node_modules: the API keeps its registrations in one
      // global, so this copy sees the tracer provider and context manager the application set up.
      api = createRequire(import.meta.url)("@opentelemetry/api") as OtelApi;
    } catch {
      // Not installed: the application does not trace, and tools run as they are.
      api = null;
    }
  }
  return api;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** Platform.inTrace for Node: `fn` runs with the runtime's call span as the active (remote) parent. */
export function inTrace<T>(traceparent: string, fn: () => T): T {
  const m = TRACEPARENT.exec(traceparent);
  const otelApi = m === null ? null : otel();
  if (m === null || otelApi === null) return fn();
  const parent = otelApi.trace.setSpanContext(otelApi.context.active(), { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16) & 1, isRemote: true });
  return otelApi.context.with(parent, fn);
}
