// The runtime's spans as its own tracer provider records them (an in-memory exporter of the
// OpenTelemetry SDK): the invoke frame carries the call span's traceparent, a failed call's span
// says its status and error code, and no span holds a secret (the redactor applies to attributes
// and status messages). The OTLP export itself is tested end to end in sdk-node/test/tracing.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { startBrain } from "../src/index.ts";
import { api, createSession, waitFor } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost, invalidFrames } from "./helpers/host.ts";
import { trace } from "@opentelemetry/api";
import { Telemetry } from "../src/telemetry/telemetry.ts";

const OPERATOR = "operator-token-for-the-tracing-test-31337";
const HOST_SECRET = "host-secret-for-the-tracing-test-4242";

test("the invoke carries the call span's traceparent; a failed call's span has its status and code, and no secret", async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const brain = await startBrain({ dataDir: ":memory:", port: 0, token: OPERATOR, tracerProvider: provider });
  const echo = contract("echo");
  const host = await TestHost.register(brain, [echo], { hostId: "traced-host", secret: HOST_SECRET });
  let traceparent = "";
  try {
    const session = await createSession(brain, [placed(echo, host.hostId)], [{ toolCalls: [{ name: "echo", input: {} }] }, { text: "done" }], { deadlineMs: 60_000 });
    await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
    const invoke = await host.invoke();
    traceparent = invoke.traceparent ?? "";
    await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "error", error: { code: "tool_error", message: `refused with ${OPERATOR} and ${HOST_SECRET}` } } });
    await waitFor(brain, session.id, (r) => r.type === "turn.completed");
  } finally {
    await host.close();
    await brain.close();
  }
  const spans = exporter.getFinishedSpans();
  const call = spans.find((s) => s.name === "execute_tool echo")!;
  assert.ok(call, `spans: ${spans.map((s) => s.name).join(", ")}`);
  assert.is(traceparent, `00-${call.spanContext().traceId}-${call.spanContext().spanId}-01`, "the invoke names the call's span");
  assert.is(call.attributes["brain.call.status"], "error");
  assert.is(call.attributes["error.type"], "tool_error");
  assert.is(call.attributes["brain.host.id"], "traced-host");
  assert.type(call.attributes["brain.call.deadline_at"], "string");
  assert.is(call.status.code, 2, "ERROR");
  assert.match(call.status.message ?? "", "[redacted]");
  const everything = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events })));
  for (const secret of [OPERATOR, HOST_SECRET]) assert.not.ok(everything.includes(secret), `a span holds a secret (${secret.slice(0, 10)}…)`);
  assert.equal(invalidFrames, []);
  await provider.shutdown();
});

test("an application's provider: a span whose ids are not valid continues nowhere, and upper-case ids are written in lower case, so no host is sent a traceparent it must refuse", async () => {
  const provider = new TracerProvider();
  const telemetry = new Telemetry({ openCalls: () => 0, residentSessions: () => 0, connectedHosts: () => 0 }, provider, undefined, "0.0.0");
  const span = telemetry.span("execute_tool echo", undefined, {})!;
  assert.is(telemetry.traceparent(span), `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
  span.end();
  assert.is(telemetry.traceparent(trace.wrapSpanContext({ traceId: `"quoted\\${"0".repeat(24)}`, spanId: "00f067aa0ba902b7", traceFlags: 1 })), undefined);
  assert.is(telemetry.traceparent(trace.wrapSpanContext({ traceId: "0".repeat(32), spanId: "0".repeat(16), traceFlags: 1 })), undefined, "all-zero ids are invalid");
  assert.is(telemetry.traceparent(trace.wrapSpanContext({ traceId: "0AF7651916CD43DD8448EB211C80319C", spanId: "B7AD6B7169203331", traceFlags: 1 })), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "upper-case hex ids, written in lower case as the contract's pattern wants");
  await provider.shutdown();
});

test.run();
