import type { AttributeValue, Attributes } from "@opentelemetry/api";
import type { SpanScope, WrittenSpan } from "./written-span.ts";

/**
 * OTLP's protobuf encoding of an ExportTraceServiceRequest (opentelemetry-proto's
 * collector/trace/v1/trace_service.proto, trace/v1/trace.proto, common/v1/common.proto), written
 * by hand: the handful of messages a span needs, by field number, into one growing buffer. The
 * field numbers are the proto's; sdk-node/test/helpers/otlp-protobuf.mts reads them back,
 * and its own test checks that reader against the OpenTelemetry SDK's encoder.
 *
 * A nested message's length comes before it: room for it is reserved (begin), and the body is
 * moved only when the length turns out to need another number of bytes (end).
 */
const LEN = 2;
const VARINT = 0;
const I64 = 1;

/** Each hex digit's value, by character code (ids are lowercase hex: span-ids.ts, traceparent.ts). */
const HEX = new Uint8Array(128);
for (let i = 0; i < 16; i++) HEX["0123456789abcdef".charCodeAt(i)] = i;
for (let i = 10; i < 16; i++) HEX["ABCDEF".charCodeAt(i - 10)] = i;

/** The parts of a request that are the same in every batch: the resource, and each scope. */
export class OtlpProtobuf {
  /** Resource { attributes = 1 }. */
  readonly resource: Buffer;
  private readonly scopes = new Map<SpanScope, Buffer>();

  constructor(resource: Attributes) {
    const w = new ProtobufWriter(1024);
    w.keyValues(1, resource);
    this.resource = w.bytes();
  }

  /** InstrumentationScope { name = 1, version = 2 }. */
  scope(scope: SpanScope): Buffer {
    let bytes = this.scopes.get(scope);
    if (bytes === undefined) {
      const w = new ProtobufWriter(256);
      w.string(1, scope.name);
      if (scope.version !== undefined) w.string(2, scope.version);
      this.scopes.set(scope, (bytes = w.bytes()));
    }
    return bytes;
  }

  /** Batches whose request was sent, kept for the next ones: their buffers are reused, not reallocated. */
  private readonly spare: ProtobufBatch[] = [];

  batch(): ProtobufBatch {
    return this.spare.pop() ?? new ProtobufBatch(this);
  }

  /** A batch whose request is done (sent, or given up): its buffer serves again. */
  recycle(batch: ProtobufBatch): void {
    if (this.spare.length < SPARE_BATCHES) this.spare.push(batch.reset());
  }
}

/** Batches kept for reuse: the queue holds at most maxQueueSize / maxExportBatchSize (4) at a time. */
const SPARE_BATCHES = 4;

/** Room left before a batch's first span for the request's framing, so a one-scope request is sent without a copy. */
const HEADROOM = 2048;

/**
 * One request being filled: each span is encoded into the batch's buffer when it ends (span-queue.ts),
 * so no span object outlives its call waiting for the export, and the bytes wait outside the JS
 * heap, in a buffer that is reused batch after batch. Consecutive spans of one scope form one
 * ScopeSpans; the request's framing is written in front of them when it is sent.
 */
export class ProtobufBatch {
  size = 0;
  /** Sized for a full batch of the runtime's spans (~400 bytes each), so it rarely grows (a copy). */
  private readonly w = new ProtobufWriter(256 * 1024);
  private readonly groups: Array<{ scope: SpanScope; start: number; end: number }> = [];

  constructor(private readonly shared: OtlpProtobuf) {
    this.w.rewind(HEADROOM);
  }

  reset(): this {
    this.size = 0;
    this.groups.length = 0;
    this.w.rewind(HEADROOM);
    return this;
  }

  add(span: WrittenSpan): void {
    let group = this.groups[this.groups.length - 1];
    if (group === undefined || group.scope !== span.scope) this.groups.push((group = { scope: span.scope, start: this.w.pos, end: this.w.pos }));
    this.w.span(span);
    group.end = this.w.pos;
    this.size++;
  }

