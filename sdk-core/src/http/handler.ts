import { validate, issues } from "@aexhq/brain-protocol";
import type { ErrorInfo, HttpInvokeRequest, InvokeFrame } from "@aexhq/brain-protocol";
import type { DeclaredTool, ToolFactory } from "../tool.ts";
import { Invocation } from "../host/invocation.ts";
import type { InvocationChannel } from "../host/invocation.ts";
import { protocolError, SdkError } from "../errors.ts";
import { deepFreeze } from "../freeze.ts";

/** `httpTools(tools, options)`: which Brain the endpoint serves. */
export interface HttpToolsOptions {
  /**
   * The Brain this endpoint serves. An invocation is only run when its callback lies under this
   * URL and that Brain confirms the call (`claim`), so a stranger's POST runs nothing.
   */
  brainUrl: string;
}

/**
 * Serves tools over the Application tool extension (`brain.http/0.2`) as a fetch-style handler,
 * for any server that speaks `Request`/`Response` (Node's, Deno.serve, Hono, ...). The tools keep
 * their declarations, input and output validation, options, `ctx.emitResult` and
 * `await ctx.finish(value)` (resolved after Brain's durable commit). The call ends with the
 * request: returning a value publishes it and finishes, returning nothing finishes without a
 * result. `ctx.emit` and `ctx.model` are refused (`unsupported`): the extension grants neither.
 */
export function httpTools(tools: Array<ToolFactory<never> | DeclaredTool>, opts: HttpToolsOptions): (request: Request) => Promise<Response> {
  if (typeof opts?.brainUrl !== "string") throw new TypeError("httpTools: pass { brainUrl } (the Brain that calls these tools)");
  const callbacks = `${new URL(opts.brainUrl).href.replace(/\/+$/, "")}/v1/calls/`;
  const byName = new Map<string, DeclaredTool>();
  for (const t of tools) {
    const declared = "tool" in t ? t.tool : t;
    if (typeof declared?.contract !== "function") throw new TypeError("httpTools: pass tools declared with tool()");
    if (declared.run === undefined) throw new TypeError(`httpTools: tool ${declared.name} has no run function to serve`);
    if (byName.has(declared.name)) throw new TypeError(`httpTools: tool ${declared.name} is given twice`);
    byName.set(declared.name, declared);
  }

  return async (request: Request): Promise<Response> => {
    if (request.method !== "POST") return errorResponse(405, { code: "invalid_request", message: "POST an HttpInvokeRequest" });
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return errorResponse(400, { code: "malformed_json", message: "the body is not JSON" });
    }
    if (!validate.HttpInvokeRequest.Check(body)) return errorResponse(400, { code: "invalid_request", message: "the body is not an HttpInvokeRequest", details: issues("HttpInvokeRequest", body) as never });
    const invoke = body as HttpInvokeRequest;
    if (!invoke.callback.startsWith(callbacks)) return errorResponse(403, { code: "forbidden", message: `this endpoint serves the Brain at ${opts.brainUrl} only` });
    const tool = byName.get(invoke.tool);
    if (tool === undefined) return errorResponse(404, { code: "not_found", message: `this endpoint serves no tool ${invoke.tool}` });
    if ((await tool.contract()).digest !== invoke.digest) {
      return errorResponse(409, { code: "reattach_mismatch", message: `this endpoint serves ${invoke.tool} with other advertised schemas than the session's contract (digest ${invoke.digest})` });
    }
    const channel = new CallbackChannel(invoke);
    try {
      await channel.post({ type: "claim" });
    } catch (e) {
      return errorResponse(401, { code: "unauthorized", message: `Brain did not confirm call ${invoke.callId}: ${(e as Error).message}` });
    }
    const frame: InvokeFrame = { type: "invoke", callId: invoke.callId, sessionId: invoke.sessionId, sequence: invoke.sequence, tool: invoke.tool, digest: invoke.digest, input: invoke.input, options: invoke.options, deadlineAt: invoke.deadlineAt };
    // The W3C traceparent header of a tracing runtime: run continues the call's trace, as on a host.
    const traceparent = request.headers.get("traceparent");
    if (traceparent !== null && /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(traceparent)) frame.traceparent = traceparent;
    let done!: () => void;
    const ended = new Promise<void>((resolve) => (done = resolve));
    channel.onFinished = done;
    const spec = Object.freeze({ tool, options: deepFreeze(invoke.options) as Readonly<Record<string, unknown>>, env: undefined });
    const invocation = new Invocation(frame, spec, channel, done);
    // Brain aborting the request means the call ended there (deadline, cancellation): stop local work.
    request.signal?.addEventListener("abort", () => invocation.end("cancelled"), { once: true });
    // Answer once the call has ended for Brain, even if run itself never returns (its later frames are refused locally).
    await Promise.race([invocation.start().then(() => ended), ended]);
    // Ended here without a terminal record (the local deadline timer, a dropped request): Brain
    // decides that outcome itself and then drops this request. Answering first would tell Brain
    // the tool quit before finishing, so wait for that (bounded: a Brain that never drops it).
    if (!channel.terminal) await abortedOrAfter(request.signal, LOCAL_END_GRACE_MS);
    return new Response(null, { status: 204 });
  };
}

