// Approvals from the Node SDK (issue 31): tool({ approval: "always" }) places the tool so its calls
// wait; session.pendingApprovals(), session.approve(), session.deny(reason) and the onApprovalRequest
// hook decide them. A real runtime on loopback.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool, ProtocolError, type PendingApproval } from "../src/index.ts";
import { withBrain, scripted, records, waitFor, finished, sleep } from "./helpers/brain.mts";

let runs = 0;
const transfer = tool({
  name: "transfer",
  description: "Moves money.",
  input: z.object({ to: z.string(), amount: z.number() }),
  approval: "always",
  run: async ({ to, amount }, ctx) => {
    runs++;
    return ctx.finish({ receipt: `${amount} to ${to}` });
  },
});
const lookup = tool({ name: "lookup", description: "Looks a record up.", input: z.object({ id: z.string() }), run: ({ id }, ctx) => ctx.finish({ id, value: "ada" }) });

/** The session's pending approvals, once there are `n`. */
async function pending(session: { pendingApprovals(): Promise<PendingApproval[]> }, n = 1): Promise<PendingApproval[]> {
  for (let i = 0; i < 300; i++) {
    const found = await session.pendingApprovals();
    if (found.length >= n) return found;
    await sleep(10);
  }
  throw new Error("no pending approval");
}

test("tool({ approval: 'always' }) places the tool with approval; its call waits, listed by pendingApprovals(), until approve() runs it once", async () => {
  await withBrain(async (brain) => {
    runs = 0;
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "transfer", input: { to: "acct-9", amount: 120 } }] }, { text: "Sent." }), tools: [transfer()] });
    assert.is((await session.info()).tools[0]!.approval, "always");
    const answer = session.send("Pay acct-9");
    const [request] = await pending(session);
    assert.is(request!.tool, "transfer");
    assert.equal(request!.input, { to: "acct-9", amount: 120 });
    assert.match(request!.inputDigest, /^[0-9a-f]{64}$/);
    assert.is(request!.callId, `${session.id}:${request!.sequence}`);
    assert.is(runs, 0, "not run before the decision");
    const decided = await session.approve(request!, { reason: "expected" });
    assert.is(decided.decision, "approve");
    assert.equal(decided.decidedBy, { kind: "operator" });
    assert.is(await answer, "Sent.");
    assert.is(runs, 1);
    const again = await session.approve(request!).then(() => undefined, (e: unknown) => e);
    assert.instance(again, ProtocolError);
    assert.is((again as ProtocolError).code, "conflict");
    assert.equal(await session.pendingApprovals(), []);
  });
});

test("deny(request, reason) ends the call approval_denied without running it; the model's answer follows", async () => {
  await withBrain(async (brain) => {
    runs = 0;
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "transfer", input: { to: "x", amount: 1 } }] }, { text: "Not sent." }), tools: [transfer()] });
    const answer = session.send("Pay x");
    const [request] = await pending(session);
    await session.deny(request!, "wrong account");
    assert.is(await answer, "Not sent.");
    const end = finished(await records(session))[0]!;
    assert.is(end.data.error?.code, "approval_denied");
    assert.match(end.data.error!.message, "wrong account");
    assert.is(runs, 0);
  });
});

test("a tool declared without approval can be placed with it: { ...lookup(), approval: 'always' }; a forged request (another input) is refused digest_mismatch", async () => {
  await withBrain(async (brain) => {
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "lookup", input: { id: "42" } }] }, { text: "found" }), tools: [{ ...lookup(), approval: "always" }] });
    const answer = session.send("Find 42");
    const [request] = await pending(session);
    const forged: PendingApproval = { ...request!, input: { id: "43" }, inputDigest: "0".repeat(64) };
    const refused = await session.approve(forged).then(() => undefined, (e: unknown) => e);
    assert.instance(refused, ProtocolError);
    assert.is((refused as ProtocolError).code, "digest_mismatch");
    const bare = await session.approve(request!.callId as never).then(() => undefined, (e: unknown) => e);
    assert.instance(bare, TypeError);
    assert.match(String(bare), "PendingApproval");
    await session.approve(request!);
    assert.is(await answer, "found");
  });
});

test("onApprovalRequest decides every waiting call as it is journaled: approve one, deny another with a reason, leave a third to someone else", async () => {
  await withBrain(async (brain) => {
    runs = 0;
    const seen: string[] = [];
    const session = await brain.sessions.create({
      model: scripted({ toolCalls: [{ name: "transfer", input: { to: "small", amount: 5 } }, { name: "transfer", input: { to: "large", amount: 5000 } }, { name: "transfer", input: { to: "ask", amount: 50 } }] }, { text: "handled" }),
      tools: [transfer()],
      onApprovalRequest: (request) => {
        const input = request.input as { to: string; amount: number };
        seen.push(input.to);
        if (input.to === "ask") return undefined; // a person decides this one
        return input.amount < 100 ? "approve" : { decision: "deny", reason: "over the limit" };
      },
    });
    const answer = session.send("Pay all three");
    await waitFor(session, (r) => r.type === "tool.approval_decided" && r.data.decision === "deny");
    await waitFor(session, (r) => r.type === "tool.approval_decided" && r.data.decision === "approve");
    const left = await pending(session);
    assert.equal(left.map((p) => (p.input as { to: string }).to), ["ask"], "the hook left one waiting");
    await session.deny(left[0]!, "a person said no");
    assert.is(await answer, "handled");
    const ends = finished(await records(session));
    assert.equal(ends.map((r) => r.data.error?.code ?? r.data.status).sort(), ["approval_denied", "approval_denied", "ok"]);
    assert.is(runs, 1);
    assert.equal(seen.sort(), ["ask", "large", "small"], "the handler saw each waiting call once");
  });
});

test("a hook attached after calls began waiting (a reattached handle) decides those too; stopping it stops it", async () => {
  await withBrain(async (brain) => {
    runs = 0;
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "transfer", input: { to: "a", amount: 1 } }] }, { text: "one" }, { toolCalls: [{ name: "transfer", input: { to: "b", amount: 2 } }] }, { text: "two" }), tools: [transfer()] });
    const first = session.send("first");
    await pending(session);
    const handle = await brain.sessions.get(session.id);
    const decided: string[] = [];
    const stop = handle.onApprovalRequest((r) => {
      decided.push(r.callId);
      return "approve";
    });
    assert.is(await first, "one");
    stop();
    await sleep(50);
    const second = session.send("second");
    const [waiting] = await pending(session);
    await sleep(100);
    assert.is(decided.length, 1, "the stopped hook decides nothing more");
    await session.approve(waiting!);
    assert.is(await second, "two");
    assert.is(runs, 2);
  });
});

test("a handler that throws is reported to onError and the call goes on waiting", async () => {
  await withBrain(async (brain) => {
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "transfer", input: { to: "z", amount: 1 } }] }, { text: "ok" }), tools: [transfer()] });
    const errors: unknown[] = [];
    const stop = session.onApprovalRequest(() => {
      throw new Error("the approver is down");
    }, { onError: (e) => errors.push(e) });
    const answer = session.send("go");
    const [request] = await pending(session);
    while (errors.length === 0) await sleep(10);
    assert.match(String(errors[0]), "the approver is down");
    stop();
    await session.approve(request!);
    assert.is(await answer, "ok");
  });
});

test.run();
