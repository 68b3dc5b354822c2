import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeFileSync } from "node:fs";
import { z } from "zod";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain, httpEnv, httpTools, tool } from "../src/index.ts";
import { callThenAnswer, records } from "./helpers/brain.mts";
import { OtlpReceiver } from "./helpers/otlp-receiver.mts";
import { decodeTraceRequest } from "./helpers/otlp-protobuf.mts";
import type { ReceivedSpan } from "./helpers/otlp-receiver.mts";

const OTEL_VARIABLES = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SERVICE_NAME", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_HEADERS"];

/** `protocol`: OTEL_EXPORTER_OTLP_PROTOCOL, unset for the default (http/protobuf). */
async function oneTurnTraced(protocol: "http/json" | undefined) {
  const receiver = await OtlpReceiver.start();
  // The application hosting the tool traces with the OpenTelemetry SDK, as its own code would set it up.
  const hostProvider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": "tool-host" }),
    spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${receiver.endpoint}/v1/traces` }) })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  trace.setGlobalTracerProvider(hostProvider);
  context.setGlobalContextManager(contextManager);
  // The runtime traces because the standard variables ask it to (read when it starts).
  const saved = Object.fromEntries(OTEL_VARIABLES.map((k) => [k, process.env[k]]));
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
  process.env.OTEL_SERVICE_NAME = "brain-test";
  process.env.OTEL_RESOURCE_ATTRIBUTES = "deployment.environment=test";
  process.env.OTEL_EXPORTER_OTLP_HEADERS = "x-collector-key=key-for-the-tracing-test";
  delete process.env.OTEL_TRACES_EXPORTER;
  if (protocol === undefined) delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
  else process.env.OTEL_EXPORTER_OTLP_PROTOCOL = protocol;
  const runtime = await startBrain({ dataDir: ":memory:", port: 0 });
  for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v);
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  const lookup = tool({
    name: "lookup",
    description: "Look up one record.",
    input: z.object({ id: z.string() }),
    run: ({ id }, ctx) =>
      trace.getTracer("tool-host-app").startActiveSpan("database.get", async (span) => {
        span.setAttribute("db.key", id);
        await new Promise((r) => setTimeout(r, 5));
        span.end();
        if (id === "missing") throw new Error("no record missing");
        return ctx.finish({ value: `record ${id}` });
      }),
  });
  let spans: ReceivedSpan[];
  const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
  try {
    const session = await brain.sessions.create({ model: callThenAnswer([{ name: "lookup", input: { id: "42" } }, { name: "lookup", input: { id: "missing" } }], "found"), tools: [lookup()] });
    // The caller's own trace context (W3C traceparent) is continued by the request's span.
    const sent = await fetch(`${runtime.url}/v1/sessions/${session.id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${runtime.token}`, "content-type": "application/json", traceparent: `00-${callerTrace}-00f067aa0ba902b7-01` },
      body: JSON.stringify({ text: "look up 42", wait: true }),
    });
    assert.equal(((await sent.json()) as { status: string }).status, "completed");
    await hostProvider.forceFlush();
  } finally {
    await brain.close();
    // Closing flushes the runtime's batched spans to the receiver.
    await runtime.close();
    spans = await receiver.until((all) => all.some((s) => s.name === "brain.turn") && all.filter((s) => s.name === "database.get").length === 2);
    await hostProvider.shutdown();
    contextManager.disable();
    trace.disable();
    context.disable();
    await receiver.close();
  }
  // The runtime's requests in the encoding asked for (protobuf by default); the host's SDK sends JSON.
  const runtimeTypes = receiver.contentTypes.filter((_, i) => receiver.userAgents[i]!.startsWith("brain-runtime/"));
  assert.ok(runtimeTypes.length > 0, `the runtime exported; user agents: ${receiver.userAgents.join(", ")}`);
  const expected = protocol === "http/json" ? "application/json" : "application/x-protobuf";
  assert.ok(runtimeTypes.every((t) => t === expected), `the runtime sent ${runtimeTypes.join(", ")}`);
  assert.ok(receiver.contentTypes.some((t) => t.startsWith("application/json")), "the host's own SDK exported (JSON)");
  assert.ok(receiver.headers.filter((_, i) => receiver.userAgents[i]!.startsWith("brain-runtime/")).every((h) => h["x-collector-key"] === "key-for-the-tracing-test"), "OTEL_EXPORTER_OTLP_HEADERS reach the collector");
  const resource = receiver.resources.get("brain-test")!;
  assert.is(resource["deployment.environment"], "test", "OTEL_RESOURCE_ATTRIBUTES are the resource's");
  assert.type(resource["service.version"], "string");
  assert.is(resource["telemetry.sdk.language"], "nodejs");
  const inTrace = spans.filter((s) => s.traceId === callerTrace);
  const one = (name: string, service = "brain-test") => {
    const found = inTrace.filter((s) => s.name === name && s.service === service);
    assert.is(found.length, 1, `one ${name} span in the trace; got ${inTrace.map((s) => s.name).join(", ")}`);
    return found[0]!;
  };
  const request = one("POST /v1/sessions/{id}/messages");
  assert.is(request.parentSpanId, "00f067aa0ba902b7", "the request span continues the caller's traceparent");
  assert.is(request.kind, 2, "SERVER");
  assert.is(request.attributes["http.response.status_code"], 200);
  const turn = one("brain.turn");
  assert.is(turn.parentSpanId, request.spanId);
  assert.is(turn.attributes["brain.turn.status"], "completed");
  const chats = inTrace.filter((s) => s.name === "chat" && s.service === "brain-test");
  assert.is(chats.length, 2, "two model calls: the step with the call, then the answer");
  for (const c of chats) {
    assert.is(c.parentSpanId, turn.spanId);
    assert.is(c.attributes["gen_ai.provider.name"], "scripted");
    assert.is(c.attributes["brain.outcome"], "ok");
  }
  const calls = inTrace.filter((s) => s.name === "execute_tool lookup" && s.service === "brain-test");
  assert.is(calls.length, 2, "two tool calls");
  for (const c of calls) {
    assert.is(c.parentSpanId, turn.spanId);
    assert.is(c.kind, 1, "INTERNAL");
    assert.is(c.attributes["brain.placement.kind"], "host");
    assert.is(c.attributes["gen_ai.tool.name"], "lookup");
    assert.type(c.attributes["brain.host.id"], "string");
    assert.ok(BigInt(c.endTimeUnixNano) > BigInt(c.startTimeUnixNano), "a call takes time");
  }
  const call = calls.find((c) => c.attributes["brain.call.status"] === "ok")!;
  assert.ok(call, "the call that succeeded");
  assert.is(call.status.code ?? 0, 0, "an ok call's status is unset");
  const failed = calls.find((c) => c.attributes["brain.call.status"] === "error")!;
  assert.ok(failed, "the call that failed");
  assert.is(failed.status.code, 2, "ERROR");
  assert.match(failed.status.message ?? "", "no record missing");
  assert.type(failed.attributes["error.type"], "string");
  // The host continued the trace: the span the tool made inside run is a child of the call's span.
  const users = inTrace.filter((s) => s.name === "database.get" && s.service === "tool-host");
  const user = users.find((u) => u.attributes["db.key"] === "42")!;
  assert.is(user.parentSpanId, call.spanId);
  assert.is(users.find((u) => u.attributes["db.key"] === "missing")!.parentSpanId, failed.spanId);
  const commits = inTrace.filter((s) => s.name === "brain.journal.commit");
  assert.ok(commits.length > 0, "group commits of the turn's records are traced");
  for (const c of commits) {
    assert.is(c.parentSpanId, turn.spanId);
    assert.ok(Number(c.attributes["brain.journal.records"]) >= 1);
    assert.ok(Number(c.attributes["brain.journal.bytes"]) > 0);
  }
  return inTrace;
}

test("one turn with host tool calls is one trace: request → turn → model calls, tool calls → the host's own spans, and journal commits (OTLP/HTTP protobuf, the default)", async () => {
  const inTrace = await oneTurnTraced(undefined);
  // The excerpt docs/observability.md shows, refreshed by BRAIN_TRACE_EXCERPT=<file>.
  if (process.env.BRAIN_TRACE_EXCERPT) writeFileSync(process.env.BRAIN_TRACE_EXCERPT, JSON.stringify(inTrace, null, 2));
});

test("the same trace over OTLP/HTTP JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json)", async () => {
  await oneTurnTraced("http/json");
});

test("the receiver's protobuf decoding reads the OpenTelemetry SDK's own protobuf encoding as the SDK's JSON encoding says", async () => {
  // Spans of every kind of value an attribute can hold, an event, a link, a status, made and
  // encoded by the SDK (not by Brain), so the decoder the tests above rely on is checked against
  // an encoder that is not the one under test.
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ resource: resourceFromAttributes({ "service.name": "decoder-check", "n": 7 }), spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const tracer = provider.getTracer("decoder-check", "1.2.3");
  const root = tracer.startSpan("root", { kind: 1, attributes: { s: "é ✓ text", i: 42, neg: -7, d: 2.5, b: true, list: ["a", "b"], nums: [1, 2] } });
  const child = tracer.startSpan("child", { kind: 2, links: [{ context: root.spanContext(), attributes: { why: "follows" } }] }, trace.setSpan(context.active(), root));
  child.addEvent("happened", { at: 1 });
  child.setStatus({ code: 2, message: "it broke" });
  child.end();
  root.end();
  const spans = exporter.getFinishedSpans();
  const fromJson = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)!));
  const fromProtobuf = decodeTraceRequest(ProtobufTraceSerializer.serializeRequest(spans)!);
  const value = (v: Record<string, unknown>): unknown => (v.arrayValue !== undefined ? (v.arrayValue as { values: Array<Record<string, unknown>> }).values.map(value) : v.intValue !== undefined ? Number(v.intValue) : (v.stringValue ?? v.doubleValue ?? v.boolValue));
  const kvs = (list: Array<{ key: string; value: Record<string, unknown> }> | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
  const norm = (body: any) => body.resourceSpans.map((rs: any) => ({
    resource: kvs(rs.resource.attributes),
    scopes: rs.scopeSpans.map((ss: any) => ({
      scope: { name: ss.scope.name, version: ss.scope.version },
      spans: ss.spans.map((sp: any) => ({
        traceId: sp.traceId, spanId: sp.spanId, parentSpanId: sp.parentSpanId || undefined, name: sp.name, kind: sp.kind,
        start: String(sp.startTimeUnixNano), end: String(sp.endTimeUnixNano), attributes: kvs(sp.attributes),
        events: (sp.events ?? []).map((e: any) => ({ name: e.name, time: String(e.timeUnixNano), attributes: kvs(e.attributes) })),
        links: (sp.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId, attributes: kvs(l.attributes) })),
        status: { code: sp.status?.code ?? 0, message: sp.status?.message || undefined },
      })),
    })),
  }));
  const expected = norm(fromJson);
  assert.equal(norm(fromProtobuf), expected);
  // And the check itself has teeth: the values came through.
  const [rootSpan, childSpan] = [expected[0].scopes[0].spans.find((s: any) => s.name === "root"), expected[0].scopes[0].spans.find((s: any) => s.name === "child")];
  assert.equal(rootSpan.attributes, { s: "é ✓ text", i: 42, neg: -7, d: 2.5, b: true, list: ["a", "b"], nums: [1, 2] });
  assert.is(childSpan.parentSpanId, rootSpan.spanId);
  assert.equal(childSpan.status, { code: 2, message: "it broke" });
  assert.is(childSpan.links[0].spanId, rootSpan.spanId);
  await provider.shutdown();
});

test("a tool served over HTTP (httpTools) continues the trace too: the runtime sends the W3C traceparent header", async () => {
  const runtimeSpans = new InMemorySpanExporter();
  const appSpans = new InMemorySpanExporter();
  const runtimeProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: runtimeSpans })] });
  const appProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: appSpans })] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  trace.setGlobalTracerProvider(appProvider);
  context.setGlobalContextManager(contextManager);
  const lookup = tool({
    name: "lookup", description: "Look up one record.", input: z.object({ id: z.string() }),
    run: ({ id }, ctx) => trace.getTracer("app").startActiveSpan("database.get", async (span) => (span.end(), ctx.finish({ value: id }))),
  });
  let handler: (r: Request) => Promise<Response> = async () => new Response(null, { status: 503 });
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const response = await handler(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers: req.headers as Record<string, string>, body: Buffer.concat(chunks) }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/brain/tools`;
  const runtime = await startBrain({ dataDir: ":memory:", port: 0, httpToolOrigins: [new URL(appUrl).origin], tracerProvider: runtimeProvider });
  handler = httpTools([lookup], { brainUrl: runtime.url });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    const session = await brain.sessions.create({ model: callThenAnswer([{ name: "lookup", input: { id: "9" } }], "found"), tools: [lookup({ env: httpEnv({ url: appUrl }) })] });
    assert.is(await session.send("go"), "found");
    const all = await records(session);
    const finished = all.find((r) => r.type === "tool.finished") as { data: { status: string; error?: unknown } } | undefined;
    assert.is(finished?.data.status, "ok", JSON.stringify(finished?.data));
  } finally {
    await brain.close();
    await runtime.close();
    await new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r())));
    contextManager.disable();
    trace.disable();
    context.disable();
  }
  const call = runtimeSpans.getFinishedSpans().find((s) => s.name === "execute_tool lookup")!;
  const user = appSpans.getFinishedSpans().find((s) => s.name === "database.get")!;
  assert.ok(call && user, `runtime: ${runtimeSpans.getFinishedSpans().map((s) => s.name)}; app: ${appSpans.getFinishedSpans().map((s) => s.name)}`);
  assert.is(call.attributes["brain.placement.kind"], "http");
  assert.is(user.spanContext().traceId, call.spanContext().traceId);
  assert.is(user.parentSpanContext?.spanId, call.spanContext().spanId);
  await runtimeProvider.shutdown();
  await appProvider.shutdown();
});

test.run();
