// Section 9 (`npm run bench -- --soak`, its own mode): 64 sessions doing turns with one host tool
// call each for BENCH_SOAK_SECONDS (300). Runs in a child process of its own (soak-child.ts, with
// --expose-gc), runtime and Node SDK host together, SQLite journal in a temp dir: turns/s per window,
// RSS after the first window and at the end, heap before the sessions were created and after deleting them.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { SoakConfig } from "./config.ts";
import { figure } from "./report.ts";
import type { Section } from "./report.ts";
import { round } from "./stats.ts";

/** What the child prints, one JSON object a line. */
export type SoakLine =
  | { kind: "start"; heapBefore: number; rssBefore: number; spacesBefore: Record<string, number>; windowS: number; scriptTurns: number; scriptBytes: number }
  | { kind: "window"; index: number; turns: number; seconds: number; rss: number; heap: number }
  | { kind: "end"; heapEnd: number; rssEnd: number; heapAfterDelete: number; rssAfterDelete: number; spacesAfterDelete: Record<string, number>; turns: number; failures: number; exhausted: number; firstError?: string; heldAfterDelete?: Record<string, number> };

const MiB = 2 ** 20;

export async function soak(cfg: SoakConfig, log: (s: string) => void): Promise<Section> {
  const windowS = Math.min(60, cfg.seconds / 5);
  const s: Section = { id: "9", title: `9. Soak (${cfg.sessions} sessions, one host tool call per turn, ${cfg.seconds} s, SQLite journal, Node SDK host; its own child process)`, figures: [], notes: [] };
  log(`  soak: ${cfg.sessions} sessions for ${cfg.seconds} s (windows of ${windowS} s), child process`);
  const child = fileURLToPath(new URL("./soak-child.ts", import.meta.url));
  const proc = spawn(process.execPath, ["--expose-gc", ...process.execArgv, child, JSON.stringify({ ...cfg, windowS })], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: SoakLine[] = [];
  let buf = "";
  let stderr = "";
  proc.stdout!.on("data", (d) => {
    buf += String(d);
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line.trim()) continue;
      const l = JSON.parse(line) as SoakLine;
      lines.push(l);
      if (l.kind === "window") log(`  soak: window ${l.index + 1}: ${round(l.turns / l.seconds, 0)} turns/s, RSS ${round(l.rss / MiB, 0)} MiB, heap ${round(l.heap / MiB, 0)} MiB`);
    }
  });
  proc.stderr!.on("data", (d) => {
    stderr = (stderr + String(d)).slice(-4000);
    process.stderr.write(d);
  });
  const code = await new Promise<number | null>((r) => proc.once("exit", (c, sig) => r(c ?? (sig ? -1 : null))));
  const start = lines.find((l) => l.kind === "start") as Extract<SoakLine, { kind: "start" }> | undefined;
  const windows = lines.filter((l) => l.kind === "window") as Extract<SoakLine, { kind: "window" }>[];
  const end = lines.find((l) => l.kind === "end") as Extract<SoakLine, { kind: "end" }> | undefined;
  if (code !== 0 || !start || !end) s.notes.push(`the child process ended with ${code} before it finished (${windows.length} windows measured); figures it did not reach are NaN and their goals MISS. stderr: ${stderr.trim().split("\n").slice(-5).join(" | ")}`);
  const rate = (w: { turns: number; seconds: number } | undefined) => (w ? w.turns / w.seconds : NaN);
  const first = windows[0];
  const last = windows.length > 1 ? windows[windows.length - 1] : undefined;
  for (const w of windows) s.figures.push(figure(`turns/s, window ${w.index + 1} (${round(w.index * windowS, 0)}–${round((w.index + 1) * windowS, 0)} s)`, round(rate(w), 0), "turns/s"));
  const fr = rate(first);
  const lr = rate(last);
  s.figures.push(figure("turns/s, last window", round(lr, 0), "turns/s", first ? { name: "first window", value: round(fr, 0) } : undefined, { text: "last window's turns/s ≥ 80 % of the first's", pass: lr >= 0.8 * fr }));
  const rssEnd = end ? end.rssEnd : NaN;
  s.figures.push(figure("RSS at the end", round(rssEnd / MiB, 1), "MiB", first ? { name: "after the first window", value: round(first.rss / MiB, 1) } : undefined, { text: "RSS at the end ≤ 1.5× RSS after the first window", pass: first !== undefined && rssEnd <= 1.5 * first.rss }));
  const hb = start ? start.heapBefore : NaN;
  const ha = end ? end.heapAfterDelete : NaN;
  s.figures.push(figure("heap after deleting the sessions (after forced GCs)", round(ha / MiB, 2), "MiB", start ? { name: "before they were created", value: round(hb / MiB, 2) } : undefined, { text: "heap after deleting within 20 % of before the sessions", pass: Math.abs(ha - hb) <= 0.2 * hb }));
  if (end) {
    s.figures.push(figure("heap at the end, before deleting (after forced GCs)", round(end.heapEnd / MiB, 1), "MiB"));
    s.figures.push(figure("RSS after deleting the sessions (after forced GCs)", round(end.rssAfterDelete / MiB, 1), "MiB", start ? { name: "before they were created", value: round(start.rssBefore / MiB, 1) } : undefined));
    s.notes.push(`${end.turns} turns in all; ${end.failures} failed sends${end.firstError ? ` (first: ${end.firstError})` : ""}${end.exhausted > 0 ? `; ${end.exhausted} session(s) ran out of script (${start?.scriptTurns} turns each: raise BENCH_SOAK_TURNS_PER_SESSION_S) and stopped, so later windows undercount` : ""}`);
    if (start) {
      // Where the heap that deleting did not give back is (V8 spaces, external): code_space is compiled code, not sessions.
      const d = Object.keys(end.spacesAfterDelete).map((k) => [k, (end.spacesAfterDelete[k] ?? 0) - (start.spacesBefore[k] ?? 0)] as const).filter(([, v]) => Math.abs(v) >= 256 * 1024).sort((a, b) => b[1] - a[1]);
      s.notes.push(`heap after deleting − before, by V8 space: ${d.map(([k, v]) => `${k} ${v > 0 ? "+" : ""}${round(v / MiB, 1)} MiB`).join(", ") || "every space within 0.25 MiB"}`);
    }
    if (end.heldAfterDelete) s.notes.push(`after deleting, the runtime's own counters (internals.sessions.held): ${Object.entries(end.heldAfterDelete).map(([k, v]) => `${k} ${v}`).join(", ")}`);
  }
  s.notes.push(
    `windows of ${windowS} s (a minute when the soak runs ≥ 5 min, a fifth of the run otherwise); a turn counts in the window its session.send resolved in; RSS sampled (no forced GC) at each window's end`,
    `heap = heapUsed + external after three forced GCs (global.gc, --expose-gc): before = after the runtime and the host connection were up and three warm-up sessions (5 turns each) were deleted, before the ${cfg.sessions} sessions were created; after = once all of them were deleted (session.delete()). RSS rarely shrinks in V8; read heap for what deleting gives back`,
    `each session's script holds ${start?.scriptTurns ?? "?"} turns (2 steps each: the tool call, then "done"), sized at ${cfg.turnsPerSessionPerS} turns/s per session for the whole run (BENCH_SOAK_TURNS_PER_SESSION_S); the ${cfg.sessions} sessions' model configs are ${start ? round(start.scriptBytes / MiB, 1) : "?"} MiB of JSON (the runtime keeps nothing of a deleted session in memory, so none of it should remain after deleting)`,
  );
  return s;
}
