// The promises a verification run checks, from what the clients saw (the ledger) and what the
// journal holds: shared by the crash loop of several nodes (cluster-crash.test.ts) and the
// verification runner (verify/run.ts). Pure: it reads the journals and the ledger, it starts nothing.
// - every journal is valid against the contract and gap-free from 1;
// - every call started ends with exactly one tool.finished (ok / error / unknown, or a `cancelled` /
//   `timeout` the run itself asked for), nothing of a call follows it, turns do not overlap;
// - what the journal says a host did, the host did: each event and result is a frame a host sent,
//   once; an ok end is a host's finish;
// - every acknowledgement a host got (`committed` with a sequence) is that record at that sequence;
// - every invoke a host got is a journaled call placed on that host, and no call was invoked twice;
// - every 201 (a session) and 202 (a message) the HTTP clients got is in the journal as answered.
import { isDeepStrictEqual } from "node:util";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { assertJournal } from "../helpers/brain.ts";
import { ERROR_CODE, nonceOf } from "../helpers/crash-host.ts";
import type { Invoked, Sent } from "../helpers/crash-host.ts";

/** A session as its HTTP client saw it: the 201 that created it and the 202s of its messages. */
export interface SessionLedger {
  id: string;
  hostId: string;
  createdVia: string;
  /** 202 answers: the message.user record each acknowledged. */
  messages: Array<{ sequence: number; activation: number; text: string; via: string }>;
  attempts: number;
}

export interface LedgerInput {
  /** Each session's whole journal as served. */
  journals: Map<string, JournalRecord[]>;
  sessions: SessionLedger[];
  sent: Sent[];
  invokes: Invoked[];
  /** Call ends the run asked for besides the hosts' (a cancel through the API, a deadline it set). */
  allowedEnds?: string[];
}

export interface LedgerFindings {
  violations: string[];
  callsStarted: number;
  /** Call ends by status (`error/<code>` for errors). */
  ends: Map<string, number>;
}

const count = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

