// A recording host for the crash loop (cluster-crash.test.ts): it serves every call it is sent with a
// seeded plan of `emit`, `emit_result` and `finish` frames, and keeps what a checker needs afterwards:
// every `invoke` it ever received (across reconnects), every frame it sent and the answer it got
// (`committed` with its sequence, `rejected` with its code, or `lost` when the connection went first).
// Like a real binding it abandons a call's local work when the connection that sent it closes, and it
// never replays a frame on a later connection.
import type { InvokeFrame, RuntimeToHostFrame, ToolContract } from "@aexhq/brain-protocol";
import { TestHost } from "./host.ts";

/** mulberry32: a small seeded generator, so a failing run can be repeated with its seed. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error("pick from an empty list");
    return xs[Math.floor(this.next() * xs.length)]!;
  }
}

export type Answer = { type: "committed"; sequence: number } | { type: "rejected"; code: string; message: string } | { type: "lost" };

export interface Sent {
  hostId: string;
  /** Which connection of this host (1, 2, …) sent it. */
  conn: number;
  callId: string;
  frame: { type: "emit" | "emit_result" | "finish"; callId: string; kind?: string; data?: unknown; outcome?: any; content?: string };
  /** Unique per frame: in emit data, or in the outcome (value.nonce / error.message). */
  nonce: string;
  answer?: Answer;
}

export interface Invoked {
  hostId: string;
  conn: number;
  /** The node slot the connection was on. */
  node: number;
  callId: string;
  input: unknown;
}

