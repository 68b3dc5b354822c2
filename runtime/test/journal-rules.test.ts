// The journal's rules (what is open, what awaits a person, what is an observation, which turn of its
// activation a turn is and what woke it) live in one module, src/journal/journal-rules.js: the
// runtime's SessionState folds records with it, and /ui serves the same file to the page
// (/ui/assets/journal-rules.js). These tests hold the page and the runtime to the same answers: the
// bytes served are the module the runtime imports, and the module the page loads (imported here
// from the bytes /ui served) answers as SessionState does on the same journals.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { SessionState } from "../src/journal/session.ts";
import { JournalRules, wokenByText } from "../src/journal/journal-rules.js";
import type { JournalStore } from "../src/journal/store.ts";
import { memoryBrain } from "./helpers/brain.ts";

const SOURCE = new URL("../src/journal/journal-rules.js", import.meta.url);
const S = "ses_0123456789abcdef";
let at = 1_000;
/** A journal from its records' types and data, sequences from 1. */
const journal = (...rs: Array<[string, Record<string, unknown>]>): JournalRecord[] => rs.map(([type, data], i) => ({ sessionId: S, sequence: i + 1, at: at++, type, data }) as unknown as JournalRecord);
const call = (seq: number) => `${S}:${seq}`;
const created: [string, Record<string, unknown>] = ["session.created", { model: { provider: "scripted", script: [] }, tools: [] }];

/** Journals that exercise each rule: approvals, nested calls, results, finishes without a result, wakes, the model fed part of the way. */
const JOURNALS: Record<string, JournalRecord[]> = {
  "a call awaiting approval, another finished with its result, a wake by a call that ended unknown": journal(
    created,
    ["message.user", { activation: 1, text: "pay" }],
    ["turn.started", { activation: 1, cause: "message" }],
    ["model.request", { conversation: { through: 3 } }],
    ["model.response", { request: 4, result: { text: "", toolCalls: [] } }],
    ["tool.call_started", { callId: call(6), tool: "transfer", modelCallId: "m1", activation: 1, input: {}, placement: { kind: "host", hostId: "h" }, approval: { inputDigest: "d" } }],
    ["tool.call_started", { callId: call(7), tool: "lookup", modelCallId: "m2", activation: 1, input: {}, placement: { kind: "host", hostId: "h" } }],
    ["tool.result", { callId: call(7), outcome: { status: "ok", data: 1 } }],
    ["tool.finished", { callId: call(7), status: "ok" }],
    ["model.request", { conversation: { through: 9 } }],
    ["model.response", { request: 10, result: { text: "waiting" } }],
    ["turn.completed", { activation: 1, text: "waiting" }],
    ["tool.finished", { callId: call(6), status: "unknown" }],
    ["turn.started", { activation: 1, cause: "wake" }],
  ),
  "a nested call's result is no observation; a finish without a result is; a new message starts the count again": journal(
    created,
    ["message.user", { activation: 1, text: "go" }],
    ["turn.started", { activation: 1, cause: "message" }],
    ["model.request", { conversation: { through: 3 } }],
    ["tool.call_started", { callId: call(5), tool: "outer", modelCallId: "m1", activation: 1, input: {}, placement: { kind: "host", hostId: "h" } }],
    ["tool.call_started", { callId: call(6), tool: "inner", origin: call(5), activation: 1, input: {}, placement: { kind: "host", hostId: "h" } }],
    ["tool.result", { callId: call(6), outcome: { status: "ok", data: 1 } }],
    ["tool.finished", { callId: call(6), status: "ok" }],
    ["tool.returned", { callId: call(5) }],
    ["turn.completed", { activation: 1, text: "later" }],
    ["tool.finished", { callId: call(5), status: "ok" }],
    ["turn.started", { activation: 1, cause: "wake" }],
    ["model.request", { conversation: { through: 12 } }],
    ["turn.completed", { activation: 1, text: "done" }],
    ["message.user", { activation: 2, text: "again" }],
    ["turn.started", { activation: 2, cause: "message" }],
  ),
  "observations after what the model read wake it; those it read do not": journal(
    created,
    ["message.user", { activation: 1, text: "go" }],
    ["turn.started", { activation: 1, cause: "message" }],
    ["tool.call_started", { callId: call(4), tool: "a", modelCallId: "m1", activation: 1, input: {}, placement: { kind: "host", hostId: "h" } }],
    ["tool.call_started", { callId: call(5), tool: "b", modelCallId: "m2", activation: 1, input: {}, placement: { kind: "host", hostId: "h" } }],
    ["tool.result", { callId: call(4), outcome: { status: "ok", data: 1 } }],
    ["model.request", { conversation: { through: 6 } }],
    ["tool.finished", { callId: call(5), status: "timeout" }],
    ["turn.completed", { activation: 1, text: "x" }],
    ["turn.started", { activation: 1, cause: "wake" }],
  ),
};

