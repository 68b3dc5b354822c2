#!/usr/bin/env node
/**
 * The conformance runner behind the `brain-conformance` CLI: `runConformance` runs the scenarios
 * against a subject (a host binding, a component, HTTP tools) and reports.
 *
 * @module @aexhq/brain-conformance
 */
import { readFileSync, writeFileSync, existsSync, mkdtempSync, rmSync, accessSync, constants } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startBrain, stderrLogger, validateSchema } from "@aexhq/brain-runtime";
import { CONFORMANCE_REPORT_SCHEMA } from "@aexhq/brain-protocol";
import type { ToolContract, PlacedTool } from "@aexhq/brain-protocol";
import { appliesTo, journalOf, loadScenarios, matches, type Scenario, type SubjectKind } from "./scenario.ts";
import { RuntimeApi } from "./http.ts";
import { FaultProxy } from "./proxy.ts";
import { closed, registerAs } from "./faults.ts";
import { parseSubject, startSubject, packageRoot, repoRoot, HTTP_PORT_ENV, type SubjectSpec, type RunningSubject } from "./subject.ts";
import { hostContracts, runScenario, waitDisconnected, type RunContext, type ScenarioResult } from "./run.ts";
import { componentContracts, componentPlacement, uploadComponent } from "./component-subject.ts";
import { freePort, httpContracts, waitListening } from "./http-subject.ts";
import { packagedCatalogue, packagedPlacement, uploadPackaged } from "./packaged-subject.ts";
import { MCP_SERVER, capturingLogger, killStdioServer, mcpContracts, mcpPlacement, stdioServer } from "./mcp-subject.ts";
import { UsageError, conformanceHelp, parseConformanceArgs } from "./cli-args.ts";
import { lackingTools, listing, notApplicable } from "./capabilities.ts";
import { readCatalogueDocument } from "./catalogue-document.ts";

/** `runConformance` options: the subject (as `--subject` takes it) and the CLI's other options. */
export interface ConformanceOptions {
  subject: string;
  only?: string;
  /**
   * The catalogue tools the subject implements, for subjects that advertise nothing (a component,
   * HTTP tools); default every tool of its kind. Scenarios needing another are n/a (CATALOGUE.md).
   */
  tools?: string[];
  /** Scenario names left out altogether (the root `npm test` leaves out the slowest fault scenario). */
  exclude?: string[];
  /** Default: the package's scenarios/ folder. */
  scenariosDir?: string;
  report?: string;
  /** Scenario names this subject is known to fail; a listed scenario that passes is an error too. */
  expectedFailures?: string[];
  connectTimeoutMs?: number;
  scenarioTimeoutMs?: number;
  maxEmittedBytes?: number;
  log?: (line: string) => void;
}

/** The outcome of a run: one result per selected scenario, and whether the run passed (`ok`). */
export interface ConformanceReport {
  subject: string;
  results: ScenarioResult[];
  unexpectedFailures: string[];
  staleExpectedFailures: string[];
  ok: boolean;
  /**
   * The tail of what the subject process printed (stdout and stderr), per runtime it ran against,
   * for the terminal (formatTable prints it when the run failed); not part of the --report document.
   */
  subjectOutput?: string[];
}

/** The runner's runtime's BRAIN_HOST_TIMEOUT_MS: `registered.hostTimeoutMs`, which the liveness scenario checks against. */
const HOST_TIMEOUT_MS = 3000;

const CATALOGUE_TOOLS = new Set(readCatalogueDocument().tools.map((t) => t.name));

/** How much of a subject's output the terminal report shows. */
const OUTPUT_TAIL_LINES = 40;

type Brain = Awaited<ReturnType<typeof startBrain>>;

/**
 * One runtime (with the journal some scenarios need), the proxy in front of it and the subject
 * connected through it. Scenarios with the same runtime requirements share a stage.
 */
interface Stage { ctx: RunContext; close(): Promise<void>; connectError?: string; output(): string | undefined }

