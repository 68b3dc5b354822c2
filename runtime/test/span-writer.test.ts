// Brain's own span writer (telemetry/brain-tracer.ts → span-queue.ts → otlp-http.ts), the one the
// OTEL_* variables start: its samplers decide as the OpenTelemetry SDK's do, its queue batches,
// drops and counts when full without ever making the call path wait, its exporter retries as the
// SDK's did and says what it lost, and its console exporter prints spans. Real sockets: each
// collector here is a node:http server on loopback, reading OTLP/HTTP JSON with JSON.parse. The
// protobuf encoding, and the whole path from a turn to a collector, are tested end to end in
// sdk-node/test/tracing.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import { ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace";
import { startTracing } from "../src/telemetry/tracing-export.ts";
import type { TracingSettings } from "../src/telemetry/tracing-export.ts";
import { newTraceId } from "../src/telemetry/span-ids.ts";
import { isoTime } from "../src/telemetry/iso-time.ts";
import { tracingFromEnv } from "../src/config.ts";
import { BrainRuntimeError } from "../src/errors.ts";
import { silentLogger } from "../src/logger.ts";
import type { Logger } from "../src/logger.ts";
import { startBrain } from "../src/index.ts";

interface Collector {
  url: string;
  /** Every request's decoded body, in order of arrival. */
  bodies: Array<{ resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: Record<string, unknown> }> }; scopeSpans: Array<{ scope: { name: string }; spans: Array<Record<string, any>> }> }> }>;
  headers: IncomingMessage["headers"][];
  /** How the collector answers each request: by default 200. */
  answer: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;
  spans(): Array<Record<string, any>>;
  close(): Promise<void>;
}

