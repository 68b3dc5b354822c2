// Approvals under Deno (issue 31): a tool declared with approval: "always" waits; pendingApprovals(),
// approve(), deny(reason) and the onApprovalRequest hook decide its calls. The runtime runs as a Node
// subprocess (scripts/deno-runtime.ts).
import { Brain, ProtocolError, tool, type PendingApproval, type Session } from "@aexhq/brain";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { z } from "zod";
import { serveRuntime, stopRuntime } from "../../scripts/deno-runtime.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

async function withBrain(body: (brain: Brain) => Promise<void>): Promise<void> {
  const token = crypto.randomUUID();
  const runtime = await serveRuntime({ BRAIN_TOKEN: token, BRAIN_JOURNAL: "memory", BRAIN_PORT: "0" });
  const brain = new Brain({ url: runtime.url, token });
  try {
    await body(brain);
  } finally {
    await brain.close();
    await stopRuntime(runtime.child);
  }
}

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

async function pending(session: Session, n = 1): Promise<PendingApproval[]> {
  for (let i = 0; i < 300; i++) {
    const found = await session.pendingApprovals();
    if (found.length >= n) return found;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("no pending approval");
}

async function journal(session: Session): Promise<JournalRecord[]> {
  const out: JournalRecord[] = [];
  for await (const r of session.events()) out.push(r);
  return out;
}

Deno.test({ name: "approve() runs a waiting call once, deny(reason) ends one approval_denied, a second decision is conflict", ...opts }, async () => {
  await withBrain(async (brain) => {
    runs = 0;
    const model = { provider: "scripted" as const, script: [{ toolCalls: [{ name: "transfer", input: { to: "a", amount: 1 } }, { name: "transfer", input: { to: "b", amount: 2 } }] }, { text: "done" }] };
    const session = await brain.sessions.create({ model, tools: [transfer()] });
    check((await session.info()).tools[0]!.approval === "always", "placed with approval");
    const answer = session.send("pay both");
    const requests = await pending(session, 2);
    check(runs === 0, "nothing ran before a decision");
    const [a, b] = requests.sort((x, y) => x.sequence - y.sequence);
    const approved = await session.approve(a!);
    check(approved.decision === "approve" && approved.decidedBy.kind === "operator", JSON.stringify(approved));
    await session.deny(b!, "not b");
    check(await answer === "done", "the turn answered");
    check(runs === 1, `ran ${runs} times`);
    const again = await session.approve(b!).then(() => undefined, (e: unknown) => e);
    check(again instanceof ProtocolError && again.code === "conflict", `second decision: ${String(again)}`);
    const ends = (await journal(session)).filter((r) => r.type === "tool.finished").map((r) => (r.data as { error?: { code: string } }).error?.code ?? "ok").sort();
    check(JSON.stringify(ends) === JSON.stringify(["approval_denied", "ok"]), JSON.stringify(ends));
  });
});

Deno.test({ name: "onApprovalRequest decides calls as they wait: approves small amounts, denies large ones with a reason", ...opts }, async () => {
  await withBrain(async (brain) => {
    runs = 0;
    const model = { provider: "scripted" as const, script: [{ toolCalls: [{ name: "transfer", input: { to: "small", amount: 5 } }, { name: "transfer", input: { to: "large", amount: 5000 } }] }, { text: "handled" }] };
    const session = await brain.sessions.create({
      model,
      tools: [transfer()],
      onApprovalRequest: (r) => ((r.input as { amount: number }).amount < 100 ? "approve" : { decision: "deny", reason: "over the limit" }),
    });
    check(await session.send("pay") === "handled", "the turn answered");
    const records = await journal(session);
    const decided = records.filter((r) => r.type === "tool.approval_decided").map((r) => (r.data as { decision: string }).decision).sort();
    check(JSON.stringify(decided) === JSON.stringify(["approve", "deny"]), JSON.stringify(decided));
    const denied = records.find((r) => r.type === "tool.finished" && (r.data as { status: string }).status === "error");
    check((denied?.data as { error?: { message: string } }).error?.message.includes("over the limit") === true, "the reason reaches the call's error");
    check(runs === 1, `ran ${runs} times`);
  });
});
