// A deliberately broken host, written against the raw protocol the way a third-party binding would
// be. The conformance tests run it to prove the suite fails the matching scenarios:
//   echo             sends its result twice (a replayed frame), so outcome-ok sees two results;
//   fail             drops `retryable`, so outcome-error-keeps-fields differs;
//   emit_then_finish claims sequences without awaiting `committed`, so they are not the journal's;
//   ask_model        answers from a canned text instead of asking the session's model, so
//                    model-call-from-tool sees no model.request from the call;
//   sleep            serves the connection faults, which it breaks: it reconnects after every close
//                    (4401 and 4409 included), never watches a silent runtime, never gives up an
//                    upgrade that hangs; and it resends nothing after `unavailable` and goes on
//                    after a `final` answer (emit_then_finish, echo);
//   return_then_finish sends its late finish on the newest connection, also when its call came on
//                    one that was lost since (runtime-restart-between-frames: a frame of a lost connection);
//   digest_edges     digested with keys in code-point order (not RFC 8785's UTF-16 order), so the
//                    runtime refuses it (digest_mismatch) and digest-edge-cases fails naming that;
//   versioned        runs by tool name whatever the invoke's digest; the runtime never sends a
//                    connection a contract it did not register, so this defect cannot show (the
//                    tests check that the runtime's guard makes the scenario pass anyway).
import WebSocket from "ws";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { contractDigest } from "@aexhq/brain-runtime";
import type { ToolContract, InvokeFrame } from "@aexhq/brain-protocol";

const env = (name: string) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const changed = process.env.BRAIN_CONFORMANCE_VARIANT === "changed-schema";
const schemas: Record<string, object> = {
  echo: { type: "object", properties: { value: {} }, required: ["value"] },
  fail: { type: "object", properties: { code: { type: "string" }, message: { type: "string" }, retryable: { type: "boolean" }, details: {} }, required: ["code", "message"] },
  emit_then_finish: { type: "object", properties: { count: { type: "integer" } }, required: ["count"] },
  ask_model: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] },
  sleep: { type: "object", properties: { ms: { type: "integer" } }, required: ["ms"] },
  return_then_finish: { type: "object", properties: { delayMs: { type: "integer" } }, required: ["delayMs"] },
  versioned: changed
    ? { type: "object", properties: { ms: { type: "integer" }, note: { type: "string" } }, required: ["ms", "note"] }
    : { type: "object", properties: { ms: { type: "integer" } }, required: ["ms"] },
};
const tools: ToolContract[] = Object.entries(schemas).map(([name, inputSchema]) => ({
  name, description: `broken ${name}`, inputSchema, digest: contractDigest({ name, inputSchema }),
}));

// digest_edges, digested the way a hand-rolled canonicalizer might: keys sorted by code point (as
// Python's sorted() does), not by UTF-16 code units. Sent in a second register frame, which the
// runtime refuses (digest_mismatch) while the first one stands.
const catalogue = JSON.parse(readFileSync(new URL("../catalogue.json", import.meta.url), "utf8")) as { tools: { name: string; inputSchema: object }[] };
const edgeSchema = catalogue.tools.find((t) => t.name === "digest_edges")!.inputSchema;
const byCodePoint = (a: string, b: string) => {
  const x = [...a].map((c) => c.codePointAt(0)!), y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
};
const naive = (v: unknown): string => Array.isArray(v) ? `[${v.map(naive).join(",")}]`
  : v !== null && typeof v === "object" ? `{${Object.keys(v).sort(byCodePoint).map((k) => `${JSON.stringify(k)}:${naive((v as Record<string, unknown>)[k])}`).join(",")}}`
  : JSON.stringify(v);
const edges: ToolContract = {
  name: "digest_edges", description: "broken digest_edges", inputSchema: edgeSchema as ToolContract["inputSchema"],
  digest: createHash("sha256").update(naive({ inputSchema: edgeSchema, name: "digest_edges", optionsSchema: null, outputSchema: null })).digest("hex"),
};

const url = new URL("/v1/hosts/connect", env("BRAIN_URL"));
url.protocol = "ws:";
let ref = 1;
/** The newest connection: return_then_finish sends its late finish there, whichever connection its call came on. */
let current: WebSocket | undefined;
function connect(): void {
  const ws = new WebSocket(url);
  current = ws;
  const send = (frame: Record<string, unknown>) => ws.send(JSON.stringify({ ...frame, ref: ref++ }));
  const register = (list: ToolContract[]) => send({ type: "register", protocol: "brain.host/0.2", token: env("BRAIN_TOKEN"), hostId: env("BRAIN_HOST_ID"), secret: env("BRAIN_HOST_SECRET"), tools: list });
  ws.on("open", () => { register(tools); register([edges]); });
  ws.on("message", (raw) => {
    const frame = JSON.parse(String(raw)) as { type: string };
    if (frame.type !== "invoke") return;
    const { callId, tool, input } = frame as InvokeFrame & { input: Record<string, unknown> };
    if (tool === "echo") {
      const result = { type: "emit_result", callId, outcome: { status: "ok", value: { value: input.value } } };
      send(result);
      send(result);
      send({ type: "finish", callId });
    } else if (tool === "fail") {
      send({ type: "finish", callId, outcome: { status: "error", error: { code: input.code, message: input.message } } });
    } else if (tool === "emit_then_finish") {
      const sequences: number[] = [];
      for (let i = 0; i < (input.count as number); i++) { send({ type: "emit", callId, kind: "progress", data: { i } }); sequences.push(i + 1); }
      send({ type: "finish", callId, outcome: { status: "ok", value: { sequences } } });
    } else if (tool === "ask_model") {
      send({ type: "finish", callId, outcome: { status: "ok", value: { text: "They met four times." } } });
    } else if (tool === "return_then_finish") {
      send({ type: "emit_result", callId, outcome: { status: "ok", value: { phase: "returned" } } });
      send({ type: "returned", callId });
      setTimeout(() => current?.send(JSON.stringify({ type: "finish", callId, outcome: { status: "ok", value: { phase: "finished" } }, ref: ref++ })), input.delayMs as number);
    } else if (tool === "sleep") {
      setTimeout(() => send({ type: "finish", callId, outcome: { status: "ok", value: { slept: input.ms } } }), input.ms as number);
    } else if (tool === "versioned") {
      const value = { slept: input.ms, variant: changed ? "changed-schema" : "original" };
      setTimeout(() => send({ type: "finish", callId, outcome: { status: "ok", value } }), input.ms as number);
    }
  });
  ws.on("close", () => setTimeout(connect, 100));
  ws.on("error", () => undefined);
}
connect();
