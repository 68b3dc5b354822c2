import { ROOT_CONTEXT } from "@opentelemetry/api";
const { BrainTracerProvider } = await import("./dist/telemetry/brain-tracer.js");
const { OtlpProtobuf } = await import("./dist/telemetry/otlp-protobuf.js");
const spans = [];
const tracer = new BrainTracerProvider({ ended: (s) => spans.push(s) }, { ratio: 1, parentBased: true }).getTracer("@aexhq/brain-runtime", "0.2.0");
for (let i = 0; i < 512; i++) {
  const attributes = { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "echo", "brain.session.id": `ses_${(1e19 + i * 7919).toString(16)}`, "brain.call.id": `ses_${(1e19 + i * 7919).toString(16)}:${i}`, "brain.placement.kind": "host" };
  attributes["brain.host.id"] = "app-5953ac081921f20f"; attributes["brain.call.deadline_at"] = new Date(Date.now() + 60000).toISOString();
  const s = tracer.startSpan("execute_tool echo", { kind: 0, attributes }, ROOT_CONTEXT); s.setAttribute("brain.call.status", "ok"); s.end();
}
const pb = new OtlpProtobuf({ "service.name": "x" });
let best = Infinity, bytes = 0;
for (let r = 0; r < 400; r++) {
  const b = pb.batch(); const t = performance.now();
  for (const s of spans) b.add(s);
  bytes = b.encoded().length; best = Math.min(best, (performance.now() - t) * 1000 / 512); b.release();
}
console.log(`encode best ${best.toFixed(3)} µs/span, ${(bytes / 512).toFixed(0)} B/span`);
let bestMake = Infinity;
for (let r = 0; r < 200; r++) {
  const t = performance.now();
  for (let i = 0; i < 512; i++) { const attributes = { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "echo", "brain.session.id": "ses_abc", "brain.call.id": "ses_abc:1", "brain.placement.kind": "host" }; tracer.startSpan("execute_tool echo", { kind: 0, attributes }, ROOT_CONTEXT); }
  bestMake = Math.min(bestMake, (performance.now() - t) * 1000 / 512);
}
console.log(`startSpan best ${bestMake.toFixed(3)} µs/span`);
