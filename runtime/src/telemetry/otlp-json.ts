import type { AttributeValue, Attributes } from "@opentelemetry/api";
import type { SpanScope, WrittenSpan } from "./written-span.ts";

/**
 * OTLP's JSON encoding of an ExportTraceServiceRequest
 * (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding: proto3's JSON mapping, ids
 * as hex, enums as numbers), built as text: each span's JSON when it ends (span-queue.ts), the
 * request around them when the batch is sent. The SDK built an object tree of the whole request
 * and then JSON.stringify'd it.
 */
export class JsonBatch {
  private readonly parts: string[] = [];
  private readonly groups: Array<{ scope: SpanScope; start: number; end: number }> = [];

  constructor(private readonly resource: string) {}

  get size(): number {
    return this.parts.length;
  }

  add(s: WrittenSpan): void {
    let group = this.groups[this.groups.length - 1];
    if (group === undefined || group.scope !== s.scope) this.groups.push((group = { scope: s.scope, start: this.parts.length, end: this.parts.length }));
    this.parts.push(span(s));
    group.end = this.parts.length;
  }

  encoded(): Buffer {
    const scopes = this.groups.map((g) => `{"scope":{"name":${JSON.stringify(g.scope.name)}${g.scope.version === undefined ? "" : `,"version":${JSON.stringify(g.scope.version)}`}},"spans":[${this.parts.slice(g.start, g.end).join(",")}]}`);
    return Buffer.from(`{"resourceSpans":[{"resource":${this.resource},"scopeSpans":[${scopes.join(",")}]}]}`);
  }
}

/** Resource { attributes }, as JSON: the same in every request. */
export function jsonResource(resource: Attributes): string {
  return `{"attributes":${keyValues(resource)},"droppedAttributesCount":0}`;
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
