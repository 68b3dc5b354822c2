import type { SpanContext } from "@opentelemetry/api";

/**
 * W3C Trace Context `traceparent` (https://www.w3.org/TR/trace-context/#traceparent-header),
 * version 00: how a span's context travels in an HTTP header and in the host `invoke` frame.
 * Written here rather than taken from the OpenTelemetry SDK's propagator: the runtime does not use the SDK.
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;

export function formatTraceparent(span: SpanContext): string {
  // Four concatenations, each a 32-byte rope node (the text is flattened once, with the frame it goes in).
  return "00-" + span.traceId + "-" + span.spanId + flagsPart(span.traceFlags);
}

/** "-" and the flags' two hex digits; the two a span has (sampled or not) without a number-to-text conversion per call. */
function flagsPart(flags: number): string {
  const f = flags & 0xff;
  return f === 1 ? "-01" : f === 0 ? "-00" : `-${f.toString(16).padStart(2, "0")}`;
}

/** The remote span context a `traceparent` names; undefined for anything malformed or all-zero (ignored, as the spec says). */
export function parseTraceparent(value: string | undefined): SpanContext | undefined {
  if (value === undefined || value.length > 512) return undefined;
  const m = TRACEPARENT.exec(value.trim());
  if (m === null || m[1] === "ff") return undefined;
  const [, version, traceId, spanId, flags] = m as unknown as [string, string, string, string, string];
  if (version === "00" && value.trim().length !== 55) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: parseInt(flags, 16) & 1, isRemote: true };
}
