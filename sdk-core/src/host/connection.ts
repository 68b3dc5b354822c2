import {
  PROTOCOL, LIMITS, routeHostFrame,
  type HostFrameHandler, type ToolContract, type InvokeFrame, type CancelFrame, type CommittedFrame, type RejectedFrame,
  type ModelResultFrame, type ErrorFrame, type ErrorInfo, type RegisteredFrame, type ModelResult, type EnvironmentResultFrame, type EnvironmentAnswer,
} from "@aexhq/brain-protocol";
import type { Platform, WebSocketLike } from "../platform.ts";
import type { PlacedToolSpec } from "../tool.ts";
import { Invocation, type InvocationChannel } from "./invocation.ts";
import { readCommitted } from "./committed-frame.ts";
import { ProtocolError, protocolError, SdkError } from "../errors.ts";

interface Answer { sequence?: number; result?: ModelResult; environment?: EnvironmentAnswer; digests?: string[] }
type Frame = Record<string, unknown> & { type: string };
interface Pending {
  resolve(answer: Answer): void;
  reject(e: Error): void;
  /** A first attempt of a frame about a call: an `unavailable` answer goes on to the resend rule. */
  resendable: (Frame & { callId: string }) | undefined;
}

/** Handlers for one session (its placed tools by name) or for any session (`serve`). */
type HandlerSet = Map<string, PlacedToolSpec>;

const OPEN = 1;
/** How long close() lets answers already awaited (a finish in flight, the cancellations it sent) arrive. */
const PENDING_BOUND_MS = 2000;
/** After the main module finished, how long a client left open and idle waits before its hint. */
const MAIN_DONE_GRACE_MS = 1000;

/**
 * The one WebSocket a Brain client keeps to the runtime. It registers this host's tool contracts,
 * runs invocations, and on a lost connection aborts local work and reconnects as the same host,
 * accepting only future commands (nothing is replayed).
 */
export class HostConnection implements HostFrameHandler {
  private ws: WebSocketLike | undefined;
  private nextRef = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly contracts = new Map<string, ToolContract>();
  /** Digests the runtime acknowledged on the current connection. */
  private readonly sent = new Set<string>();
  private readonly sessions = new Map<string, HandlerSet>();
  private readonly shared: HandlerSet = new Map();
  private readonly running = new Map<string, Invocation>();
  /** What every invocation sends its frames through (one object, not one per call). */
  private readonly channel: InvocationChannel = { request: (frame) => this.request(frame) };
  private ready: Promise<void> | undefined;
  private closed = false;
  private fatal: Error | undefined;
  private backoffMs = 50;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  /** Whether the open WebSocket currently keeps the process alive (see hold()). */
  private held: boolean | undefined;
  /** close() is running: hold until it is done, so code after `await brain.close()` runs. */
  private closing = false;
  private unsubscribeIdleExit: (() => void) | undefined;
  private unsubscribeMainDone: (() => void) | undefined;
  /** Checked at every change of pending answers and running calls (close() waits on them). */
  private readonly watchers = new Set<() => void>();
  private closeDone: Promise<void> | undefined;
  /** How many WebSockets this client opened (one, plus one per reconnection). */
  connections = 0;
  /** The runtime's timings from `registered` (liveness, the resend window); the defaults until then. */
  private hostTimeoutMs: number = LIMITS.defaultHostTimeoutMs;
  private leaseMs: number = LIMITS.defaultLeaseMs;
  /** When the runtime was last heard from on the current connection (any frame). */
  private heardAt = 0;
  private liveness: ReturnType<typeof setInterval> | undefined;
  /** Some connection of this client registered: a later 4401/4409 stops a client that was working. */
  private registeredOnce = false;

  constructor(
    private readonly platform: Platform,
    private readonly wsUrl: string,
    private readonly token: () => string,
    readonly hostId: string,
    private readonly secret: string,
    /** The server URL the user configured (http:), which errors name rather than the ws: URL derived from it. */
    private readonly brainUrl: string = wsUrl,
  ) {}

  /** Registers contracts (union with earlier ones), connecting first if needed. */
  async register(contracts: ToolContract[]): Promise<void> {
    for (const c of contracts) if (!this.contracts.has(c.digest)) this.contracts.set(c.digest, c);
    await this.connect();
    // A register frame already in flight (a concurrent create) may predate these contracts.
    if (contracts.some((c) => !this.sent.has(c.digest))) await this.sendRegister();
  }

  addSession(sessionId: string, tools: PlacedToolSpec[]): void {
    this.sessions.set(sessionId, new Map(tools.map((t) => [t.tool.name, t])));
  }