  release(): void {
    this.shared.recycle(this);
  }

  /**
   * ExportTraceServiceRequest { resource_spans = 1: ResourceSpans { resource = 1, scope_spans = 2:
   * ScopeSpans { scope = 1, spans = 2 } } }. One scope (the runtime's case): the framing goes into
   * the room before the spans and the request is a view of the batch's buffer, valid until release().
   */
  encoded(): Buffer {
    const resource = this.shared.resource;
    let inner = lengthField(resource.length);
    const scopeSpans: number[] = [];
    for (const g of this.groups) {
      const length = lengthField(this.shared.scope(g.scope).length) + (g.end - g.start);
      scopeSpans.push(length);
      inner += lengthField(length);
    }
    const total = lengthField(inner);
    if (this.groups.length === 1) {
      const g = this.groups[0]!;
      const scope = this.shared.scope(g.scope);
      const start = g.start - (total - (g.end - g.start));
      if (start >= 0) {
        const end = this.w.pos;
        this.w.pos = start;
        this.frame(this.w, inner, resource, scopeSpans[0]!, scope);
        this.w.pos = end;
        return this.w.slice(start, g.end);
      }
    }
    const out = new ProtobufWriter(total);
    for (let i = 0; i < this.groups.length; i++) {
      const g = this.groups[i]!;
      if (i === 0) this.frame(out, inner, resource, scopeSpans[0]!, this.shared.scope(g.scope));
      else {
        const scope = this.shared.scope(g.scope);
        out.header(2, scopeSpans[i]!);
        out.header(1, scope.length);
        out.copy(scope);
      }
      out.copy(this.w.slice(g.start, g.end));
    }
    return out.bytes();
  }

  /** The request's framing up to its first group's spans. */
  private frame(w: ProtobufWriter, inner: number, resource: Buffer, scopeSpans: number, scope: Buffer): void {
    w.header(1, inner);
    w.header(1, resource.length);
    w.copy(resource);
    w.header(2, scopeSpans);
    w.header(1, scope.length);
    w.copy(scope);
  }
}

/** The bytes of a length-delimited field with a one-byte tag and a body of `length` bytes. */
function lengthField(length: number): number {
  let size = 1;
  for (let n = length; n >= 128; n = Math.floor(n / 128)) size++;
  return 1 + size + length;
}

/**
 * The last short attribute written at one position of a span's attribute list: where its encoded
 * KeyValue is in the buffer, so the next span with the same key and value there copies those bytes
 * instead of encoding them again.
 */
interface WrittenAttribute {
  key: string;
  value: string;
  start: number;
  end: number;
  /** The writer's `written` when it was recorded: bytes of an earlier one may be overwritten. */
  written: number;
}

/** Protobuf's wire format into one growing buffer (fields 1–15 only: every tag is one byte). */
class ProtobufWriter {
  private buf: Buffer;
  pos = 0;
  private readonly starts: number[] = [];
  /**
   * Consecutive spans of one kind repeat most of their attributes in the same order (an
   * execute_tool span: the operation, the tool, the placement, the host, the status), so each
   * position of the attribute list remembers its last short string attribute; copying its bytes
   * (one copyWithin) costs a fraction of encoding the key and value character by character, which
   * was most of the cost of encoding a span.
   */
  private readonly memo: WrittenAttribute[] = [];
  /** Bumped whenever bytes already written may be overwritten or moved, so no memo points into them. */
  private written = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** Starts writing at `pos` again: what was written after it is overwritten. */
  rewind(pos: number): void {
    this.pos = pos;
    this.written++;
  }

  /** What was written, copied out (the buffer may be larger). */
  bytes(): Buffer {
    return this.pos === this.buf.length ? this.buf : Buffer.from(this.buf.subarray(0, this.pos));
  }

  slice(start: number, end: number): Buffer {
    return this.buf.subarray(start, end);
  }

  /** A length-delimited field's tag and length, its body to follow. */
  header(field: number, length: number): void {
    this.tag(field, LEN);
    this.varint(length);
  }

