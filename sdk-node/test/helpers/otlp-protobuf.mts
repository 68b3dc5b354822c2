// Decodes OTLP's protobuf encoding of an ExportTraceServiceRequest (what an OTLP/HTTP receiver
// gets with content-type application/x-protobuf) into the shape of OTLP's JSON encoding, so the
// receiver reads both alike. A wire-format reader (varint, fixed64, length-delimited) driven by
// the field numbers of opentelemetry-proto's trace.proto, common.proto and resource.proto;
// tracing.test.ts checks it against the OpenTelemetry SDK's own protobuf serializer.

type Field = { field: number; wire: number; value: number | bigint | Uint8Array };

/** The fields of one message, in order (repeated fields appear once per element). */
function fields(bytes: Uint8Array): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= bytes.length) throw new Error("truncated protobuf: a varint runs past the end");
      const b = bytes[pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new Error("malformed protobuf: a varint longer than 10 bytes");
    }
  };
  while (pos < bytes.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    const wire = tag & 7;
    if (field === 0) throw new Error("malformed protobuf: field number 0");
    if (wire === 0) out.push({ field, wire, value: varint() });
    else if (wire === 1) {
      if (pos + 8 > bytes.length) throw new Error("truncated protobuf: a fixed64 runs past the end");
      out.push({ field, wire, value: Buffer.from(bytes.buffer, bytes.byteOffset + pos, 8).readBigUInt64LE() });
      pos += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      if (pos + length > bytes.length) throw new Error("truncated protobuf: a length-delimited field runs past the end");
      out.push({ field, wire, value: bytes.subarray(pos, pos + length) });
      pos += length;
    } else if (wire === 5) {
      out.push({ field, wire, value: BigInt(Buffer.from(bytes.buffer, bytes.byteOffset + pos, 4).readUInt32LE()) });
      pos += 4;
    } else throw new Error(`malformed protobuf: wire type ${wire}`);
  }
  return out;
}

const text = (v: Field["value"]) => new TextDecoder("utf-8", { fatal: true }).decode(v as Uint8Array);
const hex = (v: Field["value"]) => Buffer.from(v as Uint8Array).toString("hex");
const all = (bytes: Uint8Array, n: number) => fields(bytes).filter((f) => f.field === n);
const one = (bytes: Uint8Array, n: number) => fields(bytes).filter((f) => f.field === n).at(-1);
/** int64 varints are two's complement: a negative one is a 64-bit value with the top bit set. */
const int64 = (v: bigint) => Number(BigInt.asIntN(64, v));

type AnyValue = Record<string, unknown>;

/** AnyValue: string 1, bool 2, int 3, double 4, array 5, kvlist 6, bytes 7. */
function anyValue(bytes: Uint8Array): AnyValue {
  const f = fields(bytes).at(-1);
  if (f === undefined) return {};
  switch (f.field) {
    case 1: return { stringValue: text(f.value) };
    case 2: return { boolValue: f.value === 1n };
    case 3: return { intValue: String(int64(f.value as bigint)) };
    case 4: {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE(f.value as bigint);
      return { doubleValue: b.readDoubleLE() };
    }
    case 5: return { arrayValue: { values: all(f.value as Uint8Array, 1).map((v) => anyValue(v.value as Uint8Array)) } };
    case 6: return { kvlistValue: { values: keyValues(f.value as Uint8Array, 1) } };
    case 7: return { bytesValue: Buffer.from(f.value as Uint8Array).toString("base64") };
    default: throw new Error(`unknown AnyValue field ${f.field}`);
  }
}

/** The KeyValue messages in field `n` of a message: key 1, value 2. */
function keyValues(bytes: Uint8Array, n: number): Array<{ key: string; value: AnyValue }> {
  return all(bytes, n).map((kv) => {
    const m = kv.value as Uint8Array;
    const value = one(m, 2);
    return { key: text(one(m, 1)?.value ?? new Uint8Array()), value: value === undefined ? {} : anyValue(value.value as Uint8Array) };
  });
}

const u64 = (f: Field | undefined) => (f === undefined ? "0" : String(f.value));
const num = (f: Field | undefined) => (f === undefined ? 0 : Number(f.value));

/** Span: trace_id 1, span_id 2, trace_state 3, parent_span_id 4, name 5, kind 6, start 7, end 8, attributes 9, events 11, links 13, status 15. */
function span(bytes: Uint8Array): Record<string, unknown> {
  const parent = one(bytes, 4);
  const status = one(bytes, 15)?.value as Uint8Array | undefined;
  const message = status === undefined ? undefined : one(status, 2);
  return {
    traceId: hex(one(bytes, 1)?.value ?? new Uint8Array()),
    spanId: hex(one(bytes, 2)?.value ?? new Uint8Array()),
    ...(parent === undefined || (parent.value as Uint8Array).length === 0 ? {} : { parentSpanId: hex(parent.value) }),
    name: text(one(bytes, 5)?.value ?? new Uint8Array()),
    kind: num(one(bytes, 6)),
    startTimeUnixNano: u64(one(bytes, 7)),
    endTimeUnixNano: u64(one(bytes, 8)),
    attributes: keyValues(bytes, 9),
    events: all(bytes, 11).map((e) => ({ timeUnixNano: u64(one(e.value as Uint8Array, 1)), name: text(one(e.value as Uint8Array, 2)?.value ?? new Uint8Array()), attributes: keyValues(e.value as Uint8Array, 3) })),
    links: all(bytes, 13).map((l) => ({ traceId: hex(one(l.value as Uint8Array, 1)?.value ?? new Uint8Array()), spanId: hex(one(l.value as Uint8Array, 2)?.value ?? new Uint8Array()), attributes: keyValues(l.value as Uint8Array, 4) })),
    status: status === undefined ? {} : { code: num(one(status, 3)), ...(message === undefined ? {} : { message: text(message.value) }) },
  };
}

/** ExportTraceServiceRequest: resource_spans 1 → ResourceSpans: resource 1 (attributes 1), scope_spans 2 → ScopeSpans: scope 1 (name 1, version 2), spans 2. */
export function decodeTraceRequest(bytes: Uint8Array): { resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: AnyValue }> }; scopeSpans: Array<{ scope: { name: string; version?: string }; spans: Array<Record<string, unknown>> }> }> } {
  return {
    resourceSpans: all(bytes, 1).map((rs) => {
      const r = rs.value as Uint8Array;
      const resource = one(r, 1)?.value as Uint8Array | undefined;
      return {
        resource: { attributes: resource === undefined ? [] : keyValues(resource, 1) },
        scopeSpans: all(r, 2).map((ss) => {
          const s = ss.value as Uint8Array;
          const scope = one(s, 1)?.value as Uint8Array | undefined;
          const version = scope === undefined ? undefined : one(scope, 2);
          return {
            scope: { name: scope === undefined ? "" : text(one(scope, 1)?.value ?? new Uint8Array()), ...(version === undefined ? {} : { version: text(version.value) }) },
            spans: all(s, 2).map((sp) => span(sp.value as Uint8Array)),
          };
        }),
      };
    }),
  };
}
