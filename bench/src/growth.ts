// Section 7: bytes journaled per turn as a session ages. One session (scripted model, Node SDK host,
// the SQLite journal an operator runs), one tool call per turn; a turn's bytes are the JSON length
// of the records from its message.user up to the next one, read back through GET /events.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Brain } from "@aexhq/brain";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { startBrain } from "@aexhq/brain-runtime";
import type { BenchConfig } from "./config.ts";
import { sdkEcho } from "./fixture.ts";
import { figure } from "./report.ts";
import type { Section } from "./report.ts";
import { now, round } from "./stats.ts";

export const EARLY_TURN = 10;

/** Splits a session's records into turns: each turn starts at a message.user record (index 0 = turn 1). */
export function turnsOf(records: JournalRecord[]): JournalRecord[][] {
  const turns: JournalRecord[][] = [];
  for (const r of records) {
    if (r.type === "message.user") turns.push([]);
    if (turns.length > 0) turns[turns.length - 1]!.push(r);
  }
  return turns;
}

const bytes = (rs: JournalRecord[]) => rs.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r)), 0);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]!;
}

export async function journalGrowth(cfg: BenchConfig, log: (s: string) => void): Promise<Section> {
  const late = cfg.growthTurns;
  const total = late + 5;
  log(`  journal growth: one session, ${total} turns`);
  const s: Section = { id: "7", title: `7. Journal growth (one session, one tool call per turn, SQLite journal, Node SDK host)`, figures: [], notes: [] };
  const dir = mkdtempSync(join(tmpdir(), "brain-bench-growth-"));
  const brain = await startBrain({ dataDir: dir, port: 0 });
  const client = new Brain({ url: brain.url, token: brain.token });
  try {
    // One script step per model call: the call that asks for the tool, then the one that answers.
    const script = Array.from({ length: total }, () => [{ toolCalls: [{ name: "echo", input: { x: 1 } }] }, { text: "done" }]).flat();
    // A warm-up session first (JIT, the journal's first pages), so the early turns' times are not cold-start times.
    const warm = await client.sessions.create({ model: { provider: "scripted", script: script.slice(0, 40) }, tools: [sdkEcho()] });
    for (let i = 0; i < 20; i++) await warm.send("warm up");
    const session = await client.sessions.create({ model: { provider: "scripted", script }, tools: [sdkEcho()] });
    const times: number[] = [];
    for (let i = 1; i <= total; i++) {
      const t = now();
      await session.send(`turn ${i}`);
      times.push((now() - t) / 1e6);
    }
    const res = await fetch(`${brain.url}/v1/sessions/${session.id}/events`, { headers: { authorization: `Bearer ${brain.token}` } });
    if (!res.ok) throw new Error(`events: ${res.status} ${await res.text()}`);
    const { records } = (await res.json()) as { records: JournalRecord[] };
    const turns = turnsOf(records);
    if (turns.length !== total) throw new Error(`expected ${total} turns in the journal, found ${turns.length}`);
    const early = bytes(turns[EARLY_TURN - 1]!);
    const lateBytes = bytes(turns[late - 1]!);
    s.figures.push(figure(`bytes journaled in turn ${EARLY_TURN}`, early, "B"));
    s.figures.push(figure(`bytes journaled in turn ${late}`, lateBytes, "B", { name: `turn ${EARLY_TURN}`, value: early }, { text: `turn ${late} / turn ${EARLY_TURN} bytes ≤ 1.5`, pass: lateBytes <= 1.5 * early }));
    // Where the bytes of the late turn are, by record type.
    const byType = new Map<string, number>();
    for (const r of turns[late - 1]!) byType.set(r.type, (byType.get(r.type) ?? 0) + Buffer.byteLength(JSON.stringify(r)));
    const top = [...byType].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([t, b]) => `${t} ${b} B`).join(", ");
    s.notes.push(`turn ${late}: ${turns[late - 1]!.length} records (turn ${EARLY_TURN}: ${turns[EARLY_TURN - 1]!.length}); largest by type: ${top}; whole journal ${records.length} records, ${round(bytes(records) / 1024, 0)} KiB for ${total} turns`);
    // Time per turn beside it (not a goal): the median of five turns around each.
    const around = (t: number) => median(times.slice(Math.max(0, t - 3), t + 2));
    s.figures.push(figure(`whole turn time around turn ${late} (median of 5)`, round(around(late), 2), "ms", { name: `around turn ${EARLY_TURN}`, value: round(around(EARLY_TURN), 2) }));
    s.notes.push("bytes = UTF-8 length of JSON.stringify of each record (envelope included) as GET /v1/sessions/:id/events returns it (no expand=requests: model.request as journaled), from the turn's message.user up to the next one");
  } finally {
    await client.close();
    await brain.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return s;
}
