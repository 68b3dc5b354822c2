import type { WebSocket } from "ws";
import { LIMITS, routeRuntimeFrame } from "@aexhq/brain-protocol";
import type {
  EmitFrame, EmitResultFrame, EnvironmentRequestFrame, ErrorInfo, FinishFrame, InvokeFrame, ModelRequestFrame, PingFrame, RegisterFrame, ReturnedFrame,
  RuntimeFrameHandler, RuntimeToHostFrame,
} from "@aexhq/brain-protocol";
import type { CallSink } from "../dispatch/environment.ts";
import type { Dispatcher, HostBinding } from "../dispatch/dispatcher.ts";
import { BrainRuntimeError, CallRejectedError, toErrorInfo } from "../errors.ts";
import type { HostRegistry } from "./registry.ts";
import { digestMismatch } from "./digest.ts";
import { ownerOf } from "../credentials/keys.ts";
import type { Redactor } from "../redact.ts";
import type { Principal } from "../credentials/keys.ts";
import { InvokeText } from "./invoke-text.ts";
import { tickCorker } from "./tick-cork.ts";
import { tooDeepFrame } from "./frame-limits.ts";

/**
 * The ErrorInfo a refusal about a call carries: `final: true` when the call is over (it had ended,
 * `ended` says this frame ended it, or the error itself says so: a lost lease's `conflict`), so the
 * host can tell "the call goes on" from "the call is over" whatever the code.
 */
function callError(e: unknown, ended = false): ErrorInfo {
  const info = toErrorInfo(e);
  if (ended || info.code === "call_finished") info.final = true;
  return info;
}

/** Close codes (application range) so a host can tell why it was closed. */
export const CLOSE = { unauthorized: 4401, replaced: 4409, registerTimeout: 4408, shutdown: 1001 } as const;

/** How a silent host is found out: a WebSocket ping every `timeoutMs / PINGS_PER_TIMEOUT`; that many unanswered in a row close it. */
export const PINGS_PER_TIMEOUT = 3;
export const DEFAULT_HOST_TIMEOUT_MS = LIMITS.defaultHostTimeoutMs;

export interface ConnectionDeps {
  /** Secrets never leave in an error, rejection or model answer. */
  redactor?: Redactor;
  /** The principal a register frame's token stands for (the operator token or an API key), or undefined. */
  authenticate(token: string): Principal | undefined;
  /**
   * A token `authenticate` does not know may be a key another node issued a moment ago (several
   * nodes): resolves once this node read the keys again, so `register` can ask once more.
   */
  knowCredential?(token: string): Promise<void>;
  /** A connection that answers no ping for this long is closed and its open calls end `unknown` (BRAIN_HOST_TIMEOUT_MS). */
  hostTimeoutMs?: number;
  /** BRAIN_LEASE_MS, told to the host in `registered` (it sizes its resend window by it). */
  leaseMs?: number;
  registry: HostRegistry;
  dispatcher: Dispatcher;
  /** Resolves (when it returns a promise) once the host can be found through every node (several nodes). */
  attach(hostId: string, conn: HostConnection): void | Promise<void>;
  detach(conn: HostConnection): void;
  /** The binding a host process Brain started serves (its calls are placed `managed`, naming no host). */
  bindingOf?(hostId: string): HostBinding | undefined;
}

/**
 * One host WebSocket. Implements the generated RuntimeFrameHandler: the router has already
 * parsed and validated each frame. Every emit/emit_result/returned/finish gets exactly one
 * `committed` or `rejected`; a connection that has not registered may only ping.
 */
export class HostConnection implements RuntimeFrameHandler {
  hostId: string | undefined;
  /** Calls dispatched on this connection: they become `unknown` if it is lost. */
  private calls = new Map<string, CallSink>();
  /** Digests this connection itself registered (the registry keeps every digest the host ever had). */
  private advertised = new Set<string>();
  private registerTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private cork: () => void;
  /** `invoke` frames written out (the frame is never redacted: send() redacts only answers that can carry errors). */
  private readonly invokeText = new InvokeText();
  private pinger: NodeJS.Timeout;
  /** Pings sent since the host last showed a sign of life (a pong or any frame). */
  private unanswered = 0;
  /** When the host last showed a sign of life (a pong or any frame), ms since the epoch: the operator's hosts page shows it. */
  lastSeenAt = Date.now();

