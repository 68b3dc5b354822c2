// cluster/peer-link.ts in one process, over a real WebSocket: a request resolves with the answer
// its contract names; an error answer rejects with its code; an answer the link cannot read (out of
// contract, or of another request type) fails the request `unavailable` (the peer may have acted)
// and is not answered; a closed link fails what is in flight. The link with a real node is in
// cluster.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";
import type { AddressInfo } from "node:net";
import type { LinkMessageHandler } from "@aexhq/brain-protocol";
import { PeerLink } from "../src/cluster/peer-link.ts";
import { BrainRuntimeError } from "../src/errors.ts";
import { RawLink } from "./helpers/link.ts";

const callId = "ses_peer:1";
const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
let url = "";
/** The server side of the next link opened. */
let accepted: (ws: WebSocket) => void = () => {};
server.on("connection", (ws) => accepted(ws));

test.before(async () => {
  // uvu imports every file of a run first: the server may have been listening for a while.
  if (server.address() === null) await new Promise((r) => server.once("listening", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.after(async () => {
  for (const c of server.clients) c.terminate();
  await new Promise((r) => server.close(r));
});

const nothing: LinkMessageHandler = {
  invoke: () => ({}),
  emit: () => ({ sequence: 1, finished: false }),
  emitResult: () => ({ sequence: 1, finished: false }),
  returned: () => ({ sequence: 1, finished: false }),
  finish: () => {
    throw new BrainRuntimeError("call_finished", `call ${callId} already finished`);
  },
  modelRequest: () => {
    throw new BrainRuntimeError("script_exhausted", "no more steps");
  },
  environmentRequest: () => {
    throw new BrainRuntimeError("forbidden", "no grant");
  },
  stop: () => {
    throw new Error("a notice handler that throws is logged, not fatal");
  },
  lost: () => {},
};

/** A PeerLink connected to a server end that is itself a PeerLink with `handler`. */
async function linked(handler: LinkMessageHandler): Promise<PeerLink> {
  const other = new Promise<PeerLink>((resolve) => (accepted = (ws) => resolve(new PeerLink(ws, handler, "the test client"))));
  const link = await PeerLink.connect(url, "token", nothing);
  await other;
  return link;
}

/** A PeerLink whose other end is a raw socket the test writes by hand. */
async function raw(): Promise<{ link: PeerLink; peer: RawLink }> {
  const other = new Promise<RawLink>((resolve) => (accepted = (ws) => resolve(new RawLink(ws))));
  const link = await PeerLink.connect(url, "token", nothing);
  return { link, peer: await other };
}

const code = (p: Promise<unknown>) => p.then(() => "resolved", (e: unknown) => (e instanceof BrainRuntimeError ? e.code : String(e)));

test("a request resolves with the answer its contract names; an error answer rejects with the error's code", async () => {
  const link = await linked({ ...nothing, emit: (m) => ({ sequence: m.kind.length, finished: true }) });
  const answer = await link.request({ type: "emit", callId, kind: "progress", data: {} });
  assert.equal(answer, { type: "committed", re: 1, sequence: 8, finished: true });
  assert.equal(await link.request({ type: "invoke", hostId: "h", owner: url, frame: { type: "invoke", callId, sessionId: "ses_peer", sequence: 1, tool: "t", digest: "d", input: {}, options: {}, deadlineAt: null } }), { type: "invoked", re: 2 });
  assert.is(await code(link.request({ type: "finish", callId })), "call_finished");
  assert.is(await code(link.request({ type: "model_request", callId, request: { messages: [{ role: "user", content: "hi" }] } })), "script_exhausted");
  // A notice whose handler throws leaves the link working.
  link.notify({ type: "stop", hostId: "h", callId, status: "ok" });
  assert.is((await link.request({ type: "returned", callId })).type, "committed");
  link.close();
});

test("an answer the link cannot read fails its request `unavailable` and is not answered; the link goes on", async () => {
  const { link, peer } = await raw();
  const first = link.request({ type: "emit", callId, kind: "k", data: 1 });
  const req = await peer.next();
  assert.equal(req, { type: "emit", callId, kind: "k", data: 1, id: 1 });
  peer.send({ type: "committed", re: 1, finished: false });
  await first.then(
    () => assert.unreachable("an answer without its sequence was accepted"),
    (e: BrainRuntimeError) => {
      assert.is(e.code, "unavailable");
      assert.is(e.retryable, true);
      assert.match(e.message, "invalid LinkCommitted: /sequence");
    },
  );
  // An answer of the wrong type (invoke's answer to an emit) is out of contract too.
  const second = link.request({ type: "emit", callId, kind: "k", data: 2 });
  await peer.next();
  peer.send({ type: "invoked", re: 2 });
  assert.is(await code(second), "unavailable");
  // A request of an unknown type is answered by id; the link still works afterwards.
  peer.send({ type: "reticulate", id: 40 });
  const refused = await peer.next();
  assert.is(refused.type === "error" && refused.re, 40);
  assert.is(refused.type === "error" && refused.error.code, "unknown_frame");
  const third = link.request({ type: "returned", callId });
  await peer.next((m) => m.type === "returned");
  peer.send({ type: "committed", re: 3, sequence: 5, finished: false });
  assert.equal(await third, { type: "committed", re: 3, sequence: 5, finished: false });
  assert.equal(peer.messages, [], "the unreadable answers got no answer");
  assert.equal(peer.invalid, []);
  link.close();
});

test("a link that closes, or a peer that does not answer in time, fails the request `unavailable`", async () => {
  const { link, peer } = await raw();
  assert.is(await code(link.request({ type: "returned", callId }, 50)), "unavailable");
  const inFlight = link.request({ type: "returned", callId });
  await peer.next((m) => m.type === "returned" && m.id === 2);
  peer.close();
  assert.is(await code(inFlight), "unavailable");
  assert.is(await code(link.request({ type: "returned", callId })), "unavailable");
});

test.run();