/** How long a call that ended locally (deadline) waits for Brain to drop its request before answering anyway. */
const LOCAL_END_GRACE_MS = 5000;

function abortedOrAfter(signal: AbortSignal | undefined, ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** The Invocation's frames as callback requests: results and finish go to Brain, the rest is refused. */
class CallbackChannel implements InvocationChannel {
  /** Called once the call's finish (or the finish that ends a returned call) has been answered. */
  onFinished: () => void = () => {};
  /** Brain committed a terminal record for the call (a finish, or a non-success result). */
  terminal = false;

  constructor(private invoke: HttpInvokeRequest) {}

  request(frame: Record<string, unknown> & { type: string; callId: string }): Promise<{ sequence?: number }> {
    const { type, outcome, content } = frame as { type: string; outcome?: unknown; content?: string };
    switch (type) {
      case "emit_result":
        return this.post({ type, outcome, ...(content === undefined ? {} : { content }) }).then((r) => ((this.terminal ||= (outcome as { status?: string }).status !== "ok"), r));
      case "finish":
        return this.terminating(this.post({ type, ...(outcome === undefined ? {} : { outcome }), ...(content === undefined ? {} : { content }) }));
      case "returned":
        // No work beyond the request: returning ends the call (after the returned value's result, if any).
        return this.terminating(this.post({ type: "finish" }));
      case "emit":
        return Promise.reject(new SdkError("unsupported", "an HTTP tool cannot emit events: the Application tool extension grants results and finish only"));
      case "model_request":
        return Promise.reject(new SdkError("unsupported", "an HTTP tool cannot call the model: the Application tool extension grants no model calls"));
      case "environment_request":
        return Promise.reject(new SdkError("unsupported", "an HTTP tool has no Environment control (ctx.environments): the Application tool extension grants none"));
      default:
        return Promise.reject(new SdkError("unsupported", `an HTTP tool cannot send ${type}`));
    }
  }

  private terminating(sent: Promise<{ sequence: number }>): Promise<{ sequence: number }> {
    return sent.then((r) => ((this.terminal = true), r)).finally(this.onFinished);
  }

  /** One HttpCallbackRequest; resolves with the committed sequence, rejects with Brain's error. */
  async post(body: Record<string, unknown>): Promise<{ sequence: number }> {
    const res = await fetch(this.invoke.callback, {
      method: "POST",
      headers: { authorization: `Bearer ${this.invoke.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = (await res.json().catch(() => undefined)) as { sequence?: number; error?: ErrorInfo } | undefined;
    if (!res.ok || typeof answer?.sequence !== "number") {
      throw protocolError(answer?.error ?? { code: "internal", message: `Brain answered HTTP ${res.status}` }, res.status);
    }
    return { sequence: answer.sequence };
  }
}

function errorResponse(status: number, error: ErrorInfo): Response {
  return new Response(JSON.stringify({ error }), { status, headers: { "content-type": "application/json" } });
}
