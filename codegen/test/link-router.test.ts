// The generated node-to-node link router (generated/router-link.ts): valid messages reach their
// typed handler method (a request's reply becomes its answer), bad ones come back as typed errors
// carrying the `id` to answer or the `re` to fail, and no handler runs for them.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { routeLinkMessage, answersRequest, LINK_ANSWER_TYPES } from "@aexhq/brain-protocol";
import type { LinkMessageHandler, LinkMessageError, LinkRoute, LinkAnswer } from "@aexhq/brain-protocol";
import { readExamples } from "../src/generate.ts";
import { emitLinkRouter, linkMessagesOf } from "../src/emit-routers.ts";
import type { ProtocolSchema } from "../src/json-schema.ts";

const root = join(import.meta.dirname, "../..");
const schema = JSON.parse(readFileSync(join(root, "contract/protocol.schema.json"), "utf8")) as ProtocolSchema;
const examples = readExamples(root);
const callId = "ses_01hzy3k9q2:7";

/** A handler that records every call and answers each request with a fixed reply. */
function recorder() {
  const seen: string[] = [];
  const handler: LinkMessageHandler = {
    invoke: (m) => (seen.push(`invoke:${m.hostId}`), {}),
    emit: (m) => (seen.push(`emit:${m.kind}`), { sequence: 9, finished: false }),
    emitResult: async () => (seen.push("emitResult"), { sequence: 10, finished: true }),
    returned: () => (seen.push("returned"), { sequence: 11, finished: false }),
    finish: () => {
      seen.push("finish");
      throw Object.assign(new Error("call ses_01hzy3k9q2:7 already finished"), { code: "call_finished" });
    },
    modelRequest: () => (seen.push("modelRequest"), { result: { text: "hi", toolCalls: [], stopReason: "end", usage: { inputTokens: 1, outputTokens: 1 } }, finished: false }),
    environmentRequest: (m) => (seen.push(`environmentRequest:${m.request.operation}`), { result: { bindings: [] }, finished: false }),
    stop: (m) => void seen.push(`stop:${m.status}`),
    lost: (m) => void seen.push(`lost:${m.message}`),
  };
  return { seen, handler };
}

const route = (m: unknown, handler: LinkMessageHandler): LinkRoute => routeLinkMessage(typeof m === "string" ? m : JSON.stringify(m), handler);

test("a valid request reaches its method; the reply becomes its typed answer with `re` = the request's id", async () => {
  const { seen, handler } = recorder();
  const r = route({ type: "emit", id: 12, callId, kind: "progress", data: { n: 1 } }, handler);
  assert.is(r.kind, "request");
  if (r.kind !== "request") return;
  assert.is(r.id, 12);
  assert.equal(await r.answer, { type: "committed", re: 12, sequence: 9, finished: false });
  const inv = route(examples.get("LinkInvoke"), handler);
  assert.equal(inv.kind === "request" && (await inv.answer), { type: "invoked", re: 4 });
  const model = route(examples.get("LinkModelRequest"), handler);
  assert.is(model.kind === "request" && (await model.answer).type, "model_result");
  assert.equal(seen, ["emit:progress", "invoke:billing-host", "modelRequest"]);
});

test("a request whose method throws is left for the receiver to answer `error`: its answer rejects with the thrown error", async () => {
  const { handler } = recorder();
  const r = route({ type: "finish", id: 15, callId }, handler);
  assert.is(r.kind, "request");
  if (r.kind !== "request") return;
  await r.answer.then(
    () => assert.unreachable("finish threw"),
    (e: { code?: string }) => assert.is(e.code, "call_finished"),
  );
});

test("a notice reaches its method and is not answered; an answer reaches no method", () => {
  const { seen, handler } = recorder();
  assert.equal(route(examples.get("LinkStop"), handler), { kind: "notice" });
  assert.equal(route({ type: "lost", callId, message: "gone" }, handler), { kind: "notice" });
  const answer = route({ type: "committed", re: 3, sequence: 4, finished: true }, handler);
  assert.equal(answer, { kind: "answer", answer: { type: "committed", re: 3, sequence: 4, finished: true } });
  assert.is(route({ type: "error", error: { code: "unknown_frame", message: "?" } }, handler).kind, "answer", "an error without re is an answer too");
  assert.equal(seen, ["stop:timeout", "lost:gone"]);
});

test("every link example routes without error", () => {
  const { handler } = recorder();
  for (const [name, value] of examples) {
    if (!name.startsWith("Link")) continue;
    const r = route(value, handler);
    assert.is.not(r.kind, "error", `${name}: ${JSON.stringify(r)}`);
    if (r.kind === "request") r.answer.catch(() => {});
  }
});