/** What a fold answers: the open calls, the calls awaiting a person, the last observation. */
function answers(open: Iterable<string>, pending: Iterable<string>, last: number) {
  return { open: [...open].sort(), pending: [...pending].sort(), last };
}

/** The page's module, imported from the bytes /ui serves (as the browser does). */
async function served(): Promise<{ text: string; mod: { JournalRules: typeof JournalRules; wokenByText: typeof wokenByText } }> {
  const brain = await memoryBrain();
  try {
    const res = await fetch(`${brain.url}/ui/assets/journal-rules.js`);
    assert.is(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/javascript/);
    const text = await res.text();
    return { text, mod: await import(`data:text/javascript;base64,${Buffer.from(text).toString("base64")}`) };
  } finally {
    await brain.close();
  }
}

test("/ui serves the very module the runtime's SessionState folds records with", async () => {
  const { text } = await served();
  assert.is(text, readFileSync(SOURCE, "utf8"));
  const state = SessionState.fromRecords(S, JOURNALS[Object.keys(JOURNALS)[0]!]!, {} as JournalStore);
  assert.ok(state.rules instanceof JournalRules, "SessionState keeps its open calls and observations in a JournalRules");
});

test("the page's module (as served) and the runtime's SessionState give the same answers on the same journals", async () => {
  const { mod } = await served();
  for (const [name, records] of Object.entries(JOURNALS)) {
    const page = new mod.JournalRules();
    for (const r of records) page.observe(r);
    const runtime = SessionState.fromRecords(S, records, {} as JournalStore);
    assert.equal(answers(page.openCalls, page.pendingApprovals, page.lastObservation), answers(runtime.openCalls, runtime.pendingApprovals, runtime.lastObservation), name);
  }
});

test("what is open, what awaits approval, and what woke each wake turn", async () => {
  const { mod } = await served();
  const fold = (records: JournalRecord[]) => {
    const rules = new mod.JournalRules();
    const tools = new Map<string, string>();
    const turns: string[] = [];
    for (const r of records) {
      if (r.type === "tool.call_started") tools.set(r.data.callId, r.data.tool);
      const t = rules.observe(r);
      if (t !== undefined) turns.push(`${t.activation}.${t.index}${t.wake ? ` ${mod.wokenByText(t, (id) => tools.get(id) ?? id)}` : ""}`);
    }
    return { rules, turns };
  };
  const [first, second, third] = Object.values(JOURNALS).map(fold);
  // The approval-gated call ended unknown with no result: it is what woke the turn (not lookup's
  // result, which the model read at #10).
  assert.equal(first!.turns, ["1.1", "1.2 woken by transfer ending unknown"]);
  assert.equal([...first!.rules.openCalls], []);
  assert.equal([...first!.rules.pendingApprovals], []);
  assert.is(first!.rules.turnOpen, true);
  const stillWaiting = new mod.JournalRules();
  for (const r of JOURNALS[Object.keys(JOURNALS)[0]!]!.slice(0, 11)) stillWaiting.observe(r);
  assert.equal([...stillWaiting.pendingApprovals], [call(6)]);
  assert.equal([...stillWaiting.openCalls], [call(6)]);
  // The nested call's result woke nothing; the outer call finishing without a result did. A new
  // message's turn is its activation's first.
  assert.equal(second!.turns, ["1.1", "1.2 woken by outer finishing without a result", "2.1"]);
  assert.is(second!.rules.lastObservation, 11);
  // The model read a's result (through #6); b's timeout came after.
  assert.equal(third!.turns, ["1.1", "1.2 woken by b ending timeout"]);
});

test("journal-rules.d.ts (what TypeScript code of every workspace reads) is what tsc declares from journal-rules.js: run `npm run rules:types -w runtime` after a change", () => {
  const out = mkdtempSync(join(tmpdir(), "brain-rules-types-"));
  try {
    const tsc = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url));
    const r = spawnSync(process.execPath, [tsc, fileURLToPath(SOURCE), "--allowJs", "--declaration", "--emitDeclarationOnly", "--target", "es2022", "--module", "nodenext", "--strict", "--outDir", out], { encoding: "utf8" });
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.is(readFileSync(new URL("../src/journal/journal-rules.d.ts", import.meta.url), "utf8"), readFileSync(join(out, "journal-rules.d.ts"), "utf8"));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test.run();