  constructor(private ws: WebSocket, private deps: ConnectionDeps) {
    this.cork = tickCorker(ws);
    // Counting unanswered pings, not elapsed time: after a stall of this process the pongs that
    // arrived meanwhile are read before the next tick, so a busy runtime does not drop its hosts.
    const timeoutMs = deps.hostTimeoutMs ?? DEFAULT_HOST_TIMEOUT_MS;
    this.pinger = setInterval(() => {
      if (this.unanswered >= PINGS_PER_TIMEOUT) return this.silent(timeoutMs);
      this.unanswered += 1;
      if (ws.readyState === ws.OPEN) ws.ping();
    }, Math.max(1, Math.floor(timeoutMs / PINGS_PER_TIMEOUT)));
    this.pinger.unref();
    ws.on("pong", () => {
      this.unanswered = 0;
      this.lastSeenAt = Date.now();
    });
    this.registerTimer = setTimeout(() => {
      if (this.hostId === undefined) this.fail("not_registered", `no valid register frame within ${LIMITS.registerTimeoutMs} ms`, CLOSE.registerTimeout);
    }, LIMITS.registerTimeoutMs);
    ws.on("message", (data, isBinary) => {
      this.unanswered = 0;
      this.lastSeenAt = Date.now();
      const raw = isBinary ? "" : data.toString();
      if (isBinary) return this.send({ type: "error", error: { code: "invalid_frame", message: "frames are UTF-8 JSON text messages" } });
      const tooDeep = tooDeepFrame(raw);
      if (tooDeep !== undefined) return this.send(tooDeep);
      const err = routeRuntimeFrame(raw, this);
      if (err) {
        const error: ErrorInfo = { code: err.code, message: err.message };
        if (err.details !== undefined) error.details = err.details as ErrorInfo["details"];
        this.send(err.ref === undefined ? { type: "error", error } : { type: "error", ref: err.ref, error });
      }
    });
    ws.on("close", () => this.onClose());
    ws.on("error", () => {
      // Handled: a socket error is followed by "close", which ends the connection and its open calls (`unknown`).
    });
  }