  copy(bytes: Buffer): void {
    this.room(bytes.length);
    this.pos += bytes.copy(this.buf, this.pos);
  }

  span(s: WrittenSpan): void {
    this.begin(2, 2); // ScopeSpans.spans
    if (s.tracePool !== undefined) this.id(1, s.tracePool.bytes, s.traceAt, 16);
    else this.hex(1, s.traceId);
    this.id(2, s.spanPool.bytes, s.spanAt, 8);
    if (s.parentPool !== undefined) this.id(4, s.parentPool.bytes, s.parentAt, 8);
    else if (s.parentSpanId !== undefined) this.hex(4, s.parentSpanId);
    this.string(5, s.name);
    this.tag(6, VARINT);
    this.varint(s.kind + 1); // OTLP's SpanKind counts from UNSPECIFIED = 0
    this.nanos(7, s.startMs);
    this.nanos(8, s.endMs);
    this.attributes(s.attributes);
    if (s.events !== undefined)
      for (const e of s.events) {
        this.begin(11);
        this.nanos(1, e.timeMs);
        this.string(2, e.name);
        this.keyValues(3, e.attributes);
        this.end();
      }
    if (s.links !== undefined)
      for (const l of s.links) {
        this.begin(13);
        this.hex(1, l.context.traceId);
        this.hex(2, l.context.spanId);
        this.keyValues(4, l.attributes);
        this.end();
      }
    if (s.statusCode !== 0 || s.statusMessage !== undefined) {
      this.begin(15);
      if (s.statusMessage !== undefined) this.string(2, s.statusMessage);
      if (s.statusCode !== 0) {
        this.tag(3, VARINT);
        this.varint(s.statusCode);
      }
      this.end();
    }
    // Span.flags (fixed32): bit 8 says whether the parent is remote is known, bit 9 that it is; left out.
    if (this.end()) this.written++; // the span's body moved, its attributes' bytes with it
  }

  /**
   * Span.attributes (field 9), each short string attribute copied from the same position of an
   * earlier span when its key and value are the same (see `memo`), else encoded and remembered.
   */
  private attributes(attributes: Attributes): void {
    let k = 0;
    // Copies not made yet: consecutive ones whose bytes lie one after another go as one.
    let from = 0;
    let to = 0;
    for (const key in attributes) {
      const value = attributes[key];
      if (value === undefined || value === null) continue;
      if (typeof value === "string") {
        const m = this.memo[k];
        if (m !== undefined && m.written === this.written && m.key === key && m.value === value) {
          if (m.start !== to) {
            this.copyOut(from, to);
            from = m.start;
          }
          to = m.end;
          k++;
          continue;
        }
        // The same key, and a value of the same length (another session's or call's id): every byte
        // before the value is the memo's, so it joins the pending copy and only the value is written.
        if (m !== undefined && m.written === this.written && m.key === key && m.end - m.start - 8 - key.length === value.length) {
          const prefixEnd = m.end - value.length;
          if (m.start !== to) {
            this.copyOut(from, to);
            from = m.start;
          }
          this.copyOut(from, prefixEnd);
          from = to = 0;
          const kv = this.pos - (prefixEnd - m.start);
          if (this.ascii(value)) {
            (m.value = value), (m.start = kv), (m.end = this.pos);
            k++;
            continue;
          }
          this.pos = kv; // not ASCII after all: written whole below
        } else {
          this.copyOut(from, to);
          from = to = 0;
        }
        const start = this.pos;
        if (this.shortAscii(9, key, value)) {
          if (m === undefined) this.memo[k] = { key, value, start, end: this.pos, written: this.written };
          else (m.key = key), (m.value = value), (m.start = start), (m.end = this.pos), (m.written = this.written);
          k++;
          continue;
        }
      } else {
        this.copyOut(from, to);
        from = to = 0;
      }
      this.keyValue(9, key, value);
      k++;
    }
    this.copyOut(from, to);
  }

