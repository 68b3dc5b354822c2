import { WebSocket } from "ws";
import { PROTOCOL, validate } from "@aexhq/brain-protocol";
import type { HostToRuntimeFrame, RuntimeToHostFrame, ToolContract, InvokeFrame } from "@aexhq/brain-protocol";

let counter = 0;

/** Runtime→host frame type → its contract def, to check every frame the runtime sends. */
const DEF_OF = {
  registered: "RegisteredFrame", invoke: "InvokeFrame", cancel: "CancelFrame", committed: "CommittedFrame",
  rejected: "RejectedFrame", model_result: "ModelResultFrame", environment_result: "EnvironmentResultFrame", error: "ErrorFrame", pong: "PongFrame",
} as const;

/** Frames (from any TestHost) that did not match the contract; tests assert this stays empty. */
export const invalidFrames: unknown[] = [];

/** A raw test host: a real `ws` WebSocket speaking frames built from the generated types. */
export class TestHost {
  readonly frames: RuntimeToHostFrame[] = [];
  private waiters: Array<{ pred: (f: RuntimeToHostFrame) => boolean; resolve: (f: RuntimeToHostFrame) => void; reject: (e: Error) => void }> = [];
  private ref = 0;
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly hostId: string;
  readonly secret: string;

  private constructor(readonly ws: WebSocket, hostId?: string, secret?: string) {
    this.hostId = hostId ?? `test-host-${process.pid}-${++counter}`;
    this.secret = secret ?? "s3cret-s3cret-s3cret";
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as RuntimeToHostFrame;
      const def = DEF_OF[frame.type as keyof typeof DEF_OF];
      if (def === undefined || !validate[def].Check(frame)) invalidFrames.push(frame);
      const w = this.waiters.findIndex((x) => x.pred(frame));
      if (w >= 0) this.waiters.splice(w, 1)[0]!.resolve(frame);
      else this.frames.push(frame);
    });
    this.closed = new Promise((resolve) => ws.on("close", (code, reason) => {
      // No frame comes any more: fail the waits now rather than leave their timers running after
      // the test (a wait of a killed host kept the suite's process alive for up to its timeout).
      for (const w of this.waiters.splice(0)) w.reject(new Error(`connection closed (${code}) before a matching frame; got ${JSON.stringify(this.frames)}`));
      resolve({ code, reason: reason.toString() });
    }));
  }

  static async connect(url: string, opts: { hostId?: string; secret?: string } = {}): Promise<TestHost> {
    const ws = new WebSocket(url.replace(/^http/, "ws") + "/v1/hosts/connect");
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    return new TestHost(ws, opts.hostId, opts.secret);
  }

  /** Connects and registers `tools`; resolves with the `registered` frame. */
  static async register(brain: { url: string; token: string }, tools: ToolContract[], opts: { hostId?: string; secret?: string } = {}): Promise<TestHost> {
    const host = await TestHost.connect(brain.url, opts);
    const reply = await host.registerTools(brain.token, tools);
    if (reply.type !== "registered") throw new Error(`register failed: ${JSON.stringify(reply)}`);
    return host;
  }

  registerTools(token: string, tools: ToolContract[]): Promise<RuntimeToHostFrame> {
    const ref = this.nextRef();
    this.send({ type: "register", ref, protocol: PROTOCOL, token, hostId: this.hostId, secret: this.secret, tools });
    return this.next((f) => (f.type === "registered" || f.type === "error") && ("ref" in f ? f.ref === ref : true));
  }

  nextRef(): number {
    return ++this.ref;
  }

  send(frame: HostToRuntimeFrame): void {
    this.ws.send(JSON.stringify(frame));
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  /** The next frame (already received or future) matching `pred`, or a timeout error. */
  next(pred: (f: RuntimeToHostFrame) => boolean, timeoutMs = 5000): Promise<RuntimeToHostFrame> {
    const i = this.frames.findIndex(pred);
    if (i >= 0) return Promise.resolve(this.frames.splice(i, 1)[0]!);
    return new Promise((resolve, reject) => {
      const entry = {
        pred,
        resolve: (f: RuntimeToHostFrame) => {
          clearTimeout(timer);
          resolve(f);
        },
        reject: (e: Error) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(entry), 1);
        reject(new Error(`no matching frame in ${timeoutMs} ms; got ${JSON.stringify(this.frames)}`));
      }, timeoutMs);
      this.waiters.push(entry);
    });
  }

  async invoke(timeoutMs = 5000): Promise<InvokeFrame> {
    const f = await this.next((f) => f.type === "invoke", timeoutMs);
    if (!validate.InvokeFrame.Check(f)) throw new Error("invalid invoke frame");
    return f as InvokeFrame;
  }

  /** Sends a frame with a fresh ref and waits for its committed/rejected answer. */
  async request(frame: { type: string; callId: string; [k: string]: unknown }): Promise<Extract<RuntimeToHostFrame, { type: "committed" | "rejected" }>> {
    const ref = this.nextRef();
    this.send({ ...frame, ref } as unknown as HostToRuntimeFrame);
    return (await this.next((f) => (f.type === "committed" || f.type === "rejected") && f.ref === ref)) as never;
  }

  /** Sends without waiting; returns the ref so the answer can be awaited later. */
  fire(frame: { type: string; callId: string; [k: string]: unknown }): Promise<Extract<RuntimeToHostFrame, { type: "committed" | "rejected" }>> {
    const ref = this.nextRef();
    this.send({ ...frame, ref } as unknown as HostToRuntimeFrame);
    return this.next((f) => (f.type === "committed" || f.type === "rejected") && f.ref === ref) as never;
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    this.ws.close();
    await this.closed;
  }

  /** Drops the TCP connection without a close handshake (a crashed host). */
  async kill(): Promise<void> {
    this.ws.terminate();
    await this.closed;
  }
}
