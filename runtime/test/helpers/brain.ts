import { validate, issues } from "@aexhq/brain-protocol";
import type { JournalRecord, PlacedTool, ScriptStep, Session } from "@aexhq/brain-protocol";
import { startBrain } from "../../src/index.ts";
import type { BrainOptions } from "../../src/index.ts";

export type Brain = Awaited<ReturnType<typeof startBrain>>;

export function memoryBrain(opts: BrainOptions = {}): Promise<Brain> {
  return startBrain({ dataDir: ":memory:", port: 0, ...opts });
}

export interface Reply {
  status: number;
  body: any;
}

/** One HTTP call with the operator token (or `token`), body as JSON (or `raw` text). */
export async function api(brain: { url: string; token: string }, method: string, path: string, body?: unknown, opts: { token?: string | null; raw?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  const token = opts.token === undefined ? brain.token : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let payload: string | undefined = opts.raw;
  if (payload === undefined && body !== undefined) payload = JSON.stringify(body);
  if (payload !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(brain.url + path, { method, headers, body: payload });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed };
}

export async function createSession(brain: Brain, tools: PlacedTool[], script: ScriptStep[], extra: { deadlineMs?: number; system?: string } = {}): Promise<Session> {
  const r = await api(brain, "POST", "/v1/sessions", { model: { provider: "scripted", script }, tools, ...extra });
  if (r.status !== 201) throw new Error(`create session: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as Session;
}

/** The session's records after `after`; `expand` asks for the Agentloop's requests rebuilt (`expand=requests`). */
export async function records(brain: Brain, sessionId: string, after = 0, opts: { expand?: boolean } = {}): Promise<JournalRecord[]> {
  const r = await api(brain, "GET", `/v1/sessions/${sessionId}/events?after=${after}${opts.expand ? "&expand=requests" : ""}`);
  if (r.status !== 200) throw new Error(`events: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.records as JournalRecord[];
}

/** Polls the journal until `pred` holds for some record; returns all records then. */
export async function waitFor(brain: Brain, sessionId: string, pred: (r: JournalRecord, all: JournalRecord[]) => boolean, timeoutMs = 5000): Promise<JournalRecord[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const all = await records(brain, sessionId);
    if (all.some((r) => pred(r, all))) return all;
    if (Date.now() > until) throw new Error(`timed out; journal: ${all.map((r) => `${r.sequence}:${r.type}${"status" in r.data ? `(${(r.data as { status: string }).status})` : ""}`).join(" ")}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

/** Asserts every record matches the contract and sequences are gap-free from 1. */
export function assertJournal(all: JournalRecord[]): void {
  all.forEach((r, i) => {
    if (!validate.JournalRecord.Check(r as unknown)) throw new Error(`record ${(r as JournalRecord).sequence} (${(r as JournalRecord).type}) invalid: ${JSON.stringify(issues("JournalRecord", r))}`);
    if (r.sequence !== i + 1) throw new Error(`sequence gap at index ${i}: ${r.sequence}`);
  });
}

export function ofType<T extends JournalRecord["type"]>(all: JournalRecord[], type: T): Extract<JournalRecord, { type: T }>[] {
  return all.filter((r) => r.type === type) as Extract<JournalRecord, { type: T }>[];
}

export function finishedOf(all: JournalRecord[], callId: string) {
  return ofType(all, "tool.finished").filter((r) => r.data.callId === callId);
}
