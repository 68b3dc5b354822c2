import type { ErrorInfo, ModelRequest, ModelResult } from "@aexhq/brain-protocol";
import type { SessionState, RecordData } from "../journal/session.ts";
import type { ModelCallBudget } from "./budget.ts";
import { toErrorInfo } from "../errors.ts";
import { complete } from "./provider.ts";
import type { ModelProvider, ReplyHints } from "./provider.ts";
import { messageOf } from "../logger.ts";
import type { Logger } from "../logger.ts";
import { SpanKind } from "../telemetry/telemetry.ts";
import type { Span, Telemetry } from "../telemetry/telemetry.ts";

export type ModelCallOutcome =
  | { status: "ok"; result: ModelResult; hints: ReplyHints }
  | { status: "error"; error: ErrorInfo }
  /** The signal aborted while the provider worked: journaled as `unknown`, never replayed. */
  | { status: "interrupted" };

/** One model call: what its model.request journals, and the request itself, built only if the provider reads it. */
export interface ModelCallSpec {
  record: RecordData<"model.request">;
  /** Built from the session's records, which are read from the store. */
  request: () => Promise<ModelRequest>;
}

export interface ModelCallOptions {
  /** The tool call asking (ctx.model); absent for the Agentloop's own calls. */
  origin?: string;
  /** The activation's model-call budget, charged before anything is journaled or sent. */
  budget: ModelCallBudget;
  signal: AbortSignal;
  /** Where a model.response the journal did not commit is logged (the call's answer goes on regardless). */
  logger: Logger;
  /** Counts the call by provider and outcome (and its tokens), and traces it under `parent`. */
  telemetry?: Telemetry | undefined;
  /** The span the model call's span belongs under: the turn's, or the tool call's (ctx.model). */
  parent?: Span | undefined;
}

/**
 * One model call as the journal tells it, for the Agentloop and for ctx.model alike: model.request
 * is committed before the provider is asked, and the model.response (result or error) and
 * model.usage are committed before the caller sees the answer. A call whose signal aborts (a
 * cancelled turn, a tool's completion or deadline) has an unknown outcome at the provider, so it
 * is answered `unknown` in the journal; a late answer from the provider is dropped, never used.
 */
export async function journaledModelCall(session: SessionState, provider: ModelProvider, spec: ModelCallSpec, opts: ModelCallOptions): Promise<ModelCallOutcome> {
  if (opts.telemetry === undefined) return modelCall(session, provider, spec, opts, undefined);
  const model = (session.created.model as { model?: string }).model;
  const span = opts.telemetry.span(model === undefined ? "chat" : `chat ${model}`, opts.parent, {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": provider.name,
    ...(model === undefined ? {} : { "gen_ai.request.model": model }),
    "brain.session.id": session.id,
    ...(opts.origin === undefined ? {} : { "brain.call.id": opts.origin }),
  }, SpanKind.CLIENT);
  const out = await modelCall(session, provider, spec, opts, span);
  const usage = out.status === "ok" ? out.result.usage : undefined;
  opts.telemetry.metrics.modelCall(provider.name, out.status, usage);
  if (span !== undefined) {
    span.setAttribute("brain.outcome", out.status);
    if (usage !== undefined) span.setAttributes({ "gen_ai.usage.input_tokens": usage.inputTokens, "gen_ai.usage.output_tokens": usage.outputTokens });
    if (out.status === "error") opts.telemetry.fail(span, out.error.code, out.error.message);
    else if (out.status === "interrupted") opts.telemetry.fail(span, "unknown", "the model call was interrupted");
    span.end();
  }
  return out;
}

async function modelCall(session: SessionState, provider: ModelProvider, spec: ModelCallSpec, opts: ModelCallOptions, span: Span | undefined): Promise<ModelCallOutcome> {
  if (!opts.budget.take()) {
    return { status: "error", error: { code: "budget_exceeded", message: `the activation made its ${opts.budget.max} model calls (BRAIN_MAX_MODEL_CALLS)` } };
  }
  const admitted = session.admitModelRequest(spec.record);
  span?.setAttribute("brain.model.request", admitted.sequence);
  const link: Pick<RecordData<"model.response">, "origin" | "request"> = opts.origin === undefined ? { request: admitted.sequence } : { origin: opts.origin, request: admitted.sequence };
  await admitted.committed;
  if (opts.signal.aborted) return interrupted(session, link, opts.logger);
  let reply: { result: ModelResult; hints: ReplyHints };
  try {
    const request = provider.readsRequest === false ? UNREAD : await spec.request();
    reply = await untilAborted(complete(provider, request, { sessionId: session.id, index: admitted.index, signal: opts.signal }), opts.signal);
  } catch (e) {
    if (opts.signal.aborted) return interrupted(session, link, opts.logger);
    // A provider's error body may quote the request's headers: the key never reaches anyone.
    const error = session.redact(toErrorInfo(e));
    await respond(session, { ...link, error }, opts.logger);
    return { status: "error", error };
  }
  void respond(session, { ...link, result: reply.result }, opts.logger);
  const usage = opts.origin === undefined ? { usage: reply.result.usage } : { usage: reply.result.usage, origin: opts.origin };
  await session.append("model.usage", usage).committed;
  return { status: "ok", ...reply };
}

/** What a provider that never reads requests (the scripted model) is given instead of building one. */
const UNREAD: ModelRequest = Object.freeze({ messages: [] }) as unknown as ModelRequest;

/** The `unknown` answer of a model call that was cut off (interrupted here, or by a restart). */
export function unknownModelResponse(reason: string): ErrorInfo {
  return { code: "unknown", message: `${reason}; whether the provider completed it is unknown, and it is never replayed` };
}

function interrupted(session: SessionState, link: Pick<RecordData<"model.response">, "origin" | "request">, logger: Logger): ModelCallOutcome {
  void respond(session, { ...link, error: unknownModelResponse("the model call was interrupted") }, logger);
  return { status: "interrupted" };
}

/**
 * Appends a model.response unless the session is already deleted (then nothing more is journaled).
 * One the journal did not commit is logged: its model.request stays open and recovery answers it `unknown`.
 */
function respond(session: SessionState, data: RecordData<"model.response">, logger: Logger): Promise<unknown> {
  if (session.deletedAdmitted) return Promise.resolve();
  return session.append("model.response", data).committed.catch((e: unknown) => {
    logger.warn("a model call's model.response was not committed to the journal; recovery answers its request unknown", { sessionId: session.id, request: data.request, error: messageOf(e) });
  });
}

/** Rejects as soon as the signal aborts, even if the provider does not honour it. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => (signal.removeEventListener("abort", onAbort), resolve(v)),
      (e) => (signal.removeEventListener("abort", onAbort), reject(e)),
    );
  });
}
