// The HTTP tool environment against raw endpoints written with node:http, the way a binding in
// another language would speak brain.http/0.2 (the SDK's handler is tested in sdk-node).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validate } from "@aexhq/brain-protocol";
import type { HttpInvokeRequest } from "@aexhq/brain-protocol";
import { startBrain } from "../src/index.ts";
import { api, waitFor, records, ofType, assertJournal } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract } from "./helpers/contract.ts";

const echo = contract("echo");

/** An endpoint whose `answer` sees each invocation (checked against the contract) and writes the response. */
async function endpoint(answer: (invoke: HttpInvokeRequest, res: ServerResponse, req: IncomingMessage) => unknown) {
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const c of req) body += c;
    const invoke = JSON.parse(body) as HttpInvokeRequest;
    assert.ok(validate.HttpInvokeRequest.Check(invoke), body);
    await answer(invoke, res, req);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tools`;
  return { url, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

const callback = (invoke: HttpInvokeRequest, body: unknown, token = invoke.token) =>
  fetch(invoke.callback, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });

async function session(brain: Brain, url: string, script: unknown[] = [{ toolCalls: [{ name: "echo", input: { x: 1 } }] }, { text: "done" }]): Promise<string> {
  const created = await api(brain, "POST", "/v1/sessions", { model: { provider: "scripted", script }, tools: [{ contract: echo, options: { o: 1 }, placement: { kind: "http", url } }] });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.is((await api(brain, "POST", `/v1/sessions/${created.body.id}/messages`, { text: "go" })).status, 202);
  return created.body.id as string;
}

test("claim, emit_result and finish are answered with committed sequences; the call ends with the request", async () => {
  let later: HttpInvokeRequest | undefined;
  const app = await endpoint(async (invoke, res) => {
    const claim = (await (await callback(invoke, { type: "claim" })).json()) as { sequence: number };
    assert.is(claim.sequence, invoke.sequence);
    assert.equal(invoke.options, { o: 1 });
    const r = (await (await callback(invoke, { type: "emit_result", outcome: { status: "ok", value: 1 }, content: "one" })).json()) as { sequence: number };
    const f = (await (await callback(invoke, { type: "finish", outcome: { status: "ok", value: 2 } })).json()) as { sequence: number };
    assert.ok(f.sequence > r.sequence && r.sequence > invoke.sequence);
    later = invoke;
    res.writeHead(204).end();
  });
  const brain = await startBrain({ dataDir: ":memory:", port: 0, httpToolOrigins: [new URL(app.url).origin] });
  try {
    const id = await session(brain, app.url);
    const all = await waitFor(brain, id, (r) => r.type === "turn.completed");
    assert.equal(ofType(all, "tool.result").map((r) => r.data.outcome), [{ status: "ok", value: 1 }, { status: "ok", value: 2 }]);
    assert.is(ofType(all, "tool.finished")[0]!.data.status, "ok");
    // The request has ended: the call's token is void.
    const late = await callback(later!, { type: "emit_result", outcome: { status: "ok", value: 3 } });
    assert.is(late.status, 401);
    assertJournal(all);
  } finally {
    await brain.close();
    await app.close();
  }
});

test("an endpoint that answers before the call finished ends it tool_error; a wrong token is 401 and commits nothing", async () => {
  const app = await endpoint(async (invoke, res) => {
    const wrong = await callback(invoke, { type: "finish" }, "not-the-token-at-all");
    assert.is(wrong.status, 401);
    res.writeHead(204).end();
  });
  const brain = await startBrain({ dataDir: ":memory:", port: 0, httpToolOrigins: [new URL(app.url).origin] });
  try {
    const id = await session(brain, app.url);
    const all = await waitFor(brain, id, (r) => r.type === "turn.completed");
    const [f] = ofType(all, "tool.finished");
    assert.is(f!.data.error?.code, "tool_error");
    assert.match(f!.data.error!.message, "ended before the call finished");
    // Nothing the wrong token sent was committed: the one result is the failure itself.
    assert.equal(ofType(all, "tool.result").map((r) => r.data.outcome.status), ["error"]);
  } finally {
    await brain.close();
    await app.close();
  }
});

test("a runtime stopping with an HTTP call open aborts the request and leaves the call to recovery (unknown, never re-sent)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-http-restart-"));
  let invocations = 0;
  let aborted!: () => void;
  const sawAbort = new Promise<void>((r) => (aborted = r));
  const app = await endpoint(async (invoke, res) => {
    invocations++;
    await callback(invoke, { type: "claim" });
    res.on("close", () => aborted());
  });
  const origins = [new URL(app.url).origin];
  let brain = await startBrain({ dataDir: dir, port: 0, httpToolOrigins: origins });
  try {
    const id = await session(brain, app.url);
    await waitFor(brain, id, (r) => r.type === "tool.call_started");
    while (invocations === 0) await new Promise((r) => setTimeout(r, 10));
    await brain.close();
    await sawAbort;
    brain = await startBrain({ dataDir: dir, port: 0, httpToolOrigins: origins });
    const all = await records(brain, id);
    assert.is(ofType(all, "tool.finished")[0]!.data.status, "unknown");
    assert.is(invocations, 1);
    assertJournal(all);
  } finally {
    await brain.close();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
