#!/usr/bin/env node
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startBrain } from "@aexhq/brain-runtime";
import type { ToolContract } from "@aexhq/brain-protocol";
import { loadScenarios, matches } from "./scenario.ts";
import { RuntimeApi } from "./http.ts";
import { DropProxy } from "./proxy.ts";
import { parseSubject, startSubject, repoRoot } from "./subject.ts";
import { hostContracts, runScenario, waitDisconnected, type ScenarioResult } from "./run.ts";

export interface ConformanceOptions {
  subject: string;
  only?: string;
  report?: string;
  /** Scenario names this subject is known to fail; a listed scenario that passes is an error too. */
  expectedFailures?: string[];
  connectTimeoutMs?: number;
  scenarioTimeoutMs?: number;
  maxEmittedBytes?: number;
  log?: (line: string) => void;
}

export interface ConformanceReport {
  subject: string;
  results: ScenarioResult[];
  unexpectedFailures: string[];
  staleExpectedFailures: string[];
  ok: boolean;
}

/** Starts a runtime and the subject, runs the scenarios, and reports. Never throws for a failing subject. */
export async function runConformance(opts: ConformanceOptions): Promise<ConformanceReport> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const spec = parseSubject(opts.subject);
  const scenarios = loadScenarios(join(repoRoot, "conformance/scenarios")).filter((s) => matches(opts.only, s.name));
  const brain = await startBrain({ dataDir: ":memory:", port: 0, maxEmittedBytes: opts.maxEmittedBytes ?? 100_000 });
  const proxy = new DropProxy(new URL(brain.url));
  const proxyUrl = await proxy.start();
  const api = new RuntimeApi(brain.url, brain.token);
  let subject = startSubject(spec, proxyUrl, brain.token);
  const results: ScenarioResult[] = [];
  try {
    let contracts: Map<string, ToolContract>;
    try {
      const info = await Promise.race([
        hostContracts(api, subject.hostId, opts.connectTimeoutMs ?? 20_000),
        new Promise<never>((_, reject) => subject.process.once("exit", (code) => reject(new Error(`subject exited with code ${code} before registering`)))),
      ]);
      contracts = new Map(info.tools.map((t) => [t.name, t]));
    } catch (e) {
      const detail = `${(e as Error).message}\n--- subject output ---\n${subject.output().trim()}`;
      for (const s of scenarios) results.push({ name: s.name, pass: false, detail, ms: 0 });
      return finish();
    }
    const ctx = {
      api, proxy, contracts,
      place: (contract: ToolContract) => ({ contract, options: {}, placement: { kind: "host" as const, hostId: subject.hostId } }),
      reconnected: async () => { await new Promise((r) => setTimeout(r, 50)); await hostContracts(api, subject.hostId, opts.connectTimeoutMs ?? 20_000); },
      restartSubject: async () => {
        await subject.stop("SIGKILL");
        await waitDisconnected(api, subject.hostId);
        subject = startSubject(spec, proxyUrl, brain.token, subject.identity);
        await hostContracts(api, subject.hostId, opts.connectTimeoutMs ?? 20_000);
      },
      timeoutMs: opts.scenarioTimeoutMs ?? 15_000,
    };
    for (const s of scenarios) {
      let result: ScenarioResult;
      try {
        result = await runScenario(ctx, s);
      } catch (e) {
        result = { name: s.name, pass: false, detail: `runner error: ${(e as Error).message}`, ms: 0 };
      }
      results.push(result);
      log(`${result.pass ? "pass" : "FAIL"}  ${s.name}${result.pass ? "" : `\n      ${result.detail}`}`);
    }
    return finish();
  } finally {
    await subject.stop();
    await proxy.close();
    await brain.close();
  }

  function finish(): ConformanceReport {
    const expected = new Set(opts.expectedFailures ?? []);
    const ran = new Set(results.map((r) => r.name));
    const unexpectedFailures = results.filter((r) => !r.pass && !expected.has(r.name)).map((r) => r.name);
    const staleExpectedFailures = [...expected].filter((n) => ran.has(n) && results.find((r) => r.name === n)!.pass);
    return { subject: spec.label, results, unexpectedFailures, staleExpectedFailures, ok: unexpectedFailures.length === 0 && staleExpectedFailures.length === 0 };
  }
}

export function formatTable(report: ConformanceReport): string {
  const width = Math.max(8, ...report.results.map((r) => r.name.length));
  const lines = [`subject: ${report.subject}`, `${"scenario".padEnd(width)}  result  first difference`];
  for (const r of report.results) lines.push(`${r.name.padEnd(width)}  ${r.pass ? "pass  " : "FAIL  "}  ${r.pass ? "" : (r.detail ?? "").split("\n")[0]}`);
  const passed = report.results.filter((r) => r.pass).length;
  lines.push(`${passed} passed, ${report.results.length - passed} failed`);
  if (report.unexpectedFailures.length) lines.push(`unexpected failures: ${report.unexpectedFailures.join(", ")}`);
  if (report.staleExpectedFailures.length) lines.push(`stale expected failures (now passing; remove them): ${report.staleExpectedFailures.join(", ")}`);
  return lines.join("\n");
}

const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const args = process.argv.slice(2);
  const value = (flag: string) => { const i = args.indexOf(flag); return i >= 0 ? args[i + 1] : undefined; };
  const subject = value("--subject");
  if (!subject) {
    console.error('usage: brain-conformance --subject node|deno|command:"<shell command>" [--only <pattern>] [--report <file.json>] [--expected-failures <file.json>]');
    process.exit(2);
  }
  const failuresFile = value("--expected-failures");
  const expectedFailures = failuresFile && existsSync(failuresFile) ? (JSON.parse(readFileSync(failuresFile, "utf8")) as string[]) : [];
  const report = await runConformance({ subject, only: value("--only"), expectedFailures, log: () => {} });
  console.log(formatTable(report));
  const reportFile = value("--report");
  if (reportFile) writeFileSync(reportFile, JSON.stringify({ ...report, results: report.results.map(({ records, ...r }) => r) }, null, 2));
  process.exit(report.ok ? 0 : 1);
}