  /** Ending or deleting a session releases its handlers. */
  releaseSession(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  /** Sessions whose handlers this connection holds. */
  get sessionIds(): string[] {
    return [...this.sessions.keys()];
  }

  serve(tools: PlacedToolSpec[]): void {
    for (const t of tools) this.shared.set(t.tool.name, t);
    this.hold();
  }

  /**
   * The socket keeps the process alive only while there is work: answers awaited (register, emits,
   * finishes, model requests), calls running, tools served for any session (`serve`), or close()
   * in progress. Idle, it does not, so a script that forgot `brain.close()` exits (with the hint
   * of onIdleExit) instead of hanging; an awaited `session.send` keeps the process alive through
   * its own HTTP request, and its tool calls through `running`.
   */
  private hold(): void {
    if (this.watchers.size > 0) for (const w of [...this.watchers]) w();
    const ws = this.ws;
    if (!ws || !this.platform.keepAlive) return;
    const keep = this.closing || this.pending.size > 0 || this.running.size > 0 || this.shared.size > 0;
    if (keep === this.held) return;
    this.held = keep;
    this.platform.keepAlive(ws, keep);
  }

  /** Once per connection opened: a process exiting on its own with this client open gets one hint. */
  private watchIdleExit(): void {
    if (this.unsubscribeIdleExit || !this.platform.onIdleExit) return;
    this.unsubscribeIdleExit = this.platform.onIdleExit(() => {
      this.unsubscribeIdleExit?.();
      this.unsubscribeIdleExit = undefined;
      if (this.closed) return;
      const sessions = this.sessions.size;
      console.warn(
        `brain: the process is exiting with a Brain client still open (host ${this.hostId}, ${sessions} session${sessions === 1 ? "" : "s"}): ` +
          "call `await brain.close()` when you are done (in a finally); the open connection no longer keeps the process alive, " +
          "so the runtime sees this host drop without a close.",
      );
    });
  }

  /**
   * Where an open WebSocket always keeps the process alive (Deno: no unref), a script that forgets
   * `brain.close()` would hang silently; once the main module has finished, a client still open with
   * nothing to do (no call running, no answer awaited, no `serve`) says so, once.
   */
  private watchMainDone(): void {
    if (this.unsubscribeMainDone || !this.platform.onMainDone) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const check = () => {
      timer = undefined;
      if (this.closed) return;
      const busy = this.pending.size > 0 || this.running.size > 0;
      if (this.shared.size > 0) return; // serving tools for any session: staying up is the point
      if (busy) return void schedule();
      const sessions = this.sessions.size;
      console.warn(
        `brain: the main module has finished with a Brain client still open (host ${this.hostId}, ${sessions} session${sessions === 1 ? "" : "s"}): ` +
          "its connection keeps this process running (a Deno WebSocket cannot be unref'd); if the process should end, " +
          "call `await brain.close()` when you are done (in a finally).",
      );
    };
    const schedule = () => {
      timer = setTimeout(check, MAIN_DONE_GRACE_MS);
      this.platform.unrefTimer?.(timer);
    };
    const off = this.platform.onMainDone(schedule);
    this.unsubscribeMainDone = () => {
      off();
      if (timer) clearTimeout(timer);
    };
  }

  private connect(): Promise<void> {
    if (this.fatal) return Promise.reject(this.fatal);
    if (this.closed) return Promise.reject(new SdkError("closed", "the Brain client is closed"));
    this.ready ??= new Promise<void>((resolve, reject) => {
      let opened = false;
      const ws = this.platform.connectWebSocket(this.wsUrl);
      this.ws = ws;
      this.connections++;
      // A connection attempt with no `registered` within registerTimeoutMs (a runtime, or a proxy,
      // that accepts TCP and never upgrades) is abandoned and retried, never awaited forever.
      const attempt = setTimeout(() => this.abandon(ws, `no registered frame within ${LIMITS.registerTimeoutMs} ms of connecting`), LIMITS.registerTimeoutMs);
      this.platform.unrefTimer?.(attempt);
      ws.onopen = () => {
        opened = true;
        this.held = undefined;
        this.hold();
        this.watchIdleExit();
        this.watchMainDone();
        this.sendRegister().then(() => {
          clearTimeout(attempt);
          this.registeredOnce = true;
          this.backoffMs = 50;
          this.watchLiveness(ws);
          resolve();
        }, reject);
      };
      ws.onmessage = (ev) => {
        this.heardAt = Date.now();
        const text = typeof ev.data === "string" ? ev.data : String(ev.data);
        const committed = readCommitted(text);
        if (committed !== undefined) return this.committed(committed);
        const error = routeHostFrame(text, this);
        if (error) console.warn(`brain: ignored a bad frame from the runtime: ${error.code}: ${error.message}`);
      };
      ws.onerror = () => undefined; // onclose follows and decides
      ws.onclose = (ev) => {
        clearTimeout(attempt);
        if (this.ws === ws) {
          this.ws = undefined;
          this.stopLiveness();
        }
        this.ready = undefined;
        this.sent.clear();
        this.lost(this.fatal ?? new SdkError("connection_lost", `the host connection closed (${ev.code}${ev.reason ? `: ${ev.reason}` : ""})`));
        if (!opened) reject(this.fatal ?? new SdkError("connection_failed", `could not reach Brain at ${this.brainUrl}: its host channel ${this.wsUrl} closed (${ev.code}${ev.reason ? `: ${ev.reason}` : ""}) before opening; is the server running at that address?`));
        else if (this.fatal) reject(this.fatal);
        if (this.fatal) this.stopped(this.fatal);
        else if (!this.closed) this.scheduleReconnect();
      };
    });
    return this.ready;
  }

  /**
   * Drops a connection that cannot be waited for (a silent runtime, an upgrade that never comes):
   * at once, without a closing handshake, then on as after any loss (its calls end, reconnect).
   */
  private abandon(ws: WebSocketLike, why: string): void {
    const onclose = ws.onclose;
    ws.onclose = ws.onmessage = ws.onopen = null;
    ws.onerror = () => undefined;
    try {
      if (ws.terminate) ws.terminate();
      else ws.close();
    } catch {
      // Closing a socket that is already failing: the loss is handled below all the same.
    }
    onclose?.({ code: 1006, reason: why });
  }

  /**
   * Liveness (PROTOCOL.md, "Reconnecting, liveness"): with nothing heard for a third of the
   * runtime's hostTimeoutMs the host pings; with nothing heard for all of it the runtime is silent
   * and the connection is dropped and made again.
   */
  private watchLiveness(ws: WebSocketLike): void {
    this.stopLiveness();
    this.heardAt = Date.now();
    const third = Math.max(10, Math.floor(this.hostTimeoutMs / 3));
    let nonce = 0;
    this.liveness = setInterval(() => {
      if (this.ws !== ws) return this.stopLiveness();
      const quiet = Date.now() - this.heardAt;
      if (quiet >= this.hostTimeoutMs) {
        this.stopLiveness();
        return this.abandon(ws, `the runtime was silent for ${quiet} ms (hostTimeoutMs ${this.hostTimeoutMs})`);
      }
      if (quiet >= third && ws.readyState === OPEN) ws.send(JSON.stringify({ type: "ping", nonce: `live-${++nonce}` }));
    }, third);
    this.platform.unrefTimer?.(this.liveness);
  }

  private stopLiveness(): void {
    if (this.liveness !== undefined) clearInterval(this.liveness);
    this.liveness = undefined;
  }

  /**
   * 4401 / 4409: the client stops for good (no reconnection). One serving tools (`serve`) has no
   * caller to tell, so its process must not go on looking healthy: the error becomes an unhandled
   * rejection, which ends Node and Deno with status 1 (PROTOCOL.md, "when to stop").
   */
  private stopped(error: Error): void {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    // Before any registration the caller's own await (serve, register, create) rejects with it instead.
    if (!this.registeredOnce || this.closed) return;
    console.error(`brain: the host connection stopped for good: ${error.message}`);
    if (this.shared.size > 0) void Promise.reject(error);
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer || (this.contracts.size === 0 && this.sessions.size === 0)) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, 5000);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect().catch(() => this.scheduleReconnect());
    }, delay);
    // Only a client serving tools for any session keeps the process alive to reconnect.
    if (this.shared.size === 0) this.platform.unrefTimer?.(this.reconnectTimer);
  }

  /** Connection loss: abort in-flight work (the runtime ends those calls `unknown`) and fail pending answers. */
  private lost(error: Error): void {
    for (const inv of [...this.running.values()]) inv.end("unknown");
    this.running.clear();
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
    this.hold();
  }

  private async sendRegister(): Promise<void> {
    const tools = [...this.contracts.values()];
    await this.request({ type: "register", protocol: PROTOCOL, token: this.token(), hostId: this.hostId, secret: this.secret, tools });
    for (const c of tools) this.sent.add(c.digest);
  }

  /**
   * Sends a frame with a fresh ref and awaits its answer. A frame about a call answered
   * `unavailable` is sent again by the resend rule (PROTOCOL.md, "Resending after `unavailable`"):
   * a new ref each time, resendBackoffMs doubling to resendMaxBackoffMs, until another answer, the
   * call's deadline or (no deadline) 3 × leaseMs; then the call is treated as ended `unknown`.
   */
  request(frame: Frame): Promise<Answer> {
    // The first attempt's promise is the answer (one promise per frame on the call path); a refusal
    // `unavailable` of a frame about a call goes on to the resend loop from refuse(), which settles it.
    // (A frame refused before it is sent, not open or too large, is never `unavailable`.)
    return this.sendOnce(frame, typeof frame.callId === "string" ? (frame as Frame & { callId: string }) : undefined);
  }

  /** Settles a pending answer with a refusal: `unavailable` for a first attempt about a call is resent instead. */
  private refuse(p: Pending, e: Error): void {
    const frame = p.resendable;
    if (frame === undefined || !(e instanceof ProtocolError) || e.code !== "unavailable") return p.reject(e);
    this.resend(frame, frame.callId, e).then(p.resolve, p.reject);
  }

  /** The resend rule after a first attempt failed with `first` (anything but `unavailable` is passed on). */
  private async resend(frame: Frame, callId: string, first: unknown): Promise<Answer> {
    let wait: number = LIMITS.resendBackoffMs;
    let giveUpAt: number | undefined;
    let e = first;
    for (;;) {
      if (!(e instanceof ProtocolError) || e.code !== "unavailable") throw e;
      giveUpAt ??= this.running.get(callId)?.deadlineAt ?? Date.now() + 3 * this.leaseMs;
      if (Date.now() + wait > giveUpAt) {
        this.running.get(callId)?.end("unknown", `the runtime stayed unavailable for it (${e.message})`);
        throw e;
      }
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, LIMITS.resendMaxBackoffMs);
      try {
        return await this.sendOnce(frame, undefined);
      } catch (next) {
        e = next;
      }
    }
  }

  private sendOnce(frame: Frame, resendable: (Frame & { callId: string }) | undefined): Promise<Answer> {
    const ws = this.ws;
    if (!ws || ws.readyState !== OPEN) return Promise.reject(new SdkError("connection_lost", "the host connection is not open"));
    const ref = this.nextRef++;
    // The frame is built for this request (or resent by it): its ref is set on it, not on a copy
    // (spreading it into a new object cost as much as serializing it).
    frame.ref = ref;
    const text = JSON.stringify(frame);
    // The runtime cannot read a ref from a frame it refuses for size, so refuse it here, clearly.
    if (text.length * 3 > LIMITS.maxFrameBytes && new TextEncoder().encode(text).length > LIMITS.maxFrameBytes) {
      return Promise.reject(new SdkError("frame_too_large", `${frame.type} frame exceeds the ${LIMITS.maxFrameBytes}-byte frame limit`));
    }
    return new Promise((resolve, reject) => {
      this.pending.set(ref, { resolve, reject, resendable });
      this.hold();
      ws.send(text);
    });
  }

  private settle(ref: number | undefined, fn: (p: Pending) => void): void {
    if (ref === undefined) return;
    const p = this.pending.get(ref);
    if (!p) return;
    this.pending.delete(ref);
    this.hold();
    fn(p);
  }

  // ---- frames from the runtime (called by the generated router) ----

  registered(f: RegisteredFrame): void {
    this.hostTimeoutMs = f.hostTimeoutMs;
    this.leaseMs = f.leaseMs;
    this.settle(f.ref, (p) => p.resolve({ digests: f.digests }));
  }

  committed(f: Pick<CommittedFrame, "ref" | "sequence">): void {
    this.settle(f.ref, (p) => p.resolve({ sequence: f.sequence }));
  }

  rejected(f: RejectedFrame): void {
    this.over(f.callId, f.error);
    this.settle(f.ref, (p) => this.refuse(p, protocolError(f.error)));
  }

  /** A refusal with `final: true`: the call is over whatever the code says; its local work stops. */
  private over(callId: string, error: ErrorInfo | undefined): void {
    if (error?.final === true) this.running.get(callId)?.end("unknown", `the runtime answered that the call is over (${error.code}: ${error.message})`);
  }

  modelResult(f: ModelResultFrame): void {
    this.over(f.callId, f.error);
    this.settle(f.ref, (p) => (f.result ? p.resolve({ result: f.result }) : this.refuse(p, protocolError(f.error ?? { code: "internal", message: "model_result without result or error" }))));
  }

  environmentResult(f: EnvironmentResultFrame): void {
    this.over(f.callId, f.error);
    this.settle(f.ref, (p) => (f.result ? p.resolve({ environment: f.result }) : this.refuse(p, protocolError(f.error ?? { code: "internal", message: "environment_result without result or error" }))));
  }

  error(f: ErrorFrame): void {
    const error = protocolError(f.error);
    if (f.error.code === "unauthorized" || f.error.code === "replaced") this.fatal = error;
    if (f.ref !== undefined && this.pending.has(f.ref)) this.settle(f.ref, (p) => this.refuse(p, error));
    else console.warn(`brain: runtime error: ${f.error.code}: ${f.error.message}`);
  }

  pong(): void {}

  invoke(f: InvokeFrame): void {
    if (this.closed) {
      // close() is waiting for this client's calls: a new one ends at once, as close() would end it.
      void this.request({ type: "finish", callId: f.callId, outcome: { status: "cancelled", message: "the Brain client is closing (brain.close()): it takes no new calls" } }).catch(() => undefined);
      return;
    }
    const spec = this.sessions.get(f.sessionId)?.get(f.tool) ?? this.shared.get(f.tool);
    const channel = this.channel;
    if (!spec || !spec.tool.run) {
      void this.request({ type: "finish", callId: f.callId, outcome: { status: "error", error: { code: "not_registered", message: `this host has no handler for ${f.tool} in session ${f.sessionId}` } } }).catch(() => undefined);
      return;
    }
    // The runtime keeps every digest a host identity ever registered, so after a restart it may
    // invoke a contract this process does not serve: a handler with other schemas must not run it.
    if (this.contracts.get(f.digest)?.name !== f.tool) {
      const message = `this host serves ${f.tool} with other advertised schemas than the session's contract (digest ${f.digest}); keep the original handler for existing sessions or create a new session`;
      void this.request({ type: "finish", callId: f.callId, outcome: { status: "error", error: { code: "reattach_mismatch", message } } }).catch(() => undefined);
      return;
    }
    const inv = new Invocation(f, spec, channel, () => {
      this.running.delete(f.callId);
      this.hold();
    });
    this.running.set(f.callId, inv);
    this.hold();
    void inv.start().catch((e) => console.warn(`brain: invocation ${f.callId} failed locally: ${(e as Error).message}`));
  }

  cancel(f: CancelFrame): void {
    this.running.get(f.callId)?.end(f.status);
  }

  /**
   * Closes the connection. Calls of this client still running get up to `waitMs` to finish on
   * their own; then each is ended `cancelled` (a finish frame, answered before the socket closes),
   * so the runtime journals an explicit cancellation rather than the `unknown` of a lost host.
   * Answers already awaited get a moment (PENDING_BOUND_MS) to arrive. Calling it again waits for
   * the first close.
   */
  close(waitMs = 0): Promise<void> {
    return (this.closeDone ??= this.shutdown(waitMs));
  }

  private async shutdown(waitMs: number): Promise<void> {
    this.closed = true;
    this.closing = true;
    this.unsubscribeIdleExit?.();
    this.unsubscribeIdleExit = undefined;
    this.unsubscribeMainDone?.();
    this.unsubscribeMainDone = undefined;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.stopLiveness();
    this.hold();
    if (this.ws?.readyState === OPEN) {
      if (waitMs > 0) await this.until(() => this.running.size === 0, waitMs);
      await Promise.all([...this.running.values()].map((inv) => inv.cancelForClose()));
      await this.until(() => this.pending.size === 0, PENDING_BOUND_MS);
    }
    this.lost(new SdkError("closed", "the Brain client is closed"));
    const ws = this.ws;
    this.ws = undefined;
    if (ws && ws.readyState <= OPEN) {
      if (this.platform.keepAlive && this.held === false) this.platform.keepAlive(ws, true);
      await new Promise<void>((resolve) => {
        const prev = ws.onclose;
        const timer = setTimeout(resolve, 1000);
        ws.onclose = (ev) => { prev?.(ev); clearTimeout(timer); resolve(); };
        ws.close(1000, "client closed");
      });
    }
    this.closing = false;
  }

  /** Resolves when `done()` holds (checked at every change of answers and calls), or after `ms`. */
  private until(done: () => boolean, ms: number): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const finish = () => {
        this.watchers.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const check = () => {
        if (done()) finish();
      };
      const timer = setTimeout(finish, ms);
      this.watchers.add(check);
    });
  }
}
