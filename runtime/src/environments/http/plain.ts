import type { ErrorInfo, PlacedTool } from "@aexhq/brain-protocol";
import type { CallHandle, CallInvocation, CallSink, Environment } from "../../dispatch/environment.ts";
import { BrainRuntimeError } from "../../errors.ts";
import { validateSchema } from "../json-schema.ts";
import { ERROR_BODY_CHARS, failure, jsonValueOutcome, readText } from "../json-answer.ts";
import type { JsonOutcome } from "../json-answer.ts";
import { endpointProblem } from "./origins.ts";

/** The headers that tell a plain-JSON endpoint which call it is serving (the body is the input alone). */
export const PLAIN_HEADERS = {
  callId: "brain-call-id",
  sessionId: "brain-session-id",
  sequence: "brain-sequence",
  tool: "brain-tool",
  options: "brain-tool-options",
  deadlineAt: "brain-deadline-at",
} as const;

/** Largest `brain-tool-options` value: servers commonly refuse request headers beyond 8 KiB. */
export const MAX_OPTIONS_HEADER_BYTES = 8192;
/** How much of a non-2xx body goes into the error message (more is in `details.body`). */
const MESSAGE_EXCERPT_CHARS = 300;

/**
 * The tool's options as one header value: JSON text with every character outside printable ASCII
 * escaped as \uXXXX, so it is a valid header value and `JSON.parse` of it gives the options back.
 */