  send(frame: RuntimeToHostFrame): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    if (this.deps.redactor !== undefined && (frame.type === "error" || frame.type === "rejected" || frame.type === "model_result" || frame.type === "environment_result")) frame = this.deps.redactor.redact(frame);
    this.cork();
    this.ws.send(JSON.stringify(frame));
  }

  /**
   * `committed`, the answer to every emit, result, return and finish: its text written out, as
   * JSON.stringify writes `{ type, ref, callId, sequence }` (the SDK reads this form without
   * parsing it), without building and serializing an object per answer.
   */
  private sendCommitted(ref: number, callId: string, sequence: number): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    this.cork();
    this.ws.send(`{"type":"committed","ref":${ref},"callId":${JSON.stringify(callId)},"sequence":${sequence}}`);
  }

  /** Sends an error frame and closes (unauthorized, replaced, register timeout). */
  fail(code: string, message: string, closeCode: number, ref?: number): void {
    this.send(ref === undefined ? { type: "error", error: { code, message } } : { type: "error", ref, error: { code, message } });
    this.ws.close(closeCode, code);
  }

  /** Sends a call's `invoke` frame (built here by `invokeFrame`, or by the owner node for a relayed call). */
  invoke(frame: InvokeFrame, sink: CallSink): void {
    this.calls.set(frame.callId, sink);
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    this.cork();
    this.ws.send(this.invokeText.of(frame));
  }

  cancel(callId: string, status: "timeout" | "cancelled"): void {
    this.send({ type: "cancel", callId, status });
  }

  /** Whether this connection registered the contract: a restarted host with changed schemas did not. */
  advertises(digest: string): boolean {
    return this.advertised.has(digest);
  }

  register(f: RegisterFrame): void {
    const refresh = this.deps.knowCredential;
    if (refresh === undefined || this.deps.authenticate(f.token) !== undefined) return this.registerKnown(f);
    // As HTTP requests do (cluster/node.ts): the key may be one issued through another node just now.
    refresh(f.token).then(
      () => {
        if (!this.closed) this.registerKnown(f);
      },
      (e) => this.send({ type: "error", ref: f.ref, error: toErrorInfo(e) }),
    );
  }

  private registerKnown(f: RegisterFrame): void {
    const principal = this.deps.authenticate(f.token);
    if (principal === undefined) return this.fail("unauthorized", "wrong bearer token (not the operator token nor a live API key)", CLOSE.unauthorized, f.ref);
    if (this.hostId !== undefined && f.hostId !== this.hostId) {
      return this.send({ type: "error", ref: f.ref, error: { code: "invalid_frame", message: `this connection is registered as ${this.hostId}; open another connection for ${f.hostId}` } });
    }
    const mismatch = digestMismatch(f.tools);
    if (mismatch) return this.send({ type: "error", ref: f.ref, error: mismatch });
    let digests: string[];
    try {
      // A Brain-managed host id registers only while its binding runs here (registry.ts).
      digests = this.deps.registry.register(f.hostId, f.secret, f.tools, ownerOf(principal), this.deps.bindingOf?.(f.hostId) !== undefined);
    } catch (e) {
      const info = toErrorInfo(e);
      if (info.code === "unauthorized") return this.fail("unauthorized", info.message, CLOSE.unauthorized, f.ref);
      return this.send({ type: "error", ref: f.ref, error: info });
    }
    clearTimeout(this.registerTimer);
    for (const t of f.tools) this.advertised.add(t.digest);
    let attached: void | Promise<void> = undefined;
    if (this.hostId === undefined) {
      this.hostId = f.hostId;
      attached = this.deps.attach(f.hostId, this);
    }
    const registered = () => this.send({
      type: "registered", ref: f.ref, hostId: f.hostId, digests,
      hostTimeoutMs: this.deps.hostTimeoutMs ?? DEFAULT_HOST_TIMEOUT_MS, leaseMs: this.deps.leaseMs ?? LIMITS.defaultLeaseMs,
    });
    // `registered` means sessions may place the host: on a node of several, only once every node can
    // see the registration and where the host is connected.
    if (attached === undefined && !this.deps.registry.persistsLater) return registered();
    void Promise.all([attached, this.deps.registry.saved()]).then(registered, (e) => this.send({ type: "error", ref: f.ref, error: toErrorInfo(e) }));
  }

  emit(f: EmitFrame): void {
    this.answer(f.ref, f.callId, (s) => s.emit(f.kind, f.data));
  }
  emitResult(f: EmitResultFrame): void {
    this.answer(f.ref, f.callId, (s) => s.emitResult(f.outcome, f.content));
  }
  returned(f: ReturnedFrame): void {
    this.answer(f.ref, f.callId, (s) => s.returned());
  }
  finish(f: FinishFrame): void {
    this.answer(f.ref, f.callId, (s) => s.finish(f.outcome, f.content));
  }

  modelRequest(f: ModelRequestFrame): void {
    let p: Promise<unknown>;
    try {
      p = withSink(this.sinkFor(f.callId), (sink) => sink.model(f.request));
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      (result) => this.send({ type: "model_result", ref: f.ref, callId: f.callId, result: result as never }),
      (e) => this.send({ type: "model_result", ref: f.ref, callId: f.callId, error: callError(e) }),
    );
  }

  /**
   * ctx.environments: decided by the call's placement (environments/control/). A call whose sink
   * cannot do it (relayed from the node that owns its session) is answered `unsupported`.
   */
  environmentRequest(f: EnvironmentRequestFrame): void {
    let p: Promise<unknown>;
    try {
      p = withSink(this.sinkFor(f.callId), (sink) =>
        sink.environment !== undefined
          ? sink.environment(f.request)
          : Promise.reject(new CallRejectedError("unsupported", `call ${f.callId} cannot use Environment control`)),
      );
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      (result) => this.send({ type: "environment_result", ref: f.ref, callId: f.callId, result: result as never }),
      (e) => this.send({ type: "environment_result", ref: f.ref, callId: f.callId, error: callError(e) }),
    );
  }

  ping(f: PingFrame): void {
    this.send({ type: "pong", nonce: f.nonce });
  }

  /** Stops tracking a call that ended runtime-side (timeout, cancellation, budget): it can no longer be lost. */
  release(callId: string): void {
    this.calls.delete(callId);
  }

  /**
   * The sink of a call this host may answer. Decided: a call id that was never started is
   * `unknown_call`; one placed on another host is `forbidden`; one that finished (also one the
   * dispatcher already forgot, or one from before a restart) gets `call_finished` from its sink.
   * A live call's sink is answered at once, so its frames act in the order they came; only a call
   * the dispatcher does not hold is looked up in the journal.
   */
  private sinkFor(callId: string): CallSink | Promise<CallSink> {
    if (this.hostId === undefined) throw new CallRejectedError("not_registered", "send register before any other frame");
    const dispatcher = this.deps.dispatcher;
    const call = dispatcher.getCall(callId);
    if (call === undefined) {
      // A call relayed here by the node that owns its session (several nodes): its sink answers.
      const relayed = this.calls.get(callId);
      if (relayed !== undefined) return relayed;
      const hostId = this.hostId;
      return dispatcher.findPastCall(callId).then((past) => {
        if (past === undefined) throw new CallRejectedError("unknown_call", `no call ${callId}`);
        if (!past.placedOn(hostId, this.deps.bindingOf?.(hostId))) throw new CallRejectedError("forbidden", `call ${callId} is not placed on host ${hostId}`);
        return finishedSink(callId);
      });
    }
    // A host placement names its host; a call of a Brain-managed host (kind "managed") names none:
    // the connection it was invoked on answers it, and so does (after it ended, also on a later
    // connection) the host Brain started for the call's binding.
    const placement = call.info.tool.placement;
    const mine = placement.kind === "host"
      ? placement.hostId === this.hostId
      : this.calls.has(callId) || (placement.kind === "managed" && this.serves(call.invocation().sessionId, placement.env));
    if (!mine) throw new CallRejectedError("forbidden", `call ${callId} is not placed on host ${this.hostId}`);
    return call;
  }

  /** Whether this is the host Brain started for the binding (session, env). */
  private serves(sessionId: string, env: string): boolean {
    const b = this.hostId === undefined ? undefined : this.deps.bindingOf?.(this.hostId);
    return b !== undefined && b.sessionId === sessionId && b.env === env;
  }

  private answer(ref: number, callId: string, fn: (sink: CallSink) => Promise<number>): void {
    let p: Promise<number>;
    let sink: CallSink | undefined;
    try {
      const found = this.sinkFor(callId);
      if (found instanceof Promise) p = found.then(fn);
      else p = fn((sink = found));
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      (sequence) => this.sendCommitted(ref, callId, sequence),
      (e) => this.send({ type: "rejected", ref, callId, error: callError(e, sink?.finished === true) }),
    );
    // A call the host ended (finish, a non-success result) cannot be lost any more: stop tracking it.
    if (sink?.finished) this.calls.delete(callId);
  }

  /** Calls dispatched on this connection and not yet ended. */
  get trackedCalls(): number {
    return this.calls.size;
  }

  /**
   * The host answered no ping for the timeout (stopped, hung, a half-open TCP connection): the socket
   * is dropped without a closing handshake it could not answer, and its open calls end `unknown`.
   */
  private silent(timeoutMs: number): void {
    clearInterval(this.pinger);
    this.ws.terminate();
    this.onClose(`the host answered no ping for ${timeoutMs} ms (BRAIN_HOST_TIMEOUT_MS); its connection was closed after dispatch`);
  }

  close(code: number = CLOSE.shutdown, reason = "server shutting down"): void {
    this.ws.close(code, reason);
  }

  private onClose(reason = "the host connection was lost after dispatch"): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.registerTimer);
    clearInterval(this.pinger);
    this.deps.detach(this);
    for (const sink of this.calls.values()) if (!sink.finished) sink.lost(reason);
    this.calls.clear();
  }

  /** For shutdown: forget calls so closing the socket does not journal `unknown` (recovery does that). */
  abandon(): void {
    this.calls.clear();
  }
}

/** The sink of a finished call nobody holds any more: every emission is rejected like a late one. */
function finishedSink(callId: string): CallSink {
  const late = () => Promise.reject(new CallRejectedError("call_finished", `call ${callId} already finished`));
  return { emit: late, emitResult: late, returned: late, finish: late, model: late, environment: late, lost: () => {}, finished: true };
}

/** `use` of a sink found at once or looked up (CallSink lookups: connection.sinkFor). */
function withSink<T>(found: CallSink | Promise<CallSink>, use: (sink: CallSink) => Promise<T>): Promise<T> {
  return found instanceof Promise ? found.then(use) : use(found);
}
