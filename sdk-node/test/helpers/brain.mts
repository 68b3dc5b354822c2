// Shared by the integration tests: a real runtime (memory journal, scripted model), the Node SDK
// client bound to it, and journal polling.
import { startBrain } from "@aexhq/brain-runtime";
import type { JournalRecord, ScriptStep, ScriptedToolCall, ToolFinishedRecord, ToolResultRecord } from "@aexhq/brain-protocol";
import { Brain, type Session } from "../../src/index.ts";

export type Runtime = Awaited<ReturnType<typeof startBrain>>;

export function memoryRuntime(): Promise<Runtime> {
  return startBrain({ dataDir: ":memory:", port: 0 });
}

export function scripted(...steps: ScriptStep[]): { provider: "scripted"; script: ScriptStep[] } {
  return { provider: "scripted", script: steps };
}

/** A script that calls `calls` in one step, then answers `text` (and has spare answers for wakes). */
export function callThenAnswer(calls: ScriptedToolCall[], text = "done", spare = 3) {
  return scripted({ toolCalls: calls }, { text }, ...Array.from({ length: spare }, (_, i) => ({ text: `${text} (wake ${i + 1})` })));
}

export async function records(session: Session): Promise<JournalRecord[]> {
  const out: JournalRecord[] = [];
  for await (const r of session.events()) out.push(r);
  return out;
}

/** Polls the journal until `pred` holds for some record; returns all records then. */
export async function waitFor(session: Session, pred: (r: JournalRecord) => boolean, timeoutMs = 5000): Promise<JournalRecord[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const all = await records(session);
    if (all.some(pred)) return all;
    if (Date.now() > until) throw new Error(`timed out waiting; journal: ${summary(all)}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

export function summary(all: JournalRecord[]): string {
  return all.map((r) => `${r.sequence}:${r.type}${"status" in r.data ? `(${String((r.data as { status: unknown }).status)})` : ""}`).join(" ");
}

export const isFinished = (r: JournalRecord): r is ToolFinishedRecord => r.type === "tool.finished";
export const isResult = (r: JournalRecord): r is ToolResultRecord => r.type === "tool.result";

export function finished(all: JournalRecord[]): ToolFinishedRecord[] {
  return all.filter(isFinished);
}
export function results(all: JournalRecord[]): ToolResultRecord[] {
  return all.filter(isResult);
}

/** Runs `body` with a runtime and a Brain client, closing both whatever happens. */
export async function withBrain<T>(body: (brain: Brain, runtime: Runtime) => Promise<T>, opts: { url?: (runtime: Runtime) => string } = {}): Promise<T> {
  const runtime = await memoryRuntime();
  const brain = new Brain({ url: opts.url ? opts.url(runtime) : runtime.url, token: runtime.token });
  try {
    return await body(brain, runtime);
  } finally {
    await brain.close();
    await runtime.close();
  }
}

export function deferred<T = void>(): { promise: Promise<T>; resolve(v: T): void; reject(e: unknown): void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((a, b) => { resolve = a; reject = b; });
  return { promise, resolve, reject };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The records of one call (by callId), in journal order. */
export function ofCall(all: JournalRecord[], callId: string): JournalRecord[] {
  return all.filter((r) => (r.data as { callId?: string }).callId === callId);
}

/** Call ids of the tool.call_started records, in order. */
export function callIds(all: JournalRecord[]): string[] {
  return all.flatMap((r) => (r.type === "tool.call_started" ? [r.data.callId] : []));
}

/** Creates a session whose scripted model makes `calls` in one step, sends one message, returns the journal. */
export async function runStep(brain: Brain, tools: Parameters<Brain["sessions"]["create"]>[0]["tools"], calls: ScriptedToolCall[], opts: { deadlineMs?: number } = {}) {
  const session = await brain.sessions.create({ model: callThenAnswer(calls), tools, ...opts });
  const answer = await session.send("go");
  const all = await records(session);
  return { session, answer, all, ids: callIds(all) };
}

/** POSTs a message straight to the runtime (bypassing any proxy), waiting for the turn to end. */
export async function sendDirect(runtime: Runtime, sessionId: string, text: string): Promise<{ status: string; text?: string; error?: unknown }> {
  const res = await fetch(`${runtime.url}/v1/sessions/${sessionId}/messages`, { method: "POST", headers: { authorization: `Bearer ${runtime.token}`, "content-type": "application/json" }, body: JSON.stringify({ text, wait: true }) });
  if (res.status !== 200) throw new Error(`send: ${res.status} ${await res.text()}`);
  return (await res.json()) as { status: string; text?: string };
}

/** Waits until the runtime reports the host connected (GET /v1/hosts/:id with the operator token). */
export async function waitConnected(runtime: Runtime, hostId: string, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${runtime.url}/v1/hosts/${encodeURIComponent(hostId)}`, { headers: { authorization: `Bearer ${runtime.token}` } });
    if (res.status === 200 && ((await res.json()) as { connected: boolean }).connected) return;
    else if (res.status !== 200) await res.body?.cancel();
    if (Date.now() > until) throw new Error(`host ${hostId} did not connect`);
    await sleep(20);
  }
}
