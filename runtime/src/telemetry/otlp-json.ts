import type { AttributeValue, Attributes } from "@opentelemetry/api";
import type { SpanScope, WrittenSpan } from "./written-span.ts";

/**
 * OTLP's JSON encoding of an ExportTraceServiceRequest
 * (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding: proto3's JSON mapping, ids
 * as hex, enums as numbers), built as one string. The SDK built an object tree of the whole
 * request and then JSON.stringify'd it; building the text directly skips the tree.
 */
export function otlpJson(resource: Attributes, spans: readonly WrittenSpan[]): string {
  let out = `{"resourceSpans":[{"resource":{"attributes":${keyValues(resource)},"droppedAttributesCount":0},"scopeSpans":[`;
  let first = true;
  for (const [scope, group] of byScope(spans)) {
    out += `${first ? "" : ","}{"scope":{"name":${JSON.stringify(scope.name)}${scope.version === undefined ? "" : `,"version":${JSON.stringify(scope.version)}`}},"spans":[`;
    first = false;
    for (let i = 0; i < group.length; i++) out += (i === 0 ? "" : ",") + span(group[i]!);
    out += "]}";
  }
  return `${out}]}]}`;
}

/** The spans of each instrumentation scope, in order (the runtime has one scope; the map is for generality). */
export function byScope(spans: readonly WrittenSpan[]): Map<SpanScope, WrittenSpan[]> {
  const groups = new Map<SpanScope, WrittenSpan[]>();
  if (spans.length > 0 && spans.every((s) => s.scope === spans[0]!.scope)) return groups.set(spans[0]!.scope, spans as WrittenSpan[]);
  for (const s of spans) {
    const group = groups.get(s.scope);
    if (group === undefined) groups.set(s.scope, [s]);
    else group.push(s);
  }
  return groups;
}

function span(s: WrittenSpan): string {
  let out = `{"traceId":"${s.traceId}","spanId":"${s.spanId}",${s.parentSpanId === undefined ? "" : `"parentSpanId":"${s.parentSpanId}",`}"name":${JSON.stringify(s.name)},"kind":${s.kind + 1},"startTimeUnixNano":"${unixNanos(s.startMs)}","endTimeUnixNano":"${unixNanos(s.endMs)}","attributes":${keyValues(s.attributes)},"droppedAttributesCount":0`;
  if (s.events !== undefined) {
    out += `,"events":[${s.events.map((e) => `{"timeUnixNano":"${unixNanos(e.timeMs)}","name":${JSON.stringify(e.name)},"attributes":${keyValues(e.attributes)},"droppedAttributesCount":0}`).join(",")}]`;
  }
  if (s.links !== undefined && s.links.length > 0) {
    out += `,"links":[${s.links.map((l) => `{"traceId":"${l.context.traceId}","spanId":"${l.context.spanId}","attributes":${keyValues(l.attributes)},"droppedAttributesCount":0}`).join(",")}]`;
  }
  out += `,"status":{"code":${s.statusCode}${s.statusMessage === undefined ? "" : `,"message":${JSON.stringify(s.statusMessage)}`}}}`;
  return out;
}

/** `{"key":<key>,"value":` of the attribute keys seen so far: the same few dozen keys come in every span. */
const keyPrefixes = new Map<string, string>();

function keyPrefix(key: string): string {
  let prefix = keyPrefixes.get(key);
  if (prefix === undefined) {
    prefix = `{"key":${JSON.stringify(key)},"value":`;
    if (keyPrefixes.size < 1024) keyPrefixes.set(key, prefix);
  }
  return prefix;
}

function keyValues(attributes: Attributes | undefined): string {
  if (attributes === undefined) return "[]";
  let out = "[";
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined || value === null) continue;
    out += `${out.length === 1 ? "" : ","}${keyPrefix(key)}${anyValue(value)}}`;
  }
  return `${out}]`;
}

function anyValue(value: AttributeValue | null | undefined): string {
  switch (typeof value) {
    case "string":
      return `{"stringValue":${JSON.stringify(value)}}`;
    case "number":
      if (Number.isSafeInteger(value)) return `{"intValue":${value}}`;
      // proto3's JSON spells the doubles JSON has no number for as strings.
      return `{"doubleValue":${Number.isFinite(value) ? value : `"${value === Infinity ? "Infinity" : value === -Infinity ? "-Infinity" : "NaN"}"`}}`;
    case "boolean":
      return `{"boolValue":${value}}`;
    default:
      if (Array.isArray(value)) return `{"arrayValue":{"values":[${(value as unknown[]).map((v) => (v === undefined || v === null ? "{}" : anyValue(v as AttributeValue))).join(",")}]}}`;
      return "{}";
  }
}

/** Epoch milliseconds (a double) as OTLP's decimal nanoseconds, without losing digits to a double's 53 bits. */
export function unixNanos(ms: number): string {
  const whole = Math.floor(ms);
  const fraction = Math.round((ms - whole) * 1e6);
  if (fraction >= 1e6) return `${whole + 1}000000`;
  return `${whole}${String(fraction).padStart(6, "0")}`;
}