/** Starts a runtime and the subject, runs the scenarios, and reports. Never throws for a failing subject. */
export async function runConformance(opts: ConformanceOptions): Promise<ConformanceReport> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const spec = parseSubject(opts.subject);
  // A usage error before any scenario: a component file that cannot be read, an unknown --tools name.
  if (spec.kind === "component") {
    try {
      accessSync(resolve(spec.argv[0]!), constants.R_OK);
    } catch (e) {
      throw new Error(`the component file ${resolve(spec.argv[0]!)} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): give the path of a built .wasm component`);
    }
  }
  const unknownTool = opts.tools?.find((t) => !CATALOGUE_TOOLS.has(t));
  if (unknownTool !== undefined) throw new Error(`--tools: ${unknownTool} is not a catalogue tool (CATALOGUE.md lists them)`);
  const kind: SubjectKind = spec.kind === "component" ? "component" : spec.kind === "http" ? "http" : spec.kind === "packaged" ? "managed" : spec.kind === "mcp" ? "mcp" : "host";
  const selected = loadScenarios(opts.scenariosDir ?? join(packageRoot, "scenarios")).filter((s) => matches(opts.only, s.name) && !opts.exclude?.includes(s.name));
  const byName = new Map<string, ScenarioResult>();
  for (const s of selected.filter((s) => !appliesTo(s, kind))) {
    byName.set(s.name, { name: s.name, pass: true, na: true, detail: notApplicable(s.name, kind), ms: 0 });
  }
  // A Streamable HTTP server the runner did not start cannot be killed: the scenarios that do are n/a.
  if (spec.mcp?.transport === "url") {
    for (const s of selected.filter((s) => appliesTo(s, kind) && s.actions?.some((a) => a.do === "drop_connection" || a.do === "restart_subject"))) {
      byName.set(s.name, { name: s.name, pass: true, na: true, detail: `n/a for mcp-http:<URL>: the runner did not start the server, so it cannot kill it (give mcp-http:<command> instead)`, ms: 0 });
    }
  }
  const subjectOutput: string[] = [];
  const groups = new Map<"memory" | "sqlite", Scenario[]>();
  for (const s of selected.filter((s) => !byName.has(s.name))) groups.set(journalOf(s), [...(groups.get(journalOf(s)) ?? []), s]);

  for (const [journal, scenarios] of groups) {
    const stage = await startStage(spec, journal, opts);
    try {
      for (const s of scenarios) {
        let result: ScenarioResult;
        const lacking = stage.connectError === undefined ? lackingTools(s, new Set(stage.ctx.contracts.keys()), kind) : undefined;
        if (stage.connectError !== undefined) result = { name: s.name, pass: false, detail: stage.connectError, ms: 0 };
        else if (lacking !== undefined) {
          // A required tool the runtime refused to register (digest_mismatch) says so.
          const refused = !lacking.pass && stage.ctx.proxy.errors.length > 0 ? `; the runtime answered the subject: ${stage.ctx.proxy.errors.join("; ")}` : "";
          result = { ...lacking, ...(refused ? { detail: `${lacking.detail}${refused}` } : {}) };
        }
        else {
          try {
            result = await runScenario(stage.ctx, s);
          } catch (e) {
            result = { name: s.name, pass: false, detail: `runner error: ${(e as Error).message}`, ms: 0 };
          }
        }
        byName.set(s.name, result);
        log(`${result.pass ? "pass" : "FAIL"}  ${s.name}${result.pass ? "" : `\n      ${result.detail}`}`);
      }
    } finally {
      await stage.close();
      const output = stage.output();
      if (output !== undefined) subjectOutput.push(`${spec.label} against the ${journal} runtime:\n${tail(output)}`);
    }
  }
  const results = selected.map((s) => byName.get(s.name)!);
  const expected = new Set(opts.expectedFailures ?? []);
  const unexpectedFailures = results.filter((r) => !r.pass && !expected.has(r.name)).map((r) => r.name);
  const staleExpectedFailures = [...expected].filter((n) => results.find((r) => r.name === n)?.pass === true && !results.find((r) => r.name === n)?.na);
  return { subject: spec.label, results, unexpectedFailures, staleExpectedFailures, ok: unexpectedFailures.length === 0 && staleExpectedFailures.length === 0, subjectOutput };
}

/** The last OUTPUT_TAIL_LINES lines of a subject's output, saying when it printed nothing or more. */
function tail(output: string): string {
  const lines = output.trimEnd().split("\n");
  if (lines.length === 1 && lines[0] === "") return "(the subject printed nothing)";
  if (lines.length <= OUTPUT_TAIL_LINES) return lines.join("\n");
  return [`(last ${OUTPUT_TAIL_LINES} of ${lines.length} lines)`, ...lines.slice(-OUTPUT_TAIL_LINES)].join("\n");
}