export function checkLedger(input: LedgerInput): LedgerFindings {
  const violations: string[] = [];
  const violate = (s: string) => violations.push(s);
  const ends = new Map<string, number>();
  const allowed = new Set(["ok", "error", "unknown", ...(input.allowedEnds ?? [])]);
  let callsStarted = 0;
  const sentByCall = new Map<string, Sent[]>();
  for (const x of input.sent) sentByCall.set(x.callId, [...(sentByCall.get(x.callId) ?? []), x]);
  const invokesByCall = new Map<string, Invoked[]>();
  for (const x of input.invokes) invokesByCall.set(x.callId, [...(invokesByCall.get(x.callId) ?? []), x]);
  for (const [callId, list] of invokesByCall) {
    if (list.length > 1) violate(`call ${callId} was invoked ${list.length} times: ${JSON.stringify(list)}`);
  }

  for (const [id, all] of input.journals) {
    const where = `session ${id}`;
    try {
      assertJournal(all);
    } catch (e) {
      violate(`${where}: ${(e as Error).message}`);
    }
    // By sequence, not position: one gap must not make every later acknowledgement look lost.
    const bySequence = new Map(all.map((r) => [r.sequence, r]));
    const at = (seq: number) => bySequence.get(seq);

    // Calls: exactly one tool.finished each, nothing after it, nothing for a call never started.
    const startedCalls = new Map<string, JournalRecord>();
    const finished = new Map<string, JournalRecord>();
    let turnOpen: JournalRecord | undefined;
    for (const r of all) {
      const d = r.data as any;
      if (r.type === "tool.call_started") {
        startedCalls.set(d.callId, r);
        callsStarted++;
        if (d.callId !== `${id}:${r.sequence}`) violate(`${where}: call_started at ${r.sequence} has callId ${d.callId}`);
        continue;
      }
      if (r.type === "turn.started") {
        if (turnOpen !== undefined) violate(`${where}: turn.started at ${r.sequence} while the turn started at ${turnOpen.sequence} never ended`);
        turnOpen = r;
      } else if (r.type === "turn.completed" || r.type === "turn.failed") {
        if (turnOpen === undefined) violate(`${where}: ${r.type} at ${r.sequence} ends no open turn (a second end?)`);
        turnOpen = undefined;
      }
      if (!r.type.startsWith("tool.")) continue;
      const callId = d.callId as string;
      if (!startedCalls.has(callId)) violate(`${where}: ${r.type} at ${r.sequence} for call ${callId}, not started before it`);
      const end = finished.get(callId);
      if (end !== undefined) violate(`${where}: ${r.type} at ${r.sequence} for call ${callId}, already finished at ${end.sequence} (${(end.data as any).status})`);
      if (r.type === "tool.finished") {
        if (end === undefined) finished.set(callId, r);
        count(ends, d.status === "error" ? `error/${d.error?.code}` : d.status);
        if (!allowed.has(d.status)) violate(`${where}: call ${callId} finished ${d.status} at ${r.sequence}: ${JSON.stringify(d)}`);
      }
    }
    if (turnOpen !== undefined) violate(`${where}: the turn started at ${turnOpen.sequence} never ended`);
    for (const callId of startedCalls.keys()) if (!finished.has(callId)) violate(`${where}: call ${callId} has no tool.finished (journal ends at ${all.length})`);

    // What the journal says the hosts did, they did: each event/result is a frame a host sent (once);
    // an ok end is a host's finish; an error the hosts make is one a host sent.
    const seen = new Map<string, number>();
    for (const r of all) {
      const d = r.data as any;
      if (r.type !== "tool.event" && r.type !== "tool.result" && r.type !== "tool.finished") continue;
      const sent = sentByCall.get(d.callId) ?? [];
      if (r.type === "tool.finished") {
        if (d.status === "ok" && !sent.some((x) => x.frame.type === "finish" && (x.frame.outcome === undefined || x.frame.outcome.status === "ok")))
          violate(`${where}: call ${d.callId} finished ok at ${r.sequence}, but no host sent a finish for it`);
        if (d.status === "error" && d.error?.code === ERROR_CODE && !sent.some((x) => x.nonce === d.error.message)) violate(`${where}: call ${d.callId} finished with an error no host sent: ${JSON.stringify(d)}`);
        if (d.status === "error" && ["host_unavailable", "reattach_mismatch"].includes(d.error?.code) && invokesByCall.has(d.callId))
          violate(`${where}: call ${d.callId} journaled as never sent (${d.error.code}) but a host received it: ${JSON.stringify(invokesByCall.get(d.callId))}`);
        continue;
      }
      const nonce = nonceOf(d);
      const match = sent.find((x) => nonce !== undefined && x.nonce === nonce);
      if (match === undefined) violate(`${where}: ${r.type} at ${r.sequence} for ${d.callId} matches no frame a host sent: ${JSON.stringify(d)}`);
      else if (r.type === "tool.event" ? !isDeepStrictEqual({ callId: d.callId, kind: d.kind, data: d.data }, { callId: match.callId, kind: match.frame.kind, data: match.frame.data }) : !isDeepStrictEqual(d.outcome, match.frame.outcome) || d.content !== match.frame.content)
        violate(`${where}: ${r.type} at ${r.sequence} differs from the frame sent: ${JSON.stringify(d)} vs ${JSON.stringify(match.frame)}`);
      if (nonce !== undefined) {
        if (seen.has(nonce)) violate(`${where}: the frame with nonce ${nonce} is journaled twice, at ${seen.get(nonce)} and ${r.sequence}`);
        seen.set(nonce, r.sequence);
      }
    }

    // Every acknowledgement a host got for this session's calls: that record at that sequence.
    for (const x of input.sent) {
      if (!x.callId.startsWith(`${id}:`) || x.answer?.type !== "committed") continue;
      const seq = x.answer.sequence;
      const r = at(seq);
      const d = r?.data as any;
      const got = r === undefined ? `nothing at ${seq} (${all.length} records, the last at ${all.at(-1)?.sequence})` : `${r.type} ${JSON.stringify(r.data)}`;
      const f = x.frame;
      let ok: boolean;
      if (f.type === "emit") ok = r?.type === "tool.event" && isDeepStrictEqual(d, { callId: x.callId, kind: f.kind, data: f.data });
      else if (f.type === "emit_result") ok = r?.type === "tool.result" && isDeepStrictEqual(d, { callId: x.callId, outcome: f.outcome, ...(f.content === undefined ? {} : { content: f.content }) });
      else {
        ok = r?.type === "tool.finished" && d.callId === x.callId && d.status === (f.outcome?.status ?? "ok");
        if (ok && f.outcome !== undefined && !all.some((y) => y.type === "tool.result" && y.sequence < seq && isDeepStrictEqual((y.data as any).outcome, f.outcome))) ok = false;
      }
      if (!ok) violate(`${where}: ${x.hostId} (connection ${x.conn}) got committed ${seq} for ${f.type} ${JSON.stringify(f)}; the journal has ${got}`);
    }

    // Every invoke a host got is a journaled call placed on that host, with that input.
    for (const inv of input.invokes) {
      if (!inv.callId.startsWith(`${id}:`)) continue;
      const s = startedCalls.get(inv.callId);
      if (s === undefined) violate(`${where}: ${inv.hostId} was invoked for ${inv.callId}, which the journal never started`);
      else {
        const d = s.data as any;
        if (d.placement?.hostId !== inv.hostId) violate(`${where}: call ${inv.callId} is placed on ${d.placement?.hostId} but was invoked on ${inv.hostId}`);
        if (!isDeepStrictEqual(d.input, inv.input)) violate(`${where}: call ${inv.callId} was invoked with ${JSON.stringify(inv.input)}, journaled with ${JSON.stringify(d.input)}`);
      }
    }

    // HTTP acknowledgements: the session exists as created; each 202's message.user is at its sequence.
    const load = input.sessions.find((s) => s.id === id);
    if (load !== undefined) {
      const first = at(1);
      if (first?.type !== "session.created" || (first.data as any).tools?.[0]?.placement?.hostId !== load.hostId) violate(`${where}: record 1 is not its session.created on ${load.hostId}: ${JSON.stringify(first)}`);
      for (const m of load.messages) {
        const r = at(m.sequence);
        if (r?.type !== "message.user" || (r.data as any).text !== m.text || (r.data as any).activation !== m.activation)
          violate(`${where}: 202 through ${m.via} said message.user "${m.text}" (activation ${m.activation}) at ${m.sequence}; the journal has ${r === undefined ? "nothing there" : `${r.type} ${JSON.stringify(r.data)}`}`);
      }
    }
  }
  for (const s of input.sessions) if (!input.journals.has(s.id)) violate(`session ${s.id} (201 through ${s.createdVia}) was not read back`);
  return { violations, callsStarted, ends };
}

/** A record in a few characters, for the journal excerpts a failure prints. */
export const shortRecord = (r: JournalRecord) => `${r.sequence}:${r.type}${"callId" in r.data ? `[${String((r.data as { callId: string }).callId).split(":")[1]}]` : ""}${"status" in r.data ? `(${(r.data as { status: string }).status})` : ""}`;

/** The journal around the first sequence a violation names (else its end), in short form. */
export function journalExcerpt(violation: string, journals: Map<string, JournalRecord[]>): string {
  const id = /(ses_[0-9a-f]+)/.exec(violation)?.[1];
  const all = id === undefined ? undefined : journals.get(id);
  if (all === undefined) return "";
  const seq = Number(/ at (\d+)/.exec(violation)?.[1] ?? all.length);
  const i = Math.max(0, all.findIndex((r) => r.sequence >= seq));
  const window = all.slice(Math.max(0, i - 60), i + 60);
  return `\n      journal (records ${window[0]?.sequence}..${window.at(-1)?.sequence} of ${all.length}): ${window.map(shortRecord).join(" ")}`;
}