test("bad messages get typed errors naming the id to answer or the re to fail, and no method runs", () => {
  const { seen, handler } = recorder();
  const error = (m: unknown): LinkMessageError => {
    const r = route(m, handler);
    if (r.kind !== "error") throw new assert.Assertion({ message: `${JSON.stringify(m)} was routed as a ${r.kind}`, operator: "kind", actual: r.kind, expects: "error", generated: false });
    return r.error;
  };
  assert.equal(error("{nope").code, "malformed_json");
  assert.equal(error("[1]"), { code: "invalid_frame", message: "a link message must be a JSON object" });
  // A type this node does not know (a node of another version): answered, naming its id.
  assert.equal(error({ type: "reticulate", id: 7 }), { code: "unknown_frame", message: 'unknown link message type "reticulate"', id: 7 });
  // An answer of an unknown type fails the request it names instead of leaving it waiting.
  assert.is(error({ type: "accepted", re: 8 }).re, 8);
  const missing = error({ type: "emit", id: 5, callId, data: {} });
  assert.is(missing.code, "invalid_frame");
  assert.is(missing.id, 5);
  assert.match(missing.message, /^invalid LinkEmit: \/kind/);
  assert.ok(Array.isArray(missing.details) && missing.details.length > 0);
  // Casts are gone: a field of the wrong type, an extra field, a bad status are all refused.
  assert.is(error({ type: "stop", hostId: "h", callId: 7, status: "timeout" }).code, "invalid_frame");
  assert.is(error({ type: "stop", hostId: "h", callId, status: "later" }).code, "invalid_frame");
  assert.is(error({ type: "lost", callId, message: "m", extra: 1 }).code, "invalid_frame");
  assert.is(error({ type: "invoke", id: 1, hostId: "h", owner: "http://x", frame: { type: "invoke" } }).code, "invalid_frame");
  // An unreadable answer names the request it was for.
  const answer = error({ type: "committed", re: 3, finished: false });
  assert.is(answer.code, "invalid_frame");
  assert.is(answer.re, 3);
  assert.is(answer.id, undefined);
  // No usable id: nothing to name.
  assert.is(error({ type: "emit", id: -1, callId, kind: "k", data: 1 }).id, undefined);
  assert.equal(seen, [], "no handler ran for a bad message");
});

test("answersRequest tells a request's success answer from an error or an out-of-contract answer", () => {
  const committed: LinkAnswer = { type: "committed", re: 1, sequence: 2, finished: false };
  const failed: LinkAnswer = { type: "error", re: 1, error: { code: "conflict", message: "lease lost" } };
  assert.ok(answersRequest("emit", committed));
  assert.ok(!answersRequest("emit", failed));
  assert.ok(!answersRequest("invoke", committed), "invoke is answered `invoked`");
  assert.is(LINK_ANSWER_TYPES.model_request, "model_result");
  assert.is(LINK_ANSWER_TYPES.environment_request, "environment_result");
});

test("codegen refuses a link section it cannot route: a message missing from the union, a request without its answer", () => {
  const copy = () => structuredClone(schema);
  assert.equal(linkMessagesOf(schema).map((m) => `${m.type}:${m.role}`).sort(), [
    "committed:answer", "emit:request", "emit_result:request", "environment_request:request", "environment_result:answer", "error:answer", "finish:request", "invoke:request",
    "invoked:answer", "lost:notice", "model_request:request", "model_result:answer", "returned:request", "stop:notice",
  ]);
  const noMember = copy();
  noMember.$defs.LinkMessage!.oneOf = noMember.$defs.LinkMessage!.oneOf!.filter((m) => m.$ref !== "#/$defs/LinkLost");
  assert.throws(() => emitLinkRouter(noMember, ""), /LinkMessage union must list every link message def exactly \(missing: LinkLost\)/);
  const noAnswer = copy();
  noAnswer.$defs.LinkInvoke!["x-brain-answers"] = [{ answer: "error", code: "*", when: "always" }];
  assert.throws(() => emitLinkRouter(noAnswer, ""), /LinkInvoke: a link request names exactly one answer besides error/);
  const both = copy();
  both.$defs.LinkLost!.properties!.re = { type: "integer" };
  both.$defs.LinkLost!.properties!.id = { type: "integer" };
  assert.throws(() => emitLinkRouter(both, ""), /LinkLost: a link message is a request \(id\) or an answer \(re\), not both/);
});

test.run();
