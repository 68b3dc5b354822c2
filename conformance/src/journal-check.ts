import { isDeepStrictEqual } from "node:util";
import { issues, type JournalRecord } from "@aexhq/brain-protocol";
import type { ExpectedCall, Scenario } from "./scenario.ts";

/** One call's records (data.callId) and the records it caused (data.origin: model and environment requests, nested calls), each in journal order. */
type CallRecords = { callId: string; tool: string; records: JournalRecord[]; model: JournalRecord[] };

function callIdOf(r: JournalRecord): string | undefined {
  const data = r.data as { callId?: unknown };
  return typeof data.callId === "string" ? data.callId : undefined;
}

export function groupCalls(records: JournalRecord[]): CallRecords[] {
  const calls = new Map<string, CallRecords>();
  for (const r of records) {
    if (r.type === "tool.call_started") calls.set(r.data.callId, { callId: r.data.callId, tool: r.data.tool, records: [], model: [] });
    const id = callIdOf(r);
    if (id) calls.get(id)?.records.push(r);
    const origin = (r.data as { origin?: unknown }).origin;
    if (typeof origin === "string") calls.get(origin)?.model.push(r);
  }
  return [...calls.values()];
}

const show = (r: JournalRecord | undefined) => (r ? `#${r.sequence} ${r.type} ${JSON.stringify(r.data)}` : "(none)");

/** Rules every journal must keep, whatever the scenario. Returns the first violation. */
export function invariantViolation(records: JournalRecord[]): string | undefined {
  for (const [i, r] of records.entries()) {
    const found = issues("JournalRecord", r);
    if (found.length) return `record ${show(r)} does not match the schema: ${found[0]!.path} ${found[0]!.message}`;
    if (r.sequence !== i + 1) return `sequence gap: expected ${i + 1}, got ${show(r)}`;
  }
  for (const call of groupCalls(records)) {
    const finished = call.records.filter((r) => r.type === "tool.finished");
    if (finished.length > 1) return `call ${call.callId} has ${finished.length} tool.finished records: ${show(finished[1])}`;
    const last = call.records.at(-1);
    if (finished.length === 1 && last !== finished[0]) return `record after tool.finished: ${show(last)}`;
  }
  return undefined;
}

/** Compares one scenario's expectation with the journal. Returns the first difference. */
export function firstDifference(s: Scenario, records: JournalRecord[]): string | undefined {
  const broken = invariantViolation(records);
  if (broken) return broken;
  const turnEnds = records.filter((r) => r.type === "turn.completed" || r.type === "turn.failed");
  const firstEnd = turnEnds[0];
  const wantEnd = `turn.${s.expect.turn}`;
  if (firstEnd?.type !== wantEnd) return `expected ${wantEnd}, got ${show(firstEnd)}`;
  if (s.expect.turnError !== undefined) {
    const error = (firstEnd.type === "turn.failed" ? firstEnd.data.error : undefined) as Record<string, unknown> | undefined;
    for (const [key, value] of Object.entries(s.expect.turnError)) {
      if (!isDeepStrictEqual(error?.[key], value)) return `expected the turn's error.${key} = ${JSON.stringify(value)}, got ${show(firstEnd)}`;
    }
  }
  const calls = groupCalls(records);
  if (calls.length !== s.expect.calls.length) {
    return `expected ${s.expect.calls.length} call(s), got ${calls.length}: ${calls.map((c) => c.tool).join(", ")}`;
  }
  for (const [i, want] of s.expect.calls.entries()) {
    const got = calls[i]!;
    const diff = callDifference(want, got);
    if (diff) return `call ${i + 1} (${want.tool}): ${diff}`;
  }
  return undefined;
}