export const ERROR_CODE = "crash_test_error";
let nonces = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class CrashHost {
  readonly sent: Sent[] = [];
  readonly invokes: Invoked[] = [];
  /** Calls this host is working on now (invoked, not yet done or abandoned). */
  readonly working = new Set<string>();
  /** The node slot of the current connection; undefined while disconnected. */
  node: number | undefined;
  /** Calls the runtime cancelled (a cancel through the API, a deadline); their plans stop. */
  readonly cancelled = new Set<string>();
  private host: TestHost | undefined;
  private connNo = 0;
  private tasks = new Set<Promise<void>>();

  constructor(
    readonly hostId: string,
    readonly secret: string,
    private tools: ToolContract[],
    private rand: Rng,
    /** Unexpected things (a frame it cannot place): the test reports them. */
    private problem: (what: string) => void,
    /** Whether the run cancels calls or sets deadlines (else a `cancel` frame is a problem). */
    private expectCancels = false,
  ) {}

  get connected(): boolean {
    return this.host !== undefined;
  }

  /** Connects to a node and registers (as the same host id every time). */
  async connect(brain: { url: string; token: string }, slot: number): Promise<void> {
    if (this.host !== undefined) throw new Error(`${this.hostId} is already connected`);
    const host = await TestHost.connect(brain.url, { hostId: this.hostId, secret: this.secret });
    const conn = ++this.connNo;
    const pending = new Map<number, (a: Answer) => void>();
    let closed = false;
    // Attached before `register` goes out: an invoke may arrive in the same read as `registered`.
    host.ws.on("message", (data) => {
      const f = JSON.parse(data.toString()) as RuntimeToHostFrame;
      if (f.type === "committed" || f.type === "rejected") {
        const done = pending.get(f.ref);
        if (done === undefined) return this.problem(`${this.hostId} conn ${conn}: answer for unknown ref ${f.ref}: ${JSON.stringify(f)}`);
        pending.delete(f.ref);
        done(f.type === "committed" ? { type: "committed", sequence: f.sequence } : { type: "rejected", code: f.error.code, message: f.error.message });
      } else if (f.type === "invoke") {
        this.invokes.push({ hostId: this.hostId, conn, node: slot, callId: f.callId, input: f.input });
        const t = this.serve(host, conn, pending, () => closed, f as InvokeFrame).catch((e) => this.problem(`${this.hostId} serving ${f.callId}: ${e instanceof Error ? e.stack : String(e)}`));
        this.tasks.add(t);
        void t.finally(() => this.tasks.delete(t));
      } else if (f.type === "cancel" && this.expectCancels) {
        this.cancelled.add(f.callId);
      } else if (f.type === "cancel") {
        this.problem(`${this.hostId} conn ${conn}: unexpected cancel ${JSON.stringify(f)}`);
      } else if (f.type === "error" && f.error.code !== "shutdown") {
        this.problem(`${this.hostId} conn ${conn}: error frame ${JSON.stringify(f)}`);
      }
    });
    void host.closed.then(() => {
      closed = true;
      for (const done of pending.values()) done({ type: "lost" });
      pending.clear();
      if (this.host === host) {
        this.host = undefined;
        this.node = undefined;
      }
    });
    const reply = await host.registerTools(brain.token, this.tools).catch((e) => ({ type: "error", error: String(e) }));
    if (reply.type !== "registered") {
      await host.kill();
      throw new Error(`${this.hostId} register on node slot ${slot} failed: ${JSON.stringify(reply)}`);
    }
    this.host = host;
    this.node = slot;
  }

  /** One call's seeded plan: some events, then a result and/or a finish, with pauses in between. */
  private async serve(host: TestHost, conn: number, pending: Map<number, (a: Answer) => void>, isClosed: () => boolean, invoke: InvokeFrame): Promise<void> {
    const callId = invoke.callId;
    this.working.add(callId);
    try {
      const r = this.rand;
      const steps: Array<Omit<Sent["frame"], "callId">> = [];
      const nonce = () => `${this.hostId}#${++nonces}`;
      for (let i = r.int(0, 2); i > 0; i--) steps.push({ type: "emit", kind: "progress", data: { nonce: nonce(), i } });
      const plan = r.next();
      if (plan < 0.35) steps.push({ type: "finish", outcome: { status: "ok", value: { nonce: nonce() } }, ...(r.chance(0.5) ? { content: "done" } : {}) });
      else if (plan < 0.7) steps.push({ type: "emit_result", outcome: { status: "ok", value: { nonce: nonce() } } }, { type: "finish" });
      else if (plan < 0.85) steps.push({ type: "emit_result", outcome: { status: "error", error: { code: ERROR_CODE, message: nonce() } } });
      else steps.push({ type: "finish" });
      for (const step of steps) {
        await sleep(r.int(20, 250));
        // Like a binding honouring ctx.signal: a cancelled call sends nothing more.
        if (isClosed() || this.cancelled.has(callId)) return;
        const frame = { ...step, callId } as Sent["frame"];
        const sent: Sent = { hostId: this.hostId, conn, callId, frame, nonce: nonceOf(frame) ?? `${this.hostId}#finish-${++nonces}` };
        this.sent.push(sent);
        const ref = host.nextRef();
        const answer = new Promise<Answer>((resolve) => pending.set(ref, resolve));
        // Closed between the check above and now: the close handler already answered the others.
        if (isClosed()) pending.get(ref)?.({ type: "lost" });
        else host.send({ ...frame, ref } as never);
        sent.answer = await answer;
        if (sent.answer.type !== "committed") return;
      }
    } finally {
      this.working.delete(callId);
    }
  }

  /** Waits for the calls in progress to end (done, or abandoned with their connection). */
  async idle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.all([...this.tasks]);
  }

  /** Cuts the connection abruptly (no close frame), as a crashed process or a network fault would. */
  async drop(): Promise<void> {
    const h = this.host;
    if (h !== undefined) await h.kill();
  }

  async close(): Promise<void> {
    const h = this.host;
    if (h !== undefined) await h.close();
  }
}

/** The nonce a frame carries (emit data, an ok value, an error message); undefined for a bare finish. */
export function nonceOf(frame: Sent["frame"] | { data?: any; outcome?: any }): string | undefined {
  const f = frame as { data?: any; outcome?: any };
  return f.data?.nonce ?? f.outcome?.value?.nonce ?? (f.outcome?.status === "error" ? f.outcome.error?.message : undefined);
}