async function collector(): Promise<Collector> {
  let server!: Server;
  const c: Collector = {
    url: "",
    bodies: [],
    headers: [],
    answer: (_req, res) => void res.writeHead(200, { "content-type": "application/json" }).end("{}"),
    spans: () => c.bodies.flatMap((b) => b.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans))),
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => chunks.push(d));
    req.on("end", () => c.answer(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  c.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/traces`;
  return c;
}

/** A collector's answer that records the request as received. */
function accept(c: Collector) {
  return (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    assert.is(req.headers["content-type"], "application/json");
    c.headers.push(req.headers);
    c.bodies.push(JSON.parse(body.toString("utf8")));
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  };
}

function settings(url: string, more: Partial<TracingSettings> = {}): TracingSettings {
  return { exporter: "otlp", url, protocol: "http/json", serviceName: "span-writer-test", ...more };
}

/** A logger that keeps what it is told (the writer's warnings are part of what it promises). */
function keptLogger(): Logger & { lines: Array<{ message: string; fields?: Record<string, unknown> }> } {
  const lines: Array<{ message: string; fields?: Record<string, unknown> }> = [];
  const keep = (message: string, fields?: Record<string, unknown>) => void lines.push(fields === undefined ? { message } : { message, fields });
  return { lines, debug: keep, info: keep, warn: keep, error: keep };
}

test("a ratio keeps the same traces the OpenTelemetry SDK's TraceIdRatioBasedSampler keeps", async () => {
  const c = await collector();
  c.answer = accept(c);
  for (const ratio of [0.1, 0.5, 0.9]) {
    const sdk = new TraceIdRatioBasedSampler(ratio);
    const started = await startTracing(settings(c.url, { ratio, parentBased: false }), "0.0.0", keptLogger());
    const tracer = started.provider.getTracer("t");
    let kept = 0;
    for (let i = 0; i < 2000; i++) {
      // A remote parent fixes the trace id; not parent-based, so only the ratio decides.
      const traceId = newTraceId();
      const parent = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: "00f067aa0ba902b7", traceFlags: 1, isRemote: true });
      const span = tracer.startSpan("s", {}, parent);
      const expected = sdk.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;
      assert.is(span.isRecording(), expected, `trace ${traceId} at ${ratio}`);
      assert.is(span.spanContext().traceFlags, expected ? 1 : 0);
      assert.is(span.spanContext().traceId, traceId);
      if (expected) kept++;
      span.end();
    }
    assert.ok(Math.abs(kept / 2000 - ratio) < 0.06, `kept ${kept} of 2000 at ${ratio}`);
    const before = c.spans().length;
    await started.shutdown();
    assert.is(c.spans().length - before, kept, "exactly the recorded spans were exported");
  }
  await c.close();
});

test("parent-based: a remote parent's sampled flag decides, as the SDK's ParentBasedSampler; a root follows the ratio", async () => {
  const c = await collector();
  c.answer = accept(c);
  const started = await startTracing(settings(c.url, { ratio: 0, parentBased: true }), "0.0.0", keptLogger());
  const sdk = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) });
  const tracer = started.provider.getTracer("t");
  for (const flags of [0, 1]) {
    const traceId = newTraceId();
    const parent = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: "00f067aa0ba902b7", traceFlags: flags, isRemote: true });
    const span = tracer.startSpan("child of remote", { kind: SpanKind.SERVER }, parent);
    const expected = sdk.shouldSample(parent, traceId, "child of remote", SpanKind.SERVER, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED;
    assert.is(expected, flags === 1);
    assert.is(span.isRecording(), expected);
    assert.is(span.spanContext().traceId, traceId, "the trace continues either way");
    assert.is.not(span.spanContext().spanId, "00f067aa0ba902b7", "a span of its own");
    // A child of a recorded local span is recorded too, of an unrecorded one not.
    const child = tracer.startSpan("local child", {}, trace.setSpan(ROOT_CONTEXT, span));
    assert.is(child.isRecording(), expected);
    child.end();
    span.end();
  }
  assert.is(tracer.startSpan("root").isRecording(), false, "ratio 0: no root is kept");
  await started.shutdown();
  assert.equal(c.spans().map((s) => s.name).sort(), ["child of remote", "local child"]);
  const remoteChild = c.spans().find((s) => s.name === "child of remote")!;
  assert.is(remoteChild.parentSpanId, "00f067aa0ba902b7");
  assert.is(remoteChild.kind, 2, "SERVER");
  assert.is(c.spans().find((s) => s.name === "local child")!.parentSpanId, remoteChild.spanId);
  await c.close();
});

test("spans go in batches of maxExportBatchSize at once, the rest after the scheduled delay, and what is queued at shutdown", async () => {
  const c = await collector();
  c.answer = accept(c);
  const started = await startTracing(settings(c.url, { maxExportBatchSize: 10, scheduledDelayMs: 200, headers: { "x-api-key": "k1" } }), "1.2.3", keptLogger());
  const tracer = started.provider.getTracer("@aexhq/brain-runtime", "1.2.3");
  // Taken before the spans end: the delay starts at a span's end or later, so the partial batch goes
  // 200 ms after this at the earliest, however long a loaded machine takes to end the 25 spans.
  const start = Date.now();
  for (let i = 0; i < 25; i++) tracer.startSpan(`s${i}`, { attributes: { i, even: i % 2 === 0, ratio: i / 4, tags: ["a", "b"] } }).end();
  // Two full batches went at once; the other five wait for the delay.
  while (c.bodies.length < 2 && Date.now() - start < 5000) await new Promise((r) => setTimeout(r, 5));
  assert.equal(c.bodies.map((b) => b.resourceSpans[0]!.scopeSpans[0]!.spans.length), [10, 10]);
  while (c.bodies.length < 3 && Date.now() - start < 5000) await new Promise((r) => setTimeout(r, 5));
  assert.ok(Date.now() - start >= 150, "the partial batch waited for the scheduled delay");
  assert.is(c.spans().length, 25);
  // What ends now goes at shutdown.
  tracer.startSpan("last").end();
  await started.shutdown();
  const spans = c.spans();
  assert.equal(spans.map((s) => s.name), [...Array.from({ length: 25 }, (_, i) => `s${i}`), "last"]);
  const s3 = spans[3]!;
  assert.equal(s3.attributes, [
    { key: "i", value: { intValue: 3 } },
    { key: "even", value: { boolValue: false } },
    { key: "ratio", value: { doubleValue: 0.75 } },
    { key: "tags", value: { arrayValue: { values: [{ stringValue: "a" }, { stringValue: "b" }] } } },
  ]);
  assert.is(s3.kind, 1, "INTERNAL");
  assert.ok(BigInt(s3.endTimeUnixNano) >= BigInt(s3.startTimeUnixNano));
  assert.ok(Math.abs(Number(BigInt(s3.startTimeUnixNano) / 1_000_000n) - Date.now()) < 60_000, "epoch nanoseconds");
  const body = c.bodies[0]!.resourceSpans[0]!;
  assert.equal(Object.fromEntries(body.resource.attributes.map((kv) => [kv.key, kv.value.stringValue])), {
    "service.name": "span-writer-test",
    "service.version": "1.2.3",
    "telemetry.sdk.name": "@aexhq/brain-runtime",
    "telemetry.sdk.language": "nodejs",
    "telemetry.sdk.version": "1.2.3",
  });
  assert.is(body.scopeSpans[0]!.scope.name, "@aexhq/brain-runtime");
  assert.ok(c.headers.every((h) => h["x-api-key"] === "k1"), "the configured headers go with every request");
  await c.close();
});

test("a full queue drops spans and counts them, and ending a span never waits for the collector", async () => {
  const c = await collector();
  // A collector that holds every answer until released: the exporter has one request in flight.
  const held: Array<() => void> = [];
  c.answer = (req, res, body) => held.push(() => accept(c)(req, res, body));
  const logger = keptLogger();
  const started = await startTracing(settings(c.url, { maxQueueSize: 20, maxExportBatchSize: 10, scheduledDelayMs: 60_000 }), "0.0.0", logger);
  const tracer = started.provider.getTracer("t");
  const t = performance.now();
  // 10 go out at once (held), 20 fill the queue, 70 are dropped.
  for (let i = 0; i < 100; i++) tracer.startSpan(`s${i}`).end();
  assert.ok(performance.now() - t < 1000, "ending spans returned at once");
  assert.equal(started.lost(), { dropped: 70, failed: 0 });
  while (held.length === 0) await new Promise((r) => setTimeout(r, 5));
  const release = setInterval(() => held.splice(0).forEach((f) => f()), 5);
  await started.shutdown();
  clearInterval(release);
  assert.is(c.spans().length, 30, "what was queued arrived");
  assert.equal(started.lost(), { dropped: 70, failed: 0 });
  const warning = logger.lines.find((l) => l.message.includes("dropped"));
  assert.ok(warning, "the drop is logged");
  assert.is(warning!.fields?.spans, 70);
  await c.close();
});

test("a runtime started by the OTEL_* variables counts the spans it drops at /metrics (brain_spans_lost_total)", async () => {
  const c = await collector();
  const held: Array<() => void> = [];
  c.answer = (req, res, body) => held.push(() => accept(c)(req, res, body));
  const variables = { OTEL_EXPORTER_OTLP_ENDPOINT: c.url.replace(/\/v1\/traces$/, ""), OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_BSP_MAX_QUEUE_SIZE: "1", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "1" };
  const saved = Object.fromEntries(Object.keys(variables).map((k) => [k, process.env[k]]));
  Object.assign(process.env, variables);
  let brain: Awaited<ReturnType<typeof startBrain>>;
  try {
    brain = await startBrain({ dataDir: ":memory:", port: 0, logger: silentLogger });
  } finally {
    for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v);
  }
  const auth = { authorization: `Bearer ${brain.token}` };
  // Each request is a server span: the first is sent (and held by the collector), one waits, the rest are dropped.
  for (let i = 0; i < 5; i++) await fetch(`${brain.url}/v1/sessions`, { headers: auth });
  const text = await (await fetch(`${brain.url}/metrics`, { headers: auth })).text();
  const dropped = Number(/^brain_spans_lost_total\{reason="dropped"\} (\d+)$/m.exec(text)?.[1]);
  assert.ok(dropped >= 3, `dropped: ${dropped}\n${text.split("\n").filter((l) => l.includes("spans_lost")).join("\n")}`);
  assert.match(text, /^brain_spans_lost_total\{reason="failed"\} 0$/m);
  const release = setInterval(() => held.splice(0).forEach((f) => f()), 5);
  await brain.close();
  clearInterval(release);
  assert.ok(c.spans().length >= 2, "what was not dropped arrived");
  await c.close();
});

test("503 and 429 are retried (Retry-After honoured) as the SDK's exporter did; a 400 loses the batch, counted and logged", async () => {
  const c = await collector();
  const answers = [503, 429];
  c.answer = (req, res, body) => {
    const status = answers.shift();
    if (status === undefined) return accept(c)(req, res, body);
    res.writeHead(status, { "retry-after": "0" }).end();
  };
  const logger = keptLogger();
  const started = await startTracing(settings(c.url, { maxExportBatchSize: 5 }), "0.0.0", logger);
  const tracer = started.provider.getTracer("t");
  for (let i = 0; i < 5; i++) tracer.startSpan(`retried${i}`).end();
  const start = Date.now();
  while (c.spans().length < 5 && Date.now() - start < 5000) await new Promise((r) => setTimeout(r, 5));
  assert.is(c.spans().length, 5, "delivered on the third attempt");
  assert.is(answers.length, 0);
  c.answer = (_req, res) => void res.writeHead(400).end();
  tracer.startSpan("refused").end();
  await started.shutdown().then(
    () => assert.unreachable("a lost last batch rejects shutdown"),
    (e: unknown) => assert.match(String(e), "400"),
  );
  assert.equal(started.lost(), { dropped: 0, failed: 1 });
  assert.ok(logger.lines.some((l) => l.message.includes("could not be exported") && l.fields?.spans === 1));
  await c.close();
});

test("a collector that is not there: the batch is given up within the export timeout, never blocking", async () => {
  // Port 9 (discard) on loopback has no listener: connection refused, retried with backoff until the timeout.
  const started = await startTracing(settings("http://127.0.0.1:9/v1/traces", { timeoutMs: 300 }), "0.0.0", keptLogger());
  started.provider.getTracer("t").startSpan("nowhere").end();
  const t = Date.now();
  await started.shutdown().then(() => assert.unreachable(), () => undefined);
  assert.ok(Date.now() - t < 3000, `gave up in ${Date.now() - t} ms`);
  assert.equal(started.lost(), { dropped: 0, failed: 1 });
});

test("OTEL_TRACES_EXPORTER=console prints each span as a JSON line on stdout", async () => {
  const started = await startTracing({ exporter: "console", url: "", protocol: "http/protobuf", serviceName: "console-test" }, "0.0.0", keptLogger());
  const written: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((text: string) => (written.push(text), true)) as typeof process.stdout.write;
  try {
    const tracer = started.provider.getTracer("t");
    const parent = tracer.startSpan("parent", { attributes: { k: "v" } });
    const child = tracer.startSpan("child", {}, trace.setSpan(ROOT_CONTEXT, parent));
    child.setStatus({ code: 2, message: "broke" });
    child.end();
    parent.end();
    await started.shutdown();
  } finally {
    process.stdout.write = write;
  }
  const lines = written.join("").trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.map((l) => l.name), ["child", "parent"]);
  assert.is(lines[0].parentSpanId, lines[1].spanId);
  assert.equal(lines[0].status, { code: 2, message: "broke" });
  assert.equal(lines[1].attributes, { k: "v" });
  assert.is(lines[1].resource["service.name"], "console-test");
});

test("a span's data is fixed once it ends: later attributes, status and names are ignored", async () => {
  const c = await collector();
  c.answer = accept(c);
  const started = await startTracing(settings(c.url), "0.0.0", keptLogger());
  const span = started.provider.getTracer("t").startSpan("before", { attributes: { a: 1 } });
  span.setStatus({ code: 1 });
  span.setStatus({ code: 2, message: "too late: OK is final" });
  span.end();
  span.setAttribute("b", 2);
  span.updateName("after");
  span.end();
  await started.shutdown();
  const [s] = c.spans();
  assert.is(c.spans().length, 1, "ended once");
  assert.is(s!.name, "before");
  assert.equal(s!.attributes, [{ key: "a", value: { intValue: 1 } }]);
  assert.equal(s!.status, { code: 1 });
  await c.close();
});

/** The fields of one protobuf message (tag → values), enough to walk to a span's fixed64 times. */
function protoFields(bytes: Buffer): Map<number, Array<Buffer | bigint>> {
  const out = new Map<number, Array<Buffer | bigint>>();
  let pos = 0;
  const varint = () => {
    let n = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = bytes[pos++]!;
      n |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return n;
    }
  };
  while (pos < bytes.length) {
    const tag = Number(varint());
    const [field, wire] = [tag >>> 3, tag & 7];
    let value: Buffer | bigint;
    if (wire === 0) value = varint();
    else if (wire === 1) (value = bytes.readBigUInt64LE(pos)), (pos += 8);
    else if (wire === 2) {
      const length = Number(varint());
      value = bytes.subarray(pos, pos + length);
      pos += length;
    } else throw new Error(`wire type ${wire}`);
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}

test("protobuf times are exact epoch nanoseconds (fixed64), past what a double holds", async () => {
  const { OtlpProtobuf } = await import("../src/telemetry/otlp-protobuf.ts");
  const { BrainTracerProvider } = await import("../src/telemetry/brain-tracer.ts");
  const encoder = new OtlpProtobuf({ "service.name": "t" });
  const batch = encoder.batch();
  const tracer = new BrainTracerProvider({ ended: (span) => batch.add(span) }, { ratio: 1, parentBased: true }).getTracer("t");
  // Epoch milliseconds with fractions (a number below the process's time origin would be a performance.now() reading).
  const now = Date.now() + 60_000;
  const times = [now + 0.456, now + 0.9999, now + 1, 4_102_444_800_000.25, 9_007_199_254_740.5];
  for (const t of times) tracer.startSpan("timed", { startTime: t }).end(t + 1.000001);
  // Lengths of one, two and three varint bytes: a span's length is written where it was reserved, or the body moves.
  const big = "é".repeat(10_000);
  tracer.startSpan("big", { startTime: now, attributes: { big } }).end(now);
  const nanos = (ms: number) => {
    const whole = Math.floor(ms);
    return BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6));
  };
  const request = protoFields(batch.encoded());
  const scopeSpans = protoFields(protoFields(request.get(1)![0] as Buffer).get(2)![0] as Buffer);
  const spans = scopeSpans.get(2)!.map((b) => protoFields(b as Buffer));
  assert.is(spans.length, times.length + 1);
  const bigSpan = spans.pop()!;
  assert.is((bigSpan.get(5)![0] as Buffer).toString(), "big");
  const kv = protoFields(bigSpan.get(9)![0] as Buffer);
  assert.is((protoFields(kv.get(2)![0] as Buffer).get(1)![0] as Buffer).toString("utf8"), big);
  spans.forEach((span, i) => {
    assert.is(span.get(7)![0], nanos(times[i]!), `start of ${times[i]}`);
    assert.is(span.get(8)![0], nanos(times[i]! + 1.000001), `end of ${times[i]}`);
  });
  batch.release();
});

test("protobuf: attributes repeated from the span before are copied, and each span still decodes to its own (short spans whose body moved, reused batches)", async () => {
  const { OtlpProtobuf } = await import("../src/telemetry/otlp-protobuf.ts");
  const { BrainTracerProvider } = await import("../src/telemetry/brain-tracer.ts");
  const encoder = new OtlpProtobuf({ "service.name": "t" });
  let batch = encoder.batch();
  const tracer = new BrainTracerProvider({ ended: (span) => batch.add(span) }, { ratio: 1, parentBased: true }).getTracer("t");
  const decoded: Array<Record<string, string | bigint>> = [];
  const flush = () => {
    const request = protoFields(batch.encoded());
    const scopeSpans = protoFields(protoFields(request.get(1)![0] as Buffer).get(2)![0] as Buffer);
    for (const span of scopeSpans.get(2)!) {
      const attributes: Record<string, string | bigint> = {};
      for (const kv of protoFields(span as Buffer).get(9) ?? []) {
        const fields = protoFields(kv as Buffer);
        const value = protoFields(fields.get(2)![0] as Buffer);
        attributes[(fields.get(1)![0] as Buffer).toString()] = value.has(1) ? (value.get(1)![0] as Buffer).toString() : (value.get(3)![0] as bigint);
      }
      decoded.push(attributes);
    }
    batch.release(); // reused by the next batch(): its bytes are overwritten
    batch = encoder.batch();
  };
  // Same keys and values at the same places, values that change (of the same length too, one not
  // ASCII: its key is not copied after all), a number in between, spans of a few bytes (their length takes one byte where two were reserved: the body moves) and of hundreds.
  const given: Array<Record<string, string | number>> = [];
  for (let i = 0; i < 60; i++) {
    const attributes: Record<string, string | number> =
      i < 30 && i % 5 >= 3 ? { op: "x" } : { op: "execute_tool", tool: i % 3 === 0 ? "echo" : "lookup", session: i % 13 === 5 ? "ses_é" : `ses_${i % 4}`, n: i, call: `ses_${i % 4}:${i}`, pad: "p".repeat(40 + (i % 2)) };
    // Now and then one more at the end: its last copy is in a batch since overwritten (after the
    // first 30 with no short span in between, whose move would forget every copy anyway).
    if (i % 11 === 0) attributes.extra = "e";
    given.push(attributes);
    tracer.startSpan("s", { attributes: { ...attributes } }).end();
    if (i % 7 === 6) flush();
  }
  flush();
  assert.equal(decoded, given.map((a) => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, typeof v === "number" ? BigInt(v) : v]))));
});

test("isoTime writes what Date#toISOString writes", () => {
  const base = Date.now();
  for (let i = 0; i < 20_000; i++) {
    const t = base + Math.floor(Math.random() * 1e10) * (i % 2 === 0 ? 1 : -1);
    assert.is(isoTime(t), new Date(t).toISOString());
  }
  for (const t of [0, 999, 1000, 86_399_999, 253_402_300_799_999, 253_402_300_800_000, -1, 1.5]) assert.is(isoTime(t), new Date(t).toISOString(), String(t));
});

test("OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf by default, http/json on request, anything else refused; OTEL_BSP_* and the timeout read", () => {
  const base = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };
  assert.is(tracingFromEnv(base)?.protocol, "http/protobuf");
  assert.is(tracingFromEnv({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })?.protocol, "http/json");
  assert.is(tracingFromEnv({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/protobuf" })?.protocol, "http/protobuf");
  assert.throws(() => tracingFromEnv({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }), (e: unknown) => e instanceof BrainRuntimeError && /grpc/.test(e.message));
  const s = tracingFromEnv({ ...base, OTEL_BSP_MAX_QUEUE_SIZE: "4096", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "256", OTEL_BSP_SCHEDULE_DELAY: "1000", OTEL_EXPORTER_OTLP_TIMEOUT: "2500" })!;
  assert.equal([s.maxQueueSize, s.maxExportBatchSize, s.scheduledDelayMs, s.timeoutMs], [4096, 256, 1000, 2500]);
  assert.is(tracingFromEnv({ ...base, OTEL_EXPORTER_OTLP_TIMEOUT: "2500", OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "700" })!.timeoutMs, 700);
  for (const bad of ["0", "-1", "1.5", "ten"]) assert.throws(() => tracingFromEnv({ ...base, OTEL_BSP_MAX_QUEUE_SIZE: bad }), (e: unknown) => e instanceof BrainRuntimeError && /OTEL_BSP_MAX_QUEUE_SIZE/.test(e.message));
});

test.run();