function callDifference(want: ExpectedCall, got: CallRecords): string | undefined {
  if (got.tool !== want.tool) return `expected tool ${want.tool}, got ${got.tool}`;
  const types = got.records.map((r) => r.type);
  if (want.trace && !isDeepStrictEqual(types, want.trace)) {
    const at = want.trace.findIndex((t, k) => types[k] !== t);
    const k = at === -1 ? want.trace.length : at;
    return `trace differs at position ${k + 1}: expected ${want.trace[k] ?? "(end)"}, got ${show(got.records[k])}`;
  }
  const finished = got.records.find((r) => r.type === "tool.finished");
  if (finished?.type !== "tool.finished") return `no tool.finished (records: ${types.join(", ")})`;
  if (finished.data.status !== want.status) return `expected status ${want.status}, got ${show(finished)}`;
  if (want.error) {
    const error = finished.data.error as Record<string, unknown> | undefined;
    for (const [key, value] of Object.entries(want.error)) {
      if (!isDeepStrictEqual(error?.[key], value)) return `expected error.${key} = ${JSON.stringify(value)}, got ${show(finished)}`;
    }
  }
  const results = got.records.filter((r) => r.type === "tool.result");
  if (want.results) {
    const outcomes = results.map((r) => (r.type === "tool.result" ? r.data.outcome : undefined));
    for (const [k, outcome] of want.results.entries()) {
      if (!isDeepStrictEqual(outcomes[k], outcome)) return `result ${k + 1}: expected ${JSON.stringify(outcome)}, got ${show(results[k])}`;
    }
    if (outcomes.length !== want.results.length) return `expected ${want.results.length} result(s), got ${outcomes.length}`;
  }
  if (want.content !== undefined) {
    const last = results.at(-1);
    const content = last?.type === "tool.result" ? last.data.content : undefined;
    if (content !== want.content) return `expected content ${JSON.stringify(want.content)}, got ${show(last)}`;
  }
  if (want.modelCalls !== undefined) {
    const diff = modelCallDifference(want.modelCalls, got, finished.sequence);
    if (diff) return diff;
  }
  if (want.environmentRequests !== undefined) {
    const diff = environmentDifference(want.environmentRequests, got, finished.sequence);
    if (diff) return diff;
  }
  if (want.emitSequencesInResult) {
    const last = results.at(-1);
    const outcome = last?.type === "tool.result" ? last.data.outcome : undefined;
    const claimed = outcome?.status === "ok" ? (outcome.value as Record<string, unknown>)?.[want.emitSequencesInResult] : undefined;
    const events = got.records.filter((r) => r.type === "tool.event").map((r) => r.sequence);
    if (!isDeepStrictEqual(claimed, events)) return `await emit returned ${JSON.stringify(claimed)}, but the journal has events at ${JSON.stringify(events)}`;
    if (last && events.some((seq) => seq > last.sequence)) return `an event was committed after the result ${show(last)}`;
  }
  return undefined;
}

/** ctx.environments operations of one call: how many, and each answered (by `request`) before the call finished. */
function environmentDifference(want: number, got: CallRecords, finishedAt: number): string | undefined {
  const requests = got.model.filter((r) => r.type === "environment.request");
  if (requests.length !== want) return `expected ${want} environment.request record(s) with origin ${got.callId}, got ${requests.length}`;
  for (const req of requests) {
    const answer = got.model.find((r) => r.type === "environment.response" && r.data.request === req.sequence);
    if (answer === undefined) return `environment.request ${show(req)} has no environment.response naming it`;
    if (answer.sequence > finishedAt) return `environment.response ${show(answer)} was committed after the call's tool.finished`;
  }
  return undefined;
}

/** ctx.model requests of one call: how many, and each answered (by `request`) before the call finished. */
function modelCallDifference(want: number, got: CallRecords, finishedAt: number): string | undefined {
  const requests = got.model.filter((r) => r.type === "model.request");
  if (requests.length !== want) return `expected ${want} model.request record(s) with origin ${got.callId}, got ${requests.length}`;
  for (const req of requests) {
    const answer = got.model.find((r) => r.type === "model.response" && r.data.request === req.sequence);
    if (answer === undefined) return `model.request ${show(req)} has no model.response naming it`;
    if (answer.sequence > finishedAt) return `model.response ${show(answer)} was committed after the call's tool.finished`;
  }
  return undefined;
}