async function startStage(spec: SubjectSpec, journal: "memory" | "sqlite", opts: ConformanceOptions): Promise<Stage> {
  const connectTimeoutMs = opts.connectTimeoutMs ?? 20_000;
  const dataDir = journal === "sqlite" ? mkdtempSync(join(tmpdir(), "brain-conformance-")) : ":memory:";
  // An HTTP subject's port is chosen first: the runtime must allow its origin from the start.
  const httpPort = spec.kind === "http" ? await freePort() : undefined;
  const httpOrigin = `http://127.0.0.1:${httpPort}`;
  // An MCP subject is the runtime's MCP server `conformance`: over stdio the runtime starts it (its
  // wrapper writes the process group the runner kills), over Streamable HTTP the runner starts it on
  // a port of its own (or it already runs at a URL).
  const mcp = spec.mcp;
  const mcpDir = mcp?.transport === "stdio" ? mkdtempSync(join(tmpdir(), "brain-conformance-mcp-")) : undefined;
  const pidFile = join(mcpDir ?? "", "server.pid");
  const mcpPort = mcp?.transport === "http" ? await freePort() : undefined;
  const mcpOrigin = `http://127.0.0.1:${mcpPort}`;
  const mcpServers = mcp === undefined
    ? undefined
    : { [MCP_SERVER]: mcp.transport === "stdio" ? stdioServer(spec.argv, spec.shell, pidFile, connectTimeoutMs) : { url: mcp.transport === "url" ? mcp.url : `${mcpOrigin}/mcp`, initializeTimeoutMs: connectTimeoutMs } };
  // What the runtime says about the MCP server (its stderr lines) is the subject's output.
  const captured = mcp === undefined ? undefined : capturingLogger(stderrLogger());
  // A host timeout shorter than the default 6 s keeps the silent-runtime scenario short.
  const brainOptions = {
    dataDir, maxEmittedBytes: opts.maxEmittedBytes ?? 100_000, hostTimeoutMs: HOST_TIMEOUT_MS,
    ...(httpPort === undefined ? {} : { httpToolOrigins: [httpOrigin] }),
    ...(mcpServers === undefined ? {} : { mcpServers, logger: captured!.logger }),
  };
  let brain: Brain = await startBrain({ ...brainOptions, port: 0 });
  const port = Number(new URL(brain.url).port);
  const token = brain.token;
  const api = new RuntimeApi(brain.url, token);
  const proxy = new FaultProxy(new URL(brain.url));
  const proxyUrl = await proxy.start();
  let subject: RunningSubject | undefined;
  let connectError: string | undefined;
  let contracts = new Map<string, ToolContract>();
  let place: (contract: ToolContract) => PlacedTool;

  if (spec.kind === "component") {
    const file = resolve(spec.argv[0]!);
    let digest = "";
    try {
      digest = await uploadComponent(api, file);
      contracts = componentContracts();
    } catch (e) {
      connectError = `component ${file} was not admitted: ${(e as Error).message}`;
    }
    place = (contract) => componentPlacement(contract, digest);
  } else if (spec.kind === "packaged") {
    const runtime = spec.argv[0] as "node" | "deno";
    // This checkout's Deno (a root devDependency) unless BRAIN_DENO names another.
    process.env.BRAIN_DENO ??= join(repoRoot, "node_modules/.bin/deno");
    let packaged: Awaited<ReturnType<typeof packagedCatalogue>> | undefined;
    try {
      packaged = await packagedCatalogue();
      await uploadPackaged(api, packaged);
      contracts = packaged.contracts;
    } catch (e) {
      connectError = `the packaged catalogue was not admitted: ${(e as Error).message}`;
    }
    place = (contract) => packagedPlacement(contract, packaged!, runtime);
  } else if (spec.kind === "mcp") {
    let mcpNames = new Map<string, string>();
    try {
      if (mcp!.transport === "http") {
        subject = startSubject(spec, brain.url, token, undefined, undefined, { [HTTP_PORT_ENV]: String(mcpPort) });
        await listening(subject, mcpOrigin, connectTimeoutMs);
      }
      ({ contracts, mcpNames } = await mcpContracts(api));
    } catch (e) {
      connectError = `${(e as Error).message}\n--- subject output ---\n${tail(`${subject?.output() ?? ""}${captured!.output()}`)}`;
    }
    place = (contract) => mcpPlacement(contract, mcpNames);
  } else if (spec.kind === "http") {
    // Callbacks go to the runtime itself: the endpoint checks they lie under the Brain URL it was given.
    subject = startSubject(spec, brain.url, token, undefined, undefined, { [HTTP_PORT_ENV]: String(httpPort) });
    const started = subject;
    try {
      await listening(started, httpOrigin, connectTimeoutMs);
      contracts = httpContracts();
    } catch (e) {
      connectError = `${(e as Error).message}\n--- subject output ---\n${tail(started.output())}`;
    }
    place = (contract) => ({ contract, options: {}, placement: { kind: "http", url: `${httpOrigin}/` } });
  } else {
    subject = startSubject(spec, proxyUrl, token);
    const started = subject;
    try {
      const info = await Promise.race([
        hostContracts(api, started.hostId, connectTimeoutMs),
        new Promise<never>((_, reject) => started.process.once("exit", (code) => reject(new Error(`subject exited with code ${code} before registering`)))),
      ]);
      contracts = new Map(info.tools.map((t) => [t.name, t]));
    } catch (e) {
      // What the runtime answered it (a refused register: digest_mismatch, unauthorized) comes first.
      const refused = proxy.errors.length > 0 ? `; the runtime answered it: ${proxy.errors.join("; ")}` : "";
      connectError = `${(e as Error).message}${refused}\n--- subject output ---\n${tail(started.output())}`;
    }
    place = (contract) => ({ contract, options: {}, placement: { kind: "host", hostId: started.hostId } });
  }

  // A subject that implements part of the catalogue (`--tools`): scenarios needing the rest are n/a.
  if (opts.tools !== undefined) contracts = new Map([...contracts].filter(([name]) => opts.tools!.includes(name)));
  const hostOnly = (what: string) => async () => { throw new Error(`${what} needs a host subject`); };
  // A host subject: a process connected to the runtime as a host (not HTTP tools or an MCP server).
  const hosted = spec.kind !== "http" && spec.kind !== "mcp";
  const reconnected = subject && hosted
    ? async () => { await new Promise((r) => setTimeout(r, 50)); await hostContracts(api, subject!.hostId, connectTimeoutMs); }
    : hostOnly("drop_connection");
  /** An MCP server killed: over stdio the runtime starts it again on next use; over HTTP the runner restarts it on its port. */
  const killMcp = async () => {
    if (mcp?.transport === "stdio") return killStdioServer(pidFile);
    if (mcp?.transport !== "http" || subject === undefined) throw new Error("the runner can kill only an MCP server it started (mcp:<command>, mcp-http:<command>)");
    await subject.stop("SIGKILL");
    subject = startSubject(spec, brain.url, token, undefined, undefined, { [HTTP_PORT_ENV]: String(mcpPort) });
    await listening(subject, mcpOrigin, connectTimeoutMs);
  };
  const ctx: RunContext = {
    api, proxy, contracts, place,
    hostTimeoutMs: HOST_TIMEOUT_MS,
    replaceHost: subject && hosted
      ? async () => {
          const ws = await registerAs(brain.url, token, subject!.identity.hostId, subject!.identity.secret, [...contracts.values()]);
          return () => closed(ws);
        }
      : hostOnly("replace_host"),
    timeoutMs: opts.scenarioTimeoutMs ?? 15_000,
    reconnected,
    ...(mcp !== undefined ? { dropConnection: killMcp } : {}),
    restartSubject: mcp !== undefined
      ? async (variant?: string) => {
          if (variant !== undefined) throw new Error(`restart_subject as variant ${variant} needs a host subject`);
          await killMcp();
        }
      : subject && hosted
      ? async (variant?: string) => {
          await subject!.stop("SIGKILL");
          await waitDisconnected(api, subject!.hostId);
          subject = startSubject(spec, proxyUrl, token, subject!.identity, variant);
          await hostContracts(api, subject.hostId, connectTimeoutMs);
        }
      : hostOnly("restart_subject"),
    // Same data folder, port and token: the subject keeps its BRAIN_URL (the proxy) and reconnects.
    restartRuntime: async () => {
      if (journal !== "sqlite") throw new Error("restart_runtime needs a sqlite journal");
      await brain.close();
      brain = await listenAgain(() => startBrain({ ...brainOptions, port, token }));
      api.restarted();
      if (subject && hosted) await hostContracts(api, subject.hostId, connectTimeoutMs);
    },
  };
  return {
    ctx,
    ...(connectError !== undefined ? { connectError } : {}),
    // The subject of the moment: a restarted one replaced the first, and its output goes on there.
    output: () => (captured === undefined ? subject?.output() : `${subject?.output() ?? ""}${captured.output()}`),
    close: async () => {
      await subject?.stop();
      await proxy.close();
      await brain.close();
      // A managed host's binding folder may still be written as the runtime closes: retry ENOTEMPTY.
      if (dataDir !== ":memory:") rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      if (mcpDir !== undefined) rmSync(mcpDir, { recursive: true, force: true });
    },
  };
}

