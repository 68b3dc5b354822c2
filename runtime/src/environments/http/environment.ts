import { randomBytes } from "node:crypto";
import type { ErrorInfo, HttpCallbackRequest, HttpCallbackResponse, HttpInvokeRequest, PlacedTool } from "@aexhq/brain-protocol";
import { PROTOCOL_HTTP } from "./protocol.ts";
import { invokeFrame } from "../../dispatch/environment.ts";
import type { CallHandle, CallInvocation, CallSink, Environment } from "../../dispatch/environment.ts";
import { BrainRuntimeError } from "../../errors.ts";
import { tokensEqual } from "../../credentials/secret.ts";
import { endpointProblem } from "./origins.ts";

export interface HttpToolSettings {
  /** Origins (`scheme://host[:port]`) the operator lets HTTP tools be served from (BRAIN_HTTP_TOOL_ORIGINS). */
  allowedOrigins: string[];
  /** The Brain URL applications call back (BRAIN_PUBLIC_URL, else the listening URL); known once the server listens. */
  publicUrl: () => string;
}

export interface OpenCall {
  token: string;
  sink: CallSink;
  sequence: number;
  abort: AbortController;
}

/**
 * The Application tool extension: a call is one POST to the application's endpoint, and the call
 * lives exactly as long as that request. While it is open the application reports results and
 * completion through the call's callback with a per-call token, each answered after the durable
 * commit; once the request ends the token is void, so nothing can arrive later.
 */
export class HttpToolEnvironment implements Environment {
  readonly kind = "http" as const;
  private open = new Map<string, OpenCall>();

  constructor(private settings: HttpToolSettings) {}

  admit(tool: PlacedTool): ErrorInfo | undefined {
    if (tool.placement.kind !== "http") return { code: "internal", message: "not an http placement" };
    return endpointProblem(tool.contract.name, tool.placement.url, this.settings.allowedOrigins);
  }

  start(call: CallInvocation, sink: CallSink): CallHandle {
    if (call.tool.placement.kind !== "http") throw new BrainRuntimeError("internal", "not an http placement");
    const token = randomBytes(24).toString("base64url");
    const abort = new AbortController();
    this.open.set(call.callId, { token, sink, sequence: call.sequence, abort });
    // The trace context travels as the standard `traceparent` header (post), not in the body's contract.
    const { type: _, traceparent: _traceparent, ...fields } = invokeFrame(call);
    const request: HttpInvokeRequest = {
      protocol: PROTOCOL_HTTP,
      ...fields,
      callback: `${this.settings.publicUrl().replace(/\/+$/, "")}/v1/calls/${encodeURIComponent(call.callId)}/http`,
      token,
    };
    void this.post(call.tool.placement.url, request, sink, abort.signal, call.traceparent).finally(() => this.open.delete(call.callId));
    return {
      stop: () => {
        this.open.delete(call.callId);
        abort.abort();
      },
    };
  }

  /** Sends the invocation once; a failed request, or one that ends before the call finished, ends the call `tool_error`. */
  private async post(url: string, request: HttpInvokeRequest, sink: CallSink, signal: AbortSignal, traceparent: string | undefined): Promise<void> {
    let failure: string | undefined;
    try {
      // W3C Trace Context in its standard header: the application's SDK continues the call's trace (tracing on only).
      const headers: Record<string, string> = traceparent === undefined ? { "content-type": "application/json" } : { "content-type": "application/json", traceparent };
      const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(request), signal });
      const text = await start(res, 300);
      if (!res.ok) failure = `the HTTP tool answered HTTP ${res.status}: ${text}`;
      else if (!sink.finished) failure = "the HTTP tool's request ended before the call finished (an HTTP tool finishes within its request)";
    } catch (e) {
      if (signal.aborted) return; // stopped: the dispatcher already decided the call's outcome
      failure = `the HTTP tool at ${new URL(url).origin} could not be reached: ${e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e)}`;
    }
    if (failure !== undefined && !sink.finished) {
      await sink.finish({ status: "error", error: { code: "tool_error", message: failure } }).catch(() => {
        // Handled: a refused finish is a call already finished (its first outcome stands), and a failed
        // commit is logged by the call itself (ToolCall.uncommitted).
      });
    }
  }

  /** The open call this token belongs to; `unauthorized` for a wrong token or a call whose request ended. */
  authorize(callId: string, bearer: string | undefined): OpenCall {
    const open = this.open.get(callId);
    if (open === undefined || bearer === undefined || !tokensEqual(bearer, open.token)) {
      throw new BrainRuntimeError("unauthorized", `no open HTTP tool call ${callId} with this token (its request has ended, or the token is wrong)`);
    }
    return open;
  }

  /** One HttpCallbackRequest of an authorized call, answered after its commit. */
  async callback(open: OpenCall, body: HttpCallbackRequest): Promise<HttpCallbackResponse> {
    if (body.type === "claim") return { sequence: open.sequence };
    if (body.type === "emit_result") {
      if (body.outcome === undefined) throw new BrainRuntimeError("invalid_request", "emit_result needs an outcome");
      return { sequence: await open.sink.emitResult(body.outcome, body.content) };
    }
    return { sequence: await open.sink.finish(body.outcome, body.content) };
  }

  /** Shutdown: requests in flight are aborted and their calls stay open, so recovery ends them `unknown`. */
  close(): void {
    for (const call of this.open.values()) call.abort.abort();
    this.open.clear();
  }
}

/** The first `chars` characters of a body (the rest is not read: an endpoint's body is only shown in an error). */
async function start(res: Response, chars: number): Promise<string> {
  if (res.body === null) return "";
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < chars) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {
      // Harmless: a body that cannot be cancelled is already closed or errored, which is what we want.
    });
  }
  return text.slice(0, chars);
}
