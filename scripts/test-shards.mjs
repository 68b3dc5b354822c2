// Splits a workspace's uvu test files into shards for scripts/test.mjs: each shard is a pattern
// that uvu (`uvu test <pattern>`) matches against a file's path under test/. Files are given to the
// shard with the least time so far, longest first, by the seconds recorded in test/shard-weights.json
// (a file it does not list counts as the median); the weights only balance the shards, so stale ones
// cost time, never a test.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";

// uvu's own choice of files when given a folder and no pattern (uvu/parse), and what it ignores.
const UVU_FILES = /(((?:[^/]*(?:\/|$))*)[\\/])?\w+\.([mc]js|[jt]sx?)$/;

function filesUnder(dir, base = dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith(".git") || e.name === "node_modules") continue;
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(path, base));
    else if (UVU_FILES.test(relative(base, path))) out.push(relative(base, path));
  }
  return out.sort();
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** One uvu pattern per shard, or `[undefined]` (no pattern: every file) for a single shard. */
export function testShards(workspaceDir, count) {
  const testDir = join(workspaceDir, "test");
  if (!(count > 1) || !existsSync(testDir)) return [undefined];
  const weightsFile = join(testDir, "shard-weights.json");
  const weights = existsSync(weightsFile) ? JSON.parse(readFileSync(weightsFile, "utf8")) : {};
  const files = filesUnder(testDir);
  const known = files.map((f) => weights[f]).filter((w) => typeof w === "number").sort((a, b) => a - b);
  const median = known.length ? known[Math.floor(known.length / 2)] : 1;
  const weightOf = (f) => (typeof weights[f] === "number" ? weights[f] : median);
  const shards = Array.from({ length: count }, () => ({ files: [], total: 0 }));
  for (const f of [...files].sort((a, b) => weightOf(b) - weightOf(a) || a.localeCompare(b))) {
    const lightest = shards.reduce((min, s) => (s.total < min.total ? s : min));
    lightest.files.push(f);
    lightest.total += weightOf(f);
  }
  return shards.filter((s) => s.files.length > 0).map((s) => `^(?:${s.files.sort().map(escape).join("|")})$`);
}