export function optionsHeader(options: unknown): string {
  return JSON.stringify(options ?? {}).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

// Failures that happen while connecting, before one byte of the request can have been written:
// the endpoint never saw the call. Anything else (a reset, a socket closed mid-answer, a code not
// listed) may have reached it, so the call's outcome is unknown.
const NOT_SENT = new Set([
  "ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "EAI_NONAME", "EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN",
  "EADDRNOTAVAIL", "UND_ERR_CONNECT_TIMEOUT", "CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID", "DEPTH_ZERO_SELF_SIGNED_CERT", "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "UNABLE_TO_GET_ISSUER_CERT", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "ERR_TLS_CERT_ALTNAME_INVALID",
]);

function codesOf(e: unknown): string[] {
  if (e === null || typeof e !== "object") return [];
  const { code, errors } = e as { code?: unknown; errors?: unknown };
  // Several addresses tried in turn (happy eyeballs): an AggregateError holding each attempt's error.
  const inner = Array.isArray(errors) ? errors.flatMap(codesOf) : [];
  return inner.length > 0 ? inner : typeof code === "string" ? [code] : [];
}

/** Whether a rejected fetch certainly sent nothing: it failed while connecting, or before it started (no cause). */
function neverSent(e: unknown): boolean {
  const cause = (e as { cause?: unknown } | null)?.cause;
  if (cause === undefined) return true;
  const codes = codesOf(cause);
  return codes.length > 0 && codes.every((c) => NOT_SENT.has(c));
}

function describe(e: unknown): string {
  const cause = (e as { cause?: unknown } | null)?.cause;
  const why = e instanceof Error ? e.message : String(e);
  return cause instanceof Error ? `${why} (${cause.message})` : why;
}

/** The endpoint as messages name it: origin and path, never the query (which may carry a key). */
function endpointName(url: string): string {
  const u = new URL(url);
  return u.origin + u.pathname;
}

type PlainPlacement = Extract<PlacedTool["placement"], { kind: "http_plain" }>;

/**
 * Plain-JSON HTTP tools, the v1 `http()` / `httpTool()` placements kept for existing users: each
 * call is one POST of the input to the placement's URL, and the 2xx JSON answer is the tool's
 * value. No callback, no emissions, no model calls, no envelope: the endpoint knows only its
 * input and the call's identifying headers. Sent once, never retried.
 */
export class PlainHttpEnvironment implements Environment {
  readonly kind = "http_plain" as const;
  private readonly inflight = new Set<AbortController>();

  constructor(private readonly settings: { allowedOrigins: readonly string[] }) {}

  admit(tool: PlacedTool): ErrorInfo | undefined {
    const p = tool.placement as PlainPlacement;
    if (p.kind !== "http_plain") return { code: "internal", message: "not an http_plain placement" };
    const name = tool.contract.name;
    const problem = endpointProblem(name, p.url, this.settings.allowedOrigins);
    if (problem !== undefined) return problem;
    const url = new URL(p.url);
    // fetch refuses such URLs: say so now rather than at every call.
    if (url.username !== "" || url.password !== "") return { code: "invalid_request", message: `tool ${name}: the endpoint URL may not carry credentials (user:password@)` };
    const bytes = new TextEncoder().encode(optionsHeader(tool.options)).byteLength;
    if (bytes > MAX_OPTIONS_HEADER_BYTES) {
      return {
        code: "invalid_request",
        message: `tool ${name}: its options travel in the ${PLAIN_HEADERS.options} header, which may be at most ${MAX_OPTIONS_HEADER_BYTES} bytes (these are ${bytes})`,
        details: { tool: name, bytes, max: MAX_OPTIONS_HEADER_BYTES },
      };
    }
    return undefined;
  }

  start(call: CallInvocation, sink: CallSink): CallHandle {
    // Checked again: after a restart the operator may no longer allow the origin.
    const problem = this.admit(call.tool);
    if (problem !== undefined) throw BrainRuntimeError.of(problem);
    const abort = new AbortController();
    this.inflight.add(abort);
    this.run(call, sink, abort.signal)
      .catch((e) => this.end(sink, abort.signal, failure("internal", `plain HTTP tool call failed: ${e instanceof Error ? e.message : String(e)}`)))
      .finally(() => this.inflight.delete(abort));
    // The dispatcher calls stop after it committed timeout/cancelled: the request is aborted and
    // whatever the endpoint answers later is dropped.
    return { stop: () => abort.abort() };
  }

  private async end(sink: CallSink, signal: AbortSignal, outcome: JsonOutcome): Promise<void> {
    if (signal.aborted || sink.finished) return;
    await sink.finish(outcome).catch(() => {
      // Handled: a refused finish is a call already finished (its first outcome stands), and a failed
      // commit is logged by the call itself (ToolCall.uncommitted).
    });
  }

  private async run(call: CallInvocation, sink: CallSink, signal: AbortSignal): Promise<void> {
    const inputIssues = validateSchema(call.tool.contract.inputSchema, call.input);
    if (inputIssues.length > 0) return this.end(sink, signal, failure("invalid_input", "input does not match the tool's input schema", inputIssues));
    if (call.deadlineAt !== null && call.deadlineAt <= Date.now()) return; // the dispatcher's deadline ends it
    const url = (call.tool.placement as PlainPlacement).url;
    const where = endpointName(url);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
      [PLAIN_HEADERS.callId]: call.callId,
      [PLAIN_HEADERS.sessionId]: call.sessionId,
      [PLAIN_HEADERS.sequence]: String(call.sequence),
      [PLAIN_HEADERS.tool]: call.tool.contract.name,
      [PLAIN_HEADERS.options]: optionsHeader(call.tool.options),
    };
    if (call.deadlineAt !== null) headers[PLAIN_HEADERS.deadlineAt] = String(call.deadlineAt);
    // W3C Trace Context: an endpoint with OpenTelemetry continues the call's trace (tracing on only).
    if (call.traceparent !== undefined) headers.traceparent = call.traceparent;

    let res: Response;
    try {
      // Redirects are not followed: the operator allowed this origin, not wherever it points.
      res = await fetch(url, { method: "POST", headers, body: JSON.stringify(call.input ?? null), signal, redirect: "manual" });
    } catch (e) {
      if (signal.aborted) return; // stopped: the dispatcher already decided the call's outcome
      if (neverSent(e)) return this.end(sink, signal, failure("tool_error", `the plain HTTP tool at ${where} could not be reached: ${describe(e)}`, undefined, true));
      if (!sink.finished) sink.lost(`the connection to the plain HTTP tool at ${where} failed after the request may have reached it: ${describe(e)}`);
      return;
    }
    if (res.status < 200 || res.status > 299) {
      const { text } = await readText(res, ERROR_BODY_CHARS * 4).catch(() => ({ text: "" }));
      const excerpt = text.slice(0, MESSAGE_EXCERPT_CHARS).trim();
      return this.end(
        sink,
        signal,
        failure("tool_error", `HTTP ${res.status} from ${where}${excerpt === "" ? "" : `: ${excerpt}`}`, { status: res.status, body: text.slice(0, ERROR_BODY_CHARS) }, res.status >= 500 || res.status === 429),
      );
    }
    let outcome: JsonOutcome;
    try {
      outcome = await jsonValueOutcome(res, where, call.tool.contract.outputSchema);
    } catch (e) {
      if (signal.aborted) return;
      // The endpoint ran the call and began to answer; what it answered is not known.
      if (!sink.finished) sink.lost(`the answer of the plain HTTP tool at ${where} was cut off: ${describe(e)}`);
      return;
    }
    return this.end(sink, signal, outcome);
  }

  /** Server close: requests in flight are aborted and their calls stay open, so recovery ends them `unknown`. */
  close(): void {
    for (const abort of this.inflight) abort.abort();
    this.inflight.clear();
  }
}
