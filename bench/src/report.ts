// The report every section fills: figures beside their same-run baselines, ratios and goals.
export interface Figure {
  name: string;
  value: number;
  unit: string;
  baseline?: { name: string; value: number };
  /** value / baseline.value */
  ratio?: number;
  goal?: { text: string; pass: boolean };
}

export interface Section {
  id: string;
  title: string;
  figures: Figure[];
  notes: string[];
}

export interface Report {
  date: string;
  command: string;
  mode: "quick" | "full" | "smoke" | "soak" | "nodes";
  /** What the SDK and runtime ran from: their built dist/ (as shipped, `npm run bench`) or their TypeScript sources through tsx. */
  packages: "dist" | "source";
  machine: { nproc: number; memTotalMiB: number; node: string; platform: string; cpu: string };
  sections: Section[];
  durationS: number;
}

export function figure(name: string, value: number, unit: string, baseline?: { name: string; value: number }, goal?: { text: string; pass: boolean }): Figure {
  const f: Figure = { name, value, unit };
  if (baseline) {
    f.baseline = baseline;
    f.ratio = Math.round((value / baseline.value) * 100) / 100;
  }
  if (goal) f.goal = goal;
  return f;
}

export function printSection(s: Section): void {
  console.log(`\n== ${s.title}`);
  for (const f of s.figures) {
    const base = f.baseline ? `   vs ${f.baseline.name} ${fmt(f.baseline.value)}  ratio ${f.ratio}×` : "";
    const goal = f.goal ? `   [${f.goal.pass ? "PASS" : "MISS"}: ${f.goal.text}]` : "";
    console.log(`  ${f.name.padEnd(52)} ${fmt(f.value).padStart(10)} ${f.unit.padEnd(8)}${base}${goal}`);
  }
  for (const n of s.notes) console.log(`  · ${n}`);
}

function fmt(x: number): string {
  return x >= 100 ? String(Math.round(x)) : String(Math.round(x * 100) / 100);
}

/** The README table: one row per figure. */
export function markdownTable(r: Report): string {
  const rows = ["| section | figure | value | baseline (same run) | ratio | goal |", "| --- | --- | --- | --- | --- | --- |"];
  for (const s of r.sections) {
    for (const f of s.figures) {
      rows.push(`| ${s.id} | ${f.name} | ${fmt(f.value)} ${f.unit} | ${f.baseline ? `${f.baseline.name} ${fmt(f.baseline.value)}` : ""} | ${f.ratio ?? ""} | ${f.goal ? `${f.goal.pass ? "**pass**" : "**miss**"}: ${f.goal.text}` : ""} |`);
    }
  }
  return rows.join("\n");
}
