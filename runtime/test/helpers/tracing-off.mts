// Run by metrics.test.ts in a process of its own: a runtime started without OTEL_* variables runs
// a turn, and prints how many times the span writer (and with it the exporter) was loaded.
import { startBrain } from "../../src/index.ts";
import { spanWriterLoads } from "../../src/telemetry/tracing-export.ts";
import { silentLogger } from "../../src/logger.ts";

const brain = await startBrain({ dataDir: ":memory:", port: 0, logger: silentLogger });
const auth = { authorization: `Bearer ${brain.token}`, "content-type": "application/json" };
const created = await fetch(`${brain.url}/v1/sessions`, { method: "POST", headers: auth, body: JSON.stringify({ model: { provider: "scripted", script: [{ text: "hi" }] }, tools: [] }) });
const session = (await created.json()) as { id: string };
const sent = await fetch(`${brain.url}/v1/sessions/${session.id}/messages`, { method: "POST", headers: auth, body: JSON.stringify({ text: "hello", wait: true }) });
const answer = (await sent.json()) as { status: string };
await brain.close();
console.log(JSON.stringify({ writerLoads: spanWriterLoads(), answered: answer.status }));
