// A silent host is found out: the runtime pings every host connection and drops one that answers
// no ping within BRAIN_HOST_TIMEOUT_MS; its open calls end `unknown`. The host is a real process
// stopped with SIGSTOP (it answers nothing, its socket stays open), then resumed.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { memoryBrain, api, createSession, records, waitFor, assertJournal, ofType } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";

const tool = contract("slow");
const SILENT_HOST = fileURLToPath(new URL("./helpers/silent-host.mjs", import.meta.url));

/** Starts the silent host process and resolves once it printed `registered`; `lines` collects what it prints. */
async function silentHost(url: string, token: string, hostId: string): Promise<{ child: ChildProcess; lines: string[]; next(prefix: string): Promise<string> }> {
  const child = spawn(process.execPath, [SILENT_HOST, url, token, hostId, "a-secret-of-the-silent-host", JSON.stringify(tool)], { stdio: ["ignore", "pipe", "inherit"] });
  const lines: string[] = [];
  const waiters: Array<{ prefix: string; resolve: (l: string) => void }> = [];
  let buffer = "";
  child.stdout!.on("data", (d: Buffer) => {
    buffer += d.toString();
    for (let i; (i = buffer.indexOf("\n")) >= 0; ) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      lines.push(line);
      const w = waiters.findIndex((x) => line.startsWith(x.prefix));
      if (w >= 0) waiters.splice(w, 1)[0]!.resolve(line);
    }
  });
  const next = (prefix: string) => {
    const seen = lines.find((l) => l.startsWith(prefix));
    return seen !== undefined ? Promise.resolve(seen) : new Promise<string>((resolve) => waiters.push({ prefix, resolve }));
  };
  await next("registered");
  return { child, lines, next };
}

test("a host stopped with SIGSTOP answers no ping: its connection is closed after BRAIN_HOST_TIMEOUT_MS and its open call ends unknown", async () => {
  const brain = await memoryBrain({ hostTimeoutMs: 600 });
  const hostId = "silent-host";
  const host = await silentHost(brain.url, brain.token, hostId);
  try {
    const s = await createSession(brain, [placed(tool, hostId)], [{ toolCalls: [{ name: "slow", input: {} }] }, { text: "after" }]);
    const sent = api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
    const callId = (await host.next("invoked ")).slice("invoked ".length);
    // Answered pings for longer than the timeout while running: a live, idle host is never dropped.
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal((await api(brain, "GET", `/v1/sessions/${s.id}`)).body.openCalls, [callId], "the call is still open while the host answers pings");
    const stoppedAt = Date.now();
    host.child.kill("SIGSTOP");
    const all = await waitFor(brain, s.id, (r) => r.type === "tool.finished", 5000);
    const waited = Date.now() - stoppedAt;
    const finished = ofType(all, "tool.finished")[0]!;
    assert.is(finished.data.callId, callId);
    assert.is(finished.data.status, "unknown");
    assert.match(finished.data.message ?? "", /answered no ping for 600 ms/);
    assert.ok(waited >= 400, `closed after ${waited} ms, not before the timeout`);
    assert.is((await api(brain, "GET", `/v1/hosts/${hostId}`)).body.connected, false);
    assert.is((await sent).body.status, "completed", "the turn went on with the unknown outcome");
    assertJournal(await records(brain, s.id));
    // Resumed, the host finds its socket gone.
    host.child.kill("SIGCONT");
    await host.next("closed ");
  } finally {
    host.child.kill("SIGKILL");
    await brain.close();
  }
});

test("a host that answers pings keeps its connection through many timeouts", async () => {
  const brain = await memoryBrain({ hostTimeoutMs: 150 });
  const host = await TestHost.register(brain, [tool]);
  try {
    await new Promise((r) => setTimeout(r, 1000));
    assert.is((await api(brain, "GET", `/v1/hosts/${host.hostId}`)).body.connected, true);
  } finally {
    await host.close();
    await brain.close();
  }
});

test.run();