  /** An ASCII string's bytes, appended; false (the position where it was) when a character is not ASCII. */
  private ascii(text: string): boolean {
    const n = text.length;
    this.room(n);
    const buf = this.buf;
    let at = this.pos;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) return false;
      buf[at++] = c;
    }
    this.pos = at;
    return true;
  }

  /** Appends the bytes at [from, to) of this buffer (nothing when empty). */
  private copyOut(from: number, to: number): void {
    const n = to - from;
    if (n === 0) return;
    this.room(n);
    this.buf.copyWithin(this.pos, from, to);
    this.pos += n;
  }

  keyValues(field: number, attributes: Attributes | undefined): void {
    if (attributes === undefined) return;
    for (const key in attributes) {
      const value = attributes[key];
      if (value === undefined || value === null) continue;
      if (typeof value === "string" && this.shortAscii(field, key, value)) continue;
      this.keyValue(field, key, value);
    }
  }

  private keyValue(field: number, key: string, value: AttributeValue): void {
    this.begin(field); // KeyValue
    this.string(1, key);
    this.begin(2); // KeyValue.value: AnyValue
    this.anyValue(value);
    this.end();
    this.end();
  }

  /**
   * KeyValue { key = 1, value = 2: AnyValue { string_value = 1 } } in one go, for the common
   * attribute: an ASCII key and value short enough that every length is one byte. False, with
   * nothing written, for any other.
   */
  private shortAscii(field: number, key: string, value: string): boolean {
    const a = key.length;
    const b = value.length;
    const total = 2 + a + 4 + b;
    if (total >= 128) return false;
    this.room(total + 2);
    const buf = this.buf;
    let at = this.pos;
    buf[at++] = (field << 3) | LEN;
    buf[at++] = total;
    buf[at++] = (1 << 3) | LEN;
    buf[at++] = a;
    for (let i = 0; i < a; i++) {
      const c = key.charCodeAt(i);
      if (c >= 0x80) return false;
      buf[at++] = c;
    }
    buf[at++] = (2 << 3) | LEN;
    buf[at++] = 2 + b;
    buf[at++] = (1 << 3) | LEN;
    buf[at++] = b;
    for (let i = 0; i < b; i++) {
      const c = value.charCodeAt(i);
      if (c >= 0x80) return false;
      buf[at++] = c;
    }
    this.pos = at;
    return true;
  }

  /** AnyValue's fields: string 1, bool 2, int 3, double 4, array 5 (ArrayValue.values = 1). */
  private anyValue(value: AttributeValue): void {
    switch (typeof value) {
      case "string":
        this.string(1, value);
        return;
      case "boolean":
        this.tag(2, VARINT);
        this.varint(value ? 1 : 0);
        return;
      case "number":
        if (Number.isSafeInteger(value)) {
          this.tag(3, VARINT);
          this.varint(value);
        } else {
          this.tag(4, I64);
          this.room(8);
          this.pos = this.buf.writeDoubleLE(value, this.pos);
        }
        return;
      default:
        if (!Array.isArray(value)) return;
        this.begin(5);
        for (const v of value as unknown[]) {
          this.begin(1);
          if (v !== undefined && v !== null) this.anyValue(v as AttributeValue);
          this.end();
        }
        this.end();
    }
  }

  private tag(field: number, wire: number): void {
    this.room(1);
    this.buf[this.pos++] = (field << 3) | wire;
  }

  /** A varint: an unsigned integer, or a negative int64 as its 10-byte two's complement. */
  private varint(n: number): void {
    this.room(10);
    if (n < 0) {
      let big = BigInt.asUintN(64, BigInt(n));
      while (big >= 128n) {
        this.buf[this.pos++] = Number(big & 127n) | 128;
        big >>= 7n;
      }
      this.buf[this.pos++] = Number(big);
      return;
    }
    while (n >= 128) {
      this.buf[this.pos++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }

  /**
   * A string field. Short ASCII strings (every name, key, id and most values a span has) are
   * copied by a loop here: Buffer's byteLength and write are a call into C++ each, which cost more
   * than the copy for a few dozen bytes. Anything else goes through Buffer.
   */
  string(field: number, text: string): void {
    this.tag(field, LEN);
    const n = text.length;
    if (n < 128) {
      this.room(n + 1);
      const buf = this.buf;
      let at = this.pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c >= 0x80) break;
        buf[at++] = c;
      }
      if (i === n) {
        buf[this.pos] = n;
        this.pos = at;
        return;
      }
    }
    const length = Buffer.byteLength(text);
    this.varint(length);
    this.room(length);
    this.pos += this.buf.write(text, this.pos);
  }

  /** A trace or span id, `n` bytes at `at` of the pool it was drawn from (span-ids.ts): copied by a loop, as above. */
  private id(field: number, from: Buffer, at: number, n: number): void {
    this.tag(field, LEN);
    this.room(n + 1);
    const buf = this.buf;
    let pos = this.pos;
    buf[pos++] = n;
    for (let i = 0; i < n; i++) buf[pos++] = from[at + i]!;
    this.pos = pos;
  }

  /** A trace or span id given only as hex (a remote parent's, a link's): decoded here, for the same reason as above. */
  private hex(field: number, id: string): void {
    const n = id.length >> 1;
    this.tag(field, LEN);
    this.room(n + 1);
    const buf = this.buf;
    buf[this.pos++] = n;
    for (let i = 0; i < n; i++) buf[this.pos++] = (HEX[id.charCodeAt(2 * i)]! << 4) | HEX[id.charCodeAt(2 * i + 1)]!;
  }

  /**
   * Epoch milliseconds (a double) as fixed64 nanoseconds, exactly: the product passes 2^53, so it
   * is built in 32-bit halves (ms = hi·2^21 + lo keeps every partial product below 2^53).
   */
  private nanos(field: number, ms: number): void {
    const whole = Math.floor(ms);
    let fraction = Math.round((ms - whole) * 1e6);
    let w = whole;
    if (fraction >= 1e6) (w += 1), (fraction -= 1e6);
    const hi = Math.floor(w / 2097152); // 2^21
    const a = hi * 1e6; // nanos = a·2^21 + b
    const b = (w - hi * 2097152) * 1e6 + fraction;
    const sum = (a % 2048) * 2097152 + b; // < 2^43: exact
    const carry = Math.floor(sum / 4294967296);
    const low = sum - carry * 4294967296;
    const high = Math.floor(a / 2048) + carry;
    this.tag(field, I64);
    this.room(8);
    const buf = this.buf;
    let at = this.pos;
    buf[at++] = low & 0xff;
    buf[at++] = (low >>> 8) & 0xff;
    buf[at++] = (low >>> 16) & 0xff;
    buf[at++] = low >>> 24;
    buf[at++] = high & 0xff;
    buf[at++] = (high >>> 8) & 0xff;
    buf[at++] = (high >>> 16) & 0xff;
    buf[at++] = high >>> 24;
    this.pos = at;
  }

  /**
   * Opens a nested message `field`; end() writes its length. `reserve` bytes are left for the
   * length: 1 for a small message, 2 for a span (128 to 16,383 bytes, the runtime's are ~400), so
   * the usual case needs no move of the body.
   */
  private begin(field: number, reserve = 1): void {
    this.tag(field, LEN);
    this.room(reserve);
    this.starts.push(this.pos, reserve);
    this.pos += reserve;
  }

  /** Closes the message begin() opened; true when its body had to move. */
  private end(): boolean {
    const reserved = this.starts.pop()!;
    const start = this.starts.pop()!;
    const length = this.pos - start - reserved;
    let size = 1;
    for (let n = length; n >= 128; n = Math.floor(n / 128)) size++;
    const moved = size !== reserved;
    if (moved) {
      // The length takes another number of bytes than reserved: the body moves (canonical varints only).
      this.room(size - reserved);
      this.buf.copyWithin(start + size, start + reserved, this.pos);
      this.pos += size - reserved;
    }
    let at = start;
    let n = length;
    while (n >= 128) {
      this.buf[at++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    this.buf[at] = n;
    return moved;
  }

  private room(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }
}
