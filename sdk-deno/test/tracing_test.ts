// Tracing across the runtime and a Deno host (issue 33): `brain serve` (a Node subprocess) traces
// because OTEL_EXPORTER_OTLP_ENDPOINT names a receiver this test serves with Deno.serve, which
// decodes the OTLP/HTTP JSON both exporters send (the runtime's asked for with OTEL_EXPORTER_OTLP_PROTOCOL); this Deno process hosts the tool with the
// OpenTelemetry SDK registered, and the span the tool makes in `run` is a child of the runtime's
// tool-call span.
import { Brain, tool } from "@aexhq/brain";
import { z } from "zod";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { serveRuntime, stopRuntime } from "../../scripts/deno-runtime.ts";

const token = crypto.randomUUID();
const opts = { sanitizeOps: false, sanitizeResources: false };

interface Span {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
}

type KeyValue = { key: string; value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number } };
const attributesOf = (list: KeyValue[] = []) => Object.fromEntries(list.map((kv) => [kv.key, kv.value.stringValue ?? kv.value.intValue ?? kv.value.boolValue ?? kv.value.doubleValue]));

Deno.test({ name: "a Deno host continues the runtime's trace: the tool's own span is a child of the tool-call span", ...opts }, async () => {
  const spans: Span[] = [];
  const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    if (req.method !== "POST" || new URL(req.url).pathname !== "/v1/traces") return new Response(null, { status: 404 });
    const body = (await req.json()) as { resourceSpans: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans: Array<{ spans?: Array<Record<string, unknown>> }> }> };
    for (const rs of body.resourceSpans) {
      const service = String(attributesOf(rs.resource?.attributes)["service.name"]);
      for (const ss of rs.scopeSpans) {
        for (const s of ss.spans ?? []) {
          spans.push({ service, traceId: s.traceId as string, spanId: s.spanId as string, parentSpanId: (s.parentSpanId as string) || undefined, name: s.name as string, attributes: attributesOf(s.attributes as KeyValue[]) });
        }
      }
    }
    return Response.json({});
  });
  const endpoint = `http://127.0.0.1:${receiver.addr.port}`;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": "deno-host" }),
    spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }) })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(contextManager);
  // The runtime sends OTLP protobuf by default; JSON here, which this receiver reads (the protobuf
  // encoding is checked against a real decoder in sdk-node/test/tracing.test.ts).
  const runtime = await serveRuntime({ BRAIN_TOKEN: token, BRAIN_JOURNAL: "memory", BRAIN_PORT: "0", OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_SERVICE_NAME: "brain-deno-test" });
  const brain = new Brain({ url: runtime.url, token });
  try {
    const lookup = tool({
      name: "lookup",
      description: "Look up one record.",
      input: z.object({ id: z.string() }),
      run: ({ id }, ctx) =>
        trace.getTracer("deno-app").startActiveSpan("kv.get", async (span) => {
          span.setAttribute("kv.key", id);
          await new Promise((r) => setTimeout(r, 5));
          span.end();
          return ctx.finish({ value: `record ${id}` });
        }),
    });
    const session = await brain.sessions.create({ model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: { id: "42" } }] }, { text: "found" }] }, tools: [lookup()] });
    const answer = await session.send("look up 42");
    if (answer !== "found") throw new Error(`answer ${answer}`);
    await provider.forceFlush();
  } finally {
    await brain.close();
    // A clean stop flushes the runtime's batched spans to the receiver.
    await stopRuntime(runtime.child);
    await provider.shutdown();
    contextManager.disable();
    trace.disable();
    context.disable();
  }
  const until = Date.now() + 10_000;
  while (!(spans.some((s) => s.name === "execute_tool lookup") && spans.some((s) => s.name === "kv.get")) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  await receiver.shutdown();
  const call = spans.find((s) => s.name === "execute_tool lookup" && s.service === "brain-deno-test");
  const user = spans.find((s) => s.name === "kv.get" && s.service === "deno-host");
  if (call === undefined || user === undefined) throw new Error(`spans received: ${spans.map((s) => `${s.service}:${s.name}`).join(", ")}`);
  if (user.traceId !== call.traceId || user.parentSpanId !== call.spanId) throw new Error(`the tool's span is not a child of the call's: ${JSON.stringify({ call, user })}`);
  if (user.attributes["kv.key"] !== "42") throw new Error(`kv.get attributes ${JSON.stringify(user.attributes)}`);
  const turn = spans.find((s) => s.name === "brain.turn");
  if (turn === undefined || call.parentSpanId !== turn.spanId) throw new Error("the tool-call span is not under the turn's");
});
