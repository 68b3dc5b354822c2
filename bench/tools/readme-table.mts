import { readFileSync } from "node:fs";
import { markdownTable } from "../src/report.ts";
const r = JSON.parse(readFileSync(new URL("../results.json", import.meta.url), "utf8"));
console.log(markdownTable(r));
for (const s of r.sections) for (const n of s.notes) console.log(`- §${s.id}: ${n}`);
