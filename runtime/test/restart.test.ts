import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, statSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { refusedServe } from "./helpers/cli.ts";
import { api, records, waitFor, assertJournal, finishedOf, ofType } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost, invalidFrames } from "./helpers/host.ts";

const runtimeDir = fileURLToPath(new URL("..", import.meta.url));
const children = new Set<ChildProcess>();

/** Starts `cli.ts serve` as a real subprocess on a free port; resolves with its printed URL. */
function serve(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--conditions=brain-source", "--import", "tsx", "src/cli.ts", "serve"], {
    cwd: runtimeDir,
    env: { ...process.env, BRAIN_DATA_DIR: dataDir, BRAIN_PORT: "0", BRAIN_TOKEN: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  child.on("exit", () => children.delete(child));
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`no listening line in 20 s: ${out}`)), 20000);
    child.stdout!.on("data", (d) => {
      out += d;
      const m = /brain listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]! });
      }
    });
    child.stderr!.on("data", (d) => (out += d));
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

test.after(async () => {
  for (const c of children) await kill9(c);
});

test("kill -9 with a call open: records intact after restart, the open call is unknown, the host re-registers", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-restart-"));
  const echo = contract("echo");
  try {
    const first = await serve(dir);
    const tokenFile = join(dir, "operator.token");
    assert.is(statSync(tokenFile).mode & 0o777, 0o600);
    const token = readFileSync(tokenFile, "utf8").trim();
    const b1 = { url: first.url, token } as Brain;
    const host = await TestHost.register(b1, [echo], { hostId: "restart-host", secret: "restart-secret-0001" });
    const create = await api(b1, "POST", "/v1/sessions", {
      model: { provider: "scripted", script: [{ toolCalls: [{ name: "echo", input: { n: 1 } }] }, { text: "after restart" }] },
      tools: [placed(echo, host.hostId)],
    });
    assert.is(create.status, 201);
    const id = create.body.id as string;
    await api(b1, "POST", `/v1/sessions/${id}/messages`, { text: "go" });
    const invoke = await host.invoke();
    const ev = await host.request({ type: "emit", callId: invoke.callId, kind: "progress", data: { half: true } });
    assert.is(ev.type, "committed");
    const before = await records(b1, id);
    await kill9(first.child);
    await host.closed;

    const second = await serve(dir);
    const b2 = { url: second.url, token } as Brain;
    const after = await records(b2, id);
    assertJournal(after);
    assert.equal(after.slice(0, before.length), before, "every committed record is intact");
    const fin = finishedOf(after, invoke.callId);
    assert.is(fin.length, 1);
    assert.is(fin[0]!.data.status, "unknown");
    assert.equal(ofType(after, "turn.failed").map((r) => [r.data.error.code, r.data.error.retryable]), [["interrupted", true]], "the interrupted turn failed `interrupted`, retryable (not `internal`: a restart is no bug)");
    // The host re-registers; the old call is not re-sent; the session continues with a new activation.
    const again = await TestHost.register(b2, [echo], { hostId: "restart-host", secret: "restart-secret-0001" });
    const late = await again.request({ type: "finish", callId: invoke.callId });
    assert.is(late.type, "rejected");
    const sent = await api(b2, "POST", `/v1/sessions/${id}/messages`, { text: "continue", wait: true });
    assert.is(sent.status, 200);
    assert.equal({ status: sent.body.status, text: sent.body.text, activation: sent.body.activation }, { status: "completed", text: "after restart", activation: 2 });
    assert.not.ok(again.frames.some((f) => f.type === "invoke"), "nothing replayed");
    assertJournal(await waitFor(b2, id, (r) => r.type === "turn.completed"));
    await again.close();
    second.child.kill("SIGTERM");
    await new Promise((r) => second.child.once("exit", r));
    assert.is(second.child.exitCode, 0, "clean shutdown on SIGTERM");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the CLI refuses a malformed setting with a message naming it, before it listens", async () => {
  for (const [name, value] of [["BRAIN_COMPONENT_MEMORY_MB", "lots"], ["BRAIN_PORT", "http"], ["BRAIN_JOURNAL", "paper"], ["BRAIN_MAX_MODEL_CALLS", "0"], ["BRAIN_HTTP_TOOL_ORIGINS", "app.example.com"], ["BRAIN_PUBLIC_URL", "ftp://brain"], ["BRAIN_MAX_WAIT_MS", "0"], ["BRAIN_JOURNAL_SYNC", "always"]] as const) {
    const { code, out } = await refusedServe({ [name]: value });
    assert.is(code, 1, `${name}=${value}: ${out}`);
    assert.match(out, `${name} must be`);
    assert.not.match(out, "brain listening");
  }
});

test("every frame the runtime sent matched its contract def", () => {
  assert.equal(invalidFrames, []);
});

test.run();
