// One embedded Brain runtime plus one host connection (a raw-protocol host or the Node SDK), with
// sessions placed on that host, and a driver that starts tool calls the way the Agentloop does
// (Dispatcher.start) and resolves when the call's tool.finished is committed and observable.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { z } from "zod";
import { startBrain, contractDigest } from "@aexhq/brain-runtime";
import type { BrainInternals, BrainOptions } from "@aexhq/brain-runtime";
import { Brain, tool } from "@aexhq/brain";
import type { PlacedTool, ToolContract } from "@aexhq/brain-protocol";

export type JournalKind = "memory" | "sqlite-normal" | "sqlite-full";
export type HostKind = "raw" | "sdk";
type SessionState = Awaited<ReturnType<BrainInternals["sessions"]["state"]>>;

const inputSchema = { type: "object", properties: { x: { type: "number" } }, required: ["x"] };
export const echoContract: ToolContract = { name: "echo", description: "Echo the input.", inputSchema, digest: contractDigest({ name: "echo", inputSchema }) };

/** The trivial SDK tool: validates input with Zod, finishes with it. */
export const sdkEcho = tool({
  name: "echo",
  description: "Echo the input.",
  input: z.object({ x: z.number() }),
  run: async (input, ctx) => ctx.finish(input),
});

/** The SDK tool of the emit section: `n` awaited emissions, then finish. */
export const sdkEmitter = tool({
  name: "emitter",
  description: "Emit n events.",
  input: z.object({ n: z.number().int() }),
  run: async ({ n }, ctx) => {
    for (let i = 0; i < n; i++) await ctx.emit("tick", { i });
    return ctx.finish({ n });
  },
});

export interface Fixture {
  url: string;
  token: string;
  internals: BrainInternals;
  sessions: SessionState[];
  /** Start one call on session i (Dispatcher.start, as the Agentloop does); resolves at its committed tool.finished. */
  call(i: number, input?: unknown, toolName?: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Corks `ws`'s socket on the first send of a tick and uncorks on nextTick, so the frames one tick
 * sends leave in one writev (what the runtime's HostConnection does; an efficient binding would too).
 */
function tickCork(ws: WebSocket): () => void {
  let corked = false;
  return () => {
    const socket = (ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    if (corked || socket === undefined) return;
    corked = true;
    socket.cork();
    process.nextTick(() => {
      corked = false;
      socket.uncork();
    });
  };
}

/** A host speaking the raw protocol with `ws`: answers every invoke with one `finish` carrying the input (frames of one tick corked together). */
export async function rawHost(url: string, token: string, hostId: string, tools: ToolContract[] = [echoContract]): Promise<WebSocket> {
  const u = new URL("/v1/hosts/connect", url);
  u.protocol = "ws:";
  const ws = new WebSocket(u);
  const cork = tickCork(ws);
  let ref = 1;
  await new Promise<void>((resolve, reject) => {
    ws.once("error", reject);
    ws.once("open", () => ws.send(JSON.stringify({ type: "register", ref: ref++, protocol: "brain.host/0.2", token, hostId, secret: `secret-${hostId}`, tools })));
    ws.on("message", (raw) => {
      const s = String(raw);
      // Cheap type test first: most frames are `committed` acknowledgements this host ignores.
      if (s.startsWith('{"type":"registered"')) resolve();
      else if (s.startsWith('{"type":"error"')) reject(new Error(s));
      else if (s.startsWith('{"type":"invoke"')) {
        const f = JSON.parse(s) as { callId: string; input: unknown };
        cork();
        ws.send(JSON.stringify({ type: "finish", ref: ref++, callId: f.callId, outcome: { status: "ok", value: f.input } }));
      }
    });
  });
  return ws;
}

export async function createSession(url: string, token: string, tools: PlacedTool[]): Promise<string> {
  const res = await fetch(`${url}/v1/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ model: { provider: "scripted", script: [{ text: "done" }] }, tools }),
  });
  const body = (await res.json()) as { id: string };
  if (!res.ok) throw new Error(`create session: ${res.status} ${JSON.stringify(body)}`);
  return body.id;
}

export async function startFixture(opts: { journal: JournalKind; host: HostKind; sessions: number; tools?: "echo" | "emitter"; brain?: BrainOptions }): Promise<Fixture> {
  const dir = opts.journal === "memory" ? undefined : mkdtempSync(join(tmpdir(), "brain-bench-"));
  // A large emission budget: thousands of calls share activation 0 here, and the budget is per activation.
  const brain = await startBrain({ dataDir: dir ?? ":memory:", port: 0, maxEmittedBytes: 2 ** 40, ...(opts.journal === "sqlite-full" ? { journalSync: "full" as const } : {}), ...opts.brain });
  const { internals } = brain;
  let close: () => Promise<void>;
  const ids: string[] = [];
  if (opts.host === "raw") {
    const ws = await rawHost(brain.url, brain.token, "bench-raw");
    const placed: PlacedTool = { contract: echoContract, options: {}, placement: { kind: "host", hostId: "bench-raw" } };
    for (let i = 0; i < opts.sessions; i++) ids.push(await createSession(brain.url, brain.token, [placed]));
    close = async () => {
      ws.terminate();
    };
  } else {
    const client = new Brain({ url: brain.url, token: brain.token });
    const t = opts.tools === "emitter" ? sdkEmitter() : sdkEcho();
    for (let i = 0; i < opts.sessions; i++) ids.push((await client.sessions.create({ model: { provider: "scripted", script: [{ text: "done" }] }, tools: [t] })).id);
    close = () => client.close();
  }
  const sessions = await Promise.all(ids.map((id) => internals.sessions.state(id)));
  const waiters = new Map<string, () => void>();
  for (const s of sessions) {
    s.onCommit((r) => {
      if (r.type !== "tool.finished") return;
      const w = waiters.get(r.data.callId);
      if (w) waiters.delete(r.data.callId), w();
    });
  }
  return {
    url: brain.url,
    token: brain.token,
    internals,
    sessions,
    call(i, input = { x: 1 }) {
      const s = sessions[i]!;
      return new Promise<void>((resolve) => {
        // activation 0: the session never got a user message, so the idle loop is never woken
        // into a model turn by these calls (the wake timer still runs, as in a real session).
        const [c] = internals.dispatcher.start(s, 0, [{ modelCallId: "bench", tool: s.created.tools[0]!, input, deadlineAt: null }], internals.sessions.loopOf(s.id)!);
        waiters.set(c!.callId, resolve);
      });
    },
    async close() {
      await close();
      await brain.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The invoke frame this fixture's calls produce, for an echo payload of the same size. */
export function invokeLikePayload(): string {
  return JSON.stringify({ type: "invoke", callId: "ses_0123456789abcdef0123:12345", sessionId: "ses_0123456789abcdef0123", sequence: 12345, tool: "echo", digest: echoContract.digest, input: { x: 1 }, options: {}, deadlineAt: null });
}
