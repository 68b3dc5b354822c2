// `brain` / `brain serve` flags, help and start banner, as real subprocesses of the CLI (from the
// sources). The same commands run through the installed package in scripts/install/npm.test.mjs.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { SERVE_FLAGS, parseServeArgs, UsageError } from "../src/cli-flags.ts";

const runtimeDir = fileURLToPath(new URL("..", import.meta.url));
const children = new Set<ChildProcess>();
/** No BRAIN_* from the test's own environment: what the flags set must be all there is. */
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("BRAIN_")));

function brain(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["--conditions=brain-source", "--import", "tsx", "src/cli.ts", ...args], { cwd: runtimeDir, env: { ...cleanEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => (children.delete(child), resolve(code))));
  const waitFor = (re: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setInterval(() => {
        const m = re.exec(stdout);
        if (m) return clearInterval(timer), resolve(m);
        if (child.exitCode !== null) clearInterval(timer), reject(new Error(`exited ${child.exitCode} before ${re}: ${stdout}${stderr}`));
      }, 20);
    });
  return { child, exited, waitFor, out: () => ({ stdout, stderr }) };
}

/** Runs a command that must end by itself (help, a refusal) within 20 s. */
async function finished(args: string[], env: Record<string, string> = {}) {
  const b = brain(args, env);
  const timer = setTimeout(() => b.child.kill("SIGKILL"), 20_000);
  const code = await b.exited;
  clearTimeout(timer);
  return { code, ...b.out() };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

test.after(() => {
  for (const c of children) c.kill("SIGKILL");
});

test("brain serve --port --host --data-dir --journal: listens where the flags say, over the variables, and prints the /ui URL and lines to export", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-cli-flags-"));
  try {
    const port = await freePort();
    // The variables say otherwise; the flags win.
    const b = brain(["serve", "--port", String(port), "--host=127.0.0.1", "--data-dir", join(dir, "data"), "--journal", "sqlite"], { BRAIN_PORT: "1", BRAIN_DATA_DIR: join(dir, "elsewhere") });
    const [, url] = await b.waitFor(/brain listening on (http:\/\/\S+)/);
    assert.is(url, `http://127.0.0.1:${port}`);
    await b.waitFor(/export BRAIN_TOKEN=.*\n/);
    const { stdout } = b.out();
    assert.match(stdout, `session viewer: ${url}/ui\n`);
    assert.match(stdout, `journal: ${join(dir, "data")}/journal.sqlite`);
    assert.match(stdout, `  export BRAIN_URL=${url}\n`);
    const tokenFile = join(dir, "data", "operator.token");
    assert.ok(existsSync(tokenFile), "the token file is in --data-dir");
    assert.not.ok(existsSync(join(dir, "elsewhere")), "BRAIN_DATA_DIR lost to --data-dir");
    // The line to copy reads the token file (the token itself is never printed), and it works.
    const line = /^ {2}export BRAIN_TOKEN=(.*)$/m.exec(stdout)![1]!;
    assert.is(line, `$(cat ${tokenFile})`);
    assert.not.match(stdout + b.out().stderr, readFileSync(tokenFile, "utf8").trim());
    const token = readFileSync(tokenFile, "utf8").trim();
    assert.is((await fetch(`${url}/v1/sessions`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
    assert.is((await fetch(`${url}/ui`)).status, 200);
    b.child.kill("SIGINT");
    assert.is(await b.exited, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("switches and --flag=value reach the settings they mirror (--journal memory, --log-format json, --token)", async () => {
  const b = brain(["serve", "--port=0", "--journal=memory", "--token", "a-token-from-the-flag", "--log-format", "json", "--managed-host-log"]);
  const [, url] = await b.waitFor(/brain listening on (http:\/\/\S+)/);
  assert.match(b.out().stdout, "journal: memory");
  assert.match(b.out().stdout, "operator token: from BRAIN_TOKEN");
  assert.is((await fetch(`${url}/v1/sessions`, { headers: { authorization: "Bearer a-token-from-the-flag" } })).status, 200);
  b.child.kill("SIGINT");
  assert.is(await b.exited, 0);
});

test("an unknown flag, a missing value, a stray argument and a bad value given as a flag exit 2 with a message naming the flag; nothing listens", async () => {
  // Each spawn costs seconds: the parser's other refusals are checked in-process below.
  const cases: Array<[string[], RegExp]> = [
    [["serve", "--prot", "3211"], /^brain: unknown flag --prot \(did you mean --port\?\)/],
    [["serve", "--port"], /^brain: --port needs a value/],
    [["serve", "--port", "http"], /^brain: --port: BRAIN_PORT must be a port number, got http/],
    [["--prot", "3211"], /^brain: unknown flag --prot/],
    [["frobnicate"], /^brain: unknown command "frobnicate"/],
  ];
  for (const [args, message] of cases) {
    const r = await finished(args, { BRAIN_JOURNAL: "memory", BRAIN_TOKEN: "t" });
    assert.is(r.code, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, message, args.join(" "));
    assert.not.match(r.stdout, "brain listening", args.join(" "));
  }
});

test("brain --help, brain help, brain serve --help and brain keys --help print real help and exit 0", async () => {
  for (const args of [["--help"], ["help"]]) {
    const r = await finished(args);
    assert.is(r.code, 0, args.join(" "));
    assert.match(r.stdout, /^usage: brain <command>/);
    assert.match(r.stdout, "keys create <name>");
  }
  const serve = await finished(["serve", "--help"]);
  assert.is(serve.code, 0);
  assert.match(serve.stdout, /^usage: brain serve \[flags\]/);
  // Every flag is listed with the variable it mirrors.
  for (const f of SERVE_FLAGS) assert.match(serve.stdout, new RegExp(`^  ${f.flag}\\b.*${f.variable}: `, "m"), f.flag);
  const keys = await finished(["keys", "--help"]);
  assert.is(keys.code, 0);
  assert.match(keys.stdout, /^usage: brain keys create/);
});

test("every BRAIN_* variable of the operator's table in runtime/README.md has its flag", () => {
  const readme = readFileSync(join(runtimeDir, "README.md"), "utf8");
  const table = readme.slice(readme.indexOf("| variable (flag: `brain serve --help`) | default | meaning |"), readme.indexOf("Read the token with"));
  const documented = new Set([...table.matchAll(/`(BRAIN_[A-Z_]+)`/g)].map((m) => m[1]!));
  assert.ok(documented.size > 15, `found only ${[...documented]}`);
  const mirrored = new Set(SERVE_FLAGS.map((f) => f.variable));
  assert.equal([...documented].filter((v) => !mirrored.has(v)), [], "variables without a flag");
});

test("parseServeArgs: values, switches, --flag=value and the errors are typed", () => {
  assert.equal(parseServeArgs(["--port", "0", "--data-dir=/x y", "--component-telemetry"]), { help: false, variables: { BRAIN_PORT: "0", BRAIN_DATA_DIR: "/x y", BRAIN_COMPONENT_TELEMETRY: "1" } });
  assert.equal(parseServeArgs(["--port", "0", "--help"]), { help: true });
  assert.equal(parseServeArgs([]), { help: false, variables: {} });
  const refusal = (args: string[]): string => {
    try {
      parseServeArgs(args);
    } catch (e) {
      assert.instance(e, UsageError);
      return (e as Error).message;
    }
    throw new Error(`${args.join(" ")} was accepted`);
  };
  assert.match(refusal(["--frobnicate"]), /^unknown flag --frobnicate \(brain serve --help lists the flags\)$/);
  assert.match(refusal(["--data-dir", "--journal", "memory"]), /^--data-dir needs a value/);
  assert.match(refusal(["3211"]), /^unexpected argument "3211"/);
  assert.match(refusal(["--port", "1", "--port", "2"]), /^--port is given twice/);
  assert.match(refusal(["--component-telemetry=yes"]), /^--component-telemetry is a switch and takes no value/);
  assert.match(refusal(["--jurnal", "memory"]), /did you mean --journal\?/);
});

test.run();