/** Resolves once the subject answers HTTP at `origin`; rejects when it exits first or takes longer than `timeoutMs`. */
async function listening(subject: RunningSubject, origin: string, timeoutMs: number): Promise<void> {
  await Promise.race([
    waitListening(origin, timeoutMs),
    new Promise<never>((_, reject) => subject.process.once("exit", (code) => reject(new Error(`subject exited with code ${code} before listening`)))),
  ]);
}

/** The port was just released; on a busy machine another listener may hold it for a moment. */
async function listenAgain(start: () => Promise<Brain>): Promise<Brain> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await start();
    } catch (e) {
      if ((e as { code?: string }).code !== "EADDRINUSE" || attempt >= 20) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The pass/fail table the CLI prints; after a failing run, the subject's own output follows it. */
export function formatTable(report: ConformanceReport): string {
  const width = Math.max(8, ...report.results.map((r) => r.name.length));
  const lines = [`subject: ${report.subject}`, `${"scenario".padEnd(width)}  result  first difference`];
  for (const r of report.results) {
    const result = r.na ? "n/a   " : r.pass ? "pass  " : "FAIL  ";
    lines.push(`${r.name.padEnd(width)}  ${result}  ${r.pass ? "" : (r.detail ?? "").split("\n")[0]}`);
  }
  const passed = report.results.filter((r) => r.pass && !r.na).length;
  const na = report.results.filter((r) => r.na).length;
  lines.push(`${passed} passed, ${report.results.length - passed - na} failed${na ? `, ${na} n/a` : ""}`);
  if (report.unexpectedFailures.length) lines.push(`unexpected failures: ${report.unexpectedFailures.join(", ")}`);
  if (report.staleExpectedFailures.length) lines.push(`stale expected failures (now passing; remove them): ${report.staleExpectedFailures.join(", ")}`);
  // A failing run shows what the subject itself said: its own error is usually the first clue.
  if (!report.ok) for (const output of report.subjectOutput ?? []) lines.push("", `--- subject output: ${output}`);
  return lines.join("\n");
}

/** The --report document (results without their journals), checked against the contract's report schema. */
export function reportDocument(report: ConformanceReport): unknown {
  const { subjectOutput: _terminalOnly, ...rest } = report;
  const doc = { ...rest, results: report.results.map(({ records, ...r }) => r) };
  const issues = validateSchema(CONFORMANCE_REPORT_SCHEMA, doc);
  if (issues.length) throw new Error(`the report does not match contract/conformance-report.schema.json: ${issues.map((i) => `${i.path} ${i.message}`).join("; ")}`);
  return doc;
}

/** A positive integer option (milliseconds or bytes), or undefined when absent. */
function positiveInteger(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer, got ${JSON.stringify(text)}`);
  return n;
}

/** The `brain-conformance` command: runs, prints the table and returns the exit code (0, 1 or 2). */
export async function main(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseConformanceArgs(args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`brain-conformance: ${e.message}`);
    return 2;
  }
  if (parsed.help) {
    console.log(conformanceHelp());
    return 0;
  }
  if (parsed.list) {
    try {
      console.log(listing(loadScenarios(parsed.values.scenarios ? resolve(parsed.values.scenarios) : join(packageRoot, "scenarios"))));
      return 0;
    } catch (e) {
      console.error(`brain-conformance: ${(e as Error).message}`);
      return 2;
    }
  }
  const value = (name: string): string | undefined => parsed.values[name];
  let report: ConformanceReport;
  try {
    const failuresFile = value("expected-failures");
    const expectedFailures = failuresFile && existsSync(failuresFile) ? (JSON.parse(readFileSync(failuresFile, "utf8")) as string[]) : [];
    const scenariosDir = value("scenarios");
    const limits = {
      scenarioTimeoutMs: positiveInteger("--scenario-timeout", value("scenario-timeout")),
      connectTimeoutMs: positiveInteger("--connect-timeout", value("connect-timeout")),
      maxEmittedBytes: positiveInteger("--max-emitted-bytes", value("max-emitted-bytes")),
    };
    const set = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
    const tools = value("tools")?.split(",").map((t) => t.trim()).filter(Boolean);
    report = await runConformance({ subject: parsed.values.subject, only: value("only"), expectedFailures, log: () => {}, ...set, ...(tools ? { tools } : {}), ...(scenariosDir ? { scenariosDir: resolve(scenariosDir) } : {}) });
  } catch (e) {
    // A bad scenario file or subject argument: a usage error, not a failing subject.
    console.error(`brain-conformance: ${(e as Error).message}`);
    return 2;
  }
  console.log(formatTable(report));
  const reportFile = value("report");
  if (reportFile) writeFileSync(reportFile, JSON.stringify(reportDocument(report), null, 2));
  return report.ok ? 0 : 1;
}

const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) process.exit(await main(process.argv.slice(2)));
