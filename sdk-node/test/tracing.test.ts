import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeFileSync } from "node:fs";
import { z } from "zod";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain, tool } from "../src/index.ts";
import { callThenAnswer } from "./helpers/brain.mts";
import { OtlpReceiver } from "./helpers/otlp-receiver.mts";
import type { ReceivedSpan } from "./helpers/otlp-receiver.mts";

const OTEL_VARIABLES = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SERVICE_NAME", "OTEL_TRACES_EXPORTER"];

test("one turn with a host tool call is one trace: request → turn → model calls, tool call → the host's own span, and journal commits", async () => {
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
  delete process.env.OTEL_TRACES_EXPORTER;
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
        return ctx.finish({ value: `record ${id}` });
      }),
  });
  let spans: ReceivedSpan[];
  const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
  try {
    const session = await brain.sessions.create({ model: callThenAnswer([{ name: "lookup", input: { id: "42" } }], "found"), tools: [lookup()] });
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
    spans = await receiver.until((all) => all.some((s) => s.name === "brain.turn") && all.some((s) => s.name === "database.get"));
    await hostProvider.shutdown();
    contextManager.disable();
    trace.disable();
    context.disable();
    await receiver.close();
  }
  assert.ok(receiver.contentTypes.every((t) => t.startsWith("application/json")), "the OTLP/HTTP JSON encoding");
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
  const call = one("execute_tool lookup");
  assert.is(call.parentSpanId, turn.spanId);
  assert.is(call.attributes["brain.placement.kind"], "host");
  assert.is(call.attributes["gen_ai.tool.name"], "lookup");
  assert.is(call.attributes["brain.call.status"], "ok");
  assert.type(call.attributes["brain.host.id"], "string");
  // The host continued the trace: the span the tool made inside run is a child of the call's span.
  const user = one("database.get", "tool-host");
  assert.is(user.parentSpanId, call.spanId);
  assert.is(user.attributes["db.key"], "42");
  const commits = inTrace.filter((s) => s.name === "brain.journal.commit");
  assert.ok(commits.length > 0, "group commits of the turn's records are traced");
  for (const c of commits) {
    assert.is(c.parentSpanId, turn.spanId);
    assert.ok(Number(c.attributes["brain.journal.records"]) >= 1);
    assert.ok(Number(c.attributes["brain.journal.bytes"]) > 0);
  }
  // The excerpt docs/observability.md shows, refreshed by BRAIN_TRACE_EXCERPT=<file>.
  if (process.env.BRAIN_TRACE_EXCERPT) writeFileSync(process.env.BRAIN_TRACE_EXCERPT, JSON.stringify(inTrace, null, 2));
});

test.run();
