// Turns a suite's printed output and exit status into pass/fail counts for the root `npm test`.

// uvu forces colour on, so its numbers arrive wrapped in ANSI escapes.
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
const plain = (text) => text.replace(ANSI, "");

/**
 * uvu prints `Total: N`, `Passed: N`, `Skipped: N`. uvu's Total already leaves out skipped tests
 * (test.skip and tests not selected by test.only), so failed = total - passed; subtracting Skipped
 * again would hide real failures in a suite that also skips. Skipped is reported beside them.
 */
export function parseUvuSummary(output) {
  const text = plain(output);
  const totals = [...text.matchAll(/^\s*Total:\s+(\d+)\s*$/gm)];
  const passes = [...text.matchAll(/^\s*Passed:\s+(\d+)\s*$/gm)];
  const skips = [...text.matchAll(/^\s*Skipped:\s+(\d+)\s*$/gm)];
  if (!totals.length || !passes.length) return undefined;
  let total = 0;
  let passed = 0;
  let skipped = 0;
  // Sum every block so a script like `uvu a && uvu b` is counted whole.
  for (const m of totals) total += Number(m[1]);
  for (const m of passes) passed += Number(m[1]);
  for (const m of skips) skipped += Number(m[1]);
  return { passed, failed: Math.max(0, total - passed), skipped };
}

/** Deno ends with `ok | 5 passed | 0 failed (12ms)` or `FAILED | 4 passed | 1 failed | 2 ignored (…)`; ignored tests are skipped. */
export function parseDenoSummary(output) {
  const lines = plain(output).split("\n").filter((line) => /^(ok|FAILED)\s+\|/.test(line.trim()));
  const last = lines.at(-1);
  if (!last) return undefined;
  const passed = Number(/(\d+)\s+passed/.exec(last)?.[1] ?? 0);
  const failed = Number(/(\d+)\s+failed/.exec(last)?.[1] ?? 0);
  const skipped = Number(/(\d+)\s+ignored/.exec(last)?.[1] ?? 0);
  return { passed, failed, skipped };
}

/**
 * Combines the parsed summary with how the process ended. A suite without a summary counts as one
 * check (1 passed on exit 0, else 1 failed); a nonzero exit never reads as all-green, and a killed
 * suite is always a failure, and so is one that exits leaving its children running.
 */
export function countSuite(run, summary) {
  const counts = countRun(run, summary);
  return { skipped: summary?.skipped ?? 0, ...counts };
}

/**
 * The lines a suite printed to say why it skipped tests (scripts/rust-toolchain.mjs skipNotice):
 * `brain-test-skip: <count> Rust-built tests in <where>: <reason>` → { count, where, reason }.
 */
export function parseSkipNotices(output) {
  return [...plain(output).matchAll(/^brain-test-skip: (\d+) Rust-built tests? in (\S+): (.*)$/gm)].map((m) => ({ count: Number(m[1]), where: m[2], reason: m[3].trim() }));
}

/**
 * The root runner's closing line: `N passed, N failed, N skipped`, and when tests were skipped, why
 * (the distinct reasons the suites printed, and how many skips had none).
 */
export function closingLine({ passed, failed, skipped }, notices) {
  const base = `${passed} passed, ${failed} failed, ${skipped} skipped`;
  if (!skipped) return base;
  const explained = notices.reduce((n, x) => n + x.count, 0);
  const reasons = [...new Set(notices.map((x) => x.reason))];
  const parts = [];
  if (explained) parts.push(`${Math.min(explained, skipped)} Rust-built: ${reasons.join("; ")}`);
  if (skipped > explained) parts.push(`${skipped - explained} by test.skip/ignore in the suites`);
  return `${base} (${parts.join("; ")})`;
}

function countRun(run, summary) {
  if (run.timedOut) return { passed: summary?.passed ?? 0, failed: Math.max(1, summary?.failed ?? 0), note: "timed out" };
  if (run.leftovers) return { passed: summary?.passed ?? 0, failed: (summary?.failed ?? 0) + 1, note: "exited but left processes holding its output open" };
  if (run.error) return { passed: 0, failed: 1, note: "did not start" };
  if (!summary) return run.code === 0 ? { passed: 1, failed: 0 } : { passed: 0, failed: 1, note: `exit ${run.code}` };
  if (run.code !== 0 && summary.failed === 0) return { passed: summary.passed, failed: 1, note: `exit ${run.code} with no failed test` };
  return { passed: summary.passed, failed: summary.failed };
}

/**
 * The failing tests a suite printed, one short line each, for the summary at the end of the run:
 * CI keeps only the tail of a run's output, so a failure's name must be repeated there to be seen.
 * uvu prints a file's name, its tick marks, then `FAIL  "<test>"` and the assertion's message;
 * Deno ends with a FAILURES block of `<test> => ./file.ts:line:col` lines.
 */
export function parseFailures(output) {
  const lines = plain(output).split("\n");
  const failures = [];
  let file = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (/^[\w./-]+\.m?[jt]s$/.test(line) && /^[✔✘\s]*\(/.test(lines[i + 1]?.trim() ?? "")) file = line;
    const uvu = /^FAIL\s+(".*")$/.exec(line);
    if (uvu) {
      const why = lines.slice(i + 1, i + 6).map((l) => l.trim()).find((l) => l) ?? "";
      failures.push(`${file ? `${file}: ` : ""}${uvu[1]}: ${why}`.slice(0, 300));
    }
    const deno = /^(.+) => (\.{1,2}\/\S+:\d+:\d+)$/.exec(line);
    if (deno) failures.push(`${deno[2]}: ${deno[1]}`.slice(0, 300));
  }
  return [...new Set(failures)];
}
