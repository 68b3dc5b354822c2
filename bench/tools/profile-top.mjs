import { readFileSync } from "node:fs";
const p = JSON.parse(readFileSync(process.argv[2], "utf8"));
const self = new Map(); const byId = new Map(p.nodes.map((n) => [n.id, n]));
const dt = new Map(); p.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
let total = 0;
for (const n of p.nodes) { const t = dt.get(n.id) ?? 0; total += t; const cf = n.callFrame; const k = `${cf.functionName || "(anon)"} ${cf.url.replace(/.*\/(node_modules|work\/main)\//, "")}:${cf.lineNumber + 1}`; self.set(k, (self.get(k) ?? 0) + t); }
// Aggregate by file too
const byFile = new Map(); for (const n of p.nodes) { const t = dt.get(n.id) ?? 0; const u = n.callFrame.url.replace(/.*\/(node_modules|work\/main)\//, "") || n.callFrame.functionName; byFile.set(u, (byFile.get(u) ?? 0) + t); }
const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([n, t]) => `${(100 * t / total).toFixed(1).padStart(5)}%  ${n}`).join("\n");
console.log("== self time by function\n" + top(self, 30) + "\n== self time by file\n" + top(byFile, 25));
